"""Unit tests of the SDK's small parts: the version kept equal to the
contract, the environment allowlist, log lines, the handshake line, the
restart backoff, the call-stream client's rules against a scripted
stream, and the constants against the host libraries' conformance kit
(proto/agentplugin/v1/host-rules.json)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import unittest

import grpc
from support import REPO

from agentplugin_host import DeadlineExceeded, HandshakeError, InvalidArgument, Unavailable, pb
from agentplugin_host.callstream import CALL_STREAM_MAX_BYTES, CallStreamClient, timeout_ms
from agentplugin_host.env import build_env, env_match
from agentplugin_host.errors import status_error, to_status
from agentplugin_host.handshake import Transport, handshake_env, parse_handshake_line
from agentplugin_host.manager import _compare_versions, valid_name
from agentplugin_host.plugin import backoff, crash_summary
from agentplugin_host.stdio import LineRing, LineSplitter, readable_log_line
from agentplugin_host.version import MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE, PROTOCOL_MAJOR, PROTOCOL_MINOR


class VersionTest(unittest.TestCase):
    def test_versions_match_the_contract_and_the_go_side(self) -> None:
        with open(os.path.join(REPO, "proto", "agentplugin", "v1", "agentplugin.proto")) as f:
            header = re.search(r"protocol-version: (\d+)\.(\d+)", f.read())
        self.assertEqual((int(header[1]), int(header[2])), (PROTOCOL_MAJOR, PROTOCOL_MINOR))
        with open(os.path.join(REPO, "plugin", "plugin.go")) as f:
            go = f.read()
        self.assertIn(f"ProtocolMinor = {PROTOCOL_MINOR}", go)
        self.assertIn(f'MagicCookieKey:   "{MAGIC_COOKIE_KEY}"', go)
        self.assertIn(f'MagicCookieValue: "{MAGIC_COOKIE_VALUE}"', go)

    def test_generated_stubs_know_the_contract(self) -> None:
        self.assertIn("ends_turn", pb.SendRequest.DESCRIPTOR.fields_by_name)
        self.assertIn("HandleMessages", pb.DESCRIPTOR.services_by_name["HostService"].methods_by_name)


class EnvTest(unittest.TestCase):
    def test_only_allowlisted_variables_pass(self) -> None:
        environ = {"PATH": "/bin", "HOME": "/h", "LC_ALL": "C", "OPENAI_API_KEY": "sk-secret",
                   "A2A_PORT": "1", "AWS_SECRET_ACCESS_KEY": "x", "MY_VAR": "v", "": "odd"}
        env = build_env(environ, allow=["MY_*"], declared_prefixes=["A2A_", ""], extra={"X": "1"}, log_level="warn")
        self.assertEqual(env, {"A2A_PORT": "1", "AGENTPLUGIN_LOG_LEVEL": "warn", "HOME": "/h", "LC_ALL": "C",
                               "MY_VAR": "v", "PATH": "/bin", "X": "1"})
        self.assertEqual(list(env), sorted(env))
        self.assertFalse(env_match("*", "ANYTHING"))


class LogLineTest(unittest.TestCase):
    def test_hclog_lines_read_as_prose(self) -> None:
        line = json.dumps({"@level": "warn", "@message": "disk full", "@timestamp": "t", "path": "/x", "free": 0})
        self.assertEqual(readable_log_line(line), ("warn: disk full free=0 path=/x", "warn"))
        self.assertEqual(readable_log_line("panic: boom"), ("panic: boom", ""))
        self.assertEqual(readable_log_line("{not json"), ("{not json", ""))

    def test_ring_keeps_the_notable_tail_since_a_mark(self) -> None:
        r = LineRing(size=4)
        r.add(json.dumps({"@level": "error", "@message": "old"}))
        m = r.mark()
        r.add(json.dumps({"@level": "info", "@message": "fine"}))
        r.add(json.dumps({"@level": "error", "@message": "bad"}))
        r.add("panic: runtime error")
        r.add("   ")
        self.assertEqual(r.notable_since(m, 5), ["error: bad", "panic: runtime error"])
        self.assertEqual(len(r.tail()), 4)
        self.assertEqual(crash_summary("exit status 2", r.notable_since(m, 5)),
                         "exit status 2; stderr: error: bad | panic: runtime error")

    def test_splitter_waits_for_whole_lines(self) -> None:
        got = []
        s = LineSplitter(got.append)
        s.write(b"ab")
        s.write(b"c\r\nde\n\nf")
        self.assertEqual(got, ["abc", "de"])
        s.flush()
        self.assertEqual(got, ["abc", "de", "f"])


class HandshakeTest(unittest.TestCase):
    def test_line(self) -> None:
        h = parse_handshake_line("1|1|unix|/tmp/plugin1|grpc|\n", "p")
        self.assertEqual((h.target, h.server_cert_pem), ("unix:/tmp/plugin1", None))
        for bad, why in [("hello", "instead of a go-plugin handshake line"), ("2|1|unix|/x|grpc", "core protocol 2"),
                         ("1|3|unix|/x|grpc", "protocol major 3"), ("1|1|unix|/x|netrpc", "only grpc"),
                         ("1|1|pipe|/x|grpc", "unknown network")]:
            with self.assertRaises(HandshakeError) as cm:
                parse_handshake_line(bad, "p")
            self.assertIn(why, str(cm.exception))

    def test_env_of_each_transport(self) -> None:
        e = handshake_env(Transport.SOCKET_DIR, "/run/x", None)
        self.assertEqual((e["PLUGIN_UNIX_SOCKET_DIR"], e["PLUGIN_PROTOCOL_VERSIONS"]), ("/run/x", "1"))
        self.assertNotIn("PLUGIN_CLIENT_CERT", e)
        e = handshake_env(Transport.AUTO_MTLS, "/run/x", b"PEM")
        self.assertEqual(e["PLUGIN_CLIENT_CERT"], "PEM")
        self.assertNotIn("PLUGIN_UNIX_SOCKET_DIR", e)


class MiscTest(unittest.TestCase):
    def test_backoff_grows_and_is_capped(self) -> None:
        for attempt, (lo, hi) in enumerate([(0.125, 0.25), (0.25, 0.5), (0.5, 1.0), (0.5, 1.0)]):
            d = backoff(attempt, 0.25, 1.0)
            self.assertTrue(lo <= d <= hi, (attempt, d))

    def test_versions_and_names(self) -> None:
        self.assertEqual(_compare_versions("1.2.0", "v1.10.0"), -1)
        self.assertEqual(_compare_versions("1.0.0", "1.0.0-rc1"), 1)
        self.assertEqual(_compare_versions("dev", "0.1.0"), -1)
        self.assertTrue(valid_name("a2a"))
        self.assertFalse(valid_name("-x") or valid_name("a/b") or valid_name(""))

    def test_status_errors_round_trip(self) -> None:
        e = status_error(grpc.StatusCode.INVALID_ARGUMENT, "bad")
        self.assertIsInstance(e, InvalidArgument)
        self.assertEqual(to_status(e), (grpc.StatusCode.INVALID_ARGUMENT, "bad"))
        self.assertEqual(to_status(ValueError("x"))[0], grpc.StatusCode.UNKNOWN)
        self.assertEqual(timeout_ms(None), 0)
        self.assertEqual(timeout_ms(0.0001), 1)


class _Err(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode, details: str = ""):
        self._code, self._details = code, details

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details


class _Stream:
    """A scripted SendStream call: answer(env) returns the response to
    queue for an envelope, None for none; fail raises on read."""

    def __init__(self, answer=None, fail=None):
        self.written: list[pb.SendStreamRequest] = []
        self.answer = answer
        self.fail = fail
        self.out: asyncio.Queue = asyncio.Queue()
        self.cancelled = False

    async def write(self, env):
        self.written.append(env)
        if self.answer is not None:
            r = self.answer(env)
            if r is not None:
                self.out.put_nowait(r)

    async def read(self):
        if self.fail is not None:
            await asyncio.sleep(0.01)
            raise self.fail
        r = await self.out.get()
        if isinstance(r, BaseException):
            raise r
        return r

    def cancel(self):
        self.cancelled = True


def _client(streams: list, unary_calls: list):
    async def unary(req, timeout):
        unary_calls.append(req.text)
        return pb.SendResponse(message_id="unary:" + req.text)

    it = iter(streams)
    return CallStreamClient(
        open=lambda: next(it),
        wrap=lambda cid, ms, req: pb.SendStreamRequest(call_id=cid, request=req, timeout_ms=ms),
        cancel_envelope=lambda cid: pb.SendStreamRequest(call_id=cid, cancel=True),
        unary=unary)


def _echo(env):
    if env.cancel:
        return None
    return pb.SendStreamResponse(call_id=env.call_id, response=pb.SendResponse(message_id="stream:" + env.request.text))


class CallStreamClientTest(unittest.IsolatedAsyncioTestCase):
    async def test_calls_share_one_stream_and_carry_their_deadline(self) -> None:
        s, unary = _Stream(answer=_echo), []
        c = _client([s], unary)
        got = await asyncio.gather(*(c.call(pb.SendRequest(text=str(i)), timeout=5) for i in range(5)))
        self.assertEqual([g.message_id for g in got], [f"stream:{i}" for i in range(5)])
        self.assertEqual(unary, [])
        self.assertEqual(len({e.call_id for e in s.written}), 5)
        self.assertTrue(all(0 < e.timeout_ms <= 5000 for e in s.written))

    async def test_refused_stream_falls_back_to_unary_for_good(self) -> None:
        s, unary = _Stream(fail=_Err(grpc.StatusCode.UNIMPLEMENTED)), []
        c = _client([s], unary)
        got = await c.call(pb.SendRequest(text="a"), timeout=5)
        self.assertEqual(got.message_id, "unary:a")
        self.assertTrue(c.fallen_back)
        self.assertEqual((await c.call(pb.SendRequest(text="b"))).message_id, "unary:b")
        self.assertEqual(unary, ["a", "b"])

    async def test_broken_stream_fails_sent_calls_as_unavailable_and_reopens(self) -> None:
        broken = _Stream(answer=lambda env: _Err(grpc.StatusCode.UNAVAILABLE, "gone") if not env.cancel else None)
        good, unary = _Stream(answer=_echo), []
        c = _client([broken, good], unary)
        with self.assertRaises(Unavailable) as cm:
            await c.call(pb.SendRequest(text="a"), timeout=5)
        self.assertIn("outcome is unknown", str(cm.exception))
        self.assertEqual((await c.call(pb.SendRequest(text="b"), timeout=5)).message_id, "stream:b")
        self.assertEqual(unary, [], "a sent call is never resent")

    async def test_a_caller_that_gives_up_cancels_its_call(self) -> None:
        s, unary = _Stream(answer=lambda env: None), []
        c = _client([s], unary)
        with self.assertRaises(DeadlineExceeded):
            await c.call(pb.SendRequest(text="slow"), timeout=0.05)
        for _ in range(50):
            if len(s.written) == 2:
                break
            await asyncio.sleep(0.01)
        self.assertEqual([bool(e.cancel) for e in s.written], [False, True])
        self.assertEqual(s.written[0].call_id, s.written[1].call_id)

    async def test_errors_come_back_with_their_code(self) -> None:
        s = _Stream(answer=lambda env: pb.SendStreamResponse(call_id=env.call_id, error=pb.CallError(code=3, message="no such task")))
        c = _client([s], [])
        with self.assertRaises(InvalidArgument) as cm:
            await c.call(pb.SendRequest(text="x"), timeout=5)
        self.assertEqual(cm.exception.message, "no such task")

    async def test_big_requests_go_unary(self) -> None:
        s, unary = _Stream(answer=_echo), []
        c = _client([s], unary)
        got = await c.call(pb.SendRequest(text="x" * (CALL_STREAM_MAX_BYTES + 1)), timeout=5)
        self.assertTrue(got.message_id.startswith("unary:"))
        self.assertEqual(s.written, [])


if __name__ == "__main__":
    unittest.main()


class SocketDirSweepTest(unittest.TestCase):
    """A killed host cannot remove its socket directories; a start sweeps
    those whose owner is dead, and only those."""

    def test_only_directories_of_dead_owners_are_swept(self) -> None:
        import subprocess
        import tempfile

        from agentplugin_host.tmpdirs import OWNER_FILE, sweep_dead

        root = tempfile.mkdtemp(prefix="sweep-test-")
        self.addCleanup(__import__("shutil").rmtree, root, True)
        dead = subprocess.Popen(["true"])
        dead.wait()  # reaped: its pid names no process

        def owned(name: str, pid: object) -> str:
            d = os.path.join(root, name)
            os.mkdir(d, 0o700)
            if pid is not None:
                with open(os.path.join(d, OWNER_FILE), "w") as f:
                    f.write(f"{pid}\n")
            return d

        gone = owned("agentplugin-gone", dead.pid)
        live = owned("agentplugin-live", os.getpid())
        unmarked = owned("agentplugin-unmarked", None)
        garbage = owned("agentplugin-garbage", "not a pid")
        other = owned("otherprefix-gone", dead.pid)
        self.assertEqual(sweep_dead("agentplugin-", root=root), [gone])
        for d in (live, unmarked, garbage, other):
            self.assertTrue(os.path.isdir(d), d)


class HostRulesTest(unittest.TestCase):
    """The conformance kit (proto/agentplugin/v1/host-rules.json): the
    host-side rules the Go and Node host libraries are checked against
    too. A constant here that says something else fails; change the rule
    in the kit, then here."""

    @classmethod
    def setUpClass(cls) -> None:
        with open(os.path.join(REPO, "proto", "agentplugin", "v1", "host-rules.json")) as f:
            cls.kit = json.load(f)

    def test_handshake_names_env_and_message_size_agree_with_the_kit(self) -> None:
        from agentplugin_host import version
        from agentplugin_host.env import BASE_ENV_ALLOW
        from agentplugin_host.handshake import CORE_PROTOCOL_VERSION

        h = self.kit["handshake"]
        self.assertEqual(version.PROTOCOL_MAJOR, h["protocolMajor"], "handshake.protocolMajor")
        self.assertEqual(CORE_PROTOCOL_VERSION, h["coreProtocolVersion"], "handshake.coreProtocolVersion")
        self.assertEqual(version.MAGIC_COOKIE_KEY, h["magicCookieKey"], "handshake.magicCookieKey")
        self.assertEqual(version.MAGIC_COOKIE_VALUE, h["magicCookieValue"], "handshake.magicCookieValue")
        self.assertEqual(version.ENV_LOG_LEVEL, h["envLogLevel"], "handshake.envLogLevel")
        self.assertEqual(
            {"lifecycle": version.NAME_LIFECYCLE, "platform": version.NAME_PLATFORM, "toolset": version.NAME_TOOLSET},
            self.kit["pluginNames"], "pluginNames")
        self.assertEqual(version.MAX_MESSAGE_BYTES, self.kit["maxMessageBytes"], "maxMessageBytes")
        self.assertEqual(list(BASE_ENV_ALLOW), self.kit["envAllow"], "envAllow")

    def test_call_stream_thresholds_agree_with_the_kit(self) -> None:
        from agentplugin_host import callstream

        self.assertEqual(callstream.CALL_STREAM_MAX_BYTES, self.kit["callStream"]["maxRequestBytes"], "callStream.maxRequestBytes")
        self.assertEqual(callstream.MAX_DEAD_STREAMS, self.kit["callStream"]["maxDeadStreams"], "callStream.maxDeadStreams")

    def test_defaults_agree_with_the_kit(self) -> None:
        from agentplugin_host.host_service import DEFAULT_HEARTBEAT
        from agentplugin_host.options import Options, RestartPolicy

        d, o, r = self.kit["defaults"], Options(), RestartPolicy()
        self.assertEqual(o.start_timeout * 1000, d["startTimeoutMs"], "defaults.startTimeoutMs")
        self.assertEqual(o.drain_timeout * 1000, d["drainTimeoutMs"], "defaults.drainTimeoutMs")
        self.assertEqual(o.heartbeat_interval * 1000, d["heartbeatMs"], "defaults.heartbeatMs")
        self.assertEqual(DEFAULT_HEARTBEAT * 1000, d["heartbeatMs"], "defaults.heartbeatMs (host_service)")
        self.assertEqual(r.max_restarts, d["restart"]["maxRestarts"], "defaults.restart.maxRestarts")
        self.assertEqual(r.window * 1000, d["restart"]["windowMs"], "defaults.restart.windowMs")
        self.assertEqual(r.base_backoff * 1000, d["restart"]["baseBackoffMs"], "defaults.restart.baseBackoffMs")
        self.assertEqual(r.max_backoff * 1000, d["restart"]["maxBackoffMs"], "defaults.restart.maxBackoffMs")

    def test_error_classes_and_codes_agree_with_the_kit(self) -> None:
        from agentplugin_host import errors

        # Each error class under its kit name; a kit kind with no class
        # here is carried by its code alone (StatusError with that code).
        ours = {
            "unknownTool": errors.UnknownTool, "invalidArgument": errors.InvalidArgument,
            "notReady": errors.NotReady, "unimplemented": errors.Unimplemented,
            "cancelled": errors.Cancelled, "deadlineExceeded": errors.DeadlineExceeded,
            "unavailable": errors.Unavailable,
        }
        by_code_only = {"internal"}
        kinds = {k["kind"]: k for k in self.kit["errors"]["kinds"]}
        for k in kinds.values():
            self.assertEqual(errors.code_of(k["number"]).name, k["code"], f"errors.kinds {k['kind']}: number {k['number']}")
        self.assertEqual(set(kinds), set(ours) | by_code_only, "errors.kinds: the kit's kinds and this library's classes")
        for kind, cls in ours.items():
            self.assertEqual(cls.default_code.name, kinds[kind]["code"], f"errors.kinds {kind}: {cls.__name__}")
            self.assertIs(errors.status_error(cls.default_code, "m").__class__, cls, f"errors.kinds {kind}: status_error")
        self.assertEqual(len(errors._BY_CODE), len(ours), "errors._BY_CODE has a class the kit does not know")
        plain = {c.name for c in grpc.StatusCode if c is not grpc.StatusCode.OK and str(errors.StatusError("m", c)) == "m"}
        self.assertEqual(plain, set(self.kit["errors"]["plainMessageCodes"]), "errors.plainMessageCodes")
