"""The plugin's settings: ``plugins.entries.a2a-plugin.settings`` in
Hermes' config.yaml (read with ``ctx.get_config``), and the ``A2A_*``
environment, which the binary reads itself and which wins.

    plugins:
      entries:
        a2a-plugin:
          settings:
            a2a:                  # the binary's settings (README: Configuration)
              port: 41241
              agent_name: My Hermes
            peer_toolsets:        # what a peer's turn may use, by trust tier
              public: []
              trusted: [web, a2a]
            transport: auto-mtls  # or socket-dir
            binary: /path/to/a2a-plugin
            log_level: info

The ``a2a`` section goes to the binary as its configuration section
unchanged, so a misspelt setting fails the binary's Configure with a message
naming it, which the gateway logs.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from agentplugin_host import Transport

#: The plugin's id in config.yaml (plugins.enabled, plugins.entries.<id>).
PLUGIN_ID = "a2a-plugin"
#: The Hermes platform and toolset this plugin registers. It replaces Hermes'
#: bundled a2a-platform, which registers the same names: gateway.platforms.a2a
#: and platform_toolsets entries written for that one keep working.
PLATFORM = "a2a"
TOOLSET = "a2a"

#: Trust tiers as the contract names them (TrustTier), lower case.
TIERS = ("public", "trusted", "local")

#: Default toolsets of a peer's turn by tier; None: the platform's own
#: (platform_toolsets.a2a). A public peer's turn gets no tools; a trusted
#: peer may search the web and delegate onwards; the local operator gets
#: the platform's configuration.
DEFAULT_PEER_TOOLSETS: dict[str, Optional[list[str]]] = {"public": [], "trusted": ["web", "a2a"], "local": None}


class SettingsError(ValueError):
    """A setting is wrong; the message names it and says what to fix."""


@dataclass
class Settings:
    """What the plugin needs to run the binary."""

    #: The a2a-plugin executable.
    binary: str
    #: The binary's configuration section (the ``a2a`` settings).
    a2a: dict[str, Any] = field(default_factory=dict)
    transport: Transport = Transport.AUTO_MTLS
    peer_toolsets: dict[str, Optional[list[str]]] = field(default_factory=lambda: dict(DEFAULT_PEER_TOOLSETS))
    #: The binary's log level (trace … error).
    log_level: str = "info"

    def binary_config_json(self) -> str:
        """The binary's section as canonical JSON (for the tool cache key)."""
        return json.dumps(self.a2a, sort_keys=True, default=str)


def default_binary() -> str:
    """Where make hermes-plugin puts the binary: bin/ beside this file."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "a2a-plugin")


def load(get: Any) -> Settings:
    """Read the settings through get(key, default) — ctx.get_config."""
    a2a = get("a2a", None)
    if a2a is None:
        a2a = {}
    if not isinstance(a2a, Mapping):
        raise SettingsError(
            f"plugins.entries.{PLUGIN_ID}.settings.a2a must be a mapping of the binary's settings "
            f"(e.g. port: 41241), not {type(a2a).__name__}")
    binary = get("binary", None) or default_binary()
    if not isinstance(binary, str):
        raise SettingsError(f"plugins.entries.{PLUGIN_ID}.settings.binary must be a path, not {binary!r}")
    raw_transport = get("transport", None) or Transport.AUTO_MTLS.value
    try:
        transport = Transport(str(raw_transport))
    except ValueError:
        raise SettingsError(
            f"plugins.entries.{PLUGIN_ID}.settings.transport is {raw_transport!r}; use auto-mtls or socket-dir") from None
    peer = dict(DEFAULT_PEER_TOOLSETS)
    raw_peer = get("peer_toolsets", None)
    if raw_peer is not None:
        if not isinstance(raw_peer, Mapping):
            raise SettingsError(f"plugins.entries.{PLUGIN_ID}.settings.peer_toolsets must map tiers ({', '.join(TIERS)}) to toolset lists")
        for tier, sets in raw_peer.items():
            if tier not in TIERS:
                raise SettingsError(
                    f"plugins.entries.{PLUGIN_ID}.settings.peer_toolsets.{tier}: unknown trust tier (use {', '.join(TIERS)})")
            if sets is not None and (not isinstance(sets, list) or not all(isinstance(s, str) for s in sets)):
                raise SettingsError(
                    f"plugins.entries.{PLUGIN_ID}.settings.peer_toolsets.{tier} must be a list of toolset names, or null for the platform's own")
            peer[tier] = list(sets) if sets is not None else None
    log_level = str(get("log_level", None) or "info")
    return Settings(binary=binary, a2a=dict(a2a), transport=transport, peer_toolsets=peer, log_level=log_level)
