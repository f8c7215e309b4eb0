"""The contract version and the go-plugin handshake this host speaks.

PROTOCOL_MINOR must equal the minor number in the ``protocol-version:``
header of proto/agentplugin/v1/agentplugin.proto, as plugin.ProtocolMinor
does on the Go side; a test keeps all three equal.
"""

from __future__ import annotations

#: This package's release (HostInfo.version).
SDK_VERSION = "0.1.0"

#: The go-plugin application protocol version (= the proto package major).
#: A plugin of another major is refused at the handshake.
PROTOCOL_MAJOR = 1

#: The contract minor this host implements: 1.1 ``SendRequest.ends_turn``,
#: 1.2 the call streams (``HostService.HandleMessages``,
#: ``PlatformAdapterService.SendStream``), 1.3
#: ``HostInfo.cancel_turn_unsupported``, 1.4 several agents
#: (``HostInfo.agents``, ``agent_id`` on HandleMessage, CancelTurn and
#: CallTool).
PROTOCOL_MINOR = 4

#: go-plugin's core protocol version, the first field of the handshake line.
CORE_PROTOCOL_VERSION = 1

#: The magic cookie: not a security measure, it only stops a plugin from
#: being run by hand and a host from launching what is not a plugin.
MAGIC_COOKIE_KEY = "AGENTPLUGIN_MAGIC_COOKIE"
MAGIC_COOKIE_VALUE = "7f3c2a9e-agentplugin-v1-b41d5e08"

#: The variable through which a host passes its log level to a plugin it
#: launches ("trace" … "error"); ConfigureRequest.log_level may change it.
ENV_LOG_LEVEL = "AGENTPLUGIN_LOG_LEVEL"

#: Names under which one plugin binary serves its services (go-plugin
#: dispenses by name; over gRPC they are simply services on one connection).
NAME_LIFECYCLE = "lifecycle"
NAME_PLATFORM = "platform"
NAME_TOOLSET = "toolset"

#: The largest gRPC message either side sends or accepts, as
#: plugin.MaxMessageBytes: files travel inline in Part.raw.
MAX_MESSAGE_BYTES = 64 << 20
