"""Supervision with the real binary: a killed plugin is restarted, a
plugin that may not restart fails with its crash reason, candidates that
are not plugins are skipped with a reason, and a killed host leaves no
orphan plugin behind."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

from support import HERE, ScriptedHost, answer_of, free_port, jsonrpc, message, plugin_binary, process_alive, task_of

from agentplugin_host import EventKind, HandshakeError, Manager, Options, PluginUnavailable, RestartPolicy, State, pb


async def _until(pred, timeout: float = 20.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


class RestartTest(unittest.IsolatedAsyncioTestCase):
    async def _manager(self, restart: RestartPolicy) -> Manager:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.host = ScriptedHost()
        self.events = []
        m = Manager(Options(paths=[plugin_binary()], host=self.host, config={"a2a": {"port": self.port, "store": "memory"}},
                            env_allow=["A2A_*"], restart=restart, on_event=self.events.append))
        await m.start()
        self.addAsyncCleanup(m.close)
        self.host.platform = m.plugin("a2a").platform()
        return m

    async def test_killed_plugin_is_restarted(self) -> None:
        m = await self._manager(RestartPolicy(base_backoff=0.05, max_backoff=0.1))
        p = m.plugin("a2a")
        old = p.pid
        os.kill(old, signal.SIGKILL)
        await _until(lambda: p.state is not State.READY or p.pid != old, what="the crash to be noticed")
        if p.state is State.RESTARTING:
            with self.assertRaises(PluginUnavailable) as cm:
                await p.toolset().list_tools()
            self.assertIn("restarting after crash", str(cm.exception))
        await _until(lambda: p.state is State.READY and p.pid not in (0, old), what="the restart")
        self.assertIn("SIGKILL", str(p.last_error))
        kinds = [e.kind for e in self.events]
        self.assertEqual(kinds.count(EventKind.CRASHED), 1)
        self.assertEqual(kinds.count(EventKind.READY), 2)
        # The same handle works with the new process, inbound and outbound.
        task = task_of(await jsonrpc(self.url, "SendMessage", {"message": message("again")}))
        self.assertEqual(answer_of(task), "echo: again")
        tools = await p.toolset().list_tools()
        self.assertIn("a2a_call", {t.name for t in tools})

    async def test_plugin_without_restarts_fails_with_its_crash_reason(self) -> None:
        m = await self._manager(RestartPolicy(max_restarts=-1))
        p = m.plugin("a2a")
        os.kill(p.pid, signal.SIGKILL)
        await _until(lambda: p.state is State.FAILED, what="the plugin to fail")
        self.assertIn("restarts are disabled", str(p.last_error))
        with self.assertRaises(PluginUnavailable):
            await p.platform().send(pb.SendRequest(task_id="t", kind=pb.SEND_KIND_FINAL, text="x"))
        self.assertEqual([e.kind for e in self.events][-2:], [EventKind.CRASHED, EventKind.FAILED])


class DiscoveryTest(unittest.IsolatedAsyncioTestCase):
    async def test_candidates_that_are_not_plugins_are_skipped_with_a_reason(self) -> None:
        d = tempfile.mkdtemp(prefix="sdk-plugins-")
        os.symlink(plugin_binary(), os.path.join(d, "a2a-plugin"))
        _script(d, "chatty", "#!/bin/sh\necho 'hello, I am not a plugin'\nsleep 5\n")
        _script(d, "crasher", "#!/bin/sh\necho 'boom: cannot start' >&2\nexit 3\n")
        _script(d, "flooder", "#!/bin/sh\nhead -c 100000 /dev/zero | tr '\\0' x\nsleep 5\n")
        with open(os.path.join(d, "notes.txt"), "w") as f:
            f.write("not executable\n")
        os.mkdir(os.path.join(d, "subdir"))
        events = []
        m = Manager(Options(dir=d, host=ScriptedHost(), config={"a2a": {"port": 0, "store": "memory"}},
                            env_allow=["A2A_*"], on_event=events.append))
        await m.start()
        self.addAsyncCleanup(m.close)
        self.assertEqual([p.name for p in m.plugins()], ["a2a"])
        self.assertEqual(m.plugin("a2a").state, State.READY)
        skipped = {os.path.basename(e.plugin): e.error for e in events if e.kind is EventKind.SKIPPED}
        self.assertEqual(set(skipped), {"chatty", "crasher", "flooder"})
        self.assertIsInstance(skipped["flooder"], HandshakeError)
        self.assertIn("more than 64 KiB", str(skipped["flooder"]))
        self.assertIsInstance(skipped["chatty"], HandshakeError)
        self.assertIn("hello, I am not a plugin", str(skipped["chatty"]))
        self.assertIn("exit status 3", str(skipped["crasher"]))
        self.assertIn("boom: cannot start", str(skipped["crasher"]))

    async def test_refused_configuration_fails_the_plugin_with_the_reason(self) -> None:
        m = Manager(Options(paths=[plugin_binary()], host=ScriptedHost(), config={"a2a": {"no_such_setting": 1}}))
        with self.assertRaises(Exception) as cm:
            await m.start()
        self.addAsyncCleanup(m.close)
        self.assertIn("no_such_setting", str(cm.exception))
        self.assertEqual(m.plugin("a2a").state, State.FAILED)


class OrphanTest(unittest.TestCase):
    def test_killed_host_leaves_no_orphan(self) -> None:
        """A host killed with SIGKILL cannot stop its plugin: the plugin
        notices (its Watch stream breaks, its parent changes) and exits."""
        port = free_port()
        host = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "..", "examples", "echo_host.py"), "--plugin", plugin_binary(),
             "--config", f'{{"port": {port}, "store": "memory"}}'],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = host.stdout.readline()
            self.assertIn("serving at", line)
            plugin_pid = _child_of(host.pid, "a2a-plugin")
            self.assertTrue(process_alive(plugin_pid))
        finally:
            host.kill()
            host.wait()
            host.stdout.close()
            host.stderr.close()
        deadline = time.monotonic() + 20
        while process_alive(plugin_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        alive = process_alive(plugin_pid)
        if alive:
            os.kill(plugin_pid, signal.SIGKILL)
        self.assertFalse(alive, "the plugin outlived its killed host")


def _script(d: str, name: str, body: str) -> None:
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(textwrap.dedent(body))
    os.chmod(path, 0o755)


def _child_of(ppid: int, name: str) -> int:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            comm = stat[stat.index("(") + 1:stat.rindex(")")]
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[1]) == ppid and comm == name[:15]:
                return int(pid)
        time.sleep(0.05)
    raise AssertionError(f"no child {name} of {ppid}")


if __name__ == "__main__":
    unittest.main()
