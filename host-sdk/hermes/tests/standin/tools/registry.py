"""Stand-in for tools.registry: the process-wide tool registry."""

from __future__ import annotations

import json
import logging
import threading
from typing import Any, Callable, Optional

logger = logging.getLogger(__name__)


def tool_error(message: str, **extra: Any) -> str:
    return json.dumps({"error": message, **extra})


class ToolEntry:
    """One registered tool."""

    __slots__ = ("name", "toolset", "schema", "handler", "check_fn", "requires_env", "is_async", "description", "emoji")

    def __init__(self, name, toolset, schema, handler, check_fn, requires_env, is_async, description, emoji):
        self.name = name
        self.toolset = toolset
        self.schema = schema
        self.handler = handler
        self.check_fn = check_fn
        self.requires_env = requires_env
        self.is_async = is_async
        self.description = description
        self.emoji = emoji


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, ToolEntry] = {}
        self._lock = threading.RLock()

    def register(self, name: str, toolset: str, schema: dict, handler: Callable, check_fn: Optional[Callable] = None,
                 requires_env: Optional[list] = None, is_async: bool = False, description: str = "", emoji: str = "",
                 override: bool = False, scope: Optional[str] = None) -> None:
        with self._lock:
            self._tools[name] = ToolEntry(name, toolset, schema, handler, check_fn, requires_env or [], is_async,
                                          description or schema.get("description", ""), emoji)

    def deregister(self, name: str) -> None:
        with self._lock:
            self._tools.pop(name, None)

    def get_entry(self, name: str, scope: Optional[str] = None) -> Optional[ToolEntry]:
        with self._lock:
            return self._tools.get(name)

    def get_all_entries(self) -> list[ToolEntry]:
        with self._lock:
            return list(self._tools.values())

    def get_tool_names_for_toolset(self, toolset: str) -> list[str]:
        with self._lock:
            return sorted(n for n, e in self._tools.items() if e.toolset == toolset)

    def get_registered_toolset_names(self) -> list[str]:
        with self._lock:
            return sorted({e.toolset for e in self._tools.values()})

    def get_definitions(self, tool_names: set) -> list[dict]:
        """OpenAI-format schemas of the named tools whose check_fn passes."""
        out = []
        for name in sorted(tool_names):
            e = self.get_entry(name)
            if e is None or (e.check_fn is not None and not e.check_fn()):
                continue
            out.append({"type": "function", "function": {**e.schema, "name": e.name}})
        return out

    def dispatch(self, name: str, args: dict, *, scope: Optional[str] = None, **kwargs: Any) -> str:
        """Run a tool's handler; results must be strings, exceptions become
        {"error": …}."""
        e = self.get_entry(name)
        if e is None:
            return tool_error(f"Unknown tool: {name}")
        try:
            if e.is_async:
                import asyncio

                result = asyncio.run(e.handler(args, **kwargs))
            else:
                result = e.handler(args, **kwargs)
        except Exception as exc:
            logger.exception("Tool %s dispatch error", name)
            return tool_error(f"Tool execution failed: {type(exc).__name__}: {exc}")
        if isinstance(result, str):
            return result
        return tool_error(f"Tool handler returned unsupported result type: {type(result).__name__}")

    def clear(self) -> None:
        with self._lock:
            self._tools.clear()


registry = ToolRegistry()
