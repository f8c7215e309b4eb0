"""One running plugin process and its connection: launch through the
go-plugin handshake, the broker and stdio streams, Describe, Configure
with the host callback served through the broker, and the graceful kill.

An Instance is never reused: a restart makes a new one, as the Go host SDK
makes a fresh go-plugin client.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import signal
from typing import Any, Mapping, Optional

import grpc
from google.protobuf import empty_pb2

from agentplugin.v1 import agentplugin_pb2 as pb
from agentplugin.v1 import agentplugin_pb2_grpc as pbg

from ._goplugin import goplugin_pb2, goplugin_pb2_grpc
from .broker import Broker
from .errors import HandshakeError, from_rpc_error
from .handshake import HandshakeLine, Transport, handshake_env, parse_handshake_line
from .host_service import HostServer
from .mtls import TLS_SERVER_NAME, KeyPair, generate_cert
from .platform import PlatformClient
from .stdio import LineRing, LineSplitter, log_plugin_line, stderr_sink
from .tmpdirs import make_owned_dir
from .toolset import ToolsetClient
from .version import MAX_MESSAGE_BYTES, PROTOCOL_MINOR

#: How long kill waits for the plugin to exit after the controller's
#: Shutdown before it kills the process group (go-plugin waits 2 s).
KILL_GRACE = 2.0
#: How long kill waits for the plugin's pipes to close after it exited (a
#: child holding them open) before it kills the whole process group.
PIPES_GRACE = 1.0


def message_options() -> list[tuple[str, Any]]:
    """The message size limits both sides use (plugin.MaxMessageBytes)."""
    return [("grpc.max_send_message_length", MAX_MESSAGE_BYTES), ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES)]


class Instance:
    """A launched plugin process, connected and described."""

    def __init__(self, path: str, logger: logging.Logger):
        self.path = path
        self.log = logger
        self.proc: Optional[asyncio.subprocess.Process] = None
        self.pid = 0
        self.env: dict[str, str] = {}
        self.socket_dir = ""
        self.channel: Optional[grpc.aio.Channel] = None
        self.broker: Optional[Broker] = None
        self.lifecycle: Optional[pbg.PluginServiceStub] = None
        self.platform: Optional[PlatformClient] = None
        self.toolset: Optional[ToolsetClient] = None
        self.host_server: Optional[HostServer] = None
        self._host_grpc: Optional[grpc.aio.Server] = None
        self.desc = pb.DescribeResponse()
        self.handshake: Optional[HandshakeLine] = None
        self.endpoints: list[str] = []
        self.exited: "asyncio.Future[int]" = asyncio.get_running_loop().create_future()
        self.stderr_from = 0
        self._tasks: list[asyncio.Task] = []
        self._drains: list[asyncio.Task] = []
        self._killing: Optional[asyncio.Task] = None
        self._server_creds: Optional[grpc.ServerCredentials] = None

    # -- launch ----------------------------------------------------------

    @classmethod
    async def launch(
        cls,
        path: str,
        env: Mapping[str, str],
        transport: Transport,
        start_timeout: float,
        logger: logging.Logger,
        ring: Optional[LineRing] = None,
    ) -> "Instance":
        """Start path with env (the whole environment: nothing else is
        inherited), complete the handshake within start_timeout, connect,
        start the broker and stdio streams and Describe. On any failure the
        process is killed and the error raised (HandshakeError when it is
        not a plugin of our protocol major)."""
        inst = cls(path, logger)
        try:
            await inst._launch(env, transport, start_timeout, ring)
        except BaseException:
            await inst.kill()
            raise
        return inst

    async def _launch(self, env: Mapping[str, str], transport: Transport, start_timeout: float, ring: Optional[LineRing]) -> None:
        # Mode 0700, naming this process, after sweeping the ones killed
        # hosts left (they could not remove theirs).
        self.socket_dir = make_owned_dir("agentplugin-")
        keys: Optional[KeyPair] = generate_cert() if transport is Transport.AUTO_MTLS else None
        self.env = dict(env)
        full = dict(env)
        full.update(handshake_env(transport, self.socket_dir, keys.cert_pem if keys else None))
        self.stderr_from = ring.mark() if ring is not None else 0
        try:
            self.proc = await asyncio.create_subprocess_exec(
                self.path, env=full, stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                process_group=0,  # its own group: killing it takes its children, and Ctrl-C stays with the host
            )
        except OSError as e:
            raise HandshakeError(f"{self.path} could not be started: {e}") from e
        self.pid = self.proc.pid
        self._tasks.append(asyncio.ensure_future(self._watch_exit()))
        assert self.proc.stderr is not None and self.proc.stdout is not None
        self._drains.append(asyncio.ensure_future(self._drain(self.proc.stderr, LineSplitter(stderr_sink(self.log, ring)))))

        line = await self._handshake_line(start_timeout, ring)
        hs = parse_handshake_line(line, self.path)
        self.handshake = hs
        self._drains.append(asyncio.ensure_future(
            self._drain(self.proc.stdout, LineSplitter(lambda l: log_plugin_line(self.log, l, "stdout")))))
        if transport is Transport.AUTO_MTLS and hs.server_cert_pem is None:
            raise HandshakeError(f"{self.path} answered without a certificate although the host asked for AutoMTLS")
        self._connect(hs, keys)
        assert self.channel is not None
        self.broker = Broker(self.channel, self.socket_dir, self._server_creds, self.log)
        self.broker.start()
        self._tasks.append(asyncio.ensure_future(self._stdio()))
        self.lifecycle = pbg.PluginServiceStub(self.channel)
        try:
            self.desc = await self.lifecycle.Describe(
                pb.DescribeRequest(host_protocol_minor=PROTOCOL_MINOR), timeout=start_timeout)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    async def _handshake_line(self, timeout: float, ring: Optional[LineRing]) -> str:
        assert self.proc is not None and self.proc.stdout is not None
        read = asyncio.ensure_future(self.proc.stdout.readline())
        done, _ = await asyncio.wait({read, self.exited}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if read in done and read.exception() is not None:
            # StreamReader's line limit (64 KiB): far beyond any handshake line.
            raise HandshakeError(f"{self.path} wrote a first line of more than 64 KiB to stdout instead of a "
                                 "go-plugin handshake line (is it an agentplugin plugin?)")
        if read in done and read.result():
            return read.result().decode("utf-8", "replace")
        read.cancel()
        tail = ""
        if ring is not None:
            await asyncio.sleep(0.05)  # let the last stderr lines arrive
            lines = ring.notable_since(self.stderr_from, 3)
            if lines:
                tail = "; stderr: " + " | ".join(lines)
        if self.exited.done():
            raise HandshakeError(f"{self.path} exited ({_exit_text(self.exited.result())}) before the handshake{tail}")
        raise HandshakeError(f"{self.path} sent no handshake line within {timeout:g}s{tail}")

    def _connect(self, hs: HandshakeLine, keys: Optional[KeyPair]) -> None:
        opts = message_options()
        if keys is not None and hs.server_cert_pem is not None:
            creds = grpc.ssl_channel_credentials(
                root_certificates=hs.server_cert_pem, private_key=keys.key_pem, certificate_chain=keys.cert_pem)
            opts.append(("grpc.ssl_target_name_override", TLS_SERVER_NAME))
            self.channel = grpc.aio.secure_channel(hs.target, creds, options=opts)
            # The host's broker servers present the host's certificate and
            # accept only the plugin's, as go-plugin's client does.
            self._server_creds = grpc.ssl_server_credentials(
                [(keys.key_pem, keys.cert_pem)], root_certificates=hs.server_cert_pem, require_client_auth=True)
        else:
            self.channel = grpc.aio.insecure_channel(hs.target, options=opts)

    async def _watch_exit(self) -> None:
        assert self.proc is not None
        code = await self.proc.wait()
        if not self.exited.done():
            self.exited.set_result(code)

    async def _drain(self, stream: asyncio.StreamReader, sink: LineSplitter) -> None:
        while True:
            chunk = await stream.read(65536)
            if not chunk:
                sink.flush()
                return
            sink.write(chunk)

    async def _stdio(self) -> None:
        """Copy go-plugin's StreamStdio (what the plugin writes to its
        stdout and stderr after Serve took them over) into the log."""
        assert self.channel is not None
        stub = goplugin_pb2_grpc.GRPCStdioStub(self.channel)
        out = LineSplitter(lambda l: log_plugin_line(self.log, l, "stdout"))
        err = LineSplitter(lambda l: log_plugin_line(self.log, l, "stderr"))
        try:
            async for data in stub.StreamStdio(empty_pb2.Empty()):
                (out if data.channel == goplugin_pb2.StdioData.STDOUT else err).write(data.data)
        except (grpc.RpcError, asyncio.CancelledError):
            pass
        out.flush()
        err.flush()

    # -- configure and dispense -------------------------------------------

    async def configure(
        self,
        config_json: bytes,
        data_dir: str,
        log_level: str,
        host_info: pb.HostInfo,
        host_server: Optional[HostServer],
        timeout: float,
    ) -> pb.ConfigureResponse:
        """Serve host_server through the broker (when given) and call the
        plugin's Configure with its broker id."""
        assert self.broker is not None and self.lifecycle is not None
        req = pb.ConfigureRequest(config_json=config_json, data_dir=data_dir, log_level=log_level, host=host_info)
        if host_server is not None:
            bid = self.broker.next_id()
            self._host_grpc = await self.broker.accept_and_serve(
                bid, lambda s: pbg.add_HostServiceServicer_to_server(host_server.servicer(), s), message_options())
            self.host_server = host_server
            req.host_broker_id = bid
        try:
            return await self.lifecycle.Configure(req, timeout=timeout)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    def dispense(self, host_minor: int) -> None:
        """Make the clients of the services Describe listed."""
        assert self.channel is not None
        caps = set(self.desc.capabilities)
        if pb.CAPABILITY_TOOLSET in caps:
            self.toolset = ToolsetClient(pbg.ToolsetServiceStub(self.channel))
        if pb.CAPABILITY_PLATFORM in caps:
            use_streams = min(host_minor, self.desc.protocol_minor) >= 2
            self.platform = PlatformClient(pbg.PlatformAdapterServiceStub(self.channel), use_streams, self.log)

    # -- life --------------------------------------------------------------

    @property
    def alive(self) -> bool:
        return not self.exited.done()

    @property
    def killed(self) -> bool:
        """Whether kill has finished."""
        return self._killing is not None and self._killing.done()

    def exit_status(self) -> str:
        """How the process ended (after exited is done)."""
        if not self.exited.done():
            return "running"
        return _exit_text(self.exited.result())

    async def kill(self, grace: float = KILL_GRACE) -> None:
        """Stop the process: the controller's Shutdown, then after grace the
        whole process group with SIGKILL; release every resource. Safe to
        call more than once and concurrently."""
        if self._killing is None:
            self._killing = asyncio.ensure_future(self._kill(grace))
        await asyncio.shield(self._killing)

    async def _kill(self, grace: float) -> None:
        if self.proc is not None and self.channel is not None and self.alive:
            try:
                await goplugin_pb2_grpc.GRPCControllerStub(self.channel).Shutdown(goplugin_pb2.Empty(), timeout=grace)
            except (grpc.RpcError, asyncio.TimeoutError):
                pass  # Shutdown stops the server under its own call
        # Every resource is released whatever the steps before did.
        for step in (self.platform.close if self.platform is not None else None,
                     self.broker.close if self.broker is not None else None,
                     self.channel.close if self.channel is not None else None):
            if step is None:
                continue
            try:
                await step()
            except Exception as e:  # pragma: no cover - defensive
                self.log.debug("releasing the plugin's connection: %s", e)
        if self.proc is not None and self.channel is None and self.alive:
            # Never got as far as a connection (not a plugin, or a failed
            # handshake): nothing to stop gracefully.
            _killpg(self.pid)
        if self.proc is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self.exited), grace)
            except asyncio.TimeoutError:
                self.log.warning("plugin did not exit within %gs of Shutdown; killing its process group", grace)
                _killpg(self.pid)
                await self.exited
            if self._drains:
                _, slow = await asyncio.wait(self._drains, timeout=PIPES_GRACE)
                if slow:
                    # A child of the plugin holds its pipes open.
                    _killpg(self.pid)
                    await asyncio.wait(slow, timeout=PIPES_GRACE)
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, *self._drains, return_exceptions=True)
        if self.socket_dir:
            shutil.rmtree(self.socket_dir, ignore_errors=True)


def _killpg(pid: int) -> None:
    if pid <= 0:
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _exit_text(code: int) -> str:
    if code < 0:
        try:
            return f"signal: {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"
