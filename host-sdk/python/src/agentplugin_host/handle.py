"""The typed handles a host holds on a plugin's roles — PlatformHandle,
ToolsetHandle, LifecycleHandle. They stay valid across restarts: every
call goes to the plugin's current process and fails at once with
PluginUnavailable while there is none."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable, Optional

import grpc

from agentplugin.v1 import agentplugin_pb2 as pb

from .errors import InvalidArgument, Unimplemented, from_rpc_error
from .platform import ENDS_TURN_KINDS
from .toolset import ProgressFunc
from .version import PROTOCOL_MINOR

if TYPE_CHECKING:  # pragma: no cover
    from .plugin import Plugin
    from .process import Instance


def _no_longer(p: "Plugin", what: str) -> Unimplemented:
    return Unimplemented(f"plugin {p.name!r} no longer offers a {what} (its Describe changed on restart)")


class PlatformHandle:
    """The plugin's platform adapter: a channel through which messages
    arrive (the plugin calls the host's handle_message) and the agent's
    output leaves (send, processing_complete)."""

    def __init__(self, plugin: "Plugin"):
        self._p = plugin

    @property
    def protocol_minor(self) -> int:
        """The contract minor the plugin's last Describe gave."""
        return self._p.protocol_minor

    def _pf(self, inst: "Instance"):
        if inst.platform is None:
            raise _no_longer(self._p, "platform")
        return inst.platform

    async def connect(self, timeout: Optional[float] = None) -> pb.ConnectResponse:
        """Start inbound serving (the Manager does this at start)."""
        return await self._p._invoke("Connect", lambda i: self._pf(i).connect(timeout))

    async def disconnect(self, timeout: Optional[float] = None) -> pb.DisconnectResponse:
        """Stop inbound serving (the Manager does this at close)."""
        return await self._p._invoke("Disconnect", lambda i: self._pf(i).disconnect(timeout))

    async def send(self, req: pb.SendRequest, timeout: Optional[float] = None) -> pb.SendResponse:
        """Deliver agent output for req.chat_id, naming req.task_id and
        saying what it is (req.kind). A send with ends_turn (contract 1.1)
        ends the turn as ProcessingComplete SUCCESS would, in the same
        call; to a process older than 1.1 it is sent without the field and
        followed by ProcessingComplete, so a host may set it whatever
        plugin answers. A failed send leaves the turn open."""

        async def call(inst: "Instance") -> pb.SendResponse:
            pf = self._pf(inst)
            if not req.ends_turn or inst.desc.protocol_minor >= 1:
                return await pf.send(req, timeout)
            old = pb.SendRequest()
            old.CopyFrom(req)
            old.ends_turn = False
            resp = await pf.send(old, timeout)
            await pf.processing_complete(pb.ProcessingCompleteRequest(
                platform=req.platform, chat_id=req.chat_id, task_id=req.task_id, outcome=pb.OUTCOME_SUCCESS), timeout)
            return resp

        if req.ends_turn and req.kind not in ENDS_TURN_KINDS:
            raise InvalidArgument(
                f"ends_turn is for a turn's last output (FINAL, DIRECT_REPLY, INPUT_REQUIRED, AUTH_REQUIRED), "
                f"not {pb.SendKind.Name(req.kind)}; end the turn with processing_complete")
        return await self._p._invoke("Send", call)

    async def processing_complete(self, req: pb.ProcessingCompleteRequest, timeout: Optional[float] = None) -> pb.ProcessingCompleteResponse:
        """Tell the platform that a turn ended (success, failure,
        cancelled, rejected)."""
        return await self._p._invoke("ProcessingComplete", lambda i: self._pf(i).processing_complete(req, timeout))


class ToolsetHandle:
    """The plugin's tools, for the host's model."""

    def __init__(self, plugin: "Plugin"):
        self._p = plugin

    def _ts(self, inst: "Instance"):
        if inst.toolset is None:
            raise _no_longer(self._p, "toolset")
        return inst.toolset

    async def list_tools(self, timeout: Optional[float] = None) -> list[pb.ToolDefinition]:
        """The tools with their JSON Schemas (OpenAI function style)."""
        return await self._p._invoke("ListTools", lambda i: self._ts(i).list_tools(timeout))

    async def call_tool(
        self, req: pb.CallToolRequest, progress: Optional[ProgressFunc] = None, timeout: Optional[float] = None
    ) -> pb.ToolResult:
        """Run one tool: progress gets each progress event, the result is
        returned. A tool that fails in a way the model should see returns
        a result with is_error; an exception means the call itself broke."""
        return await self._p._invoke(f"CallTool {req.name!r}", lambda i: self._ts(i).call_tool(req, progress, timeout))


class LifecycleHandle:
    """The plugin's lifecycle service. Hosts rarely need it: the Manager
    describes, configures and drains plugins itself."""

    def __init__(self, plugin: "Plugin"):
        self._p = plugin

    async def describe(self, timeout: Optional[float] = None) -> pb.DescribeResponse:
        async def call(inst: "Instance") -> Any:
            assert inst.lifecycle is not None
            return await inst.lifecycle.Describe(pb.DescribeRequest(host_protocol_minor=PROTOCOL_MINOR), timeout=timeout)

        return await self._p._invoke("Describe", _grpc(call))

    async def drain(self, timeout_ms: int = 0, timeout: Optional[float] = None) -> pb.DrainResponse:
        async def call(inst: "Instance") -> Any:
            assert inst.lifecycle is not None
            return await inst.lifecycle.Drain(pb.DrainRequest(timeout_ms=timeout_ms), timeout=timeout)

        return await self._p._invoke("Drain", _grpc(call))


def _grpc(fn: Callable[["Instance"], Awaitable[Any]]) -> Callable[["Instance"], Awaitable[Any]]:
    """Turn a raw stub call's RpcError into the StatusError of its code."""

    async def wrapped(inst: "Instance") -> Any:
        try:
            return await fn(inst)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    return wrapped
