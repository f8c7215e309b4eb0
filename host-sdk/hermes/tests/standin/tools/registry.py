"""Stand-in for tools.registry: the process-wide tool registry.

As in Hermes, built-in tools (registered straight into the registry, as
Hermes' own tool modules do at import) are process-global, while tools a
plugin registers through its PluginContext live in an overlay keyed by the
plugin manager's scope (its HERMES_HOME); lookups see the overlay over the
globals. ``register`` rejects (logs, registers nothing) a name that another
toolset already holds unless ``override=True``; a re-registration in the
same toolset replaces the entry.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from typing import Any, Callable, Optional

logger = logging.getLogger(__name__)


def tool_error(message: Any, **extra: Any) -> str:
    """A tool result reporting an error: ``{"error": message, …}``."""
    result = {"error": str(message)}
    result.update(extra)
    return json.dumps(result, ensure_ascii=False)


def tool_result(data: Any = None, **kwargs: Any) -> str:
    return json.dumps(data if data is not None else kwargs, ensure_ascii=False)


class ToolEntry:
    """One registered tool."""

    __slots__ = ("name", "toolset", "schema", "handler", "check_fn", "requires_env", "is_async", "description",
                 "emoji", "max_result_size_chars", "dynamic_schema_overrides")

    def __init__(self, name, toolset, schema, handler, check_fn, requires_env, is_async, description, emoji,
                 max_result_size_chars=None, dynamic_schema_overrides=None):
        self.name = name
        self.toolset = toolset
        self.schema = schema
        self.handler = handler
        self.check_fn = check_fn
        self.requires_env = requires_env
        self.is_async = is_async
        self.description = description
        self.emoji = emoji
        self.max_result_size_chars = max_result_size_chars
        self.dynamic_schema_overrides = dynamic_schema_overrides


def _current_scope() -> str:
    from hermes_constants import hermes_home_key

    return hermes_home_key()


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, ToolEntry] = {}
        self._scoped_tools: dict[str, dict[str, ToolEntry]] = {}
        self._lock = threading.RLock()
        self._generation = 0

    @staticmethod
    def current_scope_key() -> str:
        return _current_scope()

    def _merged(self, scope: Optional[str] = None) -> dict[str, ToolEntry]:
        merged = dict(self._tools)
        merged.update(self._scoped_tools.get(scope or _current_scope(), {}))
        return merged

    def register(self, name: str, toolset: str, schema: dict, handler: Callable, check_fn: Optional[Callable] = None,
                 requires_env: Optional[list] = None, is_async: bool = False, description: str = "", emoji: str = "",
                 max_result_size_chars: Any = None, dynamic_schema_overrides: Optional[Callable] = None,
                 override: bool = False, scope: Optional[str] = None) -> None:
        """Register a tool (scope None: a global, built-in one). A name held
        by another toolset is rejected unless override=True."""
        with self._lock:
            target = self._tools if scope is None else self._scoped_tools.setdefault(scope, {})
            existing = self._tools.get(name) if scope is None else self._merged(scope).get(name)
            if existing is not None and existing.toolset != toolset and not override:
                logger.error("Tool registration REJECTED: '%s' (toolset '%s') would shadow existing tool from toolset "
                             "'%s'. Pass override=True to register() if the replacement is intentional.",
                             name, toolset, existing.toolset)
                return
            target[name] = ToolEntry(name, toolset, schema, handler, check_fn, requires_env or [], is_async,
                                     description or schema.get("description", ""), emoji, max_result_size_chars,
                                     dynamic_schema_overrides)
            self._generation += 1

    def deregister(self, name: str, *, scope: Optional[str] = None) -> None:
        with self._lock:
            if scope is not None:
                self._scoped_tools.get(scope, {}).pop(name, None)
            else:
                self._tools.pop(name, None)
            self._generation += 1

    def snapshot_registration(self, name: str, *, scope: Optional[str] = None) -> Optional[ToolEntry]:
        """The entry in scope's own slot (no fallback to the globals)."""
        with self._lock:
            target = self._tools if scope is None else self._scoped_tools.get(scope, {})
            return target.get(name)

    def restore_registration(self, name: str, current: ToolEntry, previous: Optional[ToolEntry], *,
                             scope: Optional[str] = None) -> bool:
        """Put previous back in name's slot if current is still there."""
        with self._lock:
            target = self._tools if scope is None else self._scoped_tools.setdefault(scope, {})
            if target.get(name) is not current:
                return False
            if previous is None:
                del target[name]
            else:
                target[name] = previous
            self._generation += 1
            return True

    def get_entry(self, name: str, *, scope: Optional[str] = None) -> Optional[ToolEntry]:
        with self._lock:
            return self._merged(scope).get(name)

    def get_all_entries(self) -> list[ToolEntry]:
        with self._lock:
            return list(self._merged().values())

    def get_tool_names_for_toolset(self, toolset: str) -> list[str]:
        with self._lock:
            return sorted(n for n, e in self._merged().items() if e.toolset == toolset)

    def get_registered_toolset_names(self) -> list[str]:
        with self._lock:
            return sorted({e.toolset for e in self._merged().values()})

    def global_toolset_names(self) -> set[str]:
        """Toolsets of the built-in (global) tools."""
        with self._lock:
            return {e.toolset for e in self._tools.values()}

    def get_definitions(self, tool_names: set, quiet: bool = False) -> list[dict]:
        """OpenAI-format schemas of the named tools whose check_fn passes."""
        out = []
        for name in sorted(tool_names):
            e = self.get_entry(name)
            if e is None:
                continue
            if e.check_fn is not None:
                try:
                    if not e.check_fn():
                        continue
                except Exception:
                    continue
            schema = {**e.schema, "name": e.name}
            if e.dynamic_schema_overrides is not None:
                try:
                    schema.update(e.dynamic_schema_overrides() or {})
                except Exception:
                    pass
            out.append({"type": "function", "function": schema})
        return out

    @staticmethod
    def _normalize_handler_result(name: str, result: Any) -> Any:
        if isinstance(result, str):
            return result
        if isinstance(result, dict) and result.get("_multimodal") is True and isinstance(result.get("content"), list):
            return result
        logger.error("Tool %s handler returned unsupported result type: %s", name, type(result).__name__)
        return tool_error(f"Tool handler returned unsupported result type: {type(result).__name__}",
                          error_type="tool_result_contract", tool=name, result_type=type(result).__name__)

    def dispatch(self, name: str, args: dict, *, scope: Optional[str] = None, **kwargs: Any) -> Any:
        """Run a tool's handler (on the calling thread); results are
        strings (or the multimodal envelope), exceptions become
        {"error": …}. An async handler runs on a loop of its own thread
        when the calling thread has a running loop, else on this thread."""
        e = self.get_entry(name, scope=scope)
        if e is None:
            return tool_error(f"Unknown tool: {name}")
        try:
            if e.is_async:
                result = _run_async(e.handler(args, **kwargs))
            else:
                result = e.handler(args, **kwargs)
            return self._normalize_handler_result(name, result)
        except Exception as exc:
            logger.exception("Tool %s dispatch error: %s", name, exc)
            return tool_error(f"Tool execution failed: {type(exc).__name__}: {exc}")

    def clear(self) -> None:
        with self._lock:
            self._tools.clear()
            self._scoped_tools.clear()


def _run_async(coro: Any) -> Any:
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is None:
        return asyncio.run(coro)
    box: dict = {}

    def worker() -> None:
        try:
            box["result"] = asyncio.run(coro)
        except BaseException as e:  # noqa: BLE001 - re-raised on the caller's thread
            box["error"] = e

    t = threading.Thread(target=worker, name="tool-async-bridge", daemon=True)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box.get("result")


registry = ToolRegistry()
