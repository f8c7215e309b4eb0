"""PlatformAdapterService as the host calls it: Connect, Disconnect, Send
(over the SendStream call stream from contract 1.2), ProcessingComplete."""

from __future__ import annotations

import logging
from typing import Optional

import grpc

from agentplugin.v1 import agentplugin_pb2 as pb
from agentplugin.v1 import agentplugin_pb2_grpc as pbg

from .callstream import CallStreamClient
from .errors import from_rpc_error

#: Send kinds that may carry ends_turn (contract 1.1).
ENDS_TURN_KINDS = frozenset({
    pb.SEND_KIND_FINAL, pb.SEND_KIND_DIRECT_REPLY, pb.SEND_KIND_INPUT_REQUIRED, pb.SEND_KIND_AUTH_REQUIRED,
})


class PlatformClient:
    """The gRPC client of one process's PlatformAdapterService."""

    def __init__(self, stub: pbg.PlatformAdapterServiceStub, use_call_streams: bool, logger: logging.Logger):
        self._stub = stub
        self._sends: Optional[CallStreamClient[pb.SendRequest, pb.SendResponse]] = None
        if use_call_streams:
            self._sends = CallStreamClient(
                open=stub.SendStream,
                wrap=lambda cid, ms, req: pb.SendStreamRequest(call_id=cid, request=req, timeout_ms=ms),
                cancel_envelope=lambda cid: pb.SendStreamRequest(call_id=cid, cancel=True),
                unary=self._send_unary,
                logger=logger,
            )

    @property
    def uses_call_stream(self) -> bool:
        """Whether Send goes over SendStream (until it falls back)."""
        return self._sends is not None and not self._sends.fallen_back

    async def connect(self, timeout: Optional[float] = None) -> pb.ConnectResponse:
        try:
            return await self._stub.Connect(pb.ConnectRequest(), timeout=timeout)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    async def disconnect(self, timeout: Optional[float] = None) -> pb.DisconnectResponse:
        try:
            return await self._stub.Disconnect(pb.DisconnectRequest(), timeout=timeout)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    async def send(self, req: pb.SendRequest, timeout: Optional[float] = None) -> pb.SendResponse:
        if self._sends is not None:
            return await self._sends.call(req, timeout)
        return await self._send_unary(req, timeout)

    async def _send_unary(self, req: pb.SendRequest, timeout: Optional[float]) -> pb.SendResponse:
        try:
            return await self._stub.Send(req, timeout=timeout)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    async def processing_complete(self, req: pb.ProcessingCompleteRequest, timeout: Optional[float] = None) -> pb.ProcessingCompleteResponse:
        try:
            return await self._stub.ProcessingComplete(req, timeout=timeout)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    async def close(self) -> None:
        if self._sends is not None:
            await self._sends.close()
