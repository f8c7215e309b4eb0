"""The host's half of go-plugin's GRPCBroker: how the host serves its
callback service to the plugin.

go-plugin multiplexes nothing over the plugin's own connection. To serve
something to the plugin, the host listens on a fresh Unix socket, serves a
gRPC server there (with AutoMTLS: the host's certificate, requiring the
plugin's), and tells the plugin where with a ``ConnInfo{service_id,
network, address}`` on the ``plugin.GRPCBroker/StartStream`` stream, which
lives as long as the connection. The plugin dials that id
(``ConfigureRequest.host_broker_id`` names it). Connections the plugin
offers the host the same way are logged and left alone: agentplugin
plugins offer none.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any, Callable, Optional, Sequence

import grpc

from ._goplugin import goplugin_pb2, goplugin_pb2_grpc


class Broker:
    """One plugin connection's broker stream and the servers served on it."""

    def __init__(
        self,
        channel: grpc.aio.Channel,
        socket_dir: str,
        server_credentials: Optional[grpc.ServerCredentials],
        logger: logging.Logger,
    ):
        self._stub = goplugin_pb2_grpc.GRPCBrokerStub(channel)
        self._socket_dir = socket_dir
        self._creds = server_credentials
        self._log = logger
        self._call: Any = None
        self._reader: Optional[asyncio.Task] = None
        self._write_lock = asyncio.Lock()
        self._next_id = 0
        self._servers: list[grpc.aio.Server] = []
        self._closed = False

    def start(self) -> None:
        """Open the broker stream (it lives until close)."""
        self._call = self._stub.StartStream()
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        try:
            while True:
                info = await self._call.read()
                if info is grpc.aio.EOF:
                    return
                self._log.debug(
                    "the plugin offers a connection through the broker (service id %d at %s %s); this host dials none",
                    info.service_id, info.network, info.address,
                )
        except (grpc.RpcError, asyncio.CancelledError):
            return

    def next_id(self) -> int:
        """A fresh broker id (1, 2, …)."""
        self._next_id += 1
        return self._next_id

    async def accept_and_serve(
        self,
        service_id: int,
        register: Callable[[grpc.aio.Server], None],
        options: Sequence[tuple[str, Any]] = (),
        interceptors: Sequence[Any] = (),
    ) -> grpc.aio.Server:
        """Serve a new gRPC server for service_id — register adds the
        servicers — and tell the plugin where it listens."""
        if self._closed or self._call is None:
            raise RuntimeError("the broker is closed")
        path = os.path.join(self._socket_dir, f"host-{service_id}.sock")
        if os.path.exists(path):
            os.unlink(path)
        server = grpc.aio.server(options=list(options), interceptors=list(interceptors) or None)
        register(server)
        target = "unix:" + path
        if self._creds is not None:
            server.add_secure_port(target, self._creds)
        else:
            server.add_insecure_port(target)
        await server.start()
        self._servers.append(server)
        async with self._write_lock:
            await self._call.write(goplugin_pb2.ConnInfo(service_id=service_id, network="unix", address=path))
        return server

    async def stop_server(self, server: grpc.aio.Server, grace: Optional[float] = None) -> None:
        """Stop one served server."""
        if server in self._servers:
            self._servers.remove(server)
        await server.stop(grace)

    async def close(self) -> None:
        """End the broker stream and stop every server served on it."""
        if self._closed:
            return
        self._closed = True
        if self._call is not None:
            self._call.cancel()
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        servers, self._servers = self._servers, []
        await asyncio.gather(*(s.stop(None) for s in servers), return_exceptions=True)
