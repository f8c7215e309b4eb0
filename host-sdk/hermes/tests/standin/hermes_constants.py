"""Stand-in for Hermes' hermes_constants (see README.md)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Union


def get_hermes_home() -> Path:
    """$HERMES_HOME, default ~/.hermes."""
    home = os.environ.get("HERMES_HOME", "").strip()
    return Path(home) if home else Path.home() / ".hermes"


def hermes_home_key(path: Optional[Union[str, Path]] = None) -> str:
    """A stable key of a Hermes home: the registries' scope of the plugin
    registrations made for that home."""
    candidate = Path(path) if path is not None else get_hermes_home()
    return os.path.normcase(str(candidate.expanduser().resolve(strict=False)))
