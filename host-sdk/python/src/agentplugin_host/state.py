"""Where a plugin is in its life, and the events a host can follow."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Optional


class State(enum.Enum):
    """Where a plugin is in its life."""

    #: Launched, not yet configured.
    STARTING = "starting"
    #: Configured (and connected); calls go through.
    READY = "ready"
    #: The process died; calls fail fast until the supervisor has a new
    #: one ready.
    RESTARTING = "restarting"
    #: It failed to configure or crashed too often; Plugin.last_error says
    #: why. It is not restarted.
    FAILED = "failed"
    #: The host closed it.
    STOPPED = "stopped"


class EventKind(enum.Enum):
    """What happened to a plugin."""

    #: An executable was not loaded (handshake failed, bad Describe, or it
    #: lost a name clash); Event.plugin is its path.
    SKIPPED = "skipped"
    #: A plugin became ready, first or after a restart.
    READY = "ready"
    #: A ready plugin's process died; Event.error holds the crash reason. A
    #: restart follows unless a FAILED does because it crashed too often.
    CRASHED = "crashed"
    #: A plugin failed for good; Event.error says why.
    FAILED = "failed"
    #: The host closed the plugin.
    STOPPED = "stopped"


@dataclass(frozen=True)
class Event:
    """A change in a plugin's life, reported to Options.on_event."""

    plugin: str
    kind: EventKind
    error: Optional[BaseException] = None
