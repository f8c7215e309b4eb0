"""A host's handle on one plugin, and its supervision: a crashed plugin is
marked unavailable at once and restarted with a fresh process and
exponential backoff, until it crashes too often."""

from __future__ import annotations

import asyncio
import random
import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Optional, TypeVar

import grpc

from agentplugin.v1 import agentplugin_pb2 as pb

from .errors import PluginUnavailable, StatusError, status_error
from .handle import LifecycleHandle, PlatformHandle, ToolsetHandle
from .process import Instance
from .state import Event, EventKind, State
from .stdio import LineRing

if TYPE_CHECKING:  # pragma: no cover
    from .manager import Manager

T = TypeVar("T")


class Plugin:
    """One plugin, whatever process currently runs it. Its platform(),
    toolset() and lifecycle() views forward every call to the current
    process."""

    def __init__(self, manager: "Manager", path: str, file: str):
        self._m = manager
        self._path = path
        self._file = file
        self._name = file
        self.stderr = LineRing()
        self._desc: Optional[pb.DescribeResponse] = None
        self._inst: Optional[Instance] = None
        self._state = State.STARTING
        self._last_error: Optional[BaseException] = None
        self._crash_reason = ""
        self._restarts: list[float] = []
        self._stopping = False
        self._tasks: set[asyncio.Task] = set()
        # Every process launched for this plugin and not yet killed, so
        # that stopping kills them all — also one a cancelled restart
        # left half brought up.
        self._live: set[Instance] = set()

    # -- what the host reads ---------------------------------------------

    @property
    def name(self) -> str:
        """The name the plugin gave in Describe (its file name before)."""
        return self._name

    @property
    def path(self) -> str:
        """The plugin's executable."""
        return self._path

    @property
    def state(self) -> State:
        return self._state

    @property
    def last_error(self) -> Optional[BaseException]:
        """The most recent failure (a crash reason with the tail of its
        stderr, a refused Configure, a failed restart). It is kept after a
        successful restart: state says whether the plugin is fine now."""
        return self._last_error

    def describe(self) -> Optional[pb.DescribeResponse]:
        """A copy of the last Describe answer; None before the first."""
        if self._desc is None:
            return None
        d = pb.DescribeResponse()
        d.CopyFrom(self._desc)
        return d

    @property
    def protocol_minor(self) -> int:
        """The contract minor of the last Describe (0 before the first)."""
        return self._desc.protocol_minor if self._desc is not None else 0

    @property
    def endpoints(self) -> list[str]:
        """Where the platform listens, from its last ConnectResponse."""
        return list(self._inst.endpoints) if self._inst is not None else []

    @property
    def pid(self) -> int:
        """The running process's id (0 while down)."""
        return self._inst.pid if self._inst is not None else 0

    def recent_stderr(self, n: int = 0) -> list[str]:
        """The last lines the plugin wrote to stderr (hclog JSON rendered as
        text), oldest first; n <= 0: all that are kept."""
        return self.stderr.tail(n)

    def _has(self, cap: int) -> bool:
        return self._desc is not None and cap in self._desc.capabilities

    def platform(self) -> Optional[PlatformHandle]:
        """The platform adapter, if Describe listed one."""
        return PlatformHandle(self) if self._has(pb.CAPABILITY_PLATFORM) else None

    def toolset(self) -> Optional[ToolsetHandle]:
        """The toolset, if Describe listed one."""
        return ToolsetHandle(self) if self._has(pb.CAPABILITY_TOOLSET) else None

    def lifecycle(self) -> LifecycleHandle:
        return LifecycleHandle(self)

    # -- calls -------------------------------------------------------------

    def _unavailable(self, cause: Optional[BaseException] = None) -> PluginUnavailable:
        why = {
            State.STARTING: "starting",
            State.RESTARTING: "restarting after crash: " + self._crash_reason,
            State.FAILED: "failed" + (f": {self._last_error}" if self._last_error else ""),
            State.STOPPED: "stopped by the host",
        }.get(self._state, self._state.value)
        return PluginUnavailable(self._name, why, cause)

    def _current(self) -> Instance:
        if self._inst is None or self._state is not State.READY:
            raise self._unavailable()
        return self._inst

    async def _invoke(self, method: str, fn: Callable[[Instance], Awaitable[T]]) -> T:
        inst = self._current()
        try:
            return await fn(inst)
        except StatusError as e:
            if await self._died_under(inst, e):
                self._handle_exit(inst)
                raise self._unavailable(e) from e
            raise status_error(e.code, f"plugin {self._name!r}: {method}: {e.message}") from e

    async def _died_under(self, inst: Instance, err: StatusError) -> bool:
        """Whether a call failed because the process died: a transport
        error (UNAVAILABLE, or CANCELLED as the connection closes) and the
        process gone. A plugin's own UNAVAILABLE on a healthy connection
        returns at once; after a transport failure the exit takes a few
        milliseconds to be noticed."""
        if err.code == grpc.StatusCode.CANCELLED:
            return inst.exited.done()
        if err.code != grpc.StatusCode.UNAVAILABLE:
            return False
        wait = 0.5
        if inst.channel is not None and inst.channel.get_state() == grpc.ChannelConnectivity.READY:
            wait = 0.05  # most likely the plugin's own error
        try:
            await asyncio.wait_for(asyncio.shield(inst.exited), wait)
        except asyncio.TimeoutError:
            return False
        return True

    # -- supervision ---------------------------------------------------------

    def _track(self, inst: Instance) -> None:
        self._live = {i for i in self._live if not i.killed}
        self._live.add(inst)

    def _spawn_task(self, coro: Awaitable[Any]) -> None:
        t = asyncio.ensure_future(coro)
        self._tasks.add(t)
        t.add_done_callback(self._tasks.discard)

    def _install(self, inst: Instance) -> bool:
        """Make inst the running instance and watch it; False (the caller
        kills inst) when the plugin is stopping."""
        if self._stopping:
            return False
        self._inst, self._desc, self._name = inst, inst.desc, inst.desc.name
        self._state = State.READY
        self._spawn_task(self._watch_exit(inst))
        self._m._log.info(
            "plugin %s ready: version %s, pid %d, capabilities %s, endpoints %s", self._name, inst.desc.version,
            inst.pid, [pb.Capability.Name(c) for c in inst.desc.capabilities], inst.endpoints)
        self._m._emit(Event(self._name, EventKind.READY))
        self._m._forget_routes()
        return True

    def _fail(self, err: BaseException) -> None:
        if self._stopping:
            return
        self._state = State.FAILED
        self._last_error = err
        self._m._log.error("plugin %s failed; it will not be restarted: %s", self._name, err)
        self._m._emit(Event(self._name, EventKind.FAILED, err))

    async def _watch_exit(self, inst: Instance) -> None:
        await asyncio.shield(inst.exited)
        self._handle_exit(inst)

    def _handle_exit(self, inst: Instance) -> None:
        """React once to the death of inst, whoever noticed it first: the
        plugin becomes unavailable at once and, policy permitting, is
        restarted."""
        if self._inst is not inst or self._stopping:
            return
        self._inst = None
        reason = crash_summary(inst.exit_status(), self.stderr.notable_since(inst.stderr_from, 5))
        self._crash_reason = reason
        crash = RuntimeError(f"plugin {self._name!r} crashed: {reason}")
        self._last_error = crash
        policy = self._m._opts.restart
        recent = self._recent_restarts(time.monotonic())
        if policy.max_restarts < 0 or recent >= policy.max_restarts:
            self._state = State.FAILED
            if policy.max_restarts < 0:
                self._last_error = RuntimeError(f"{crash}; restarts are disabled")
            else:
                self._last_error = RuntimeError(
                    f"plugin {self._name!r} crashed after {recent} restarts within {policy.window:g}s; giving up: {reason}")
            self._spawn_task(inst.kill())
            self._m._log.error("plugin %s crashed too often; it will not be restarted: %s", self._name, self._last_error)
            self._m._emit(Event(self._name, EventKind.CRASHED, crash))
            self._m._emit(Event(self._name, EventKind.FAILED, self._last_error))
            return
        self._state = State.RESTARTING
        self._m._log.error("plugin %s crashed; restarting: %s", self._name, reason)
        self._m._emit(Event(self._name, EventKind.CRASHED, crash))
        self._spawn_task(self._restart_loop(inst, recent))

    def _recent_restarts(self, now: float) -> int:
        window = self._m._opts.restart.window
        self._restarts = [t for t in self._restarts if now - t < window]
        return len(self._restarts)

    async def _restart_loop(self, dead: Instance, attempt: int) -> None:
        """Replace a dead instance with a fresh process after a backoff that
        grows with the number of recent restarts."""
        await dead.kill()
        while True:
            await asyncio.sleep(self._m._backoff(attempt))
            if self._stopping:
                return
            self._restarts.append(time.monotonic())
            inst: Optional[Instance] = None
            try:
                inst = await self._m._relaunch(self)
                await self._m._bring_up(self, inst)
            except Exception as e:
                if inst is not None:
                    await inst.kill()
                if self._stopping:
                    return
                self._last_error = RuntimeError(f"restart of plugin {self._name!r} failed: {e}")
                policy = self._m._opts.restart
                recent = self._recent_restarts(time.monotonic())
                if recent >= policy.max_restarts:
                    self._fail(RuntimeError(
                        f"plugin {self._name!r} could not be restarted ({recent} attempts within {policy.window:g}s): {e}"))
                    return
                self._m._log.warning("plugin %s restart failed; trying again: %s", self._name, e)
                attempt += 1
                continue
            if not self._install(inst):
                await inst.kill()
            return

    async def _stop(self) -> Optional[BaseException]:
        """Drain and kill: Disconnect, Drain (each bounded by the drain
        timeout), a ShutdownNotice on the Watch stream, then kill."""
        if self._stopping:
            return None
        self._stopping = True
        inst, self._inst = self._inst, None
        self._state = State.STOPPED
        errs: list[str] = []
        for t in list(self._tasks):
            t.cancel()
        if inst is not None:
            timeout = self._m._opts.drain_timeout
            if inst.platform is not None and inst.alive:
                try:
                    await inst.platform.disconnect(timeout)
                except Exception as e:
                    errs.append(f"Disconnect: {e}")
            if inst.alive and inst.lifecycle is not None:
                try:
                    resp = await inst.lifecycle.Drain(pb.DrainRequest(timeout_ms=int(timeout * 1000)), timeout=timeout)
                    if resp.abandoned:
                        self._m._log.warning("plugin %s abandoned %d in-flight items while draining", self._name, resp.abandoned)
                except grpc.RpcError as e:
                    errs.append(f"Drain: {e.code().name}: {e.details()}")
            if inst.host_server is not None:
                await inst.host_server.shutdown_and_wait("the host is closing", 1.0)
            await inst.kill()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        # Kill what a cancelled restart or kill left running (never an
        # orphan process, a socket or a gRPC server outliving the host).
        await asyncio.gather(*(i.kill() for i in self._live), return_exceptions=True)
        self._live.clear()
        for e in errs:
            self._m._log.warning("plugin %s did not stop cleanly: %s", self._name, e)
        self._m._emit(Event(self._name, EventKind.STOPPED))
        if errs:
            return RuntimeError(f"plugin {self._name!r}: " + "; ".join(errs))
        return None


def crash_summary(status: str, tail: list[str]) -> str:
    """The exit status and the tail of stderr, on one line."""
    if not tail:
        return status + " (no warning or error on stderr)"
    return status + "; stderr: " + " | ".join(l if len(l) <= 300 else l[:300] + "…" for l in tail)


def backoff(attempt: int, base: float, cap: float) -> float:
    """The delay before restart number attempt+1: exponential from base,
    capped, the upper half of it random."""
    d = base
    for _ in range(attempt):
        d *= 2
        if d >= cap:
            d = cap
            break
    half = d / 2
    return half + random.uniform(0, half)
