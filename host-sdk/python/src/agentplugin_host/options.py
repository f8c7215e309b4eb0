"""How a Manager runs its plugins. Every field has a usable default."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

from agentplugin.v1 import agentplugin_pb2 as pb

from .handshake import Transport
from .host_service import DEFAULT_HEARTBEAT
from .state import Event
from .version import PROTOCOL_MINOR


@dataclass
class RestartPolicy:
    """How a crashed plugin is restarted: only while fewer than
    max_restarts restarts happened within the last window seconds (the
    crash after that marks it failed; a restart that fails counts as one),
    after a delay growing from base_backoff, doubling per recent restart up
    to max_backoff, the upper half of it random."""

    #: Restarts within window; negative: never restart.
    max_restarts: int = 5
    window: float = 300.0
    base_backoff: float = 0.25
    max_backoff: float = 30.0


@dataclass
class Options:
    """What a Manager needs. The plugin of the same name gets the same
    config, data directory and environment on every restart."""

    #: The plugins directory: every executable in it is tried (see
    #: discover). None: no directory.
    dir: Optional[str] = None
    #: Plugin executables to launch in addition to those in dir.
    paths: Sequence[str] = ()
    #: Receives the manager's records and, parsed, every plugin's own log
    #: lines (on a child logger named after the plugin).
    logger: Optional[logging.Logger] = None
    #: The host's implementation of the callback service (see Host); None:
    #: the host offers no callbacks (Watch is served either way).
    host: Any = None
    #: Each plugin's configuration section by plugin name: a mapping (sent
    #: as JSON), a JSON string or bytes. A plugin without one gets "{}".
    config: Mapping[str, Any] = field(default_factory=dict)
    #: Where each plugin gets its own directory (data_dir/<name>, mode
    #: 0700). None: a temporary directory removed by close.
    data_dir: Optional[str] = None
    #: Passed to plugins as AGENTPLUGIN_LOG_LEVEL and
    #: ConfigureRequest.log_level ("trace" … "error"); "" leaves theirs.
    log_level: str = ""
    #: Describes the host to plugins; protocol_minor and optional_rpcs are
    #: filled in when left empty. A host whose cancel_turn cannot stop a
    #: running turn sets cancel_turn_unsupported (contract 1.3; set for it
    #: when the host has no cancel_turn at all): plugins then refuse to
    #: cancel what it runs instead of reporting it stopped.
    host_info: Optional[pb.HostInfo] = None
    #: The contract minor the host claims (HostInfo.protocol_minor). Below
    #: 2 neither side uses call streams: the plugin calls the unary
    #: HandleMessage and the host the unary Send.
    protocol_minor: int = PROTOCOL_MINOR
    #: Variables a plugin inherits from the host's environment, as names
    #: or PREFIX* patterns, besides the base allowlist (env.BASE_ENV_ALLOW)
    #: and the prefixes the plugin declares in Describe. Listing those
    #: prefixes here (e.g. "A2A_*") saves the relaunch a first start makes
    #: when the declared prefixes change its environment.
    env_allow: Sequence[str] = ()
    #: Variables for one plugin by plugin name; they win over inherited ones.
    plugin_env: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: AutoMTLS (default) or a private 0700 socket directory.
    transport: Transport = Transport.AUTO_MTLS
    #: Bounds each step of bringing a plugin up: handshake, Describe,
    #: Configure, Connect (seconds).
    start_timeout: float = 10.0
    #: Bounds Disconnect and Drain of each plugin at close (seconds).
    drain_timeout: float = 5.0
    #: How often the Watch stream carries a heartbeat (seconds).
    heartbeat_interval: float = DEFAULT_HEARTBEAT
    restart: RestartPolicy = field(default_factory=RestartPolicy)
    #: Connect platforms at start (and on restart). False: configure only —
    #: for a process that uses a plugin's tools but must not serve its
    #: inbound side.
    connect: bool = True
    #: Called with every Event, on the manager's loop; must be quick.
    on_event: Optional[Callable[[Event], None]] = None
