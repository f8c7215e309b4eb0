"""The binary's tools as Hermes tools: one ``register_tool`` per tool of
its ListTools, with its JSON Schema; a call goes to the binary's CallTool
with the calling conversation (HERMES_SESSION_PLATFORM /
HERMES_SESSION_CHAT_ID), so a delegation made while answering an A2A task
continues that task's delegation chain and trace.

Hermes runs a tool handler on a worker thread; the handler blocks it until
the binary answers. An error result reaches the model as ``{"error": …}``
(Hermes' convention); so does a call that broke. Progress the binary
reports is logged and, while the call serves an A2A turn, keeps that turn's
task alive (at most one progress update every PROGRESS_EVERY seconds); an
interrupted Hermes turn cancels the call.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from typing import Any, Awaitable, Callable, Optional

from agentplugin_host import PluginError, pb

from .runtime import BINARY_PLUGIN, Runtime
from .settings import PLATFORM, PLUGIN_ID, TOOLSET

log = logging.getLogger("a2a_plugin.tools")

#: How often a long tool call may send a progress update to the A2A task
#: whose turn made it.
PROGRESS_EVERY = 30.0


class ToolClash(RuntimeError):
    """Hermes refused one of the binary's tools: a built-in tool, or another
    plugin's tool in another toolset, already has its name."""


def _session_env(name: str) -> str:
    try:
        from gateway.session_context import get_session_env
    except ImportError:  # pragma: no cover - always there in Hermes
        return ""
    return get_session_env(name, "") or ""


def _interrupted() -> bool:
    try:
        from tools.interrupt import is_interrupted
    except ImportError:  # pragma: no cover - Hermes without per-thread interrupts
        return False
    return is_interrupted()


#: Tells the A2A task of a conversation that its turn's tool call goes on.
Keepalive = Callable[[str, str], Awaitable[None]]


def make_handler(rt: Runtime, name: str, keepalive: Optional[Keepalive] = None) -> Callable[..., str]:
    """The Hermes handler of tool name."""

    def handler(args: dict, **kwargs: Any) -> str:
        platform = _session_env("HERMES_SESSION_PLATFORM")
        chat_id = _session_env("HERMES_SESSION_CHAT_ID")
        if platform == PLATFORM:
            platform = BINARY_PLUGIN  # a conversation of an A2A task: the binary's own platform name
        # call_id is for logs: Hermes' task_id is the session's id (the same
        # for every call of a conversation), so it only prefixes a fresh id.
        call_id = f"{kwargs.get('task_id') or 'hermes'}:{uuid.uuid4().hex[:12]}"
        req = pb.CallToolRequest(name=name, arguments_json=json.dumps(args or {}), call_id=call_id,
                                 platform=platform, chat_id=chat_id)
        last = [0.0]
        lock = threading.Lock()

        def progress(p: pb.ToolProgress) -> Optional[Awaitable[None]]:
            # Called on the SDK's loop; what it returns is awaited there
            # before the call goes on.
            log.debug("%s progress: %s", name, p.message)
            if keepalive is None or platform != BINARY_PLUGIN or not chat_id:
                return None
            with lock:
                now = time.monotonic()
                if now - last[0] < PROGRESS_EVERY:
                    return None
                last[0] = now
            return keepalive(chat_id, f"still working ({name})")

        try:
            res = rt.call_tool(req, progress, _interrupted)
        except InterruptedError:
            return json.dumps({"error": f"{name} was interrupted"})
        except PluginError as e:
            log.warning("%s failed: %s", name, e)
            return json.dumps({"error": f"{name} failed: {e}"})
        if res.is_error:
            return json.dumps({"error": res.content})
        return res.content

    handler.__name__ = f"a2a_plugin_{name}"
    return handler


def _registered(name: str, handler: Callable[..., Any]) -> bool:
    """Whether Hermes' registry holds handler under name. register_tool
    returns None when Hermes refuses a name (one that shadows a built-in
    tool, 0.20.1 and 0.21); the registry decides, so a Hermes whose
    register_tool returns nothing on success is read right too."""
    try:
        from tools.registry import registry
    except ImportError:
        return False
    entry = registry.get_entry(name)
    return entry is not None and getattr(entry, "handler", None) is handler


def register_tools(ctx: Any, rt: Runtime, keepalive: Optional[Keepalive] = None) -> list[str]:
    """Register every tool of the binary in the a2a toolset; raises
    ToolClash when Hermes refuses one. (A same-named tool of Hermes' bundled
    a2a-platform, in the same a2a toolset, is replaced, not refused.)"""
    names = []
    for td in rt.tool_definitions():
        schema = {"name": td.name, "description": td.description,
                  "parameters": json.loads(td.parameters_json_schema or '{"type": "object"}')}
        handler = make_handler(rt, td.name, keepalive)
        handle = ctx.register_tool(
            name=td.name, toolset=TOOLSET, schema=schema, handler=handler,
            check_fn=rt.binary_present, description=td.description, emoji="🛰️")
        if handle is None and not _registered(td.name, handler):
            raise ToolClash(
                f"{PLUGIN_ID}: Hermes refused tool {td.name!r}: a built-in tool, or another plugin's tool in "
                f"another toolset, already has that name (see the gateway log). Disable that plugin in "
                f"config.yaml (plugins.disabled).")
        names.append(td.name)
    return names
