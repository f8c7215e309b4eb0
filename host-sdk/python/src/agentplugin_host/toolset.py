"""ToolsetService as the host calls it: ListTools, and CallTool — a server
stream of progress events, then exactly one result."""

from __future__ import annotations

import inspect
from typing import Any, Awaitable, Callable, Optional, Union

import grpc

from agentplugin.v1 import agentplugin_pb2 as pb
from agentplugin.v1 import agentplugin_pb2_grpc as pbg

from .errors import NoResult, PluginError, from_rpc_error

#: A progress callback: called with each ToolProgress, plain or async. An
#: exception it raises stops the call.
ProgressFunc = Callable[[pb.ToolProgress], Union[None, Awaitable[None]]]


class ToolsetClient:
    """The gRPC client of one process's ToolsetService."""

    def __init__(self, stub: pbg.ToolsetServiceStub):
        self._stub = stub

    async def list_tools(self, timeout: Optional[float] = None) -> list[pb.ToolDefinition]:
        try:
            resp = await self._stub.ListTools(pb.ListToolsRequest(), timeout=timeout)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None
        return list(resp.tools)

    async def call_tool(
        self, req: pb.CallToolRequest, progress: Optional[ProgressFunc] = None, timeout: Optional[float] = None
    ) -> pb.ToolResult:
        call: Any = self._stub.CallTool(req, timeout=timeout)
        try:
            while True:
                msg = await call.read()
                if msg is grpc.aio.EOF:
                    raise NoResult(f"tool {req.name!r}: the plugin ended the tool call without a result")
                event = msg.WhichOneof("event")
                if event == "result":
                    return msg.result
                if event == "progress" and progress is not None:
                    try:
                        r = progress(msg.progress)
                        if inspect.isawaitable(r):
                            await r
                    except Exception as e:
                        raise PluginError(f"tool {req.name!r}: the progress callback stopped the call: {e}") from e
                # An event of a newer protocol minor: skip it.
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None
        finally:
            call.cancel()  # ends the stream when we stop reading early
