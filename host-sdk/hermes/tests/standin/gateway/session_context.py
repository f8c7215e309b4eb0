"""Stand-in for gateway.session_context: the calling conversation as
context variables, task-local (each asyncio task, and each executor thread
run in a copied context, sees its own). The gateway binds them in the
message handler's task (``set_session_vars``) before it runs the agent;
``HERMES_SESSION_MESSAGE_ID`` is the *source's* message_id (what the
adapter passed to ``build_source``), not the event's."""

from __future__ import annotations

import os
from contextvars import ContextVar
from typing import Any

_UNSET: Any = object()

_NAMES = ("HERMES_SESSION_PLATFORM", "HERMES_SESSION_SOURCE", "HERMES_SESSION_CHAT_ID", "HERMES_SESSION_CHAT_TYPE",
          "HERMES_SESSION_CHAT_NAME", "HERMES_SESSION_THREAD_ID", "HERMES_SESSION_USER_ID", "HERMES_SESSION_USER_ID_ALT",
          "HERMES_SESSION_USER_NAME", "HERMES_SESSION_SCOPE_ID", "HERMES_SESSION_KEY", "HERMES_SESSION_ID",
          "HERMES_UI_SESSION_ID", "HERMES_SESSION_MESSAGE_ID", "HERMES_SESSION_PROFILE", "HERMES_CRON_SESSION",
          "HERMES_SESSION_ASYNC_DELIVERY")
_VAR_MAP = {n: ContextVar(n, default=_UNSET) for n in _NAMES}


def set_session_vars(platform: str = "", source: str = "", chat_id: str = "", chat_type: str = "", chat_name: str = "",
                     thread_id: str = "", user_id: str = "", user_id_alt: str = "", user_name: str = "",
                     scope_id: str = "", session_key: str = "", session_id: str = "", message_id: str = "",
                     profile: str = "", cwd: str = "", async_delivery: bool = True, ui_session_id: str = "",
                     cron_session: Any = _UNSET) -> list:
    """Set every session variable of this context; returns tokens (for
    API compatibility: clear_session_vars blanks rather than restores)."""
    values = {
        "HERMES_SESSION_PLATFORM": platform, "HERMES_SESSION_SOURCE": source, "HERMES_SESSION_CHAT_ID": chat_id,
        "HERMES_SESSION_CHAT_TYPE": chat_type, "HERMES_SESSION_CHAT_NAME": chat_name,
        "HERMES_SESSION_THREAD_ID": thread_id, "HERMES_SESSION_USER_ID": user_id,
        "HERMES_SESSION_USER_ID_ALT": user_id_alt, "HERMES_SESSION_USER_NAME": user_name,
        "HERMES_SESSION_SCOPE_ID": scope_id, "HERMES_SESSION_KEY": session_key, "HERMES_SESSION_ID": session_id,
        "HERMES_UI_SESSION_ID": ui_session_id, "HERMES_SESSION_MESSAGE_ID": message_id,
        "HERMES_SESSION_PROFILE": profile, "HERMES_CRON_SESSION": cron_session,
        "HERMES_SESSION_ASYNC_DELIVERY": bool(async_delivery),
    }
    return [_VAR_MAP[n].set(v) for n, v in values.items()]


def clear_session_vars(tokens: list) -> None:
    """Mark every session variable explicitly cleared (""), so nothing
    falls back to os.environ."""
    for n, var in _VAR_MAP.items():
        var.set("" if n != "HERMES_SESSION_ASYNC_DELIVERY" else True)


def get_session_env(name: str, default: str = "") -> str:
    """The session variable name (e.g. "HERMES_SESSION_PLATFORM"): this
    context's value when it was set (even to ""), else the process
    environment (CLI, cron), else default."""
    var = _VAR_MAP.get(name)
    if var is not None:
        v = var.get()
        if v is not _UNSET:
            return v
    return os.getenv(name, default)
