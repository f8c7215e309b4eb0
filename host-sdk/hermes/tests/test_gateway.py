"""The Hermes plugin end to end: the real a2a-plugin binary, the Python
host SDK, the plugin as installed by install.py, and the stand-in of
Hermes' plugin API running a gateway with a scripted model. Peers talk A2A
over real HTTP."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
import tempfile
import time
import unittest

import support  # noqa: F401  (puts the stand-in on sys.path)
from support import (LongJob, NewerHermesShape, answer_of, base_config, free_port, jsonrpc, message, new_hermes_home,
                     register_test_tools, remove_home, reset_hermes, task_of, text_of)

import fakemodel
import run_agent
from gateway.config import Platform
from gateway.run import GatewayRunner
from tools.registry import registry

PEER_ALICE = "alice-token-0123456789abcdef"
PEER_BOB = "bob-token-0123456789abcdef"


class GatewayTest(unittest.IsolatedAsyncioTestCase):
    """One stand-in gateway per test, on the test's loop (the gateway loop)."""

    a2a_extra: dict = {}
    settings_extra: dict = {}

    async def asyncSetUp(self) -> None:
        reset_hermes()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.home = new_hermes_home(base_config(self.port, self.a2a_extra, settings=self.settings_extra))
        self.addCleanup(remove_home, self.home)
        os.environ["HERMES_HOME"] = self.home
        self.files = tempfile.mkdtemp(prefix="fakemodel-")
        os.environ["FAKEMODEL_FILES"] = self.files
        self._orig_openai = run_agent.OpenAI
        run_agent.OpenAI = fakemodel.FakeOpenAI
        self.addCleanup(setattr, run_agent, "OpenAI", self._orig_openai)
        fakemodel.CALLS.requests.clear()
        self.long_job = LongJob()
        self.progress_job = _ProgressJob(self)
        register_test_tools(self.long_job, self.progress_job)
        self.runner = GatewayRunner()
        await self.runner.start()
        self.adapter = self.runner.adapters[Platform("a2a")]
        self.events = _record_events(self.adapter)

    async def asyncTearDown(self) -> None:
        await self.runner.stop()

    async def send(self, text: str, **kw) -> dict:
        ctx, task = kw.pop("context_id", ""), kw.pop("task_id", "")
        return task_of(await jsonrpc(self.url, "SendMessage", {"message": message(text, ctx, task), **kw}))


class InboundTest(GatewayTest):
    async def test_send_message_is_answered_by_the_live_session(self) -> None:
        task = await self.send("hello hermes")
        self.assertEqual(task["status"]["state"], "TASK_STATE_COMPLETED")
        self.assertEqual(answer_of(task), "echo: hello hermes")
        ev = self.events[-1]
        self.assertFalse(ev.allow_gateway_control, "peer text must never become a /command")
        self.assertEqual(ev.message_id, task["id"])
        self.assertEqual(ev.source.chat_id, task["contextId"])
        self.assertEqual(ev.source.platform, Platform("a2a"))
        self.assertEqual(ev.metadata["a2a_trust_tier"], "local")
        self.assertTrue(ev.metadata["unattended"])
        self.assertEqual(ev.metadata["a2a_task_id"], task["id"])
        self.assertEqual(ev.source.user_id, "local:127.0.0.1")
        # The first-contact "No home channel is set…" notice answered
        # nothing: it is neither in the task's status nor in its history.
        got = task_of(await jsonrpc(self.url, "GetTask", {"id": task["id"]}))
        self.assertNotIn("home channel", json.dumps(got))
        self.assertEqual([text_of(m) for m in got.get("history", [])], ["hello hermes"], "only the peer's message")
        self.assertEqual([a["name"] for a in got["artifacts"]], ["answer"])
        # One Hermes session per A2A context, keyed as Hermes keys DMs.
        self.assertIn(f"agent:main:a2a:dm:{task['contextId']}", self.runner._histories)

    async def test_two_turns_in_one_context_share_history(self) -> None:
        first = await self.send("remember the word pelican")
        self.assertEqual(answer_of(first), "I will remember pelican.")
        second = await self.send("what word did I ask you to remember?", context_id=first["contextId"])
        self.assertEqual(second["contextId"], first["contextId"])
        self.assertNotEqual(second["id"], first["id"])
        self.assertEqual(answer_of(second), "The word was pelican.")
        other = await self.send("what word did I ask you to remember?")
        self.assertEqual(answer_of(other), "I know no word.", "another context is another conversation")

    async def test_input_required_round_trip(self) -> None:
        asked = await self.send("book a table for tonight")
        self.assertEqual(asked["status"]["state"], "TASK_STATE_INPUT_REQUIRED")
        self.assertEqual(text_of(asked["status"]["message"]), "For how many people?")
        done = await self.send("4", context_id=asked["contextId"], task_id=asked["id"])
        self.assertEqual(done["id"], asked["id"])
        self.assertEqual(done["status"]["state"], "TASK_STATE_COMPLETED")
        self.assertEqual(answer_of(done), "Booked a table for 4.")
        self.assertTrue(self.events[-1].metadata["a2a_continuation"])

    async def test_cancel_task_stops_the_hermes_turn(self) -> None:
        task = await self.send("long job please", configuration={"returnImmediately": True})
        self.assertTrue(await asyncio.to_thread(self.long_job.started.wait, 20), "the turn's tool never started")
        calls_before = fakemodel.CALLS.count()
        cancelled = task_of(await jsonrpc(self.url, "CancelTask", {"id": task["id"]}))
        self.assertEqual(cancelled["status"]["state"], "TASK_STATE_CANCELED")
        self.assertTrue(await asyncio.to_thread(self.long_job.interrupted.wait, 20), "the running tool was not interrupted")
        await _until(lambda: not self.adapter._session_tasks and not self.adapter._active_sessions, "the Hermes turn to end")
        self.assertLessEqual(fakemodel.CALLS.count(), calls_before + 1, "the agent loop went on after the cancel")
        got = task_of(await jsonrpc(self.url, "GetTask", {"id": task["id"]}))
        self.assertEqual(got["status"]["state"], "TASK_STATE_CANCELED", "nothing after the cancel changed the task")
        # The context takes a new turn afterwards.
        again = await self.send("hello after cancel", context_id=task["contextId"])
        self.assertEqual(answer_of(again), "echo: hello after cancel")

    async def test_a_cancel_that_overtakes_its_message_keeps_it_from_hermes(self) -> None:
        """CancelTurn and HandleMessage are separate calls: a cancel may
        reach the host before the message it cancels."""
        from agentplugin_host import pb

        resp = await self.adapter.host_cancel_turn(pb.CancelTurnRequest(platform="a2a", chat_id="ctx-early", task_id="task-early"))
        self.assertFalse(resp.cancelled)
        await self.adapter.host_handle_message(pb.HandleMessageRequest(
            platform="a2a", chat_id="ctx-early", task_id="task-early", text="long job", unattended=True))
        await asyncio.sleep(0.5)
        self.assertEqual([e.message_id for e in self.events], [], "a cancelled task's message reached Hermes")
        self.assertFalse(self.long_job.started.is_set())

    async def test_progress_keeps_the_task_working_and_reaches_the_peer(self) -> None:
        events = await asyncio.to_thread(_stream, self.url, message("progress report"))
        states = [(e["statusUpdate"]["status"]["state"], text_of(e["statusUpdate"]["status"].get("message")))
                  for e in events if "statusUpdate" in e]
        self.assertIn(("TASK_STATE_WORKING", "50% done"), states)
        self.assertEqual(states[-1][0], "TASK_STATE_COMPLETED")
        answers = [text_of(e["artifactUpdate"]["artifact"]) for e in events if "artifactUpdate" in e]
        self.assertEqual(answers, ["progress_job said: done"])

    async def test_notices_never_end_or_pollute_a_task(self) -> None:
        task = await self.send("long job again", configuration={"returnImmediately": True})
        self.assertTrue(await asyncio.to_thread(self.long_job.started.wait, 20))
        # What the gateway sends while a session is busy, and a stray
        # notice for this conversation with no reply_to.
        r1 = await self.adapter.send(task["contextId"], "⚡ Interrupting current task. I'll respond to your message shortly.",
                                     reply_to=task["id"])
        r2 = await self.adapter.send(task["contextId"], "📬 No home channel is set for A2A.")
        self.assertTrue(r1.success and r2.success)
        got = task_of(await jsonrpc(self.url, "GetTask", {"id": task["id"]}))
        self.assertEqual(got["status"]["state"], "TASK_STATE_WORKING")
        self.assertNotIn("Interrupting", json.dumps(got))
        self.assertNotIn("home channel", json.dumps(got))
        await jsonrpc(self.url, "CancelTask", {"id": task["id"]})
        self.assertTrue(await asyncio.to_thread(self.long_job.interrupted.wait, 20))

    async def test_busy_session_race_queues_the_next_message_as_a_new_turn(self) -> None:
        """Hermes is still wrapping up turn 1 (after its final reply) when
        the peer's next message arrives: it must become turn 2, not an
        interrupt of the finished turn 1."""
        busy_calls = []
        orig_busy = self.runner._handle_active_session_busy_message

        async def counting_busy(event, key):
            busy_calls.append(event.text)
            return await orig_busy(event, key)

        self.adapter.set_busy_session_handler(counting_busy)
        orig_complete = self.adapter.on_processing_complete

        async def slow_wrap_up(event, outcome):
            await orig_complete(event, outcome)  # the final reply goes out here
            await asyncio.sleep(0.5)             # Hermes keeps the session busy a while longer

        self.adapter.on_processing_complete = slow_wrap_up
        first = await self.send("first message")
        second = await self.send("second message", context_id=first["contextId"])
        self.assertEqual(answer_of(first), "echo: first message")
        self.assertEqual(answer_of(second), "echo: second message")
        self.assertEqual(busy_calls, [], "the second message went through the busy-session (interrupt) path")
        self.assertEqual([e.message_id for e in self.events], [first["id"], second["id"]])

    async def test_a_next_message_waits_for_hermes_however_long_it_wraps_up(self) -> None:
        """The busy-session race when Hermes takes long to wrap up turn 1
        after its final reply (the binary hands the context's next task over
        as soon as that reply ends task 1): turn 2 waits for the wrap-up,
        however long, and never reaches the busy session."""
        import logging

        adapter_mod = sys.modules[type(self.adapter).__module__]
        orig_wait = adapter_mod.PREVIOUS_TURN_WAIT
        adapter_mod.PREVIOUS_TURN_WAIT = 0.2  # the log line saying it keeps waiting comes early
        self.addCleanup(setattr, adapter_mod, "PREVIOUS_TURN_WAIT", orig_wait)
        busy_calls = []
        orig_busy = self.runner._handle_active_session_busy_message

        async def counting_busy(event, key):
            busy_calls.append(event.text)
            return await orig_busy(event, key)

        self.adapter.set_busy_session_handler(counting_busy)
        orig_complete = self.adapter.on_processing_complete
        wrap_up = asyncio.Event()
        self.addCleanup(wrap_up.set)

        async def held_wrap_up(event, outcome):
            await orig_complete(event, outcome)  # the final reply goes out here
            await wrap_up.wait()                 # Hermes keeps the session busy until the test says

        self.adapter.on_processing_complete = held_wrap_up
        first = await self.send("first message")
        self.assertEqual(answer_of(first), "echo: first message")
        with self.assertLogs("a2a_plugin.adapter", logging.INFO) as logs:
            second = await self.send("second message", context_id=first["contextId"],
                                     configuration={"returnImmediately": True})
            await _until(lambda: any("waits for Hermes to finish" in o for o in logs.output),
                         "the second task to wait past PREVIOUS_TURN_WAIT")
        self.assertEqual(busy_calls, [], "the second message reached the busy session")
        self.assertEqual([e.message_id for e in self.events], [first["id"]])
        wrap_up.set()
        got = await _task_until(self.url, second["id"], "TASK_STATE_COMPLETED")
        self.assertEqual(answer_of(got), "echo: second message")
        self.assertEqual(busy_calls, [])
        self.assertEqual([e.message_id for e in self.events], [first["id"], second["id"]])

    async def test_a_model_failure_is_the_reply_and_a_failed_turn_fails_the_task(self) -> None:
        # Hermes answers a provider failure (after its retries) with the
        # error as the reply.
        task = await self.send("crash now")
        self.assertEqual(task["status"]["state"], "TASK_STATE_COMPLETED")
        self.assertIn("API call failed after 3 retries: RuntimeError: the model provider is down", answer_of(task))
        # A turn whose handling raises ends FAILURE: the task fails, and
        # Hermes' error notice (sent after, without reply_to) answers nothing.
        async def broken(*args, **kw):
            raise RuntimeError("the session store is corrupt")

        self.runner._run_agent = broken
        task = await self.send("hello again")
        self.assertEqual(task["status"]["state"], "TASK_STATE_FAILED")
        self.assertIn("the Hermes turn failed", json.dumps(task))
        self.assertNotIn("Sorry, I encountered an error", json.dumps(task))

    async def test_files_in_and_out(self) -> None:
        data = b"%PDF-1.4 fake pdf bytes"
        parts = [{"text": "report please"}, {"raw": base64.b64encode(data).decode(), "mediaType": "application/pdf",
                                             "filename": "brief.pdf"}]
        task = task_of(await jsonrpc(self.url, "SendMessage", {"message": message("", parts=parts)}))
        ev = self.events[-1]
        self.assertEqual(ev.media_types, ["application/pdf"])
        with open(ev.media_urls[0], "rb") as f:
            self.assertEqual(f.read(), data)
        self.assertEqual(task["status"]["state"], "TASK_STATE_COMPLETED")
        self.assertEqual(answer_of(task), "Here is the report.")
        files = [a for a in task["artifacts"] if a.get("name", "").startswith("report-")]
        self.assertEqual(len(files), 1, task["artifacts"])
        self.assertEqual(base64.b64decode(files[0]["parts"][0]["raw"]), b"the quarterly report\n")
        # An image Hermes takes out of a reply's text is not lost either.
        chart = await self.send("chart please")
        self.assertEqual(answer_of(chart), "Here is the chart.")
        urls = [p.get("url") for a in chart.get("artifacts", []) for p in a["parts"]]
        self.assertIn("https://charts.example/q3.png", urls)

    async def test_binary_tools_are_hermes_tools_with_their_schemas(self) -> None:
        names = set(registry.get_tool_names_for_toolset("a2a"))
        self.assertTrue({"a2a_call", "a2a_discover", "a2a_list", "a2a_task", "a2a_history", "a2a_route"} <= names, names)
        entry = registry.get_entry("a2a_call")
        self.assertEqual(entry.schema["parameters"]["type"], "object")
        self.assertIn("agent", entry.schema["parameters"]["properties"])
        # An error result reaches the model as {"error": …}.
        out = registry.dispatch("a2a_call", {"agent": "nobody", "message": "hi"})
        self.assertIn("error", json.loads(out))
        # The Agent Card lists the agent's own skill, never Hermes' tool
        # registry (a terminal here), unless the operator opts in.
        card = await asyncio.to_thread(_get, self.url + "/.well-known/agent-card.json")
        self.assertEqual([s["id"] for s in card["skills"]], ["chat"])


class NewerHermesInboundTest(NewerHermesShape, InboundTest):
    """InboundTest again on the 0.21 shape: each turn goes through
    dispatch_request (its returned text is the reply, [INPUT_REQUIRED] a
    question, progress and files through send as before, a cancel ends the
    turn whatever the dispatch returns after)."""

    async def asyncTearDown(self) -> None:
        await super().asyncTearDown()
        self.assertEqual([e.message_id for e in self.dispatched], [e.message_id for e in self.events],
                         "a turn reached Hermes other than through dispatch_request")


class AdvertisedToolsTest(GatewayTest):
    """The operator opts in (advertised_toolsets: ["*"]): the card lists
    the tools a peer can get — of a toolset peer_toolsets gives a peer tier,
    available (check_fn) — not the terminal, not a tool whose check fails."""

    a2a_extra = {"advertised_toolsets": ["*"]}

    async def test_the_card_lists_only_tools_peers_can_get(self) -> None:
        registry.register(name="web_extract", toolset="web", handler=lambda args, **kw: "",
                          schema={"name": "web_extract", "description": "Extract a page.", "parameters": {"type": "object"}},
                          check_fn=lambda: False)
        card = await asyncio.to_thread(_get, self.url + "/.well-known/agent-card.json")
        self.assertEqual(sorted(s["id"] for s in card["skills"]), ["web_search"])


class NewerHermesTest(GatewayTest):
    """The 0.21 API shape: BasePlatformAdapter.request_session_interrupt,
    which keys the session itself (profiles), is what a cancel uses."""

    async def asyncSetUp(self) -> None:
        from gateway.platforms import base

        base.use_api_shape("0.21")
        self.addCleanup(base.use_api_shape, "0.20.1")
        self.interrupts: list = []
        orig = base.BasePlatformAdapter.request_session_interrupt

        async def recording(adapter, source, **kw):
            self.interrupts.append((source.chat_id, kw.get("interrupt_reason")))
            return await orig(adapter, source, **kw)

        base.BasePlatformAdapter.request_session_interrupt = recording
        await super().asyncSetUp()

    async def test_cancel_uses_request_session_interrupt(self) -> None:
        task = await self.send("long job please", configuration={"returnImmediately": True})
        self.assertTrue(await asyncio.to_thread(self.long_job.started.wait, 20), "the turn's tool never started")
        cancelled = task_of(await jsonrpc(self.url, "CancelTask", {"id": task["id"]}))
        self.assertEqual(cancelled["status"]["state"], "TASK_STATE_CANCELED")
        self.assertTrue(await asyncio.to_thread(self.long_job.interrupted.wait, 20), "the running tool was not interrupted")
        self.assertEqual(self.interrupts, [(task["contextId"], "a2a-plugin: the A2A task was cancelled")])
        again = await self.send("hello after cancel", context_id=task["contextId"])
        self.assertEqual(answer_of(again), "echo: hello after cancel")

    async def test_the_final_send_succeeds_so_hermes_reports_success(self) -> None:
        """Hermes counts a turn SUCCESS only if its final send succeeded
        (base.py _process_message_background: processing_ok). The adapter's
        send() keeps a final reply for on_processing_complete and says
        success, so a delivered answer is never reported FAILURE; a reply
        the binary refuses fails the task in _answer instead."""
        from gateway.platforms.base import ProcessingOutcome

        outcomes = []
        orig = self.adapter.on_processing_complete

        async def recording(event, outcome):
            outcomes.append(outcome)
            return await orig(event, outcome)

        self.adapter.on_processing_complete = recording
        task = await self.send("hello newer hermes")
        self.assertEqual(task["status"]["state"], "TASK_STATE_COMPLETED")
        self.assertEqual(answer_of(task), "echo: hello newer hermes")
        self.assertEqual(outcomes, [ProcessingOutcome.SUCCESS])


class NewerHermesProfilesTest(NewerHermesTest):
    """The 0.21 shape with profiles multiplexed (gateway.multiplex_profiles,
    the source's profile from the runner's routes): the session key is
    agent:<profile>:…, and request_session_interrupt still reaches the turn
    (the cancel test above runs again here)."""

    async def asyncSetUp(self) -> None:
        await super().asyncSetUp()
        _use_profile(self.runner, "work")

    async def test_the_session_key_is_the_stores_own(self) -> None:
        store = self.runner.session_store
        keyed = []
        orig = store._generate_session_key

        def recording(source):
            keyed.append(source.chat_id)
            return orig(source)

        store._generate_session_key = recording
        task = await self.send("hello profiles")
        self.assertEqual(answer_of(task), "echo: hello profiles")
        source = self.events[-1].source
        keyed.clear()
        self.assertEqual(self.adapter._session_key(source), f"agent:work:a2a:dm:{task['contextId']}")
        self.assertEqual(keyed, [task["contextId"]], "the adapter did not ask the session store for the key")


class ProfilesTest(GatewayTest):
    """Hermes 0.20.1 with profiles multiplexed: the adapter derives the
    session key as handle_message does (build_session_key with the store's
    _resolve_profile_for_key of the source), so a cancel interrupts the
    profile's session, not agent:main's."""

    async def asyncSetUp(self) -> None:
        await super().asyncSetUp()
        _use_profile(self.runner, "work")

    async def test_a_cancel_reaches_the_turn_of_a_profile_keyed_session(self) -> None:
        task = await self.send("long job please", configuration={"returnImmediately": True})
        self.assertTrue(await asyncio.to_thread(self.long_job.started.wait, 20), "the turn's tool never started")
        key = f"agent:work:a2a:dm:{task['contextId']}"
        self.assertIn(key, self.adapter._active_sessions, "the stand-in did not key the session by profile")
        self.assertEqual(self.adapter._session_key(self.events[-1].source), key)
        cancelled = task_of(await jsonrpc(self.url, "CancelTask", {"id": task["id"]}))
        self.assertEqual(cancelled["status"]["state"], "TASK_STATE_CANCELED")
        self.assertTrue(await asyncio.to_thread(self.long_job.interrupted.wait, 20), "the running tool was not interrupted")
        again = await self.send("hello after cancel", context_id=task["contextId"])
        self.assertEqual(answer_of(again), "echo: hello after cancel")


def _use_profile(runner, name: str) -> None:
    """Multiplex profiles in runner's session store and route every source
    to profile name (what gateway.multiplex_profiles and a profile route
    do in Hermes: build_source stamps source.profile, _resolve_profile_for_key
    returns it)."""
    runner.session_store.multiplex_profiles = True
    runner._profile_name_for_source = lambda source: name


class DelegationTest(GatewayTest):
    """The model calls a2a_call to a second agent through the tools."""

    async def asyncSetUp(self) -> None:
        # The second agent: the Python SDK's example echo host running its
        # own a2a-plugin, in a process of its own.
        self.second_port = free_port()
        self.second = await asyncio.create_subprocess_exec(
            sys.executable, os.path.join(support.REPO, "host-sdk", "python", "examples", "echo_host.py"),
            "--plugin", support.plugin_binary(), "--config", json.dumps({"port": self.second_port, "store": "memory"}),
            stdout=asyncio.subprocess.PIPE)
        line = await asyncio.wait_for(self.second.stdout.readline(), 30)
        self.assertIn(b"serving at", line)
        self.a2a_extra = {"a2a_agents": [{"name": "second", "url": f"http://127.0.0.1:{self.second_port}", "trust": "trusted"}]}
        await super().asyncSetUp()

    async def asyncTearDown(self) -> None:
        await super().asyncTearDown()
        self.second.terminate()
        await self.second.wait()

    async def test_model_delegates_with_a2a_call(self) -> None:
        calls = []
        rt = self.adapter._rt
        orig = rt._call_tool

        async def recording(req, progress):
            calls.append(req)
            return await orig(req, progress)

        rt._call_tool = recording
        events = await asyncio.to_thread(_stream, self.url, message("ask second: summarise the minutes"))
        last = events[-1]["statusUpdate"]["status"] if "statusUpdate" in events[-1] else None
        self.assertIsNotNone(last, events)
        self.assertEqual(last["state"], "TASK_STATE_COMPLETED")
        answer = "".join(text_of(e["artifactUpdate"]["artifact"]) for e in events if "artifactUpdate" in e)
        self.assertTrue(answer.startswith("a2a_call said: "), answer)
        self.assertIn("summarise the minutes", answer, "the second agent's echo came back as the tool result")
        self.assertIn("a2a_call", fakemodel.CALLS.tools_offered(0))
        # CallTool got the calling conversation: the A2A context, under
        # the binary's own platform name (so the delegation chain goes on).
        context_id = events[0].get("task", {}).get("contextId") or events[0].get("contextId")
        self.assertEqual([(c.name, c.platform, c.chat_id) for c in calls], [("a2a_call", "a2a", context_id)])
        # While the call ran, its progress kept the inbound task alive.
        working = [text_of(e["statusUpdate"]["status"].get("message")) for e in events
                   if "statusUpdate" in e and e["statusUpdate"]["status"]["state"] == "TASK_STATE_WORKING"]
        self.assertIn("still working (a2a_call)", working)

    async def test_model_delegates_blocking(self) -> None:
        task = await self.send("ask second: summarise the minutes")
        self.assertEqual(task["status"]["state"], "TASK_STATE_COMPLETED")
        answer = answer_of(task)
        self.assertTrue(answer.startswith("a2a_call said: "), answer)
        self.assertIn("summarise the minutes", answer, "the second agent's echo came back as the tool result")
        self.assertIn("a2a_call", fakemodel.CALLS.tools_offered(0))


class SettingsAndEnvironmentTest(GatewayTest):
    """The binary's settings come from plugins.entries.a2a-plugin.settings.a2a,
    and the A2A_* environment wins."""

    a2a_extra = {"agent_name": "From Settings", "agent_description": "Set in config.yaml."}

    async def asyncSetUp(self) -> None:
        os.environ["A2A_AGENT_NAME"] = "From The Environment"
        self.addCleanup(os.environ.pop, "A2A_AGENT_NAME", None)
        await super().asyncSetUp()

    async def test_environment_wins_over_settings(self) -> None:
        card = await asyncio.to_thread(_get, self.url + "/.well-known/agent-card.json")
        self.assertEqual(card["name"], "From The Environment")
        self.assertEqual(card["description"], "Set in config.yaml.")
        self.assertTrue(self.adapter.authorization_is_upstream)
        data_dir = self.adapter._rt.data_dir
        self.assertTrue(data_dir.startswith(os.path.join(self.home, "plugin-data") + os.sep), data_dir)
        self.assertTrue(os.path.exists(os.path.join(data_dir, "state", "a2a", "a2a-plugin.db")))


class TrustTierTest(GatewayTest):
    """A lower trust tier narrows the toolsets of a peer's turn."""

    # The shared token's callers are the trusted tier (no trusted_peers
    # set), a per-peer token's the public tier.
    a2a_extra = {"loopback_is_local": False, "bearer_token": PEER_ALICE, "peer_tokens": {"bob": PEER_BOB}}

    async def test_public_peer_gets_no_tools_and_trusted_peer_some(self) -> None:
        # "No tools" in a way Hermes takes silently: no "platform 'a2a' has
        # no valid toolsets configured" telling the operator to reconfigure.
        with self.assertNoLogs("hermes_cli.tools_config", level="WARNING"):
            resp = await jsonrpc(self.url, "SendMessage", {"message": message("hello from bob")}, token=PEER_BOB)
        self.assertEqual(task_of(resp)["status"]["state"], "TASK_STATE_COMPLETED")
        self.assertEqual(self.events[-1].metadata["a2a_trust_tier"], "public")
        self.assertEqual(fakemodel.CALLS.tools_offered(), set(), "a public peer's turn may use no tools")
        resp = await jsonrpc(self.url, "SendMessage", {"message": message("hello from alice")}, token=PEER_ALICE)
        self.assertEqual(task_of(resp)["status"]["state"], "TASK_STATE_COMPLETED")
        self.assertEqual(self.events[-1].metadata["a2a_trust_tier"], "trusted")
        offered = fakemodel.CALLS.tools_offered()
        self.assertIn("web_search", offered)
        self.assertIn("a2a_call", offered)
        self.assertNotIn("long_job", offered, "a trusted peer does not get the terminal")


class _ProgressJob:
    """A tool that reports progress the way Hermes' gateway does (a send
    without notify to the turn's message), then finishes."""

    def __init__(self, test: GatewayTest):
        self.test = test

    def __call__(self, args: dict, **kwargs) -> str:
        from gateway.session_context import get_session_env

        chat_id = get_session_env("HERMES_SESSION_CHAT_ID")
        message_id = get_session_env("HERMES_SESSION_MESSAGE_ID")
        loop = self.test.adapter._loop
        fut = asyncio.run_coroutine_threadsafe(self.test.adapter.send(chat_id, "50% done", reply_to=message_id), loop)
        fut.result(10)
        return "done"


def _record_events(adapter) -> list:
    events = []
    orig = adapter.handle_message

    async def recording(event):
        events.append(event)
        return await orig(event)

    adapter.handle_message = recording
    return events


async def _until(pred, what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def _task_until(url: str, task_id: str, state: str, timeout: float = 30) -> dict:
    """GetTask until the task is in state (or a final other state)."""
    deadline = time.monotonic() + timeout
    while True:
        got = task_of(await jsonrpc(url, "GetTask", {"id": task_id}))
        st = got["status"]["state"]
        if st == state:
            return got
        if st in ("TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED") or time.monotonic() > deadline:
            raise AssertionError(f"task {task_id} is {st}, not {state}: {got}")
        await asyncio.sleep(0.05)


def _stream(url: str, msg: dict) -> list[dict]:
    import http.client
    import urllib.parse

    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    conn.request("POST", "/", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {"message": msg}}),
                 {"Content-Type": "application/json", "A2A-Version": "1.0", "Accept": "text/event-stream"})
    out = []
    for raw in conn.getresponse():
        line = raw.decode().rstrip("\r\n")
        if line.startswith("data:"):
            ev = json.loads(line[5:].strip())
            out.append(ev.get("result", ev))
    conn.close()
    return out


def _get(url: str) -> dict:
    import urllib.request

    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


if __name__ == "__main__":
    unittest.main()
