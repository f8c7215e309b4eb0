"""One binary per HERMES_HOME, in the processes Hermes really has: the
gateway owns the data directory and serves inbound A2A; a CLI process uses
the gateway's binary for its tools, or a private tools-only one when no
gateway runs; a second gateway refuses to serve. Plus the install command,
coexistence with Hermes' bundled A2A plugin, a refused tool, and a
misconfiguration that must fail loudly."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

import support  # noqa: F401
from support import base_config, free_port, new_hermes_home, plugin_binary, remove_home, reset_hermes

import fakemodel
import run_agent
from gateway.config import Platform
from gateway.run import GatewayRunner
from hermes_cli.plugins import get_plugin_manager
from tools.registry import registry

MAIN = os.path.join(support.HERE, "standin_main.py")


def _env(home: str, tmpdir: str | None = None) -> dict:
    env = dict(os.environ)
    env["HERMES_HOME"] = home
    if tmpdir:
        env["TMPDIR"] = tmpdir
    env["AGENTPLUGIN_A2A_BIN"] = plugin_binary()
    return env


def _tool(home: str, name: str, args: dict) -> dict:
    out = subprocess.run([sys.executable, MAIN, "tool", name, json.dumps(args)], env=_env(home), capture_output=True,
                         text=True, timeout=120)
    if out.returncode != 0:
        raise AssertionError(f"CLI process failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _children(ppid: int, name: str = "a2a-plugin") -> list[int]:
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == ppid and stat[stat.index("(") + 1:stat.rindex(")")] == name[:15]:
            out.append(int(pid))
    return out


def _alive(pid: int) -> bool:
    """Whether pid runs (a zombie does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _gone_within(pids: list[int], timeout: float = 20) -> list[int]:
    """The pids still running after timeout (killed, so as not to leak)."""
    deadline = time.monotonic() + timeout
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [p for p in pids if _alive(p)]
    for p in left:
        os.kill(p, signal.SIGKILL)
    return left


def _socket_dirs_of(pid: int, root: str | None = None) -> list[str]:
    """The socket directories (a2a-plugin-*, agentplugin-*) in root (the
    temporary directory) naming pid as their owner."""
    root = root or tempfile.gettempdir()
    out = []
    for n in os.listdir(root):
        if n.startswith(("a2a-plugin-", "agentplugin-")):
            try:
                with open(os.path.join(root, n, "owner.pid")) as f:
                    if int(f.read().strip()) == pid:
                        out.append(os.path.join(root, n))
            except (OSError, ValueError):
                pass
    return out


def _data_dir(home: str) -> str:
    root = os.path.join(home, "plugin-data")
    (name,) = os.listdir(root)
    return os.path.join(root, name)


class GatewayProcess:
    """The stand-in gateway in a process of its own."""

    def __init__(self, home: str, tmpdir: str | None = None):
        self.proc = subprocess.Popen([sys.executable, MAIN, "gateway"], env=_env(home, tmpdir), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError(f"the gateway did not start: {self.proc.stderr.read()[-3000:]}")
        self.info = json.loads(line)

    def stop(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("the gateway process did not stop within 30s of its stdin closing")
        finally:
            self.proc.stdout.close()
            self.proc.stderr.close()


class OneBinaryPerHomeTest(unittest.TestCase):
    def setUp(self) -> None:
        self.port = free_port()
        self.home = new_hermes_home(base_config(self.port, {"a2a_agents": [
            {"name": "billing", "url": "https://billing.example", "trust": "trusted"}]}))
        self.addCleanup(remove_home, self.home)

    def test_cli_process_uses_the_gateway_binary_for_tools(self) -> None:
        gw = GatewayProcess(self.home)
        self.addCleanup(gw.stop)
        self.assertEqual(gw.info["endpoints"], [f"http://127.0.0.1:{self.port}"], gw.info)
        with open(os.path.join(_data_dir(self.home), "owner.lock")) as f:
            self.assertEqual(int(f.read().strip()), gw.info["pid"], "the gateway owns the data directory")
        out = _tool(self.home, "a2a_list", {})
        self.assertIn("billing", out["result"])
        self.assertEqual(out["children"], [], "the CLI process started no binary of its own")
        self.assertIsNone(out["load_error"])

    def test_a_gateway_process_that_exits_leaves_no_binary(self) -> None:
        """Hermes' gateway does not unload plugins when it stops: the
        adapter's disconnect stops the binary, and the process exits."""
        gw = GatewayProcess(self.home)
        self.addCleanup(gw.stop)
        kids = _children(gw.info["pid"])
        self.assertEqual(len(kids), 1, kids)
        gw.stop()
        self.assertEqual(_gone_within(kids), [], "the binary outlived its gateway")
        self.assertFalse(_listening(self.port))
        self.assertFalse(os.path.exists(os.path.join(_data_dir(self.home), "run", "tools.addr")), "a stale proxy address")

    def test_a_killed_gateway_leaves_no_binary(self) -> None:
        gw = GatewayProcess(self.home)
        self.addCleanup(gw.stop)
        kids = _children(gw.info["pid"])
        self.assertEqual(len(kids), 1, kids)
        gw.proc.kill()
        gw.proc.wait()
        self.assertEqual(_gone_within(kids), [], "the binary outlived its killed gateway")

    def test_the_next_gateway_sweeps_the_socket_directories_a_killed_one_left(self) -> None:
        """A killed gateway cannot remove its socket directories (the tool
        proxy's a2a-plugin-*, the SDK's agentplugin-*); the next start
        removes them — only those whose owner process is dead.

        Both gateways use a temporary directory of this test's own: any
        process on the SDK sweeps the dead owners' directories of the one it
        uses, and other suites running beside this one would sweep the
        killed gateway's before the next gateway could."""
        tmp = tempfile.mkdtemp(prefix="sweep-")
        self.addCleanup(shutil.rmtree, tmp, True)
        gw = GatewayProcess(self.home, tmp)
        self.addCleanup(gw.stop)
        kids = _children(gw.info["pid"])
        left = _socket_dirs_of(gw.info["pid"], tmp)
        self.assertEqual(sorted(os.path.basename(d).split("-")[0] for d in left), ["a2a", "agentplugin"], left)
        gw.proc.kill()
        gw.proc.wait()
        self.assertEqual(_gone_within(kids), [], "the binary outlived its killed gateway")
        self.assertTrue(all(os.path.isdir(d) for d in left), "the killed gateway's directories are the test's premise")
        live = tempfile.mkdtemp(prefix="agentplugin-", dir=tmp)  # of a live process: this one
        self.addCleanup(shutil.rmtree, live, True)
        with open(os.path.join(live, "owner.pid"), "w") as f:
            f.write(f"{os.getpid()}\n")
        nxt = GatewayProcess(self.home, tmp)
        self.addCleanup(nxt.stop)
        self.assertEqual([d for d in left if os.path.exists(d)], [], "the killed gateway's socket directories are left")
        self.assertTrue(os.path.isdir(live), "a live process's directory was swept")
        self.assertEqual(len(_socket_dirs_of(nxt.info["pid"], tmp)), 2)

    def test_cli_process_without_gateway_runs_a_private_tools_only_binary(self) -> None:
        out = _tool(self.home, "a2a_list", {})
        self.assertIn("billing", out["result"])
        self.assertEqual(len(out["children"]), 1, "a private binary ran the tool")
        self.assertEqual(_gone_within(out["children"]), [], "the private binary outlived its CLI process")
        self.assertFalse(_listening(self.port), "a tools-only binary serves no inbound A2A")
        state = os.path.join(_data_dir(self.home), "state")
        self.assertEqual(os.listdir(state), [], "the private binary never touched the gateway's data directory")


class SecondGatewayTest(unittest.IsolatedAsyncioTestCase):
    async def test_second_gateway_on_one_home_refuses_to_serve_then_reconnects(self) -> None:
        port = free_port()
        home = new_hermes_home(base_config(port))
        self.addCleanup(remove_home, home)
        gw = await asyncio.to_thread(GatewayProcess, home)
        self.addCleanup(gw.stop)
        reset_hermes()
        os.environ["HERMES_HOME"] = home
        runner = GatewayRunner()
        connects = _record_connects(runner)
        await runner.start()
        self.addAsyncCleanup(runner.stop)
        self.assertNotIn(Platform("a2a"), runner.adapters)
        (first, reconnect), = connects
        self.assertFalse(reconnect)
        self.assertIn(f"another process (pid {gw.info['pid']})", first.fatal_error_message)
        self.assertTrue(first.fatal_error_retryable)
        self.assertIn(Platform("a2a"), runner._failed_platforms, "Hermes queues a retryable failure for a reconnect")
        # The other gateway goes away; Hermes' reconnect watcher makes a new
        # adapter and connects it with is_reconnect=True.
        await asyncio.to_thread(gw.stop)
        await runner._retry_failed_platforms(now=float("inf"))
        second, reconnect = connects[-1]
        self.assertTrue(reconnect)
        self.assertIsNot(second, first)
        self.assertIs(runner.adapters.get(Platform("a2a")), second)
        self.assertEqual(second.endpoints, [f"http://127.0.0.1:{port}"])
        # The failed adapter's disconnect (Hermes calls it after a failed
        # connect) did not stop the new one's binary.
        await first.disconnect()
        self.assertTrue(second._rt.serving)


def _record_connects(runner) -> list:
    """(adapter, is_reconnect) of every connect the runner makes."""
    calls = []
    orig = runner._create_adapter

    def create(platform, config):
        adapter = orig(platform, config)
        if adapter is not None:
            connect = adapter.connect

            async def recording(*, is_reconnect: bool = False) -> bool:
                calls.append((adapter, is_reconnect))
                return await connect(is_reconnect=is_reconnect)

            adapter.connect = recording
        return adapter

    runner._create_adapter = create
    return calls


class CoexistenceAndConfigTest(unittest.TestCase):
    def setUp(self) -> None:
        reset_hermes()
        self.addCleanup(reset_hermes)
        run_agent.OpenAI = fakemodel.FakeOpenAI

    def _discover(self, config: dict):
        home = new_hermes_home(config)
        self.addCleanup(remove_home, home)
        os.environ["HERMES_HOME"] = home
        get_plugin_manager().discover_and_load()
        return get_plugin_manager().plugins()["a2a-plugin"]

    def test_with_the_bundled_a2a_platform_enabled_ours_replace_its_tools_and_platform(self) -> None:
        """Hermes lets the later registration win: a user plugin loads after
        the bundled platform plugins, and a same-named tool in the same
        toolset replaces the earlier one (the bundled plugin's adapter,
        deferred, is replaced before it ever loads)."""
        from gateway.platform_registry import platform_registry

        cfg = base_config(free_port())
        cfg["plugins"]["disabled"] = []
        with self.assertLogs("a2a_plugin", "WARNING") as logs:
            loaded = self._discover(cfg)
        self.assertTrue(loaded.enabled, loaded.error)
        self.assertIn("plugins.disabled: [a2a-platform]", "\n".join(logs.output))
        self.assertTrue(get_plugin_manager().plugins()["a2a-platform"].deferred)
        for name in ("a2a_call", "a2a_discover", "a2a_list", "a2a_history", "a2a_orchestrate"):
            self.assertNotEqual(registry.get_entry(name).schema["description"], "bundled fake", name)
        self.assertIsNotNone(registry.get_entry("a2a_route"))
        self.assertEqual(platform_registry.get("a2a").plugin_name, "a2a-plugin")

    def test_a_tool_name_hermes_refuses_fails_loading_and_leaves_nothing(self) -> None:
        """A built-in tool of the same name is not shadowed: Hermes refuses
        the registration, and the plugin fails to load saying why."""
        registry.register(name="a2a_call", toolset="builtin", handler=lambda args, **kw: "builtin",
                          schema={"name": "a2a_call", "description": "built in", "parameters": {"type": "object"}})
        loaded = self._discover(base_config(free_port()))
        self.assertFalse(loaded.enabled)
        self.assertIn("Hermes refused tool 'a2a_call'", loaded.error)
        self.assertEqual(registry.get_entry("a2a_call").schema["description"], "built in")
        self.assertIsNone(registry.get_entry("a2a_route"), "nothing of a2a-plugin stays registered")

    def test_a_platform_hermes_did_not_register_fails_loading_saying_so(self) -> None:
        """register_platform returns None when Hermes did not take the entry:
        the plugin would serve nothing, so it refuses to load, naming the
        platform; a None with the entry registered (a Hermes whose
        register_platform returns nothing) is read as success."""
        from gateway.platform_registry import platform_registry
        from hermes_cli.plugins import PluginContext

        orig = PluginContext.register_platform
        self.addCleanup(setattr, PluginContext, "register_platform", orig)

        def returns_none_registers(self, *a, **kw):
            orig(self, *a, **kw)
            return None

        PluginContext.register_platform = returns_none_registers
        loaded = self._discover(base_config(free_port()))
        self.assertTrue(loaded.enabled, loaded.error)
        self.assertEqual(platform_registry.get("a2a").plugin_name, "a2a-plugin")

        reset_hermes()
        PluginContext.register_platform = lambda self, *a, **kw: None  # refused: nothing registered
        loaded = self._discover(base_config(free_port()))
        self.assertFalse(loaded.enabled)
        self.assertIn("Hermes did not register the 'a2a' platform", loaded.error)
        self.assertIsNone(registry.get_entry("a2a_route"), "nothing of a2a-plugin stays registered")

    def test_a_misspelt_binary_setting_fails_loudly_with_its_name(self) -> None:
        loaded = self._discover(base_config(free_port(), {"agent_nmae": "typo"}))
        self.assertFalse(loaded.enabled)
        self.assertIn('unknown setting "agent_nmae"', loaded.error)

    def test_a_wrong_plugin_setting_names_itself(self) -> None:
        loaded = self._discover(base_config(free_port(), settings={"transport": "carrier-pigeon"}))
        self.assertIn("settings.transport", loaded.error)


class InstallTest(unittest.TestCase):
    def test_install_lays_out_the_plugin_and_prints_the_config_lines(self) -> None:
        import tempfile

        home = tempfile.mkdtemp(prefix="hermes-install-")
        self.addCleanup(remove_home, home)
        out = subprocess.run([sys.executable, os.path.join(support.REPO, "host-sdk", "hermes", "install.py"),
                              "--hermes-home", home, "--binary", plugin_binary()], capture_output=True, text=True, check=True)
        d = os.path.join(home, "plugins", "a2a-plugin")
        self.assertTrue(os.access(os.path.join(d, "bin", "a2a-plugin"), os.X_OK))
        for f in ("plugin.yaml", "__init__.py", "adapter.py", os.path.join("vendor", "agentplugin_host", "__init__.py"),
                  os.path.join("vendor", "agentplugin", "v1", "agentplugin_pb2.py")):
            self.assertTrue(os.path.exists(os.path.join(d, f)), f)
        self.assertIn("enabled: [a2a-plugin]", out.stdout)
        self.assertIn("disabled: [a2a-platform]", out.stdout)
        self.assertIn("platforms:\n    a2a:\n      enabled: true", out.stdout)
        # Plugin tools sit behind Hermes' tool_search bridge unless it is off.
        self.assertIn("tools:\n  tool_search:\n    enabled: false", out.stdout)
        # Installing again replaces the installation.
        subprocess.run([sys.executable, os.path.join(support.REPO, "host-sdk", "hermes", "install.py"),
                        "--hermes-home", home, "--binary", plugin_binary(), "--quiet"], check=True, capture_output=True)
        self.assertFalse(os.path.exists(d + ".installing"))


if __name__ == "__main__":
    unittest.main()
