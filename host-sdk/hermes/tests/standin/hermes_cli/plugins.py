"""Stand-in for hermes_cli.plugins: discovery, manifests, PluginContext.

Plugin folders: bundled ``<standin>/plugins/<name>/`` and
``<standin>/plugins/platforms/<name>/``, then user
``$HERMES_HOME/plugins/<name>/``; each a ``plugin.yaml`` beside an
``__init__.py`` defining ``register(ctx)``. A user plugin loads only when
``plugins.enabled`` lists it; ``plugins.disabled`` always wins; bundled
plugins load unless disabled (Hermes defers a bundled platform's adapter
but registers its ``provides_tools`` at discovery — the same observable
order: bundled tools first). ``register(ctx)`` runs synchronously in the
process that discovers plugins, imported as ``hermes_plugins.<slug>``.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import logging
import sys
import threading
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

import yaml

from hermes_constants import get_hermes_home

logger = logging.getLogger(__name__)

BUNDLED_DIR = Path(__file__).resolve().parent.parent / "plugins"
_NS_PARENT = "hermes_plugins"


def _data_namespace(key: str) -> str:
    """One safe directory name for a plugin's data: a readable slug and a
    digest of the key (Hermes: agent-plugin-<slug>-<8 hex>)."""
    slug = "".join(c if c.isascii() and (c.isalnum() or c in "_-") else "-" for c in key.lower()).strip("-_") or "plugin"
    return f"agent-plugin-{slug}-{hashlib.sha256(key.encode()).hexdigest()[:8]}"


@dataclass
class PluginManifest:
    name: str
    version: str = ""
    description: str = ""
    author: str = ""
    requires_env: list = field(default_factory=list)
    provides_tools: list = field(default_factory=list)
    source: str = "user"
    path: str = ""
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


class PluginRegistration:
    """What a registration returns: it can be disposed (unload)."""

    def __init__(self, kind: str, key: str, dispose: Callable[[], None]):
        self.kind, self.key = kind, key
        self._dispose = dispose
        self.active = True

    def dispose(self) -> None:
        if self.active:
            self.active = False
            self._dispose()


class PluginContext:
    """The facade a plugin's register(ctx) gets."""

    def __init__(self, manifest: PluginManifest, manager: "PluginManager"):
        self.manifest = manifest
        self._manager = manager
        self._state: Optional[PluginState] = None

    @property
    def plugin_id(self) -> str:
        return self.manifest.key or self.manifest.name

    def get_config(self, key: str, default: Any = None) -> Any:
        """plugins.entries.<plugin_id>.settings.<key> (dotted keys nest)."""
        segments = key.split(".")
        if not key or any(not s for s in segments) or segments[0].lower() in {"model", "plugins", "security", "settings"}:
            raise ValueError("Expected a plugin-relative config key such as 'endpoint' or 'retry.policy'")
        from hermes_cli.config import load_config_readonly

        cfg = load_config_readonly() or {}
        entry = ((cfg.get("plugins") or {}).get("entries") or {}).get(self.plugin_id)
        if not isinstance(entry, dict):
            return default
        cur: Any = entry.get("settings")
        for s in segments:
            if not isinstance(cur, dict) or s not in cur:
                return default
            cur = cur[s]
        return cur

    @property
    def state(self) -> PluginState:
        if self._state is None:
            self._state = PluginState(self.plugin_id)
        return self._state

    def on_unload(self, callback: Callable[[], None]) -> PluginRegistration:
        if not callable(callback):
            raise TypeError("on_unload callback must be callable")
        return self._manager._track(self, PluginRegistration("on_unload", getattr(callback, "__name__", "callback"), callback))

    def spawn_task(self, coro: Any, *, name: Optional[str] = None) -> "asyncio.Task":
        if not asyncio.iscoroutine(coro):
            raise TypeError("spawn_task expects a coroutine")
        task = asyncio.get_running_loop().create_task(coro, name=name or f"plugin:{self.plugin_id}:task")
        self._manager._track(self, PluginRegistration("background_task", task.get_name(), task.cancel))
        return task

    def register_tool(self, name: str, toolset: str, schema: dict, handler: Callable, check_fn: Callable | None = None,
                      requires_env: list | None = None, is_async: bool = False, description: str = "",
                      emoji: str = "", override: bool = False) -> Optional[PluginRegistration]:
        """Register a tool; a name another registration already holds is
        refused (logged, None) unless override=True."""
        from tools.registry import registry

        if registry.get_entry(name) is not None and not override:
            logger.warning("Plugin %s tried to shadow global tool %s without override=True", self.manifest.name, name)
            return None
        registry.register(name=name, toolset=toolset, schema=schema, handler=handler, check_fn=check_fn,
                          requires_env=requires_env, is_async=is_async, description=description, emoji=emoji,
                          override=override)
        return self._manager._track(self, PluginRegistration("tool", name, lambda: registry.deregister(name)))

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
        platform_registry.register(entry)
        return self._manager._track(self, PluginRegistration("platform", name, lambda: platform_registry.unregister(name)))


@dataclass
class LoadedPlugin:
    manifest: PluginManifest
    enabled: bool = False
    error: Optional[str] = None
    module: Any = None


class PluginManager:
    def __init__(self) -> None:
        self._plugins: dict[str, LoadedPlugin] = {}
        self._registrations: list[tuple[str, PluginRegistration]] = []
        self._discovered = False
        self._lock = threading.RLock()

    def _track(self, ctx: PluginContext, reg: PluginRegistration) -> PluginRegistration:
        self._registrations.append((ctx.plugin_id, reg))
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
            from hermes_cli.config import load_config_readonly

            cfg = (load_config_readonly() or {}).get("plugins") or {}
            enabled = set(cfg.get("enabled") or [])
            disabled = set(cfg.get("disabled") or [])
            manifests = self._scan(BUNDLED_DIR, "bundled") + self._scan(BUNDLED_DIR / "platforms", "bundled")
            manifests += self._scan(get_hermes_home() / "plugins", "user")
            for m in manifests:
                lp = LoadedPlugin(manifest=m)
                self._plugins[m.key] = lp
                if m.key in disabled or m.name in disabled:
                    lp.error = "disabled via config"
                    continue
                if m.source == "user" and m.key not in enabled and m.name not in enabled:
                    lp.error = f"not enabled in config (run `hermes plugins enable {m.key}` to activate)"
                    continue
                self._load(lp)

    def _scan(self, root: Path, source: str) -> list[PluginManifest]:
        out = []
        if not root.is_dir():
            return out
        for child in sorted(root.iterdir()):
            mf = child / "plugin.yaml"
            if not child.is_dir() or not mf.exists():
                continue
            try:
                data = yaml.safe_load(mf.read_text(encoding="utf-8")) or {}
            except Exception as e:
                logger.warning("Failed to parse %s: %s", mf, e)
                continue
            name = data.get("name", child.name)
            out.append(PluginManifest(name=name, version=str(data.get("version", "")),
                                      description=data.get("description", ""), author=str(data.get("author", "")),
                                      requires_env=data.get("requires_env") or [],
                                      provides_tools=data.get("provides_tools") or [], source=source,
                                      path=str(child), kind=str(data.get("kind", "standalone")), key=name))
        return out

    def _load(self, lp: LoadedPlugin) -> None:
        m = lp.manifest
        plugin_dir = Path(m.path)
        if _NS_PARENT not in sys.modules:
            ns = types.ModuleType(_NS_PARENT)
            ns.__path__ = []  # type: ignore[attr-defined]
            sys.modules[_NS_PARENT] = ns
        module_name = f"{_NS_PARENT}.{m.key.replace('-', '_').replace('/', '__')}"
        for n in [n for n in sys.modules if n == module_name or n.startswith(module_name + ".")]:
            del sys.modules[n]
        try:
            spec = importlib.util.spec_from_file_location(module_name, plugin_dir / "__init__.py",
                                                          submodule_search_locations=[str(plugin_dir)])
            module = importlib.util.module_from_spec(spec)
            module.__package__ = module_name
            sys.modules[module_name] = module
            spec.loader.exec_module(module)
            lp.module = module
            register = getattr(module, "register", None)
            if register is None:
                lp.error = "no register() function"
                logger.warning("Plugin '%s' has no register() function", m.name)
                return
            register(PluginContext(m, self))
            lp.enabled = True
        except Exception as exc:
            self._dispose(m.key)
            lp.error = str(exc)
            logger.warning("Failed to load plugin '%s': %s", m.name, exc)

    def _dispose(self, plugin_id: str) -> None:
        mine = [r for pid, r in self._registrations if pid == plugin_id]
        self._registrations = [(pid, r) for pid, r in self._registrations if pid != plugin_id]
        for r in reversed(mine):
            try:
                r.dispose()
            except Exception:
                logger.warning("unload callback of %s failed", plugin_id, exc_info=True)

    def unload(self) -> None:
        """Dispose every registration in reverse order (on_unload callbacks
        included) and forget the plugins."""
        for pid in list(dict.fromkeys(pid for pid, _ in reversed(self._registrations))):
            self._dispose(pid)
        self._plugins.clear()
        self._discovered = False


_manager: Optional[PluginManager] = None


def get_plugin_manager() -> PluginManager:
    global _manager
    if _manager is None:
        _manager = PluginManager()
    return _manager


def discover_plugins() -> None:
    """Discover and load plugins once per process."""
    get_plugin_manager().discover_and_load()
