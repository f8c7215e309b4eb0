"""Stand-in for gateway.config: Platform, PlatformConfig, GatewayConfig and
load_gateway_config (the platforms of config.yaml)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Dict, Optional

_bundled_platform_names: Optional[set] = None


def _coerce_bool(value: Any, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        v = value.strip().lower()
        if v in ("1", "true", "yes", "on"):
            return True
        if v in ("0", "false", "no", "off", ""):
            return False
    return bool(value)


class Platform(Enum):
    """Messaging platforms. Plugin platforms become pseudo-members on
    demand, only for a bundled platform plugin's folder or a registered
    plugin platform (Platform("irc") is Platform("irc"))."""

    LOCAL = "local"
    TELEGRAM = "telegram"
    DISCORD = "discord"
    SLACK = "slack"
    HOMEASSISTANT = "homeassistant"
    API_SERVER = "api_server"
    WEBHOOK = "webhook"

    @classmethod
    def _missing_(cls, value):
        if not isinstance(value, str) or not value.strip():
            return None
        value = value.strip().lower()
        if value in cls._value2member_map_:
            return cls._value2member_map_[value]
        global _bundled_platform_names
        if _bundled_platform_names is None:
            _bundled_platform_names = cls._scan_bundled_plugin_platforms()
        known = value in _bundled_platform_names
        if not known:
            try:
                from gateway.platform_registry import platform_registry

                known = platform_registry.is_registered(value)
            except Exception:
                known = False
        if not known:
            return None
        pseudo = object.__new__(cls)
        pseudo._value_ = value
        pseudo._name_ = value.upper().replace("-", "_").replace(" ", "_")
        cls._value2member_map_[value] = pseudo
        cls._member_map_[pseudo._name_] = pseudo
        return pseudo

    @classmethod
    def _scan_bundled_plugin_platforms(cls) -> set:
        d = Path(__file__).resolve().parent.parent / "plugins" / "platforms"
        if not d.is_dir():
            return set()
        return {c.name.lower() for c in d.iterdir() if c.is_dir() and (c / "__init__.py").exists()
                and ((c / "plugin.yaml").exists() or (c / "plugin.yml").exists())}


@dataclass
class HomeChannel:
    platform: Platform
    chat_id: str
    name: str = "Home"
    thread_id: Optional[str] = None

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "HomeChannel":
        return cls(platform=Platform(data["platform"]), chat_id=str(data["chat_id"]), name=data.get("name", "Home"),
                   thread_id=str(data["thread_id"]) if data.get("thread_id") else None)


@dataclass
class PlatformConfig:
    """Configuration for one messaging platform
    (platforms.<name> / gateway.platforms.<name> in config.yaml)."""

    enabled: bool = False
    token: Optional[str] = None
    api_key: Optional[str] = None
    home_channel: Optional[HomeChannel] = None
    reply_to_mode: str = "first"
    gateway_restart_notification: bool = True
    typing_indicator: bool = True
    typing_status_text: Optional[str] = None
    channel_overrides: Dict[str, Any] = field(default_factory=dict)
    extra: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "PlatformConfig":
        data = dict(data or {}) if isinstance(data, dict) else {}
        extra = dict(data.get("extra") or {}) if isinstance(data.get("extra"), dict) else {}
        home = HomeChannel.from_dict(data["home_channel"]) if isinstance(data.get("home_channel"), dict) else None

        def pick(k: str) -> Any:
            v = data.get(k)
            return extra.get(k) if v is None else v

        return cls(enabled=_coerce_bool(data.get("enabled"), False), token=data.get("token"), api_key=data.get("api_key"),
                   home_channel=home, reply_to_mode=data.get("reply_to_mode", "first"),
                   gateway_restart_notification=_coerce_bool(pick("gateway_restart_notification"), True),
                   typing_indicator=_coerce_bool(pick("typing_indicator"), True),
                   typing_status_text=pick("typing_status_text"), extra=extra)


@dataclass
class GatewayConfig:
    platforms: Dict[Platform, PlatformConfig] = field(default_factory=dict)
    group_sessions_per_user: bool = True
    thread_sessions_per_user: bool = False
    multiplex_profiles: bool = False

    def get_home_channel(self, platform: Platform) -> Optional[HomeChannel]:
        cfg = self.platforms.get(platform)
        return cfg.home_channel if cfg else None

    def get_connected_platforms(self) -> list:
        """Enabled platforms whose entry says they are configured
        (is_connected, else validate_config, else yes)."""
        from gateway.platform_registry import platform_registry

        out = []
        for p, c in self.platforms.items():
            if not c.enabled:
                continue
            if c.token or c.api_key:
                out.append(p)
                continue
            entry = platform_registry.get(p.value)
            if entry is None:
                continue
            try:
                ok = entry.is_connected(c) if entry.is_connected else (entry.validate_config(c) if entry.validate_config else True)
            except Exception:
                ok = False
            if ok:
                out.append(p)
        return sorted(out, key=lambda p: str(p.value))


def load_gateway_config() -> GatewayConfig:
    """The gateway's configuration from config.yaml: the platforms of
    ``gateway.platforms``, ``gateway.<platform>`` and top-level
    ``platforms`` (which wins), merged per platform (``extra`` merged
    too), after plugin discovery so plugin platforms are known."""
    from hermes_cli.config import load_config_readonly
    from hermes_cli.plugins import discover_plugins

    yaml_cfg = load_config_readonly() or {}
    gw = yaml_cfg.get("gateway") if isinstance(yaml_cfg.get("gateway"), dict) else {}
    merged: Dict[str, dict] = {}

    def merge(src: Any) -> None:
        if not isinstance(src, dict):
            return
        for name, block in src.items():
            if not isinstance(block, dict):
                continue
            cur = merged.get(name, {})
            extra = {**(cur.get("extra") or {}), **(block.get("extra") or {})}
            cur = {**cur, **block}
            if extra:
                cur["extra"] = extra
            merged[name] = cur

    try:
        discover_plugins()
    except Exception:
        pass
    merge(gw.get("platforms"))
    merge({k: v for k, v in gw.items() if k != "platforms" and isinstance(v, dict) and _is_platform(k)})
    merge(yaml_cfg.get("platforms"))
    platforms: Dict[Platform, PlatformConfig] = {}
    for name, block in merged.items():
        try:
            platforms[Platform(name)] = PlatformConfig.from_dict(block)
        except ValueError:
            pass
    return GatewayConfig(platforms=platforms,
                         group_sessions_per_user=_coerce_bool(yaml_cfg.get("group_sessions_per_user"), True),
                         thread_sessions_per_user=_coerce_bool(yaml_cfg.get("thread_sessions_per_user"), False))


def _is_platform(name: str) -> bool:
    try:
        Platform(name)
        return True
    except ValueError:
        return False
