"""Stand-in for gateway.platform_registry: PlatformEntry and the registry."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

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
    parse_target_fn: Optional[Callable[[str], Any]] = None


class PlatformRegistry:
    def __init__(self) -> None:
        self._entries: dict[str, PlatformEntry] = {}
        self._lock = threading.RLock()

    def register(self, entry: PlatformEntry, *, scope: Optional[str] = None) -> None:
        """Register entry; an entry of the same name is replaced (last
        writer wins)."""
        with self._lock:
            if entry.name in self._entries:
                logger.info("Platform '%s' re-registered", entry.name)
            self._entries[entry.name] = entry

    def unregister(self, name: str, *, scope: Optional[str] = None) -> bool:
        with self._lock:
            return self._entries.pop(name, None) is not None

    def get(self, name: str) -> Optional[PlatformEntry]:
        with self._lock:
            return self._entries.get(name)

    def is_registered(self, name: str) -> bool:
        return self.get(name) is not None

    def all_entries(self) -> list[PlatformEntry]:
        with self._lock:
            return list(self._entries.values())

    def create_adapter(self, name: str, config: Any) -> Any:
        """The adapter of platform name for config, or None when its
        dependencies or configuration are not there."""
        entry = self.get(name)
        if entry is None:
            return None
        if not entry.check_fn():
            logger.warning("Platform %s not available: %s", name, entry.install_hint)
            return None
        if entry.validate_config is not None and not entry.validate_config(config):
            logger.warning("Platform %s is not configured", name)
            return None
        return entry.adapter_factory(config)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


platform_registry = PlatformRegistry()
