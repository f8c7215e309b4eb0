"""The Hermes plugin across a gateway start: Hermes' start-up restore
gate (inbound messages queued, then replayed) and the auto-resume turns it
runs after an unclean exit, as the stand-in's GatewayRunner.start follows
gateway/run.py. Each test reproduces a loss seen against the real gateway."""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
import unittest

from support import (LongJob, NewerHermesShape, answer_of, base_config, free_port, jsonrpc, message, new_hermes_home,
                     register_test_tools, remove_home, reset_hermes, task_of)

import fakemodel
import run_agent
from gateway.config import Platform
from gateway.run import GatewayRunner
from gateway.session import SessionSource


class RestartTest(unittest.IsolatedAsyncioTestCase):
    """A gateway started with sessions its previous run left
    resume_pending (what Hermes' suspend_recently_active marks after a
    kill -9), the start running in the background as Hermes' does."""

    async def asyncSetUp(self) -> None:
        reset_hermes()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # The terminal for every tier: the resumed turn (a context the new
        # adapter has not seen: public) runs the long job.
        self.home = new_hermes_home(base_config(self.port, settings={
            "peer_toolsets": {"public": ["terminal"], "trusted": ["terminal"], "local": None}}))
        self.addCleanup(remove_home, self.home)
        os.environ["HERMES_HOME"] = self.home
        os.environ["FAKEMODEL_FILES"] = tempfile.mkdtemp(prefix="fakemodel-")
        orig = run_agent.OpenAI
        run_agent.OpenAI = fakemodel.FakeOpenAI
        self.addCleanup(setattr, run_agent, "OpenAI", orig)
        self.long_job = LongJob()
        register_test_tools(self.long_job)
        self.runner = GatewayRunner()
        self.starting: asyncio.Task | None = None

    async def asyncTearDown(self) -> None:
        if self.starting is not None:
            await asyncio.wait([self.starting], timeout=40)
        await self.runner.stop()
        os.environ.pop("HERMES_STARTUP_RESTORE_DRAIN_TIMEOUT", None)

    def crashed_in(self, context_id: str) -> None:
        """The previous gateway died while a turn of this A2A context ran."""
        source = SessionSource(platform=Platform("a2a"), chat_id=context_id, chat_type="dm", user_id="local:127.0.0.1")
        self.runner.session_store.mark_resume_pending(f"agent:main:a2a:dm:{context_id}", "restart_interrupted", source)

    async def start_in_background(self) -> None:
        self.starting = asyncio.ensure_future(self.runner.start())
        await _until(lambda: Platform("a2a") in self.runner.adapters or self.starting.done(), "the a2a platform to connect")
        self.assertIn(Platform("a2a"), self.runner.adapters)

    async def send(self, text: str, context_id: str = "") -> dict:
        return task_of(await jsonrpc(self.url, "SendMessage", {"message": message(text, context_id)}, timeout=90))

    async def test_a_message_while_the_start_up_restore_runs_is_answered(self) -> None:
        """gateway/run.py _handle_message queues it (_queue_startup_restore_event)
        and returns None, so the hooks report SUCCESS without a reply; the
        answer comes when _finish_startup_restore replays it."""
        gate = asyncio.Event()

        async def slow_redelivery() -> int:  # the start-up work done with the gate closed
            await gate.wait()
            return 0

        self.runner._redeliver_pending_obligations = slow_redelivery
        await self.start_in_background()
        sending = asyncio.ensure_future(self.send("hello during restore"))
        await asyncio.sleep(2)
        self.assertTrue(self.runner._startup_restore_in_progress, "the restore gate should still be closed")
        self.assertFalse(sending.done(), f"the task ended while Hermes held its message: {sending.done() and sending.result()}")
        gate.set()
        task = await sending
        self.assertEqual(task["status"]["state"], "TASK_STATE_COMPLETED")
        self.assertEqual(answer_of(task), "echo: hello during restore",
                         "the task ended before Hermes processed its message")
        self.assertFalse(self.runner._startup_restore_in_progress)

    async def test_a_retry_in_a_context_hermes_auto_resumes_is_answered(self) -> None:
        """After an unclean exit Hermes resumes the context by itself
        (_schedule_resume_pending_sessions: internal, empty text). No task
        awaits that turn: the plugin stops it, and the peer's retry is a turn
        of its own instead of a follow-up answered inside the resumed turn."""
        os.environ["HERMES_STARTUP_RESTORE_DRAIN_TIMEOUT"] = "1"
        self.crashed_in("ctx-crashed")
        await self.start_in_background()
        await asyncio.wait([self.starting], timeout=20)
        task = await self.send("hello again", context_id="ctx-crashed")
        self.assertEqual(task["contextId"], "ctx-crashed")
        self.assertEqual(task["status"]["state"], "TASK_STATE_COMPLETED", task["status"])
        self.assertEqual(answer_of(task), "echo: hello again")
        self.assertTrue(not self.long_job.started.is_set() or self.long_job.interrupted.is_set(),
                        "the resumed turn nobody awaits went on running")
        # The context's history has the retry as a turn of its own.
        history = self.runner.history("agent:main:a2a:dm:ctx-crashed")
        self.assertIn("hello again", history[-2]["content"])


async def _until(pred, what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


if __name__ == "__main__":
    unittest.main()


class NewerHermesRestartTest(NewerHermesShape, RestartTest):
    """RestartTest again on the 0.21 shape: the adapter waits out the
    start-up restore gate and Hermes' own turns before it dispatches, so
    dispatch_request never meets a closed gate or a busy session."""

    async def test_a_dispatch_the_gate_queued_anyway_is_answered_by_the_replay(self) -> None:
        """Should the gate queue a dispatched message after all (it closed
        between the adapter's wait and the dispatch: here the wait is
        skipped), dispatch_request returns no text; the task waits for
        the replay instead of ending empty."""
        gate = asyncio.Event()

        async def slow_redelivery() -> int:
            await gate.wait()
            return 0

        self.runner._redeliver_pending_obligations = slow_redelivery
        await self.start_in_background()
        self.runner.adapters[Platform("a2a")]._not_ready = lambda turn: None
        sending = asyncio.ensure_future(self.send("hello during restore"))
        await _until(lambda: self.dispatched, "the message to be dispatched")
        await asyncio.sleep(1)
        self.assertTrue(self.runner._startup_restore_in_progress, "the restore gate should still be closed")
        self.assertFalse(sending.done(), f"the task ended while Hermes held its message: {sending.done() and sending.result()}")
        gate.set()
        task = await sending
        self.assertEqual(answer_of(task), "echo: hello during restore", "the task ended before the replay answered")
