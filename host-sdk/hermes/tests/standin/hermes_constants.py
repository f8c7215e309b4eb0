"""Stand-in for Hermes' hermes_constants (see README.md)."""

from __future__ import annotations

import os
from pathlib import Path


def get_hermes_home() -> Path:
    """$HERMES_HOME, default ~/.hermes."""
    return Path(os.environ.get("HERMES_HOME") or os.path.expanduser("~/.hermes"))
