"""What a Python agent host imports to run agentplugin plugins
(proto/agentplugin/v1) — the same behaviour as the Go host SDK
(host-sdk/): launch through the real go-plugin handshake with an
allowlisted environment, AutoMTLS or a private 0700 socket directory, the
host callback service served through go-plugin's broker, the plugin's stdio
drained into the host's log, supervision (restart with backoff, the crash
reason from its stderr, no orphan when the host dies), Drain then the
controller's Shutdown at close, and typed Platform and Toolset handles.

It is asyncio-native; threaded hosts run it on a LoopThread::

    from agentplugin_host import Manager, Options, pb

    async with Manager(Options(dir="plugins", host=my_host, data_dir="state",
                               config={"a2a": {"port": 41241}}, env_allow=["A2A_*"])) as m:
        a2a = m.plugin("a2a")
        platform = a2a.platform()          # send, processing_complete
        res = await m.call_tool(pb.CallToolRequest(name="a2a_list", arguments_json="{}"))

The generated contract types are ``agentplugin.v1.agentplugin_pb2``
(re-exported here as ``pb``).
"""

from agentplugin.v1 import agentplugin_pb2 as pb

from .discover import Candidate, discover
from .env import BASE_ENV_ALLOW, build_env
from .errors import (
    Cancelled,
    DeadlineExceeded,
    HandshakeError,
    InvalidArgument,
    NoResult,
    NotReady,
    PluginError,
    PluginUnavailable,
    StatusError,
    Unavailable,
    Unimplemented,
    UnknownTool,
)
from .handle import LifecycleHandle, PlatformHandle, ToolsetHandle
from .handshake import Transport
from .host_service import Host, HostServer
from .loopthread import LoopThread
from .manager import Manager
from .options import Options, RestartPolicy
from .plugin import Plugin
from .state import Event, EventKind, State
from .toolset import ProgressFunc
from .version import PROTOCOL_MAJOR, PROTOCOL_MINOR, SDK_VERSION

__version__ = SDK_VERSION

__all__ = [
    "pb", "Manager", "Options", "RestartPolicy", "Plugin", "PlatformHandle", "ToolsetHandle", "LifecycleHandle",
    "Host", "HostServer", "LoopThread", "Transport", "State", "EventKind", "Event", "Candidate", "discover",
    "BASE_ENV_ALLOW", "build_env", "ProgressFunc", "PROTOCOL_MAJOR", "PROTOCOL_MINOR",
    "PluginError", "HandshakeError", "PluginUnavailable", "NoResult", "StatusError", "UnknownTool",
    "InvalidArgument", "NotReady", "Unimplemented", "Cancelled", "DeadlineExceeded", "Unavailable",
]
