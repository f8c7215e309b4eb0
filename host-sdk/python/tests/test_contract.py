"""The Python host SDK against the real a2a-plugin binary: every contract
RPC both ways, over AutoMTLS and over a private socket directory, with the
call streams of contract 1.2 and without them (a host claiming 1.1)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import tempfile
import unittest
import urllib.request

from support import (ScriptedHost, answer_of, free_port, jsonrpc, message, plugin_binary, proc_environ, process_alive,
                     stream, task_of, text_of)

from agentplugin_host import PROTOCOL_MINOR, Manager, Options, State, Transport, UnknownTool, pb
from agentplugin_host import host_service


class _Counting:
    """Counts which HostService path the plugin's HandleMessage calls take."""

    def __init__(self) -> None:
        self.unary = 0
        self.streams = 0
        self._orig = (host_service._HostServicer.HandleMessage, host_service._HostServicer.HandleMessages)
        counter = self

        async def unary(self_, request, context):
            counter.unary += 1
            return await counter._orig[0](self_, request, context)

        async def streams(self_, request_iterator, context):
            counter.streams += 1
            return await counter._orig[1](self_, request_iterator, context)

        host_service._HostServicer.HandleMessage = unary
        host_service._HostServicer.HandleMessages = streams

    def restore(self) -> None:
        host_service._HostServicer.HandleMessage, host_service._HostServicer.HandleMessages = self._orig


class ContractTest(unittest.IsolatedAsyncioTestCase):
    """Run with AutoMTLS and call streams; subclasses vary both."""

    transport = Transport.AUTO_MTLS
    minor = PROTOCOL_MINOR

    async def asyncSetUp(self) -> None:
        os.environ["A2A_TEST_MARK"] = "from-the-host"
        os.environ["SECRET_TEST_TOKEN"] = "must-not-leak"
        self.counting = _Counting()
        self.addCleanup(self.counting.restore)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.host = ScriptedHost()
        self.data = tempfile.mkdtemp(prefix="sdk-contract-")
        self.events = []
        self.logs: list[str] = []
        logger = logging.getLogger(f"test.{self.id()}")
        logger.setLevel(logging.DEBUG)
        logger.propagate = False
        handler = _ListHandler(self.logs)
        logger.addHandler(handler)
        self.m = Manager(Options(
            paths=[plugin_binary()], host=self.host, data_dir=self.data, env_allow=["A2A_*"],
            # advertised_toolsets: the host's tools on the card (an opt-in).
            config={"a2a": {"port": self.port, "rate_limit": 0, "advertised_toolsets": ["*"], "a2a_agents": [
                {"name": "self", "url": self.url, "trust": "trusted"},
                {"name": "twin", "url": self.url, "trust": "trusted"},
            ]}},
            transport=self.transport, protocol_minor=self.minor, heartbeat_interval=0.2,
            log_level="debug", logger=logger, on_event=self.events.append,
        ))
        await self.m.start()
        self.plugin = self.m.plugin("a2a")
        self.host.platform = self.plugin.platform()

    async def asyncTearDown(self) -> None:
        await self.m.close()

    async def test_describe_configure_connect_and_environment(self) -> None:
        p = self.plugin
        self.assertEqual(p.state, State.READY)
        self.assertEqual(p.protocol_minor, PROTOCOL_MINOR)
        self.assertEqual(set(p.describe().capabilities), {pb.CAPABILITY_PLATFORM, pb.CAPABILITY_TOOLSET})
        self.assertEqual(p.endpoints[0], self.url)
        data_dir = os.path.join(self.data, "a2a")
        self.assertEqual(stat.S_IMODE(os.stat(data_dir).st_mode), 0o700)
        self.assertTrue(os.path.exists(os.path.join(data_dir, "a2a-plugin.db")), "the plugin opened its store in its data directory")
        env = proc_environ(p.pid)
        self.assertEqual(env.get("A2A_TEST_MARK"), "from-the-host")
        self.assertNotIn("SECRET_TEST_TOKEN", env)
        self.assertEqual(env.get("AGENTPLUGIN_LOG_LEVEL"), "debug")
        inst = p._inst
        if self.transport is Transport.SOCKET_DIR:
            self.assertNotIn("PLUGIN_CLIENT_CERT", env)
            sockdir = env["PLUGIN_UNIX_SOCKET_DIR"]
            self.assertEqual(stat.S_IMODE(os.stat(sockdir).st_mode), 0o700)
            self.assertTrue(inst.handshake.address.startswith(sockdir + "/"), inst.handshake.address)
            self.assertIsNone(inst.handshake.server_cert_pem)
        else:
            self.assertIn("BEGIN CERTIFICATE", env["PLUGIN_CLIENT_CERT"])
            self.assertNotIn("PLUGIN_UNIX_SOCKET_DIR", env)
            self.assertIsNotNone(inst.handshake.server_cert_pem)
        # The plugin's own log lines reach the host's logger.
        self.assertTrue(any("configured" in l for l in self.logs), self.logs[-5:])

    async def test_inbound_turn_reaches_the_host_and_the_answer_the_peer(self) -> None:
        resp = await jsonrpc(self.url, "SendMessage", {"message": message("hello there")})
        task = task_of(resp)
        self.assertEqual(task["status"]["state"], "TASK_STATE_COMPLETED")
        self.assertEqual(answer_of(task), "echo: hello there")
        req = self.host.messages[-1]
        self.assertEqual(req.platform, "a2a")
        self.assertEqual(req.chat_id, task["contextId"])
        self.assertEqual(req.task_id, task["id"])
        self.assertEqual(req.sender.id, "local:127.0.0.1")
        self.assertEqual(req.trust_tier, pb.TRUST_TIER_LOCAL)
        self.assertTrue(req.unattended)
        self.assertEqual(req.parts[0].text, "hello there")
        self.assertIn("hello there", req.text)
        if self.minor >= 2:
            self.assertGreaterEqual(self.counting.streams, 1, "the plugin used HandleMessages with a 1.2 host")
            self.assertEqual(self.counting.unary, 0)
            self.assertTrue(self.plugin._inst.platform.uses_call_stream)
        else:
            self.assertEqual(self.counting.streams, 0, "a 1.1 host gets no call streams")
            self.assertGreaterEqual(self.counting.unary, 1)
            self.assertFalse(self.plugin._inst.platform.uses_call_stream)

    async def test_send_kinds_drive_the_task(self) -> None:
        events = await stream(self.url, {"message": message("progress please")})
        states = [e.get("statusUpdate", {}).get("status", {}).get("state") for e in events if "statusUpdate" in e]
        self.assertIn("TASK_STATE_WORKING", states)
        self.assertEqual(states[-1], "TASK_STATE_COMPLETED")
        self.assertTrue(any(text_of(e["statusUpdate"]["status"].get("message", {})) == "working on it"
                            for e in events if "statusUpdate" in e), events)

        asked = task_of(await jsonrpc(self.url, "SendMessage", {"message": message("ask me")}))
        self.assertEqual(asked["status"]["state"], "TASK_STATE_INPUT_REQUIRED")
        self.assertEqual(text_of(asked["status"]["message"]), "which one?")
        answered = task_of(await jsonrpc(self.url, "SendMessage", {
            "message": message("the blue one", context_id=asked["contextId"], task_id=asked["id"])}))
        self.assertEqual(answered["status"]["state"], "TASK_STATE_COMPLETED")
        self.assertTrue(self.host.messages[-1].continuation, "an answer to a question continues the turn")

        art = task_of(await jsonrpc(self.url, "SendMessage", {"message": message("artifact now")}))
        self.assertEqual([a["name"] for a in art["artifacts"]][:1], ["report"])

        direct = await jsonrpc(self.url, "SendMessage", {"message": message("direct hi")})
        self.assertEqual(text_of(direct["result"]["message"]), "direct: direct hi")

        failed = task_of(await jsonrpc(self.url, "SendMessage", {"message": message("fail now")}))
        self.assertEqual(failed["status"]["state"], "TASK_STATE_FAILED")

    async def test_cancel_reaches_the_host(self) -> None:
        slow = task_of(await jsonrpc(self.url, "SendMessage", {
            "message": message("slow work"), "configuration": {"returnImmediately": True}}))
        await asyncio.wait_for(self.host.got.get(), 10)
        cancelled = task_of(await jsonrpc(self.url, "CancelTask", {"id": slow["id"]}))
        self.assertEqual(cancelled["status"]["state"], "TASK_STATE_CANCELED")
        for _ in range(100):
            if self.host.cancels:
                break
            await asyncio.sleep(0.05)
        self.assertEqual([c.task_id for c in self.host.cancels], [slow["id"]])

    async def test_advertised_host_tools_become_card_skills(self) -> None:
        card = await asyncio.to_thread(_get_json, self.url + "/.well-known/agent-card.json")
        self.assertIn("web_search", [s["id"] for s in card["skills"]])

    async def test_toolset_both_ways(self) -> None:
        tools = await self.m.tools()
        names = {t.name for t in tools}
        self.assertTrue({"a2a_call", "a2a_list", "a2a_discover", "a2a_route"} <= names, names)
        self.assertEqual({t.toolset for t in tools}, {"a2a"})
        call = next(t for t in tools if t.name == "a2a_call")
        self.assertEqual(json.loads(call.parameters_json_schema)["type"], "object")

        listed = await self.m.call_tool(pb.CallToolRequest(name="a2a_list", arguments_json="{}", platform="test", chat_id="c1"))
        self.assertFalse(listed.is_error, listed.content)
        self.assertIn("twin", listed.content)

        with self.assertRaises(UnknownTool):
            await self.m.call_tool(pb.CallToolRequest(name="no_such_tool", arguments_json="{}"))

        progress: list[str] = []
        res = await self.m.call_tool(pb.CallToolRequest(
            name="a2a_call", arguments_json=json.dumps({"agent": "self", "message": "progress delegated"}),
            platform="test", chat_id="c1"), progress=lambda p: progress.append(p.message), timeout=60)
        self.assertFalse(res.is_error, res.content)
        self.assertIn("done: progress delegated", res.content)
        self.assertTrue(progress, "a2a_call streams the peer's progress")
        for _ in range(100):
            if self.host.delegations:
                break
            await asyncio.sleep(0.05)
        self.assertEqual(self.host.delegations[0].peer, "self")
        self.assertEqual(self.host.delegations[0].chat_id, "c1")

    async def test_semantic_routing_asks_the_host_model(self) -> None:
        self.host.complete_answer = "twin"
        res = await self.m.call_tool(pb.CallToolRequest(
            name="a2a_route", arguments_json=json.dumps({"message": "qwzx plmk"}), platform="test", chat_id="c2"), timeout=60)
        self.assertTrue(self.host.completes, res.content)
        self.assertIn("Candidate agents", self.host.completes[0].prompt)

    async def test_close_drains_and_stops_the_process(self) -> None:
        pid = self.plugin.pid
        hs = self.plugin._inst.host_server
        for _ in range(200):  # the plugin opens Watch right after Configure
            if hs._watches:
                break
            await asyncio.sleep(0.01)
        await self.m.close()
        self.assertEqual(self.plugin.state, State.STOPPED)
        self.assertFalse(process_alive(pid), "the plugin process is gone after close")
        self.assertEqual(hs.notices_sent, 1, "the Watch stream carried the ShutdownNotice before the plugin was stopped")


class SocketDirContractTest(ContractTest):
    transport = Transport.SOCKET_DIR


class UnaryContractTest(ContractTest):
    """A host claiming contract 1.1: unary HandleMessage and Send."""

    minor = 1


class _NoCancelHost:
    """A host whose agent cannot stop a running turn: it has no cancel_turn."""

    def __init__(self, inner: ScriptedHost):
        self.inner = inner

    async def handle_message(self, req):
        return await self.inner.handle_message(req)

    async def list_tools(self):
        return await self.inner.list_tools()


class CancelUnsupportedTest(unittest.IsolatedAsyncioTestCase):
    """Contract 1.3: a host without cancel_turn says it cannot stop a
    running turn, and the plugin refuses to cancel one instead of lying."""

    async def test_cancel_of_a_running_turn_is_refused(self) -> None:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        inner = ScriptedHost()
        m = Manager(Options(paths=[plugin_binary()], host=_NoCancelHost(inner), config={"a2a": {"port": port, "store": "memory"}}))
        await m.start()
        self.addAsyncCleanup(m.close)
        inner.platform = m.plugin("a2a").platform()
        slow = task_of(await jsonrpc(url, "SendMessage", {"message": message("slow work"), "configuration": {"returnImmediately": True}}))
        await asyncio.wait_for(inner.got.get(), 10)
        resp = await jsonrpc(url, "CancelTask", {"id": slow["id"]})
        self.assertEqual(resp.get("error", {}).get("code"), -32002, resp)
        got = task_of(await jsonrpc(url, "GetTask", {"id": slow["id"]}))
        self.assertNotEqual(got["status"]["state"], "TASK_STATE_CANCELED", "the running turn was reported stopped")


class _ListHandler(logging.Handler):
    def __init__(self, out: list[str]):
        super().__init__(logging.DEBUG)
        self.out = out

    def emit(self, record: logging.LogRecord) -> None:
        self.out.append(record.getMessage())


def _get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


if __name__ == "__main__":
    unittest.main()
