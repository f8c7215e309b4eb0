"""Stand-in for gateway.session_context: the calling conversation as
context variables, task-local (each asyncio task, and each executor thread
run in a copied context, sees its own)."""

from __future__ import annotations

import os
from contextvars import ContextVar
from typing import Any

_UNSET: Any = object()

_VARS = {
    name: ContextVar(name, default=_UNSET)
    for name in ("HERMES_SESSION_PLATFORM", "HERMES_SESSION_CHAT_ID", "HERMES_SESSION_CHAT_NAME",
                 "HERMES_SESSION_CHAT_TYPE", "HERMES_SESSION_THREAD_ID", "HERMES_SESSION_USER_ID",
                 "HERMES_SESSION_USER_NAME", "HERMES_SESSION_KEY", "HERMES_SESSION_ID", "HERMES_SESSION_MESSAGE_ID")
}


def set_session_vars(**values: str) -> list:
    """Bind the session variables of this context (names without the
    HERMES_SESSION_ prefix, lower case); returns tokens for clear."""
    tokens = []
    for k, v in values.items():
        var = _VARS["HERMES_SESSION_" + k.upper()]
        tokens.append((var, var.set("" if v is None else str(v))))
    return tokens


def clear_session_vars(tokens: list) -> None:
    for var, tok in reversed(tokens):
        var.reset(tok)


def get_session_env(name: str, default: str = "") -> str:
    """The session variable name (e.g. "HERMES_SESSION_PLATFORM"): this
    context's value, else the process environment (CLI), else default."""
    var = _VARS.get(name)
    if var is not None:
        v = var.get()
        if v is not _UNSET:
            return v
    return os.getenv(name, default)
