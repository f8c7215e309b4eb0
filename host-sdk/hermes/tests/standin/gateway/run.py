"""Stand-in for gateway.run.GatewayRunner: the gateway process.

It reads $HERMES_HOME/config.yaml, discovers plugins, builds an adapter for
every enabled platform (gateway.platforms.<name>.enabled), sets its message
handler, busy-session handler and ``gateway_runner``, and connects it, on
the event loop it runs on (the gateway loop). A message's turn runs
AIAgent.run_conversation in an executor thread with the session's
HERMES_SESSION_* variables bound, while a monitor checks the adapter's
``has_pending_interrupt`` every 200 ms and interrupts the agent. A
session's history is kept in memory per session key.

The first message of a session on a platform without a home channel gets
the "📬 No home channel is set…" notice (sent with no reply_to, no
notify) before the agent runs. A message for a busy session takes the
default busy_input_mode, interrupt: it becomes the session's pending
follow-up, the running agent is interrupted, and "⚡ Interrupting current
task…" is sent with reply_to = the new message (no notify), at most every
30 s per session.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import os
import time
from typing import Any, Optional

import run_agent
from gateway.config import Platform, PlatformConfig
from gateway.platform_registry import platform_registry
from gateway.platforms.base import MessageEvent, merge_pending_message_event
from gateway.session import SessionSource, build_session_key
from gateway.session_context import set_session_vars
from hermes_cli.config import load_config_readonly
from hermes_cli.plugins import get_plugin_manager
from tools.registry import registry

logger = logging.getLogger(__name__)

_BUSY_ACK_COOLDOWN = 30
#: Plugin toolsets that stay off unless a platform lists them (Hermes'
#: _DEFAULT_OFF_TOOLSETS has a2a among them).
_DEFAULT_OFF_TOOLSETS = {"a2a", "spotify", "discord", "homeassistant"}


class GatewayRunner:
    def __init__(self) -> None:
        self.config = load_config_readonly() or {}
        self.adapters: dict[Platform, Any] = {}
        self._running_agents: dict[str, run_agent.AIAgent] = {}
        self._histories: dict[str, list[dict]] = {}
        self._busy_ack_ts: dict[str, float] = {}
        self._running = False

    async def start(self) -> None:
        get_plugin_manager().discover_and_load()
        platforms = ((self.config.get("gateway") or {}).get("platforms") or {})
        for name, raw in platforms.items():
            pcfg = PlatformConfig.from_dict(raw or {})
            if not pcfg.enabled:
                continue
            adapter = platform_registry.create_adapter(name, pcfg)
            if adapter is None:
                logger.warning("No adapter for enabled platform %s", name)
                continue
            adapter.gateway_runner = self
            adapter.set_message_handler(self._handle_message)
            adapter.set_busy_session_handler(self._handle_active_session_busy_message)
            if await adapter.connect():
                self.adapters[adapter.platform] = adapter
            else:
                logger.error("Platform %s failed to connect: %s", name, adapter.fatal_error_message)
        self._running = True

    async def stop(self) -> None:
        """Interrupt the running agents, cancel the adapters' turns,
        disconnect them, unload the plugins."""
        self._running = False
        for agent in list(self._running_agents.values()):
            agent.interrupt(None, hard_cancel=True)
        for adapter in list(self.adapters.values()):
            await adapter.cancel_background_tasks()
            await adapter.disconnect()
        self.adapters.clear()
        get_plugin_manager().unload()

    def _adapter_for_source(self, source: SessionSource) -> Any:
        return self.adapters.get(source.platform)

    def _is_user_authorized(self, source: SessionSource) -> bool:
        adapter = self._adapter_for_source(source)
        if adapter is not None and adapter.authorization_is_upstream:
            return True
        entry = platform_registry.get(source.platform.value)
        if entry is not None and entry.allow_all_env and os.getenv(entry.allow_all_env, "").lower() in ("1", "true", "yes"):
            return True
        allowed = os.getenv(entry.allowed_users_env, "") if entry is not None and entry.allowed_users_env else ""
        return bool(source.user_id) and source.user_id in {u.strip() for u in allowed.split(",") if u.strip()}

    def history(self, session_key: str) -> list[dict]:
        return self._histories.get(session_key, [])

    def _platform_tools(self, platform: str, toolsets: Optional[list[str]]) -> set[str]:
        """The tool names a turn may use: the adapter's per-source toolsets,
        else platform_toolsets.<platform>, else every registered toolset
        but the default-off ones (plugin toolsets such as a2a stay off
        until a platform lists them)."""
        if toolsets is None:
            configured = (self.config.get("platform_toolsets") or {}).get(platform)
            if isinstance(configured, list):
                toolsets = [str(t) for t in configured]
            else:
                toolsets = [t for t in registry.get_registered_toolset_names() if t not in _DEFAULT_OFF_TOOLSETS]
        names: set[str] = set()
        for ts in toolsets:
            names.update(registry.get_tool_names_for_toolset(ts))
        return names

    async def _deliver_platform_notice(self, source: SessionSource, content: str) -> None:
        adapter = self._adapter_for_source(source)
        if adapter is not None:
            await adapter.send(source.chat_id, content, metadata=None)

    async def _handle_message(self, event: MessageEvent) -> Optional[str]:
        source = event.source
        if not self._is_user_authorized(source):
            logger.warning("Unauthorized user %s on %s", source.user_id, source.platform.value)
            return None
        adapter = self._adapter_for_source(source)
        key = build_session_key(source)
        history = self._histories.setdefault(key, [])
        if not history and source.platform not in (Platform.LOCAL, Platform.WEBHOOK):
            platform_name = source.platform.value
            home = os.getenv(f"{platform_name.upper().replace('-', '_')}_HOME_CHANNEL") or \
                ((self.config.get("gateway") or {}).get("platforms", {}).get(platform_name, {}) or {}).get("home_channel")
            if not home:
                await self._deliver_platform_notice(source, (
                    f"📬 No home channel is set for {platform_name.title()}. A home channel is where Hermes delivers "
                    "cron job results and cross-platform messages.\n\nType /sethome to make this chat your home "
                    "channel, or ignore to skip."))
        toolsets = adapter.toolsets_for_source(source) if adapter is not None else None
        tools = self._platform_tools(source.platform.value, toolsets)
        result = await self._run_agent(event, source, key, history, tools)
        history.extend(result.get("messages") or [])
        return result.get("final_response") or None

    async def _run_agent(self, event: MessageEvent, source: SessionSource, key: str, history: list, tools: set) -> dict:
        entry = platform_registry.get(source.platform.value)
        agent = run_agent.AIAgent(enabled_tools=tools, session_id=key, platform=source.platform.value,
                                  system_prompt=entry.platform_hint if entry is not None else "")
        self._running_agents[key] = agent

        async def monitor_for_interrupt() -> None:
            while True:
                await asyncio.sleep(0.2)
                adapter = self._adapter_for_source(source)
                if adapter is not None and adapter.has_pending_interrupt(key):
                    logger.info("interrupt detected for session %s; interrupting the agent", key)
                    pending = adapter._pending_messages.get(key)
                    agent.interrupt(pending.text if pending is not None else None)
                    return

        monitor = asyncio.create_task(monitor_for_interrupt())
        ctx = contextvars.copy_context()
        ctx.run(set_session_vars, platform=source.platform.value, chat_id=source.chat_id,
                chat_name=source.chat_name or "", chat_type=source.chat_type, user_id=source.user_id or "",
                user_name=source.user_name or "", key=key, id=key, message_id=event.message_id or "")
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(
                None, functools.partial(ctx.run, agent.run_conversation, event.text, list(history),
                                        event.message_id))
        finally:
            monitor.cancel()
            if self._running_agents.get(key) is agent:
                del self._running_agents[key]

    async def _handle_active_session_busy_message(self, event: MessageEvent, session_key: str) -> bool:
        if not self._is_user_authorized(event.source):
            return True
        adapter = self._adapter_for_source(event.source)
        if adapter is None:
            return False
        merge_pending_message_event(adapter._pending_messages, session_key, event)
        running = self._running_agents.get(session_key)
        if running is not None:
            running.interrupt(event.text)
        if os.environ.get("HERMES_GATEWAY_BUSY_ACK_ENABLED", "true").lower() != "true":
            return True
        now = time.time()
        if now - self._busy_ack_ts.get(session_key, 0) < _BUSY_ACK_COOLDOWN:
            return True
        self._busy_ack_ts[session_key] = now
        try:
            await adapter._send_with_retry(event.source.chat_id,
                                           "⚡ Interrupting current task. I'll respond to your message shortly.",
                                           reply_to=event.message_id, metadata=None)
        except Exception as e:
            logger.debug("Failed to send busy-ack: %s", e)
        return True
