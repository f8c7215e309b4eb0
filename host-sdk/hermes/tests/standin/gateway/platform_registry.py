"""Stand-in for gateway.platform_registry: PlatformEntry and the registry.

As in Hermes: plugin entries live in an overlay keyed by the registering
plugin manager's scope (its HERMES_HOME) over the process-global ones; a
bundled platform plugin is first registered as a *deferred loader* that
runs (importing the plugin and calling its ``register``) on the first
lookup of that platform; a concrete registration of the same name replaces
the loader (last writer wins); ``create_adapter`` returns None, logging why,
when the dependency probe, the config check or the factory fails.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Optional

logger = logging.getLogger(__name__)


@dataclass
class PlatformEntry:
    """A platform adapter's metadata and factory (the fields of Hermes
    0.20.1; an unknown field raises TypeError from the constructor)."""

    name: str
    label: str
    adapter_factory: Callable[[Any], Any]
    check_fn: Callable[[], bool]
    validate_config: Optional[Callable[[Any], bool]] = None
    ensure_deps_fn: Optional[Callable[[], bool]] = None
    is_connected: Optional[Callable[[Any], bool]] = None
    required_env: list = field(default_factory=list)
    install_hint: str = ""
    setup_fn: Optional[Callable[[], None]] = None
    source: str = "plugin"
    plugin_name: str = ""
    allowed_users_env: str = ""
    allow_all_env: str = ""
    max_message_length: int = 0
    pii_safe: bool = False
    emoji: str = "🔌"
    allow_update_command: bool = True
    platform_hint: str = ""
    env_enablement_fn: Optional[Callable[[], Optional[dict]]] = None
    apply_yaml_config_fn: Optional[Callable[[dict, dict], Optional[dict]]] = None
    cron_deliver_env_var: str = ""
    parse_target_ref_fn: Optional[Callable[[str], Optional[tuple]]] = None
    validate_target_ref_fn: Optional[Callable[[str], Any]] = None
    send_message_handler: Optional[Callable[[dict, str, str, Any], Any]] = None
    standalone_sender_fn: Optional[Callable[..., Awaitable[dict]]] = None


def _scope() -> str:
    from hermes_constants import hermes_home_key

    return hermes_home_key()


class PlatformRegistry:
    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._entries: dict[str, PlatformEntry] = {}
        self._scoped_entries: dict[str, dict[str, PlatformEntry]] = {}
        self._scoped_deferred: dict[str, dict[str, Callable[[], None]]] = {}
        self._loading: set[tuple[str, str]] = set()

    @staticmethod
    def current_scope_key() -> str:
        return _scope()

    def _maps(self, scope: Optional[str]) -> tuple[dict, dict]:
        if scope is None:
            return self._entries, {}
        return self._scoped_entries.setdefault(scope, {}), self._scoped_deferred.setdefault(scope, {})

    def register_deferred(self, name: str, loader: Callable[[], None], *, scope: Optional[str] = None) -> None:
        """A loader that registers name's real entry when name is first
        looked up; dropped when a concrete entry already exists."""
        with self._lock:
            entries, deferred = self._maps(scope or _scope())
            if name not in entries:
                deferred[name] = loader

    def register(self, entry: PlatformEntry, *, scope: Optional[str] = None) -> None:
        """Register entry (a plugin's in scope, default the current one);
        an entry or deferred loader of the same name is replaced."""
        with self._lock:
            if scope is None and entry.source == "plugin":
                scope = _scope()
            entries, deferred = self._maps(scope)
            deferred.pop(entry.name, None)
            if entry.name in entries:
                logger.info("Platform '%s' re-registered (was %s, now %s)", entry.name, entries[entry.name].source,
                            entry.source)
            entries[entry.name] = entry

    def snapshot_registration(self, name: str, *, scope: Optional[str] = None) -> tuple:
        with self._lock:
            entries, deferred = self._maps(scope or _scope())
            return entries.get(name), deferred.get(name)

    def restore_registration(self, name: str, current: tuple, previous: tuple, *, scope: Optional[str] = None) -> bool:
        with self._lock:
            entries, deferred = self._maps(scope or _scope())
            if entries.get(name) is not current[0] or deferred.get(name) is not current[1]:
                return False
            for store, value in ((entries, previous[0]), (deferred, previous[1])):
                if value is None:
                    store.pop(name, None)
                else:
                    store[name] = value
            return True

    def unregister(self, name: str, *, scope: Optional[str] = None) -> bool:
        with self._lock:
            entries, deferred = self._maps(scope or _scope())
            deferred.pop(name, None)
            if name in entries:
                del entries[name]
                return True
            return self._entries.pop(name, None) is not None

    def _resolve(self, name: str, scope: str) -> None:
        with self._lock:
            entries, deferred = self._maps(scope)
            if name in entries or (scope, name) in self._loading:
                return
            loader = deferred.pop(name, None)
            if loader is None:
                return
            self._loading.add((scope, name))
        try:
            loader()
        except Exception as e:
            logger.warning("Deferred load of platform '%s' failed: %s", name, e, exc_info=True)
        finally:
            with self._lock:
                self._loading.discard((scope, name))

    def get(self, name: str) -> Optional[PlatformEntry]:
        scope = _scope()
        self._resolve(name, scope)
        with self._lock:
            entries, _ = self._maps(scope)
            return entries.get(name) or self._entries.get(name)

    def is_registered(self, name: str) -> bool:
        with self._lock:
            entries, deferred = self._maps(_scope())
            return name in entries or name in deferred or name in self._entries

    def all_entries(self) -> list[PlatformEntry]:
        scope = _scope()
        with self._lock:
            names = sorted(self._maps(scope)[1])
        for n in names:
            self._resolve(n, scope)
        with self._lock:
            merged = dict(self._entries)
            merged.update(self._maps(scope)[0])
            return list(merged.values())

    def plugin_entries(self) -> list[PlatformEntry]:
        return [e for e in self.all_entries() if e.source == "plugin"]

    def create_adapter(self, name: str, config: Any) -> Any:
        """The adapter of platform name for config, or None (logged) when
        it is not registered, its dependencies are missing (after
        ensure_deps_fn), its configuration is refused, or its factory
        raises."""
        entry = self.get(name)
        if entry is None:
            return None
        try:
            deps_ok = bool(entry.check_fn())
        except Exception as e:
            logger.warning("Platform '%s' check_fn raised: %s", entry.label, e)
            deps_ok = False
        if not deps_ok and entry.ensure_deps_fn is not None:
            try:
                deps_ok = bool(entry.ensure_deps_fn())
            except Exception as e:
                logger.warning("Platform '%s' dependency install raised: %s", entry.label, e)
                deps_ok = False
        if not deps_ok:
            logger.warning("Platform '%s' requirements not met%s", entry.label,
                           f" ({entry.install_hint})" if entry.install_hint else "")
            return None
        if entry.validate_config is not None:
            try:
                if not entry.validate_config(config):
                    logger.warning("Platform '%s' config validation failed", entry.label)
                    return None
            except Exception as e:
                logger.warning("Platform '%s' config validation error: %s", entry.label, e)
                return None
        try:
            return entry.adapter_factory(config)
        except Exception as e:
            logger.error("Failed to create adapter for platform '%s': %s", entry.label, e, exc_info=True)
            return None

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._scoped_entries.clear()
            self._scoped_deferred.clear()


platform_registry = PlatformRegistry()
