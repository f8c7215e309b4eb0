"""a2a-plugin for Hermes: the live Hermes agent answers A2A peers and gets
the a2a_* tools, through the a2a-plugin binary — the one implementation of
A2A — launched by the Python host SDK (agentplugin_host, vendored in
vendor/ by the installer). No edit to Hermes: everything goes through
``ctx.register_platform`` and ``ctx.register_tool``.

Enable it in config.yaml::

    plugins:
      enabled: [a2a-plugin]
      disabled: [a2a-platform]     # Hermes' bundled A2A plugin (this one would replace its tools and platform)
    gateway:
      platforms:
        a2a: {enabled: true}

``make hermes-plugin HERMES_HOME=…`` installs it and prints these lines.
"""

from __future__ import annotations

import logging
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_VENDOR = os.path.join(_HERE, "vendor")
if os.path.isdir(_VENDOR) and _VENDOR not in sys.path:
    # The SDK and the contract's generated code, at the version this
    # plugin was installed with (they must match its binary).
    sys.path.insert(0, _VENDOR)

log = logging.getLogger("a2a_plugin")

#: The manifest name of Hermes' own A2A plugin (plugins/platforms/a2a).
BUNDLED_A2A = "a2a-platform"

__all__ = ["register"]


def _platform_registered(name: str, factory: object) -> bool:
    """Whether Hermes' platform registry holds factory under name.
    register_platform returns None when Hermes did not take the entry (0.20.1;
    0.21 may return None on success too): the registry decides."""
    try:
        from gateway.platform_registry import platform_registry
    except ImportError:
        return False
    entry = platform_registry.get(name)
    return entry is not None and getattr(entry, "adapter_factory", None) is factory


def register(ctx) -> None:
    """Hermes' entry point; runs in every Hermes process (CLI, gateway,
    cron). Registers the binary's tools and the a2a platform. The binary
    itself starts only when the gateway connects the platform (or, in a
    process without a gateway, at the first tool call, for tools only)."""
    from . import settings as settings_mod
    from .runtime import Runtime
    from .tools import register_tools

    settings = settings_mod.load(ctx.get_config)
    has_plugin = getattr(ctx, "has_plugin", None)
    if callable(has_plugin) and has_plugin(BUNDLED_A2A):
        # Hermes lets the later registration win: this plugin's tools (same
        # names, same a2a toolset) and its a2a platform replace the bundled
        # plugin's, which then serves nothing. Say so; disabling it is cleaner.
        log.warning("a2a-plugin replaces the tools and the a2a platform of Hermes' bundled %s plugin; disable it "
                    "(plugins.disabled: [%s] in config.yaml) to keep the two apart", BUNDLED_A2A, BUNDLED_A2A)
    rt = Runtime.get(settings, str(ctx.state.data_dir))
    ctx.on_unload(rt.close)

    async def keepalive(chat_id: str, text: str) -> None:
        adapter = rt.bridge.adapter
        if adapter is not None:
            await adapter.keepalive(chat_id, text)

    names = register_tools(ctx, rt, keepalive)

    def adapter_factory(config):
        from .adapter import A2APluginAdapter

        return A2APluginAdapter(config, rt, settings)

    from .adapter import PLATFORM_HINT

    handle = ctx.register_platform(
        name=settings_mod.PLATFORM,
        label="A2A (a2a-plugin)",
        adapter_factory=adapter_factory,
        check_fn=rt.binary_present,
        validate_config=lambda config: True,
        is_connected=lambda config: bool(getattr(config, "enabled", False)),
        required_env=[],
        install_hint=f"the a2a-plugin binary is missing at {settings.binary}; run make hermes-plugin HERMES_HOME=… again",
        emoji="🛰️",
        allowed_users_env="A2A_ALLOWED_USERS",
        allow_all_env="A2A_ALLOW_ALL_USERS",
        allow_update_command=False,
        platform_hint=PLATFORM_HINT,
    )
    if handle is None and not _platform_registered(settings_mod.PLATFORM, adapter_factory):
        raise RuntimeError(
            f"a2a-plugin: Hermes did not register the {settings_mod.PLATFORM!r} platform (another plugin or a built-in "
            "platform holds that name; see the gateway log): disable the other one in config.yaml (plugins.disabled)")
    log.debug("a2a-plugin registered the a2a platform and %d tools: %s", len(names), ", ".join(names))
