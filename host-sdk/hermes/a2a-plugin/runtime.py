"""The a2a-plugin binary in a Hermes process: one per HERMES_HOME.

Hermes runs ``register(ctx)`` in every process that discovers plugins —
the gateway, the CLI, cron. Only one process may run the binary on the
plugin's data directory (``ctx.state.data_dir``): a binary that starts
fails the tasks it finds running, which would be the other one's. So:

* The **gateway** process owns the data directory. When the platform
  adapter connects, it takes an exclusive lock (``owner.lock``), runs the
  binary on ``state/`` with inbound serving on, and serves a small tool
  proxy (the contract's ToolsetService, on a Unix socket in a private 0700
  directory whose address it writes to ``run/tools.addr``).
* Any **other** process (CLI, cron, a second gateway's tools) never opens
  that data directory. Its tool calls go to the owner's proxy — the same
  binary, the same conversations and identity — when a gateway runs; when
  none does, to a private binary it starts lazily for tools only (no
  inbound server, memory store, a temporary directory), stopped when the
  process exits.
* Tool schemas are needed at ``register`` time in every process, before
  any of that: they are cached in ``tools.json`` (keyed by the binary and
  its configuration), and listed once through the proxy or a short-lived
  private binary when the cache does not match.

Everything runs on one LoopThread (the SDK's loop), so gRPC never shares
Hermes' gateway loop; the adapter hops between the two.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import errno
import fcntl
import hashlib
import json
import logging
import os
import shutil
import threading
from typing import Any, Callable, Optional

import grpc
from google.protobuf import json_format

from agentplugin.v1 import agentplugin_pb2_grpc as pbg
from agentplugin_host import LoopThread, Manager, NotReady, Options, PluginError, StatusError, Unavailable, pb
from agentplugin_host.tmpdirs import make_owned_dir
from agentplugin_host.toolset import ToolsetClient

from .settings import Settings

log = logging.getLogger("a2a_plugin")

#: The binary's plugin name (DescribeResponse.name) and the platform name it
#: uses in every host call (HandleMessageRequest.platform).
BINARY_PLUGIN = "a2a"


class OwnedElsewhere(PluginError):
    """Another process already runs the binary on this data directory."""


def peer_reachable_toolsets(settings: Settings) -> set[str]:
    """The toolsets a peer's turn may use: those settings.peer_toolsets
    names for the public and trusted tiers (a tier left to the platform's
    own toolsets names none here; local callers are not peers)."""
    out: set[str] = set()
    for tier in ("public", "trusted"):
        out.update(str(t) for t in (settings.peer_toolsets.get(tier) or []))
    return out


def _available(entry: Any) -> bool:
    """Whether a registry entry's check_fn passes (Hermes offers a tool
    whose check fails to no turn)."""
    check = getattr(entry, "check_fn", None)
    if check is None:
        return True
    try:
        return bool(check())
    except Exception:
        return False


def hermes_tool_definitions(settings: Optional[Settings] = None) -> list[pb.ToolDefinition]:
    """Hermes' live tool registry as ToolDefinitions, for the Agent Card's
    skills when the operator advertises host tools (the binary's
    advertised_toolsets): only the tools a peer can get — of a toolset some
    peer tier may use (peer_toolsets) and available (check_fn) — never the
    operator's whole registry."""
    try:
        from tools.registry import registry  # Hermes' process-wide registry
    except ImportError:
        return []
    reachable = peer_reachable_toolsets(settings) if settings is not None else None
    out = []
    for e in registry.get_all_entries():
        toolset = str(getattr(e, "toolset", "") or "")
        if reachable is not None and toolset not in reachable:
            continue
        if not _available(e):
            continue
        schema = getattr(e, "schema", None) or {}
        out.append(pb.ToolDefinition(
            name=e.name, description=str(schema.get("description") or getattr(e, "description", "") or ""),
            parameters_json_schema=json.dumps(schema.get("parameters") or {"type": "object"}),
            toolset=toolset))
    return out


class HostBridge:
    """The Host of the owner's binary: the connected platform adapter's
    callbacks (which hop to the gateway loop), or NotReady between an
    adapter's disconnect and the next connect."""

    def __init__(self, settings: Settings) -> None:
        self.adapter: Any = None
        self._settings = settings

    def _adapter(self) -> Any:
        if self.adapter is None:
            raise NotReady("the Hermes a2a platform adapter is not connected; the gateway is starting or stopping")
        return self.adapter

    async def handle_message(self, req: pb.HandleMessageRequest) -> pb.HandleMessageResponse:
        return await self._adapter().host_handle_message(req)

    async def cancel_turn(self, req: pb.CancelTurnRequest) -> pb.CancelTurnResponse:
        return await self._adapter().host_cancel_turn(req)

    async def list_tools(self) -> list[pb.ToolDefinition]:
        return hermes_tool_definitions(self._settings)


class ToolsOnlyHost:
    """The Host of a private tools-only binary: it never gets an inbound
    message (it serves none)."""

    async def handle_message(self, req: pb.HandleMessageRequest) -> pb.HandleMessageResponse:
        raise NotReady("this Hermes process does not serve inbound A2A; its gateway does")

    async def cancel_turn(self, req: pb.CancelTurnRequest) -> pb.CancelTurnResponse:
        return pb.CancelTurnResponse(cancelled=False)

    async def list_tools(self) -> list[pb.ToolDefinition]:
        return []  # it serves no card


class Runtime:
    """The binary, its tools and its lock for one data directory, in this
    process. Get it with Runtime.get; close it at unload."""

    _registry: dict[str, "Runtime"] = {}
    _registry_mu = threading.Lock()

    @classmethod
    def get(cls, settings: Settings, data_dir: str) -> "Runtime":
        key = os.path.realpath(data_dir)
        with cls._registry_mu:
            rt = cls._registry.get(key)
            if rt is None or rt._closed:
                rt = cls(settings, key)
                cls._registry[key] = rt
            else:
                rt.settings = settings
            return rt

    def __init__(self, settings: Settings, data_dir: str):
        self.settings = settings
        self.data_dir = data_dir
        self.state_dir = os.path.join(data_dir, "state")
        self.run_dir = os.path.join(data_dir, "run")
        for d in (data_dir, self.state_dir, self.run_dir):
            os.makedirs(d, mode=0o700, exist_ok=True)
        self.lt = LoopThread("a2a-plugin")
        self.bridge = HostBridge(settings)
        self._closed = False
        # Owned by the loop thread:
        self._owner: Optional[Manager] = None
        self._lock_fd: Optional[int] = None
        self._proxy: Optional[grpc.aio.Server] = None
        self._proxy_dir = ""
        self._private: Optional[Manager] = None
        self._private_dir = ""
        self._client: Optional[tuple[grpc.aio.Channel, ToolsetClient]] = None
        self._init_lock: Optional[asyncio.Lock] = None
        atexit.register(self.close)

    # -- paths ---------------------------------------------------------------

    @property
    def lock_path(self) -> str:
        return os.path.join(self.data_dir, "owner.lock")

    @property
    def addr_path(self) -> str:
        return os.path.join(self.run_dir, "tools.addr")

    @property
    def cache_path(self) -> str:
        return os.path.join(self.data_dir, "tools.json")

    def _lock(self) -> asyncio.Lock:
        if self._init_lock is None:
            self._init_lock = asyncio.Lock()
        return self._init_lock

    @property
    def serving(self) -> bool:
        """Whether this process runs the owner binary (the gateway)."""
        return self._owner is not None

    def binary_present(self) -> bool:
        """Whether the binary is there to run (the tools' check_fn)."""
        return os.access(self.settings.binary, os.X_OK)

    def _options(self, host: Any, data_dir: str, config: dict, **kw: Any) -> Options:
        return Options(paths=[self.settings.binary], host=host, data_dir=data_dir, config={BINARY_PLUGIN: config},
                       env_allow=["A2A_*"], transport=self.settings.transport, log_level=self.settings.log_level,
                       logger=log.getChild("sdk"), **kw)

    # -- tool definitions -----------------------------------------------------

    def _cache_key(self) -> str:
        try:
            st = os.stat(self.settings.binary)
            ident = f"{os.path.realpath(self.settings.binary)}|{st.st_size}|{st.st_mtime_ns}"
        except OSError:
            ident = self.settings.binary
        return hashlib.sha256((ident + "|" + self.settings.binary_config_json()).encode()).hexdigest()

    def _read_cache(self) -> Optional[list[pb.ToolDefinition]]:
        try:
            with open(self.cache_path) as f:
                data = json.load(f)
        except (OSError, ValueError):
            return None
        if data.get("key") != self._cache_key():
            return None
        return [json_format.ParseDict(t, pb.ToolDefinition()) for t in data.get("tools", [])]

    def _write_cache(self, tools: list[pb.ToolDefinition]) -> None:
        tmp = self.cache_path + f".{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump({"key": self._cache_key(), "tools": [json_format.MessageToDict(t) for t in tools]}, f)
        os.replace(tmp, self.cache_path)

    def tool_definitions(self) -> list[pb.ToolDefinition]:
        """The binary's tools, for register(ctx): from the cache when it
        matches the binary and its configuration, else listed (through the
        owner's proxy, or a private binary started for it and stopped)."""
        cached = self._read_cache()
        if cached is not None:
            return cached
        return self.lt.run(self._list_and_cache())

    async def _list_and_cache(self) -> list[pb.ToolDefinition]:
        tools: Optional[list[pb.ToolDefinition]] = None
        if self._owner is not None:
            tools = await self._owner.tools()
        else:
            client = await self._proxy_client()
            if client is not None:
                try:
                    tools = await client.list_tools(timeout=10)
                except StatusError as e:
                    log.warning("the a2a-plugin gateway's tool proxy did not answer (%s); listing with a private binary", e)
            if tools is None:
                started = self._private is None
                m = await self._private_manager()
                tools = await m.tools()
                if started:
                    await self._stop_private()
        for t in tools:
            t.toolset = ""  # the registering plugin chooses the Hermes toolset
        self._write_cache(tools)
        return tools

    # -- tool calls -----------------------------------------------------------

    def call_tool(self, req: pb.CallToolRequest, progress: Optional[Callable[[pb.ToolProgress], Any]] = None,
                  interrupted: Optional[Callable[[], bool]] = None) -> pb.ToolResult:
        """Run a tool from a Hermes worker thread; blocks that thread. When
        interrupted() turns true (Hermes interrupted the turn) the call is
        cancelled: the binary's CallTool sees its context end."""
        fut = self.lt.submit(self._call_tool(req, progress))
        while True:
            try:
                return fut.result(timeout=0.2)
            except concurrent.futures.TimeoutError:
                if interrupted is not None and interrupted():
                    fut.cancel()
                    raise InterruptedError(f"{req.name} was interrupted") from None

    async def _call_tool(self, req: pb.CallToolRequest, progress: Any) -> pb.ToolResult:
        if self._owner is not None:
            return await self._owner.call_tool(req, progress)
        client = await self._proxy_client()
        if client is not None:
            try:
                return await client.call_tool(req, progress)
            except Unavailable:
                log.info("the a2a-plugin gateway went away; running %s on a private binary", req.name)
                await self._drop_client()
        m = await self._private_manager()
        return await m.call_tool(req, progress)

    async def _private_manager(self) -> Manager:
        async with self._lock():
            if self._private is None:
                self._private_dir = make_owned_dir("a2a-plugin-tools-")
                config = dict(self.settings.a2a)
                config["store"] = "memory"
                m = Manager(self._options(ToolsOnlyHost(), self._private_dir, config, connect=False,
                                          plugin_env={BINARY_PLUGIN: {"A2A_STORE": "memory"}}))
                try:
                    await m.start()
                except BaseException:
                    await m.close()
                    raise
                log.info("no a2a-plugin gateway runs for this HERMES_HOME: a2a tools run on a private binary "
                         "(no inbound server, conversations kept in memory until this process exits)")
                self._private = m
            return self._private

    async def _stop_private(self) -> None:
        m, self._private = self._private, None
        if m is not None:
            await m.close()
        if self._private_dir:
            shutil.rmtree(self._private_dir, ignore_errors=True)
            self._private_dir = ""

    async def _proxy_client(self) -> Optional[ToolsetClient]:
        if self._client is not None:
            return self._client[1]
        try:
            with open(self.addr_path) as f:
                addr = f.read().strip()
        except OSError:
            return None
        if not addr or not self._owner_alive():
            return None
        channel = grpc.aio.insecure_channel("unix:" + addr)
        self._client = (channel, ToolsetClient(pbg.ToolsetServiceStub(channel)))
        return self._client[1]

    async def _drop_client(self) -> None:
        c, self._client = self._client, None
        if c is not None:
            await c[0].close()

    def _owner_alive(self) -> bool:
        """Whether some process holds the owner lock (taking it here would
        succeed otherwise: a stale address)."""
        try:
            fd = os.open(self.lock_path, os.O_RDWR)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            return e.errno in (errno.EWOULDBLOCK, errno.EAGAIN)
        else:
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        finally:
            os.close(fd)

    # -- serving (the gateway) -------------------------------------------------

    async def serve(self, adapter: Any) -> list[str]:
        """Become the owner and serve inbound A2A through adapter (from the
        gateway loop). Returns the endpoints."""
        return await self.lt.run_async(self._serve(adapter))

    async def _serve(self, adapter: Any) -> list[str]:
        async with self._lock():
            previous, self.bridge.adapter = self.bridge.adapter, adapter
            if self._owner is None:
                try:
                    self._take_lock()
                except BaseException:
                    self.bridge.adapter = previous
                    raise
                m = Manager(self._options(self.bridge, self.state_dir, dict(self.settings.a2a)))
                try:
                    await m.start()
                except BaseException:
                    await m.close()
                    self._release_lock()
                    self.bridge.adapter = previous
                    raise
                self._owner = m
                await self._stop_private()
                await self._drop_client()
                await self._start_proxy()
                tools = await m.tools()
                for t in tools:
                    t.toolset = ""
                self._write_cache(tools)
            return self._owner.plugin(BINARY_PLUGIN).endpoints

    def platform(self) -> Any:
        """The owner binary's Platform handle (use it on the loop thread)."""
        if self._owner is None or self._owner.plugin(BINARY_PLUGIN) is None:
            raise NotReady("the a2a-plugin binary is not running in this process")
        return self._owner.plugin(BINARY_PLUGIN).platform()

    async def stop_serving(self, adapter: Any = None) -> None:
        """Stop the owner binary (Drain, Shutdown) and give up the lock
        (from the gateway loop). With adapter: only if that adapter is the
        one serving (Hermes disconnects an adapter whose connect failed, or
        an old one a reconnect replaced, while another may serve)."""
        await self.lt.run_async(self._stop_serving(adapter))

    async def _stop_serving(self, adapter: Any = None) -> None:
        async with self._lock():
            if adapter is not None and self.bridge.adapter is not adapter:
                return
            self.bridge.adapter = None
            m, self._owner = self._owner, None
            if self._proxy is not None:
                await self._proxy.stop(1.0)
                self._proxy = None
                try:
                    os.unlink(self.addr_path)
                except OSError:
                    pass
                shutil.rmtree(self._proxy_dir, ignore_errors=True)
            if m is not None:
                try:
                    await m.close()
                except PluginError as e:
                    log.warning("a2a-plugin did not stop cleanly: %s", e)
            self._release_lock()

    def _take_lock(self) -> None:
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            try:
                owner = os.pread(fd, 64, 0).decode().strip()
            except OSError:
                owner = "?"
            os.close(fd)
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise OwnedElsewhere(
                    f"another process (pid {owner or '?'}) already runs a2a-plugin for this HERMES_HOME "
                    f"(data directory {self.data_dir}); only one Hermes gateway per HERMES_HOME may serve A2A — "
                    "stop the other gateway, or give this one its own HERMES_HOME") from None
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._lock_fd = fd

    def _release_lock(self) -> None:
        fd, self._lock_fd = self._lock_fd, None
        if fd is not None:
            os.close(fd)

    async def _start_proxy(self) -> None:
        """Serve the owner's ToolsetService to the other processes of this
        HERMES_HOME, on a Unix socket in a private 0700 directory (short
        path: socket paths are limited to ~100 bytes)."""
        # Naming this process, after sweeping those killed gateways left.
        self._proxy_dir = make_owned_dir("a2a-plugin-")
        sock = os.path.join(self._proxy_dir, "tools.sock")
        server = grpc.aio.server()
        pbg.add_ToolsetServiceServicer_to_server(_ToolProxy(self), server)
        server.add_insecure_port("unix:" + sock)
        await server.start()
        self._proxy = server
        tmp = self.addr_path + ".tmp"
        with open(tmp, "w") as f:
            f.write(sock + "\n")
        os.replace(tmp, self.addr_path)

    # -- end -------------------------------------------------------------------

    def close(self) -> None:
        """Stop everything this process runs (on unload and at exit)."""
        if self._closed:
            return
        self._closed = True
        with Runtime._registry_mu:
            if Runtime._registry.get(self.data_dir) is self:
                del Runtime._registry[self.data_dir]
        try:
            self.lt.run(self._close(), timeout=15)
        except Exception as e:  # pragma: no cover - best effort at exit
            log.warning("a2a-plugin: stopping at exit: %s", e)
        self.lt.close()
        atexit.unregister(self.close)

    async def _close(self) -> None:
        await self._stop_serving()
        await self._stop_private()
        await self._drop_client()


class _ToolProxy(pbg.ToolsetServiceServicer):
    """The owner's ToolsetService for the other processes of its
    HERMES_HOME: calls go to the owner's binary."""

    def __init__(self, rt: Runtime):
        self.rt = rt

    def _owner(self) -> Manager:
        if self.rt._owner is None:
            raise Unavailable("the a2a-plugin gateway is stopping")
        return self.rt._owner

    async def ListTools(self, request: pb.ListToolsRequest, context: Any) -> pb.ListToolsResponse:
        try:
            return pb.ListToolsResponse(tools=await self._owner().tools())
        except StatusError as e:
            await context.abort(e.code, e.message)

    async def CallTool(self, request: pb.CallToolRequest, context: Any):  # type: ignore[override]
        q: asyncio.Queue = asyncio.Queue()
        try:
            owner = self._owner()
        except StatusError as e:
            await context.abort(e.code, e.message)
        task = asyncio.ensure_future(owner.call_tool(request, q.put_nowait))
        try:
            while True:
                get = asyncio.ensure_future(q.get())
                done, _ = await asyncio.wait({get, task}, return_when=asyncio.FIRST_COMPLETED)
                if get in done:
                    yield pb.CallToolResponse(progress=get.result())
                    continue
                get.cancel()
                while not q.empty():
                    yield pb.CallToolResponse(progress=q.get_nowait())
                try:
                    res = task.result()
                except StatusError as e:
                    await context.abort(e.code, e.message)
                    return
                yield pb.CallToolResponse(result=res)
                return
        finally:
            task.cancel()

