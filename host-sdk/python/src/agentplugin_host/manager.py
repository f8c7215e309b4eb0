"""The Manager: discovers, launches, supervises and stops a host's plugins."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import tempfile
from typing import Any, Optional

from agentplugin.v1 import agentplugin_pb2 as pb

from .discover import Candidate, discover
from .env import build_env
from .errors import PluginError, UnknownTool
from .host_service import HostServer, optional_rpcs
from .options import Options
from .plugin import Plugin, backoff
from .process import Instance
from .state import Event, EventKind, State
from .toolset import ProgressFunc
from .version import SDK_VERSION

_VALID_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def valid_name(name: str) -> bool:
    """Plugin names stay usable as directory names and config keys: 1-64
    letters, digits, '.', '_' or '-', starting with a letter or digit."""
    return 0 < len(name) <= 64 and name[0].isascii() and name[0].isalnum() and set(name) <= _VALID_NAME_CHARS


def _compare_versions(a: str, b: str) -> int:
    def parse(v: str) -> Optional[tuple[tuple[int, ...], str]]:
        v = v.removeprefix("v").split("+", 1)[0]
        core, _, pre = v.partition("-")
        parts = core.split(".")
        if not 1 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
            return None
        return tuple(int(p) for p in parts) + (0,) * (3 - len(parts)), pre

    pa, pb_ = parse(a), parse(b)
    if pa is None and pb_ is None:
        return (a > b) - (a < b)
    if pa is None:
        return -1  # an unversioned build ranks below a release
    if pb_ is None:
        return 1
    if pa[0] != pb_[0]:
        return 1 if pa[0] > pb_[0] else -1
    if pa[1] == pb_[1]:
        return 0
    if pa[1] == "":
        return 1
    if pb_[1] == "":
        return -1
    return (pa[1] > pb_[1]) - (pa[1] < pb_[1])


class Manager:
    """Runs a host's plugins. Create it, await start() once and close()
    once — or use it as ``async with``. Every method runs on the loop
    start() ran on; threads and other loops reach it through a LoopThread
    (or asyncio.run_coroutine_threadsafe)."""

    def __init__(self, opts: Options):
        self._opts = opts
        self._log = opts.logger or logging.getLogger("agentplugin_host")
        self._plugins: list[Plugin] = []
        self._routes: Optional[dict[str, Plugin]] = None
        self._started = False
        self._closed = False
        self._tmp_data_dir = ""
        self._loop: Optional[asyncio.AbstractEventLoop] = None

    async def __aenter__(self) -> "Manager":
        await self.start()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    @property
    def loop(self) -> Optional[asyncio.AbstractEventLoop]:
        """The loop the Manager runs on (set by start)."""
        return self._loop

    # -- start ---------------------------------------------------------------

    async def start(self) -> None:
        """Discover the candidates (Options.dir and Options.paths) and bring
        each up: the go-plugin handshake (bounded by start_timeout),
        Describe, Configure with the host callback served through the
        broker, and Connect for platforms.

        Candidates that fail the handshake or Describe are skipped with a
        log record saying why, and the others still load. When two plugins
        give the same name the higher version is kept. A plugin that
        refuses its configuration or cannot connect is left FAILED; start
        then raises a PluginError naming every such plugin, and the plugins
        that are ready stay usable."""
        if self._closed:
            raise PluginError("agentplugin_host: start after close")
        if self._started:
            raise PluginError("agentplugin_host: start called twice")
        self._started = True
        self._loop = asyncio.get_running_loop()
        cands: list[Candidate] = []
        if self._opts.dir:
            cands += discover(self._opts.dir, self._log)
        for path in self._opts.paths:
            abs_path = os.path.abspath(path)
            cands.append(Candidate(name=os.path.basename(abs_path), path=abs_path))
        if not cands:
            self._log.info("no plugin candidates in %s", self._opts.dir)
            return

        async def first(c: Candidate) -> Optional[tuple[Plugin, Instance]]:
            p = Plugin(self, c.path, c.name)
            try:
                return p, await self._first_launch(p)
            except Exception as e:
                self._log.warning("skipping plugin candidate %s: %s", c.path, e)
                self._emit(Event(c.path, EventKind.SKIPPED, e))
                return None

        launched = [r for r in await asyncio.gather(*(first(c) for c in cands)) if r is not None]
        winners: dict[str, tuple[Plugin, Instance]] = {}
        for p, inst in launched:
            name = inst.desc.name
            prev = winners.get(name)
            if prev is None:
                winners[name] = (p, inst)
                continue
            keep, drop = prev, (p, inst)
            if _compare_versions(inst.desc.version, prev[1].desc.version) > 0:
                keep, drop = drop, keep
            err = PluginError(
                f"two plugins are named {name!r}: keeping version {keep[1].desc.version!r} from {keep[0].path}, "
                f"skipping version {drop[1].desc.version!r} from {drop[0].path}")
            self._log.warning("skipping plugin: name clash: %s", err)
            await drop[1].kill()
            self._emit(Event(drop[0].path, EventKind.SKIPPED, err))
            winners[name] = keep
        if self._closed:
            for _, inst in winners.values():
                await inst.kill()
            raise PluginError("agentplugin_host: the Manager was closed during start")
        for p, inst in winners.values():
            p._name, p._desc = inst.desc.name, inst.desc
            self._plugins.append(p)
        self._plugins.sort(key=lambda p: p.name)

        async def up(p: Plugin, inst: Instance) -> Optional[BaseException]:
            try:
                await self._bring_up(p, inst)
            except Exception as e:
                await inst.kill()
                p._fail(e)
                return e
            if not p._install(inst):
                await inst.kill()
            return None

        errs = [e for e in await asyncio.gather(*(up(p, i) for p, i in winners.values())) if e is not None]
        if errs:
            raise PluginError("; ".join(str(e) for e in errs))

    def _env_for(self, name: str, prefixes: list[str]) -> dict[str, str]:
        return build_env(os.environ, self._opts.env_allow, prefixes, self._opts.plugin_env.get(name), self._opts.log_level)

    async def _spawn(self, p: Plugin, name: str, prefixes: list[str]) -> Instance:
        inst = await Instance.launch(
            p.path, self._env_for(name, prefixes), self._opts.transport, self._opts.start_timeout,
            self._log.getChild(name), p.stderr)
        p._track(inst)
        if not valid_name(inst.desc.name):
            await inst.kill()
            raise PluginError(
                f"{p.path}: Describe gave the name {inst.desc.name!r}; a plugin name must be 1-64 letters, "
                "digits, '.', '_' or '-' and start with a letter or digit")
        return inst

    async def _first_launch(self, p: Plugin) -> Instance:
        """Launch a candidate; when its Describe shows it should have had
        another environment (declared prefixes, plugin_env under its real
        name), launch it once more with that one, so a first start and a
        restart see the same variables."""
        inst = await self._spawn(p, p._file, [])
        name, prefixes = inst.desc.name, list(inst.desc.env_prefixes)
        if inst.env == self._env_for(name, prefixes):
            return inst
        self._log.debug("relaunching plugin %s with the environment it declared (prefixes %s)", name, prefixes)
        await inst.kill()
        again = await self._spawn(p, name, prefixes)
        if again.desc.name != name:
            await again.kill()
            raise PluginError(f"{p.path} described itself as {name!r}, then as {again.desc.name!r} when relaunched")
        return again

    async def _relaunch(self, p: Plugin) -> Instance:
        name = p.name
        prefixes = list(p._desc.env_prefixes) if p._desc is not None else []
        inst = await self._spawn(p, name, prefixes)
        if inst.desc.name != name:
            await inst.kill()
            raise PluginError(
                f"{p.path} now describes itself as {inst.desc.name!r} instead of {name!r}; restart the host to load it under its new name")
        return inst

    async def _bring_up(self, p: Plugin, inst: Instance) -> None:
        """Configure a described instance and connect its platform (unless
        Options.connect is off)."""
        name = inst.desc.name
        info = pb.HostInfo(name="agentplugin-host-python", version=SDK_VERSION)
        if self._opts.host_info is not None:
            info.CopyFrom(self._opts.host_info)
        if not info.protocol_minor:
            info.protocol_minor = self._opts.protocol_minor
        if not info.optional_rpcs:
            info.optional_rpcs.extend(optional_rpcs(self._opts.host))
        if not callable(getattr(self._opts.host, "cancel_turn", None)):
            # A host without cancel_turn cannot stop a running turn: say so
            # (1.3), so the plugin refuses to cancel one instead of
            # reporting it stopped.
            info.cancel_turn_unsupported = True
        hs = HostServer(self._opts.host, self._opts.heartbeat_interval, self._log.getChild(name))
        try:
            resp = await inst.configure(
                self._config_for(name), self._data_dir_for(name), self._opts.log_level, info, hs, self._opts.start_timeout)
        except Exception as e:
            # The plugin's message names what to fix and where it came from
            # (its section of the host config, or an environment variable).
            raise PluginError(f"plugin {name!r} refused its configuration: {e}") from e
        for w in resp.warnings:
            self._log.warning("plugin %s configuration warning: %s", name, w)
        inst.dispense(info.protocol_minor)
        if inst.platform is not None and self._opts.connect:
            try:
                cr = await inst.platform.connect(self._opts.start_timeout)
            except Exception as e:
                raise PluginError(f"plugin {name!r} could not connect its platform: {e}") from e
            inst.endpoints = list(cr.endpoints)

    def _data_dir_for(self, name: str) -> str:
        root = self._opts.data_dir
        if not root:
            if not self._tmp_data_dir:
                self._tmp_data_dir = tempfile.mkdtemp(prefix="agentplugin-data-")
            root = self._tmp_data_dir
        d = os.path.join(root, name)
        try:
            os.makedirs(d, mode=0o700, exist_ok=True)
        except OSError as e:
            raise PluginError(f"create data directory for plugin {name!r}: {e} (check Options.data_dir)") from e
        return d

    def _config_for(self, name: str) -> bytes:
        c = self._opts.config.get(name)
        if c is None or c == "" or c == b"":
            return b"{}"
        if isinstance(c, bytes):
            return c
        if isinstance(c, str):
            return c.encode()
        return json.dumps(c).encode()

    def _backoff(self, attempt: int) -> float:
        r = self._opts.restart
        return backoff(attempt, r.base_backoff, max(r.max_backoff, r.base_backoff))

    def _emit(self, ev: Event) -> None:
        if self._opts.on_event is not None:
            try:
                self._opts.on_event(ev)
            except Exception:
                self._log.warning("on_event raised", exc_info=True)

    # -- use -----------------------------------------------------------------

    def plugins(self) -> list[Plugin]:
        """Every loaded plugin (whatever its state), sorted by name."""
        return list(self._plugins)

    def plugin(self, name: str) -> Optional[Plugin]:
        """The plugin with the given (described) name."""
        return next((p for p in self._plugins if p.name == name), None)

    async def tools(self) -> list[pb.ToolDefinition]:
        """The tools of every ready plugin with a toolset, each with
        ToolDefinition.toolset set to its plugin's name; remembers which
        plugin serves which tool for call_tool. A tool name two plugins
        offer goes to the first by plugin name. A ready plugin whose
        ListTools fails is logged and left out."""
        out: list[pb.ToolDefinition] = []
        routes: dict[str, Plugin] = {}
        for p in self.plugins():
            ts = p.toolset()
            if ts is None or p.state is not State.READY:
                continue
            try:
                tools = await ts.list_tools(self._opts.start_timeout)
            except Exception as e:
                self._log.warning("listing the tools of plugin %s failed: %s", p.name, e)
                continue
            for td in tools:
                if td.name in routes:
                    self._log.warning("two plugins offer tool %s; using %s, ignoring %s", td.name, routes[td.name].name, p.name)
                    continue
                c = pb.ToolDefinition()
                c.CopyFrom(td)
                c.toolset = p.name
                routes[td.name] = p
                out.append(c)
        self._routes = routes
        return out

    async def call_tool(
        self, req: pb.CallToolRequest, progress: Optional[ProgressFunc] = None, timeout: Optional[float] = None
    ) -> pb.ToolResult:
        """Run req.name on the plugin that offers it (as learned by tools,
        which it calls itself for a name it does not know yet). A tool
        nobody offers raises UnknownTool; a plugin that is down raises
        PluginUnavailable at once."""
        p = (self._routes or {}).get(req.name)
        if p is None:
            await self.tools()
            p = (self._routes or {}).get(req.name)
        if p is None:
            known = ", ".join(sorted(self._routes or {})) or "none"
            raise UnknownTool(f"no plugin offers tool {req.name!r} (known: {known})")
        ts = p.toolset()
        if ts is None:
            raise UnknownTool(f"plugin {p.name!r} no longer offers a toolset")
        return await ts.call_tool(req, progress, timeout)

    def _forget_routes(self) -> None:
        self._routes = None

    # -- close -----------------------------------------------------------------

    async def close(self) -> None:
        """Stop every plugin in parallel: Disconnect platforms, Drain (each
        bounded by drain_timeout), a ShutdownNotice on each Watch stream,
        then kill. Raises a PluginError listing the plugins that did not
        stop cleanly (they are stopped all the same). Idempotent."""
        if self._closed:
            return
        self._closed = True
        errs = [e for e in await asyncio.gather(*(p._stop() for p in self._plugins)) if e is not None]
        if self._tmp_data_dir:
            shutil.rmtree(self._tmp_data_dir, ignore_errors=True)
        if errs:
            raise PluginError("; ".join(str(e) for e in errs))
