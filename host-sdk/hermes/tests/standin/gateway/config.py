"""Stand-in for gateway.config: Platform and PlatformConfig."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Dict, Optional


class Platform(Enum):
    """Messaging platforms. Plugin platforms become pseudo-members on
    demand, only once registered (Platform("irc") is Platform("irc"))."""

    LOCAL = "local"
    TELEGRAM = "telegram"
    DISCORD = "discord"
    SLACK = "slack"
    WEBHOOK = "webhook"
    API_SERVER = "api_server"

    @classmethod
    def _missing_(cls, value):
        if not isinstance(value, str) or not value.strip():
            return None
        value = value.strip().lower()
        if value in cls._value2member_map_:
            return cls._value2member_map_[value]
        from gateway.platform_registry import platform_registry

        if platform_registry.is_registered(value):
            pseudo = object.__new__(cls)
            pseudo._value_ = value
            pseudo._name_ = value.upper().replace("-", "_").replace(" ", "_")
            cls._value2member_map_[value] = pseudo
            cls._member_map_[pseudo._name_] = pseudo
            return pseudo
        return None


@dataclass
class PlatformConfig:
    """Configuration for one messaging platform
    (gateway.platforms.<name> in config.yaml)."""

    enabled: bool = False
    token: Optional[str] = None
    api_key: Optional[str] = None
    home_channel: Optional[Any] = None
    reply_to_mode: str = "first"
    gateway_restart_notification: bool = True
    typing_indicator: bool = True
    typing_status_text: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "PlatformConfig":
        data = dict(data or {})
        return cls(enabled=bool(data.get("enabled", False)), token=data.get("token"), api_key=data.get("api_key"),
                   home_channel=data.get("home_channel"), extra=dict(data.get("extra") or {}),
                   typing_indicator=bool(data.get("typing_indicator", True)))
