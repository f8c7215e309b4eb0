"""Stand-in for hermes_cli.plugins: discovery, manifests, PluginContext.

Plugin folders, in this order: bundled ``<standin>/plugins/<name>/`` and
``<standin>/plugins/platforms/<name>/``, then user
``$HERMES_HOME/plugins/<name>/`` (a folder without a manifest is a
category: ``<category>/<name>/``, key ``<category>/<name>``); each a
``plugin.yaml`` (or ``plugin.yml``) beside an ``__init__.py`` defining
``register(ctx)``. On a key collision the later source wins. Then, per
plugin: ``plugins.disabled`` always wins; a bundled *platform* plugin is
deferred — its ``tools.py`` ``register_tools(ctx)`` runs now when the
manifest declares ``provides_tools``, its adapter (its ``register``) on the
first lookup of its platform; everything else (bundled standalone, user)
loads only when ``plugins.enabled`` lists it, after the sweep, with
``register(ctx)`` run synchronously in the discovering process, imported as
``hermes_plugins.<slug>``. A plugin whose ``register`` raises is unloaded:
everything it registered is disposed (its ``on_unload`` callbacks run).

Tools and platforms a plugin registers live in the manager's scope (its
HERMES_HOME). ``register_tool`` refuses (logs, returns None) a name a
built-in tool outside that scope holds; within the scope a same-toolset
re-registration replaces the entry (a later plugin's tool wins) and the
registry itself rejects a name held by another toolset (also None).
``override=True`` needs ``plugins.entries.<id>.allow_tool_override: true``
for a non-bundled plugin.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import importlib.util
import logging
import re
import sys
import threading
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

import yaml

from hermes_constants import get_hermes_home, hermes_home_key

logger = logging.getLogger(__name__)

BUNDLED_DIR = Path(__file__).resolve().parent.parent / "plugins"
_NS_PARENT = "hermes_plugins"
_VALID_KINDS = {"standalone", "backend", "exclusive", "platform", "model-provider"}
_SETTING_SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")
_RESERVED_ROOTS = {"model", "plugins", "security", "settings"}


class PluginToolOverrideError(PermissionError):
    """A plugin asked to override a built-in tool without the operator's opt-in."""


def _data_namespace(key: str) -> str:
    """One safe directory name for a plugin's data: a readable slug and a
    digest of the key (agent-plugin-<slug>-<8 hex>)."""
    slug = "".join(c if c.isascii() and (c.isalnum() or c in "_-") else "-" for c in key.lower()).strip("-_") or "plugin"
    return f"agent-plugin-{slug}-{hashlib.sha256(key.encode()).hexdigest()[:8]}"


def _segments(key: Any) -> tuple[str, ...]:
    if not isinstance(key, str):
        raise ValueError("Expected a plugin-relative config key string")
    segs = tuple(key.split("."))
    if (not key or "/" in key or "\\" in key or any(not _SETTING_SEGMENT.fullmatch(s) for s in segs)
            or segs[0].lower() in _RESERVED_ROOTS):
        raise ValueError("Expected a plugin-relative config key such as 'endpoint' or 'retry.policy'; "
                         "global, cross-plugin, and traversal paths are forbidden")
    return segs


def _nested(root: Any, segs: tuple[str, ...], default: Any) -> Any:
    cur = root
    for s in segs:
        if not isinstance(cur, Mapping) or s not in cur:
            return default
        cur = cur[s]
    return cur


@dataclass
class PluginManifest:
    name: str
    version: str = ""
    description: str = ""
    author: str = ""
    requires_env: list = field(default_factory=list)
    provides_tools: list = field(default_factory=list)
    provides_hooks: list = field(default_factory=list)
    source: str = ""
    path: Optional[str] = None
    kind: str = "standalone"
    key: str = ""


class PluginState:
    """A plugin's own durable state."""

    def __init__(self, plugin_id: str) -> None:
        self._ns = _data_namespace(plugin_id)

    @property
    def data_dir(self) -> Path:
        """$HERMES_HOME/plugin-data/<ns>."""
        return get_hermes_home() / "plugin-data" / self._ns


@dataclass
class PluginRegistration:
    """One registration made while loading a plugin, with its inverse."""

    kind: str
    key: str
    release: Callable[[], None]
    plugin_key: str = ""
    _disposed: bool = field(default=False, init=False, repr=False)

    @property
    def active(self) -> bool:
        return not self._disposed

    def dispose(self) -> None:
        """Release this registration once; repeated disposal is harmless."""
        if self._disposed:
            return
        self._disposed = True
        self.release()


class PluginContext:
    """The facade a plugin's register(ctx) gets."""

    def __init__(self, manifest: PluginManifest, manager: "PluginManager"):
        self.manifest = manifest
        self._manager = manager
        self._state: Optional[PluginState] = None

    @property
    def plugin_id(self) -> str:
        return self.manifest.key or self.manifest.name

    def has_plugin(self, plugin_id: str) -> bool:
        """Whether another plugin (key or manifest name) is loaded and enabled."""
        return any(lp.enabled and (k == plugin_id or lp.manifest.name == plugin_id)
                   for k, lp in self._manager._plugins.items())

    def get_config(self, key: str, default: Any = None) -> Any:
        """plugins.entries.<plugin_id>.settings.<key> (dotted keys nest;
        the former ``config`` subtree is read when settings lacks it)."""
        segs = _segments(key)
        from hermes_cli.config import load_config_readonly

        cfg = load_config_readonly() or {}
        plugins = cfg.get("plugins") if isinstance(cfg, Mapping) else None
        entries = plugins.get("entries") if isinstance(plugins, Mapping) else None
        entry = entries.get(self.plugin_id) if isinstance(entries, Mapping) else None
        if not isinstance(entry, Mapping):
            return default
        missing = object()
        value = _nested(entry.get("settings"), segs, missing)
        if value is not missing:
            return value
        return _nested(entry.get("config"), segs, default)

    @property
    def state(self) -> PluginState:
        if self._state is None:
            self._state = PluginState(self.plugin_id)
        return self._state

    def _track(self, kind: str, key: str, release: Callable[[], None]) -> PluginRegistration:
        return self._manager._track(self.manifest, kind, key, release)

    def on_unload(self, callback: Callable[[], None]) -> PluginRegistration:
        """A callback run when this plugin unloads (reverse order, isolated)."""
        if not callable(callback):
            raise TypeError("on_unload callback must be callable")
        return self._track("on_unload", getattr(callback, "__name__", "callback"), callback)

    def spawn_task(self, coro: Any, *, name: Optional[str] = None) -> "asyncio.Task":
        """A supervised task on the running loop, cancelled at unload."""
        if not asyncio.iscoroutine(coro):
            raise TypeError("spawn_task expects a coroutine")
        loop = asyncio.get_running_loop()
        task_name = name or f"plugin:{self.plugin_id}:task"
        task = loop.create_task(coro, name=task_name)

        def cancel() -> None:
            if not task.done():
                task.cancel()

        handle = self._track("background_task", task_name, cancel)
        task.add_done_callback(lambda _t: handle.dispose())
        return task

    def _tool_override_allowed(self) -> bool:
        if self.manifest.source == "bundled":
            return True
        from hermes_cli.config import load_config_readonly

        entries = ((load_config_readonly() or {}).get("plugins") or {}).get("entries") or {}
        entry = entries.get(self.plugin_id) or {}
        return bool(isinstance(entry, Mapping) and entry.get("allow_tool_override") is True)

    def register_tool(self, name: str, toolset: str, schema: dict, handler: Callable, check_fn: Callable | None = None,
                      requires_env: list | None = None, is_async: bool = False, description: str = "",
                      emoji: str = "", override: bool = False) -> Optional[PluginRegistration]:
        """Register a tool in the manager's scope; None when refused (see
        the module doc)."""
        if override and not self._tool_override_allowed():
            raise PluginToolOverrideError(
                f"Plugin {self.manifest.name!r} cannot override built-in tool {name!r}. Set "
                f"plugins.entries.{self.plugin_id}.allow_tool_override: true in config.yaml to allow this plugin "
                "to replace built-in tools.")
        from tools.registry import registry

        scope = self._manager.scope_key
        previous = registry.snapshot_registration(name, scope=scope)
        if previous is None and registry.get_entry(name, scope=scope) is not None and not override:
            logger.warning("Plugin %s tried to shadow global tool %s without override=True", self.manifest.name, name)
            return None
        registry.register(name=name, toolset=toolset, schema=schema, handler=handler, check_fn=check_fn,
                          requires_env=requires_env, is_async=is_async, description=description, emoji=emoji,
                          override=override, scope=scope)
        registered = registry.snapshot_registration(name, scope=scope)
        if registered is None or registered is previous or registered.handler is not handler:
            return None
        self._manager._plugin_tool_names.add(name)
        return self._track("tool", name, lambda: registry.restore_registration(name, registered, previous, scope=scope))

    def register_platform(self, name: str, label: str, adapter_factory: Callable, check_fn: Callable,
                          validate_config: Callable | None = None, required_env: list | None = None,
                          install_hint: str = "", **entry_kwargs: Any) -> Optional[PluginRegistration]:
        """Register a gateway platform adapter; entry_kwargs are
        PlatformEntry fields (an unknown one raises TypeError)."""
        from gateway.platform_registry import PlatformEntry, platform_registry

        entry_kwargs.setdefault("plugin_name", self.manifest.name)
        entry = PlatformEntry(name=name, label=label, adapter_factory=adapter_factory, check_fn=check_fn,
                              validate_config=validate_config, required_env=required_env or [],
                              install_hint=install_hint, source="plugin", **entry_kwargs)
        scope = self._manager.scope_key
        previous = platform_registry.snapshot_registration(name, scope=scope)
        platform_registry.register(entry, scope=scope)
        current = platform_registry.snapshot_registration(name, scope=scope)
        if current[0] is not entry or current[1] is not None:
            return None
        return self._track("platform", name,
                           lambda: platform_registry.restore_registration(name, current, previous, scope=scope))


@dataclass
class LoadedPlugin:
    manifest: PluginManifest
    module: Any = None
    tools_registered: list = field(default_factory=list)
    enabled: bool = False
    error: Optional[str] = None
    deferred: bool = False


class PluginManager:
    def __init__(self, scope_key: Optional[str] = None) -> None:
        self.scope_key = scope_key or hermes_home_key()
        self._plugins: dict[str, LoadedPlugin] = {}
        self._registrations: list[PluginRegistration] = []
        self._plugin_tool_names: set[str] = set()
        self._predeclared_modules: dict[str, Any] = {}
        self._discovered = False
        self._lock = threading.RLock()

    def _track(self, manifest: PluginManifest, kind: str, key: str, release: Callable[[], None]) -> PluginRegistration:
        reg = PluginRegistration(kind=kind, key=key, release=release, plugin_key=manifest.key or manifest.name)
        self._registrations.append(reg)
        return reg

    def plugins(self) -> dict[str, LoadedPlugin]:
        return dict(self._plugins)

    def discover_and_load(self, force: bool = False) -> None:
        with self._lock:
            if self._discovered and not force:
                return
            if force:
                self.unload()
            self._discovered = True
            try:
                self._discover()
            except BaseException:
                self._discovered = False
                raise

    def _discover(self) -> None:
        from hermes_cli.config import load_config_readonly

        cfg = (load_config_readonly() or {}).get("plugins")
        cfg = cfg if isinstance(cfg, dict) else {}
        disabled = set(cfg["disabled"]) if isinstance(cfg.get("disabled"), list) else set()
        enabled = set(cfg["enabled"]) if isinstance(cfg.get("enabled"), list) else None
        manifests = (self._scan(BUNDLED_DIR, "bundled", skip={"platforms", "memory", "context_engine", "model-providers"})
                     + self._scan(BUNDLED_DIR / "platforms", "bundled")
                     + self._scan(get_hermes_home() / "plugins", "user"))
        winners: dict[str, PluginManifest] = {}
        for m in manifests:
            winners[m.key or m.name] = m
        to_load: list[PluginManifest] = []
        for key, m in winners.items():
            if key in disabled or m.name in disabled:
                self._plugins[key] = LoadedPlugin(manifest=m, error="disabled via config")
            elif m.kind == "exclusive":
                self._plugins[key] = LoadedPlugin(manifest=m, error="exclusive plugin — activate via <category>.provider config")
            elif m.kind == "model-provider":
                self._plugins[key] = LoadedPlugin(manifest=m, enabled=True)
            elif m.source == "bundled" and m.kind == "backend":
                self._load(m)
            elif m.source == "bundled" and m.kind == "platform":
                self._register_deferred_platform(m)
            elif enabled is not None and (key in enabled or m.name in enabled):
                to_load.append(m)
            else:
                self._plugins[key] = LoadedPlugin(
                    manifest=m, error=f"not enabled in config (run `hermes plugins enable {key}` to activate)")
        for m in sorted(to_load, key=lambda m: m.key or m.name):
            self._load(m)

    def _scan(self, root: Path, source: str, skip: Optional[set] = None, prefix: str = "", depth: int = 0) -> list[PluginManifest]:
        out: list[PluginManifest] = []
        if not root.is_dir():
            return out
        for child in sorted(root.iterdir()):
            if not child.is_dir() or (depth == 0 and skip and child.name in skip):
                continue
            mf = child / "plugin.yaml"
            if not mf.exists():
                mf = child / "plugin.yml"
            if mf.exists():
                m = self._parse(mf, child, source, prefix)
                if m is not None:
                    out.append(m)
            elif depth < 1:
                out += self._scan(child, source, None, f"{prefix}/{child.name}" if prefix else child.name, depth + 1)
        return out

    @staticmethod
    def _parse(mf: Path, d: Path, source: str, prefix: str) -> Optional[PluginManifest]:
        try:
            data = yaml.safe_load(mf.read_text(encoding="utf-8")) or {}
        except Exception as e:
            logger.warning("Failed to parse %s: %s", mf, e)
            return None
        name = data.get("name", d.name)
        kind = data.get("kind", "standalone")
        kind = kind.strip().lower() if isinstance(kind, str) else "standalone"
        if kind not in _VALID_KINDS:
            logger.warning("Plugin %s: unknown kind '%s'; treating as 'standalone'", name, kind)
            kind = "standalone"
        return PluginManifest(name=name, version=str(data.get("version", "")), description=data.get("description", ""),
                              author=str(data.get("author", "")), requires_env=data.get("requires_env", []),
                              provides_tools=data.get("provides_tools", []), provides_hooks=data.get("provides_hooks", []),
                              source=source, path=str(d), kind=kind, key=f"{prefix}/{d.name}" if prefix else name)

    @staticmethod
    def _platform_name(m: PluginManifest) -> str:
        if m.name.endswith("-platform"):
            return m.name[: -len("-platform")]
        return Path(m.path).name if m.path else m.name

    def _register_deferred_platform(self, m: PluginManifest) -> None:
        """A bundled platform plugin: a placeholder, a deferred loader of its
        adapter, and its client tools now (tools.py register_tools) when its
        manifest declares provides_tools."""
        from gateway.platform_registry import platform_registry

        key = m.key or m.name
        lp = LoadedPlugin(manifest=m, enabled=True, deferred=True)
        self._plugins[key] = lp
        platform = self._platform_name(m)

        def loader() -> None:
            with self._lock:
                self._load(m)

        platform_registry.register_deferred(platform, loader, scope=self.scope_key)
        if not m.provides_tools:
            return
        if not (Path(m.path) / "tools.py").is_file():
            logger.warning("Plugin '%s' declares provides_tools %s but has no tools.py", key, list(m.provides_tools))
            return
        before = set(self._plugin_tool_names)
        try:
            module = self._import(m)
            lp.module = module
            self._predeclared_modules[key] = module
            register_tools = getattr(importlib.import_module(f"{module.__name__}.tools"), "register_tools", None)
            if register_tools is None:
                logger.warning("Plugin '%s' declares provides_tools but its tools.py has no register_tools(ctx)", key)
                return
            register_tools(PluginContext(m, self))
            lp.tools_registered = sorted(self._plugin_tool_names - before)
        except Exception as e:
            logger.warning("Plugin '%s': client-tool pre-registration failed (%s)", key, e)

    def _module_name(self, m: PluginManifest) -> str:
        return f"{_NS_PARENT}.{(m.key or m.name).replace('/', '__').replace('-', '_')}"

    def _import(self, m: PluginManifest) -> types.ModuleType:
        plugin_dir = Path(m.path)
        init = plugin_dir / "__init__.py"
        if not init.exists():
            raise FileNotFoundError(f"No __init__.py in {plugin_dir}")
        if _NS_PARENT not in sys.modules:
            ns = types.ModuleType(_NS_PARENT)
            ns.__path__ = []  # type: ignore[attr-defined]
            sys.modules[_NS_PARENT] = ns
        name = self._module_name(m)
        for n in [n for n in sys.modules if n == name or n.startswith(name + ".")]:
            del sys.modules[n]
        spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(plugin_dir)])
        module = importlib.util.module_from_spec(spec)
        module.__package__ = name
        module.__path__ = [str(plugin_dir)]  # type: ignore[attr-defined]
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            for n in [n for n in sys.modules if n == name or n.startswith(name + ".")]:
                del sys.modules[n]
            raise
        return module

    def _load(self, m: PluginManifest) -> None:
        key = m.key or m.name
        lp = LoadedPlugin(manifest=m)
        start = len(self._registrations)
        try:
            module = self._predeclared_modules.pop(key, None) or self._import(m)
            lp.module = module
            register = getattr(module, "register", None)
            if register is None:
                lp.error = "no register() function"
                logger.warning("Plugin '%s' has no register() function", m.name)
            else:
                register(PluginContext(m, self))
                lp.tools_registered = [r.key for r in self._registrations[start:]
                                       if r.plugin_key == key and r.kind == "tool" and r.active]
                lp.enabled = True
        except Exception as exc:
            self._dispose([r for r in self._registrations if r.plugin_key == key])
            lp.error = str(exc)
            logger.warning("Failed to load plugin '%s': %s", m.name, exc)
        self._plugins[key] = lp

    def _dispose(self, regs: list[PluginRegistration]) -> None:
        for r in reversed(regs):
            try:
                r.dispose()
            except Exception as e:
                logger.warning("Failed to unload plugin registration %s/%s: %s", r.plugin_key, r.key, e)
        ids = {id(r) for r in regs}
        self._registrations = [r for r in self._registrations if id(r) not in ids]

    def unload(self) -> None:
        """Dispose every registration in reverse order (on_unload callbacks
        included) and forget the plugins. (Hermes' gateway does not call
        this when it stops; a force rediscovery and tests do.)"""
        with self._lock:
            self._dispose(list(self._registrations))
            self._plugins.clear()
            self._plugin_tool_names.clear()
            self._predeclared_modules.clear()
            self._discovered = False


_managers: dict[str, PluginManager] = {}
_manager: Optional[PluginManager] = None
_managers_lock = threading.Lock()


def get_plugin_manager() -> PluginManager:
    """The plugin manager of the current HERMES_HOME (one per home)."""
    global _manager
    key = hermes_home_key()
    with _managers_lock:
        m = _managers.get(key)
        if m is None:
            m = _managers[key] = PluginManager(scope_key=key)
        _manager = m
        return m


def _reset_plugin_managers_for_tests() -> None:
    """Unload and forget every manager (Hermes has the same test helper)."""
    global _manager
    with _managers_lock:
        managers = list(_managers.values())
        _managers.clear()
        _manager = None
    for m in managers:
        for lp in m._plugins.values():
            name = getattr(lp.module, "__name__", None)
            if name:
                for n in [n for n in sys.modules if n == name or n.startswith(name + ".")]:
                    del sys.modules[n]
        m.unload()


def discover_plugins(force: bool = False) -> None:
    """Discover and load plugins once per process (and home)."""
    get_plugin_manager().discover_and_load(force=force)


def unload_plugins() -> None:
    get_plugin_manager().unload()
