"""The stand-in itself, pinned to what Hermes 0.20.1 does where the plugin's
correctness depends on it (each test names the Hermes code it follows).
No plugin binary here: a recording adapter on the stand-in gateway."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
import unittest
from typing import Any, Optional

from support import remove_home, reset_hermes  # first: puts the stand-in on sys.path

import fakemodel
import run_agent
import yaml
from gateway.config import Platform
from gateway.platform_registry import PlatformEntry, platform_registry
from gateway.platforms.base import BasePlatformAdapter, MessageEvent, SendResult
from gateway.run import GatewayRunner
from hermes_cli.plugins import PluginContext, PluginManifest, get_plugin_manager
from tools.registry import registry


class Recorder(BasePlatformAdapter):
    """Records every call Hermes makes into a platform adapter."""

    instances: list["Recorder"] = []

    def __init__(self, config: Any, toolsets: Optional[list] = None, connect_ok: bool = True):
        super().__init__(config, Platform("rec"))
        self.sends: list[dict] = []
        self.hooks: list[tuple] = []
        self.connects: list[bool] = []
        self.disconnects = 0
        self.toolsets = toolsets
        self.connect_ok = connect_ok
        Recorder.instances.append(self)

    @property
    def authorization_is_upstream(self) -> bool:
        return True

    async def connect(self, *, is_reconnect: bool = False) -> bool:
        self.connects.append(is_reconnect)
        if not self.connect_ok:
            self._set_fatal_error("rec_busy", "the port is taken", retryable=True)
            return False
        self._mark_connected()
        return True

    async def disconnect(self) -> None:
        self.disconnects += 1
        self._mark_disconnected()

    async def send(self, *args: Any, **kwargs: Any) -> SendResult:
        # Hermes calls send with keywords only (base._send_with_retry) or
        # (chat_id, content) positionally plus metadata= (notices).
        self.sends.append({"args": args, **kwargs})
        return SendResult(success=True, message_id=f"m{len(self.sends)}")

    async def get_chat_info(self, chat_id: str) -> dict:
        return {"name": chat_id, "type": "dm"}

    def toolsets_for_source(self, source: Any) -> Optional[list]:
        return self.toolsets

    async def on_processing_start(self, event: MessageEvent) -> None:
        self.hooks.append(("start", event.message_id))

    async def on_processing_complete(self, event: MessageEvent, outcome: Any) -> None:
        self.hooks.append(("complete", event.message_id, outcome.value))

    def event(self, text: str, message_id: str, chat_id: str = "c1") -> MessageEvent:
        src = self.build_source(chat_id=chat_id, user_id="u1", message_id=message_id)
        return MessageEvent(text=text, source=src, message_id=message_id, allow_gateway_control=False)


class Blocker:
    """A tool that blocks until released or interrupted."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.interrupted = threading.Event()
        self.session_vars: dict = {}

    def __call__(self, args: dict, **kwargs: Any) -> str:
        from gateway.session_context import get_session_env
        from tools.interrupt import is_interrupted

        self.kwargs = kwargs
        self.session_vars = {n: get_session_env(n) for n in ("HERMES_SESSION_PLATFORM", "HERMES_SESSION_CHAT_ID",
                                                              "HERMES_SESSION_MESSAGE_ID", "HERMES_SESSION_KEY")}
        self.started.set()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not self.release.is_set():
            if is_interrupted():
                self.interrupted.set()
                return "[interrupted]"
            time.sleep(0.01)
        return "done"


async def _until(pred, what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


class StandinTest(unittest.IsolatedAsyncioTestCase):
    config: dict = {}
    toolsets: Optional[list] = None
    connect_ok = True

    async def asyncSetUp(self) -> None:
        import tempfile

        reset_hermes()
        Recorder.instances.clear()
        self.home = tempfile.mkdtemp(prefix="hermes-standin-")
        self.addCleanup(remove_home, self.home)
        os.environ["HERMES_HOME"] = self.home
        cfg = {"gateway": {"platforms": {"rec": {"enabled": True}}}, "platform_toolsets": {"rec": ["terminal"]}}
        cfg.update(self.config)
        with open(os.path.join(self.home, "config.yaml"), "w") as f:
            yaml.safe_dump(cfg, f)
        self._orig_openai = run_agent.OpenAI
        run_agent.OpenAI = fakemodel.FakeOpenAI
        self.addCleanup(setattr, run_agent, "OpenAI", self._orig_openai)
        fakemodel.CALLS.requests.clear()
        self.blocker = Blocker()
        self.addCleanup(self.blocker.release.set)
        registry.register(name="long_job", toolset="terminal", handler=self.blocker,
                          schema={"name": "long_job", "description": "Block.", "parameters": {"type": "object"}})
        registry.register(name="web_search", toolset="web", handler=lambda a, **k: "none",
                          schema={"name": "web_search", "description": "Search.", "parameters": {"type": "object"}})
        toolsets, ok = self.toolsets, self.connect_ok
        platform_registry.register(PlatformEntry(
            name="rec", label="Recorder", adapter_factory=lambda cfg: Recorder(cfg, toolsets, ok), check_fn=lambda: True))
        self.runner = GatewayRunner()
        await self.runner.start()
        self.addAsyncCleanup(self.runner.stop)

    @property
    def rec(self) -> Recorder:
        return Recorder.instances[-1]


class BusySessionTest(StandinTest):
    async def test_a_follow_up_interrupts_and_is_answered_inside_the_running_turn(self) -> None:
        """gateway/run.py _handle_active_session_busy_message (interrupt
        mode) and the in-band drain in _run_agent: the follow-up's answer
        is the *first* message's reply; it gets no processing hooks."""
        rec = self.rec
        await rec.handle_message(rec.event("long job", "t1"))
        self.assertTrue(await asyncio.to_thread(self.blocker.started.wait, 10))
        await rec.handle_message(rec.event("second", "t2"))
        self.assertTrue(await asyncio.to_thread(self.blocker.interrupted.wait, 10), "the running tool was not interrupted")
        await _until(lambda: ("complete", "t1", "success") in rec.hooks, "the turn to end")
        ack = [s for s in rec.sends if (s.get("content") or "").startswith("⚡ Interrupting current task")]
        self.assertEqual(len(ack), 1, rec.sends)
        self.assertEqual((ack[0]["reply_to"], ack[0]["metadata"]), ("t2", None))
        final = [s for s in rec.sends if (s.get("metadata") or {}).get("notify")]
        self.assertEqual([(s["content"], s["reply_to"]) for s in final], [("echo: second", "t1")])
        self.assertEqual(rec.hooks, [("start", "t1"), ("complete", "t1", "success")])

    async def test_cancel_by_interrupt_ends_the_turn_with_nothing_sent(self) -> None:
        """An interrupt with no pending message (the plugin's CancelTurn
        path) ends the run; an interrupted run that did work sends nothing
        (gateway/run.py _normalize_empty_agent_response)."""
        rec = self.rec
        await rec.handle_message(rec.event("long job", "t1"))
        self.assertTrue(await asyncio.to_thread(self.blocker.started.wait, 10))
        key = rec._session_key_of(rec.event("x", "t1").source)
        await rec.interrupt_session_activity(key, "c1")
        self.assertTrue(await asyncio.to_thread(self.blocker.interrupted.wait, 10))
        await _until(lambda: ("complete", "t1", "success") in rec.hooks, "the turn to end")
        self.assertEqual([s for s in rec.sends if (s.get("metadata") or {}).get("notify")], [])


class QueueModeTest(StandinTest):
    config = {"display": {"busy_input_mode": "queue"}}

    async def test_a_queued_follow_up_takes_the_first_reply_slot(self) -> None:
        """Queue mode: the finished run's answer goes out with no reply_to
        and no notify, the follow-up's answer as the first message's
        reply (gateway/run.py _deliver_queued_first_response)."""
        rec = self.rec
        await rec.handle_message(rec.event("long job", "t1"))
        self.assertTrue(await asyncio.to_thread(self.blocker.started.wait, 10))
        await rec.handle_message(rec.event("second", "t2"))
        self.blocker.release.set()
        await _until(lambda: ("complete", "t1", "success") in rec.hooks, "the turn to end")
        first = [s for s in rec.sends if s.get("args")[1:2] == ("long_job said: done",)]
        self.assertEqual(len(first), 1, rec.sends)
        self.assertEqual(first[0].get("metadata"), None)
        self.assertNotIn("reply_to", first[0])
        final = [s for s in rec.sends if (s.get("metadata") or {}).get("notify")]
        self.assertEqual([(s["content"], s["reply_to"]) for s in final], [("echo: second", "t1")])
        self.assertEqual(rec.hooks, [("start", "t1"), ("complete", "t1", "success")])


class SendsAndSessionTest(StandinTest):
    async def test_final_reply_notice_and_session_variables(self) -> None:
        """base._process_message_background and _send_with_retry: keywords
        only, reply_to = the event's message_id, notify; the first-contact
        notice positional with metadata= and no reply_to; the session's
        HERMES_SESSION_MESSAGE_ID is the *source's* message_id; tool
        handlers get task_id = the session's id."""
        rec = self.rec
        ev = rec.event("long job", "t1")
        ev.source.message_id = "src-1"
        await rec.handle_message(ev)
        self.assertTrue(await asyncio.to_thread(self.blocker.started.wait, 10))
        self.blocker.release.set()
        await _until(lambda: ("complete", "t1", "success") in rec.hooks, "the turn to end")
        notice, final = rec.sends
        self.assertEqual(notice["args"][0], "c1")
        self.assertTrue(notice["args"][1].startswith("📬 No home channel is set for Rec."))
        self.assertEqual(set(notice) - {"args"}, {"metadata"})
        self.assertEqual(final, {"args": (), "chat_id": "c1", "content": "long_job said: done", "reply_to": "t1",
                                 "metadata": {"notify": True}})
        key = "agent:main:rec:dm:c1"
        self.assertEqual(self.blocker.session_vars, {"HERMES_SESSION_PLATFORM": "rec", "HERMES_SESSION_CHAT_ID": "c1",
                                                     "HERMES_SESSION_MESSAGE_ID": "src-1", "HERMES_SESSION_KEY": key})
        self.assertEqual(self.blocker.kwargs["task_id"], key)


class EmptyToolsetsTest(StandinTest):
    toolsets: Optional[list] = []

    async def test_an_empty_per_source_list_is_ignored(self) -> None:
        """gateway/run.py _resolve_enabled_toolsets_for_source: ``if
        override and isinstance(override, list)`` — [] means the platform's
        own toolsets."""
        rec = self.rec
        await rec.handle_message(rec.event("hello", "t1"))
        await _until(lambda: ("complete", "t1", "success") in rec.hooks, "the turn to end")
        self.assertEqual(fakemodel.CALLS.tools_offered(), {"long_job"})


class SentinelToolsetsTest(StandinTest):
    toolsets: Optional[list] = ["no_mcp"]

    async def test_a_list_naming_no_toolset_gives_none_but_plugin_toolsets_default_on(self) -> None:
        """hermes_cli/tools_config._get_platform_tools: an explicit list
        replaces the platform's; a plugin toolset it does not name is still
        on unless default-off (a2a is) or known for the platform."""
        ctx = PluginContext(PluginManifest(name="other", source="user", key="other"), get_plugin_manager())
        ctx.register_tool("other_tool", "othertools", {"name": "other_tool", "description": "x", "parameters": {}},
                          lambda a, **k: "x")
        ctx.register_tool("a2a_thing", "a2a", {"name": "a2a_thing", "description": "x", "parameters": {}},
                          lambda a, **k: "x")
        rec = self.rec
        with self.assertLogs("hermes_cli.tools_config", level="WARNING") as logs:
            await rec.handle_message(rec.event("hello", "t1"))
            await _until(lambda: ("complete", "t1", "success") in rec.hooks, "the turn to end")
        self.assertEqual(fakemodel.CALLS.tools_offered(), {"other_tool"})
        # A list in which no name is a toolset: Hermes warns (#38798).
        self.assertIn("platform 'rec' has no valid toolsets configured (unknown name(s): no_mcp)", logs.output[0])


class CustomToolsetTest(StandinTest):
    toolsets: Optional[list] = ["nothing-here", "no_mcp"]

    async def test_an_empty_custom_toolset_gives_no_tools_without_a_warning(self) -> None:
        """toolsets.create_custom_toolset adds a name validate_toolset
        knows; its (no) tools are the turn's."""
        import toolsets

        toolsets.create_custom_toolset("nothing-here", "no tools", tools=[], includes=[])
        rec = self.rec
        with self.assertNoLogs("hermes_cli.tools_config", level="WARNING"):
            await rec.handle_message(rec.event("hello", "t1"))
            await _until(lambda: ("complete", "t1", "success") in rec.hooks, "the turn to end")
        self.assertEqual(fakemodel.CALLS.tools_offered(), set())


class ConnectTest(StandinTest):
    connect_ok = False

    async def test_a_failed_connect_is_disconnected_and_retried_with_a_new_adapter(self) -> None:
        """gateway/run.py start (_safe_adapter_disconnect after a failed
        connect) and the reconnect watcher (a new adapter,
        connect(is_reconnect=True))."""
        first = self.rec
        self.assertEqual((first.connects, first.disconnects), ([False], 1))
        self.assertNotIn(Platform("rec"), self.runner.adapters)
        await self.runner._retry_failed_platforms(now=float("inf"))
        second = self.rec
        self.assertIsNot(second, first)
        self.assertEqual(second.connects, [True])


class RegistrationTest(unittest.TestCase):
    def setUp(self) -> None:
        reset_hermes()
        self.addCleanup(reset_hermes)

    def _ctx(self, name: str, source: str = "user") -> PluginContext:
        return PluginContext(PluginManifest(name=name, source=source, key=name), get_plugin_manager())

    def test_register_tool_follows_hermes(self) -> None:
        """hermes_cli/plugins.PluginContext.register_tool and
        tools/registry.register."""
        def h(args, **kw):
            return "x"

        registry.register(name="builtin_tool", toolset="terminal", handler=h, schema={"name": "builtin_tool"})
        self.assertIsNone(self._ctx("p1").register_tool("builtin_tool", "p1", {"name": "builtin_tool"}, h),
                          "a built-in tool is not shadowed")
        first = self._ctx("p1").register_tool("t", "shared", {"name": "t", "description": "first"}, h)
        self.assertIsNotNone(first)
        second = self._ctx("p2").register_tool("t", "shared", {"name": "t", "description": "second"}, h)
        self.assertIsNotNone(second, "a later plugin's same-toolset tool replaces the earlier one")
        self.assertEqual(registry.get_entry("t").schema["description"], "second")
        self.assertIsNone(self._ctx("p3").register_tool("t", "elsewhere", {"name": "t"}, h),
                          "another toolset's name is rejected")
        second.dispose()
        self.assertEqual(registry.get_entry("t").schema["description"], "first", "unloading restores the earlier one")

    def test_handler_results_and_errors(self) -> None:
        """tools/registry.dispatch: strings pass, a dict is a contract
        error, an exception becomes {"error": …}."""
        registry.register(name="s", toolset="x", handler=lambda a, **k: "ok", schema={"name": "s"})
        registry.register(name="d", toolset="x", handler=lambda a, **k: {"a": 1}, schema={"name": "d"})

        def boom(a, **k):
            raise ValueError("bad")

        registry.register(name="e", toolset="x", handler=boom, schema={"name": "e"})
        self.assertEqual(registry.dispatch("s", {}), "ok")
        self.assertIn("unsupported result type: dict", json.loads(registry.dispatch("d", {}))["error"])
        self.assertEqual(json.loads(registry.dispatch("e", {}))["error"], "Tool execution failed: ValueError: bad")


if __name__ == "__main__":
    unittest.main()
