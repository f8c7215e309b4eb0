"""Stand-in for hermes_cli.config: Hermes' config.yaml."""

from __future__ import annotations

from typing import Any

import yaml

from hermes_constants import get_hermes_home


def load_config_readonly() -> dict[str, Any]:
    """$HERMES_HOME/config.yaml as a mapping ({} when absent)."""
    path = get_hermes_home() / "config.yaml"
    try:
        with open(path, encoding="utf-8") as f:
            return yaml.safe_load(f) or {}
    except FileNotFoundError:
        return {}
