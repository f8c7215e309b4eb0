"""Stand-in for gateway.session: SessionSource and build_session_key."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Optional

from gateway.config import Platform


@dataclass
class SessionSource:
    """Where a message came from (routes replies, keys the session)."""

    platform: Platform
    chat_id: str
    chat_name: Optional[str] = None
    chat_type: str = "dm"
    user_id: Optional[str] = None
    user_name: Optional[str] = None
    thread_id: Optional[str] = None
    chat_topic: Optional[str] = None
    user_id_alt: Optional[str] = None
    chat_id_alt: Optional[str] = None
    is_bot: bool = False
    scope_id: Optional[str] = None
    guild_id: Optional[str] = None
    parent_chat_id: Optional[str] = None
    message_id: Optional[str] = None
    role_authorized: bool = False
    profile: Optional[str] = None
    profile_route_rejected: bool = field(default=False, repr=False, compare=False)
    auto_thread_created: bool = False
    auto_thread_initial_name: Optional[str] = None


def _session_key_namespace(profile: Optional[str]) -> str:
    if not profile or profile == "default":
        return "agent:main"
    return f"agent:{profile}"


def build_session_key(
    source: SessionSource,
    group_sessions_per_user: bool = True,
    thread_sessions_per_user: bool = False,
    profile: Optional[str] = None,
) -> str:
    """The session key of a source: DMs per chat (then thread), groups per
    chat, then participant when group_sessions_per_user, then thread."""
    ns = _session_key_namespace(profile)
    platform = source.platform.value
    if source.chat_type == "dm":
        parts = [ns, platform, "dm"]
        if source.chat_id:
            parts.append(source.chat_id)
        elif source.user_id_alt or source.user_id:
            parts.append(str(source.user_id_alt or source.user_id))
        if source.thread_id:
            parts.append(source.thread_id)
        return ":".join(str(p) for p in parts)
    parts = [ns, platform, source.chat_type]
    if source.chat_id:
        parts.append(source.chat_id)
    participant = source.user_id_alt or source.user_id
    if source.thread_id:
        parts.append(source.thread_id)
        if thread_sessions_per_user and participant:
            parts.append(str(participant))
    elif group_sessions_per_user and participant:
        parts.append(str(participant))
    return ":".join(str(p) for p in parts)


@dataclass
class SessionEntry:
    """The restart-recovery fields of a session (Hermes' SessionEntry):
    ``resume_pending`` marks a session whose turn an unclean exit or a
    drain timeout cut short (``mark_resume_pending``, or
    ``suspend_recently_active`` at a start with no clean-shutdown marker)."""

    session_key: str
    origin: Optional[SessionSource] = None
    updated_at: Optional[datetime] = None
    resume_pending: bool = False
    resume_reason: Optional[str] = None
    last_resume_marked_at: Optional[datetime] = None
    suspended: bool = False


class SessionStore:
    """The part of Hermes' session store an adapter sees: the profile
    namespace of session keys (None unless profiles are multiplexed), and
    the restart-recovery markers the runner reads at start. No session
    database: a test marks the sessions a crashed gateway left with
    ``mark_resume_pending``, as Hermes' ``suspend_recently_active`` does for
    the sessions whose turn was running when the process died."""

    def __init__(self, multiplex_profiles: bool = False) -> None:
        self.multiplex_profiles = multiplex_profiles
        self._lock = threading.Lock()
        self._entries: dict[str, SessionEntry] = {}

    def _ensure_loaded_locked(self) -> None:
        return None

    def mark_resume_pending(self, session_key: str, reason: str = "restart_interrupted",
                            origin: Optional[SessionSource] = None) -> None:
        with self._lock:
            e = self._entries.setdefault(session_key, SessionEntry(session_key))
            if origin is not None:
                e.origin = origin
            e.resume_pending, e.resume_reason = True, reason
            e.last_resume_marked_at = e.updated_at = datetime.now()

    def clear_resume_pending(self, session_key: str) -> None:
        with self._lock:
            e = self._entries.get(session_key)
            if e is not None:
                e.resume_pending, e.resume_reason = False, None

    def get_entry(self, session_key: str) -> Optional[SessionEntry]:
        with self._lock:
            return self._entries.get(session_key)

    def _resolve_profile_for_key(self, source: Optional[SessionSource] = None) -> Optional[str]:
        if not self.multiplex_profiles:
            return None
        return (source.profile if source is not None and source.profile else None) or "default"
