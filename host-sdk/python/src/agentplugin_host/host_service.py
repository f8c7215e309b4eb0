"""The host callback service (HostService) a host serves to its plugin
through the go-plugin broker, and the Host interface a host implements.

The host implements :class:`Host` — ``handle_message``, ``cancel_turn``,
``list_tools``, and, if it has them, the optional ``complete`` and
``record_delegation`` (a method that is absent answers UNIMPLEMENTED, and
the host's ``HostInfo.optional_rpcs`` lists exactly those present). The
``Watch`` stream is served here: a heartbeat at once and then every
interval, a ShutdownNotice when the host stops the plugin on purpose; when
the host process dies the stream breaks and the plugin exits.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Optional, Protocol, runtime_checkable

import grpc

from agentplugin.v1 import agentplugin_pb2 as pb
from agentplugin.v1 import agentplugin_pb2_grpc as pbg

from .callstream import serve_calls
from .errors import StatusError, Unimplemented, to_status

#: How often the Watch stream carries a heartbeat by default
#: (plugin.DefaultHeartbeat).
DEFAULT_HEARTBEAT = 5.0

#: Optional HostService RPCs and the Host methods that implement them.
OPTIONAL_RPCS = {"Complete": "complete", "RecordDelegation": "record_delegation"}


@runtime_checkable
class Host(Protocol):
    """What a host implements to serve its plugins' callbacks. Every method
    is a coroutine run on the Manager's loop; raise an
    :class:`~agentplugin_host.errors.StatusError` subclass (e.g.
    ``InvalidArgument``) to answer with its code.

    Optional, detected by presence: ``async complete(req:
    CompleteRequest) -> CompleteResponse`` (a one-shot model call) and
    ``async record_delegation(req: RecordDelegationRequest) -> None``.
    """

    async def handle_message(self, req: pb.HandleMessageRequest) -> Optional[pb.HandleMessageResponse]:
        """Inject an inbound message into the live session for req.chat_id
        and return once it is accepted; the output goes back later through
        the Platform handle's send and processing_complete."""
        ...

    async def cancel_turn(self, req: pb.CancelTurnRequest) -> Optional[pb.CancelTurnResponse]:
        """Really stop the running turn of the conversation."""
        ...

    async def list_tools(self) -> list[pb.ToolDefinition]:
        """The host's live tool registry (the Agent Card's skills)."""
        ...


def optional_rpcs(host: Any) -> list[str]:
    """The optional HostService RPCs host implements."""
    if host is None:
        return []
    return [rpc for rpc, attr in OPTIONAL_RPCS.items() if callable(getattr(host, attr, None))]


class HostServer:
    """Serves HostService for one plugin process: forwards to a Host (which
    may be None: every RPC but Watch then answers UNIMPLEMENTED) and serves
    Watch itself."""

    def __init__(self, host: Any, heartbeat: float = DEFAULT_HEARTBEAT, logger: Optional[logging.Logger] = None):
        self.host = host
        self.heartbeat = heartbeat if heartbeat > 0 else DEFAULT_HEARTBEAT
        self.log = logger or logging.getLogger(__name__)
        self._shutdown = asyncio.Event()
        self._reason = ""
        self._watches: set[asyncio.Future] = set()
        #: How many Watch streams carried the ShutdownNotice to the end.
        self.notices_sent = 0

    def shutdown(self, reason: str) -> None:
        """Send a ShutdownNotice with reason on every open and future Watch
        stream and end them: the plugin then expects to be stopped and does
        not take the end of the stream for the host's death. Only the
        first call counts."""
        if not self._shutdown.is_set():
            self._reason = reason
            self._shutdown.set()

    async def shutdown_and_wait(self, reason: str, timeout: float) -> None:
        """shutdown, then wait (at most timeout) until every open Watch
        stream has carried the notice, so that it reaches the plugin before
        the host stops it."""
        self.shutdown(reason)
        if self._watches:
            await asyncio.wait(list(self._watches), timeout=timeout)

    def servicer(self) -> pbg.HostServiceServicer:
        """The generated servicer to register on a gRPC server."""
        return _HostServicer(self)


async def _call(context: Any, method: str, fn: Any, *args: Any) -> Any:
    """Run a host method for a unary RPC, answering its error as a status."""
    try:
        return await fn(*args)
    except asyncio.CancelledError:
        raise
    except Exception as e:
        code, msg = to_status(e)
        if not isinstance(e, StatusError):
            logging.getLogger(__name__).warning("HostService.%s: the host raised %s", method, msg, exc_info=True)
        await context.abort(code, msg)


def _unimplemented(method: str) -> str:
    return f"the host does not implement HostService.{method}"


class _HostServicer(pbg.HostServiceServicer):
    def __init__(self, hs: HostServer):
        self.hs = hs

    def _method(self, attr: str) -> Any:
        h = self.hs.host
        return getattr(h, attr, None) if h is not None else None

    async def _handle_message(self, req: pb.HandleMessageRequest) -> pb.HandleMessageResponse:
        fn = self._method("handle_message")
        if fn is None:
            raise Unimplemented(_unimplemented("HandleMessage"))
        out = await fn(req)
        return out if out is not None else pb.HandleMessageResponse()

    async def HandleMessage(self, request: pb.HandleMessageRequest, context: Any) -> pb.HandleMessageResponse:
        return await _call(context, "HandleMessage", self._handle_message, request)

    async def HandleMessages(self, request_iterator: Any, context: Any) -> None:
        def wrap(cid: int, out: Any, err: Optional[tuple[int, str]]) -> pb.HandleMessagesResponse:
            if err is not None:
                return pb.HandleMessagesResponse(call_id=cid, error=pb.CallError(code=err[0], message=err[1]))
            return pb.HandleMessagesResponse(call_id=cid, response=out)

        await serve_calls(context, self._handle_message, wrap, "HostService.HandleMessages", self.hs.log)

    async def CancelTurn(self, request: pb.CancelTurnRequest, context: Any) -> pb.CancelTurnResponse:
        fn = self._method("cancel_turn")
        if fn is None:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, _unimplemented("CancelTurn"))
        out = await _call(context, "CancelTurn", fn, request)
        return out if out is not None else pb.CancelTurnResponse()

    async def ListTools(self, request: pb.HostServiceListToolsRequest, context: Any) -> pb.HostServiceListToolsResponse:
        fn = self._method("list_tools")
        if fn is None:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, _unimplemented("ListTools"))
        tools = await _call(context, "ListTools", fn)
        return pb.HostServiceListToolsResponse(tools=list(tools or []))

    async def Complete(self, request: pb.CompleteRequest, context: Any) -> pb.CompleteResponse:
        fn = self._method("complete")
        if fn is None:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, _unimplemented("Complete"))
        out = await _call(context, "Complete", fn, request)
        return out if out is not None else pb.CompleteResponse()

    async def RecordDelegation(self, request: pb.RecordDelegationRequest, context: Any) -> pb.RecordDelegationResponse:
        fn = self._method("record_delegation")
        if fn is None:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, _unimplemented("RecordDelegation"))
        await _call(context, "RecordDelegation", fn, request)
        return pb.RecordDelegationResponse()

    async def Watch(self, request: pb.WatchRequest, context: Any):  # type: ignore[override]
        hs = self.hs
        done = asyncio.get_running_loop().create_future()
        hs._watches.add(done)
        try:
            yield pb.WatchResponse(heartbeat=pb.Heartbeat(unix_ms=int(time.time() * 1000)))
            while True:
                try:
                    await asyncio.wait_for(hs._shutdown.wait(), hs.heartbeat)
                except asyncio.TimeoutError:
                    yield pb.WatchResponse(heartbeat=pb.Heartbeat(unix_ms=int(time.time() * 1000)))
                    continue
                yield pb.WatchResponse(shutdown=pb.ShutdownNotice(reason=hs._reason))
                hs.notices_sent += 1
                return
        finally:
            hs._watches.discard(done)
            if not done.done():
                done.set_result(None)
