"""Stand-in for Hermes' toolsets module: the toolset table (``TOOLSETS``),
``validate_toolset`` and ``create_custom_toolset``, as toolsets.py of
Hermes 0.20.1 has them. The stand-in's built-in toolsets are registered
straight into the tool registry, so a registered toolset name counts as
known (Hermes: the static table, plugin toolsets, registry aliases)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

#: Toolsets by name; the stand-in starts with none beyond the registry's.
TOOLSETS: Dict[str, Dict[str, Any]] = {}


def validate_toolset(name: str) -> bool:
    """Whether name names a toolset: the aliases all and *, the table,
    or a toolset of the tool registry (built-in or a plugin's)."""
    if name in {"all", "*"}:
        return True
    if name in TOOLSETS:
        return True
    from tools.registry import registry

    return name in set(registry.get_registered_toolset_names())


def create_custom_toolset(name: str, description: str, tools: Optional[List[str]] = None,
                          includes: Optional[List[str]] = None) -> None:
    """Add a toolset to the table at runtime."""
    TOOLSETS[name] = {"description": description, "tools": tools or [], "includes": includes or []}


def resolve_toolset(name: str) -> List[str]:
    """The tools of a table toolset (its own and those of the toolsets it
    includes)."""
    ts = TOOLSETS.get(name)
    if ts is None:
        return []
    out = list(ts["tools"])
    for inc in ts["includes"]:
        out += resolve_toolset(inc)
    return out
