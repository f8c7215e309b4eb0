"""What the Hermes plugin tests share: the stand-in on sys.path, a fresh
HERMES_HOME with the plugin installed by install.py (exactly as make
hermes-plugin does), a running stand-in gateway, and A2A over real HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from typing import Any, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
STANDIN = os.path.join(HERE, "standin")
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
SDK_TESTS = os.path.join(REPO, "host-sdk", "python", "tests")
for p in (STANDIN, HERE):
    if p not in sys.path:
        sys.path.insert(0, p)

import yaml  # noqa: E402

sys.path.insert(0, os.path.join(REPO, "host-sdk", "hermes"))
import install  # noqa: E402

sys.path.remove(os.path.join(REPO, "host-sdk", "hermes"))

_binary: Optional[str] = None


def plugin_binary() -> str:
    """$AGENTPLUGIN_A2A_BIN (the Go test that runs these builds it), else go build."""
    global _binary
    if _binary:
        return _binary
    path = os.environ.get("AGENTPLUGIN_A2A_BIN")
    if not path:
        path = os.path.join(tempfile.gettempdir(), "agentplugin-hermes-tests", "a2a-plugin")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        subprocess.run(["go", "build", "-o", path, "./cmd/a2a-plugin"], cwd=REPO, check=True)
    _binary = path
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def new_hermes_home(config: dict) -> str:
    """A fresh HERMES_HOME: the plugin installed by install.py, config.yaml
    written (Hermes rewrites it on load, so tests write it fresh)."""
    home = tempfile.mkdtemp(prefix="hermes-home-")
    install.install(home, plugin_binary())
    with open(os.path.join(home, "config.yaml"), "w") as f:
        yaml.safe_dump(config, f)
    return home


def base_config(port: int, a2a: Optional[dict] = None, **extra: Any) -> dict:
    """config.yaml enabling the plugin and the a2a platform, the bundled
    a2a-platform disabled."""
    settings = {"a2a": {"port": port, "rate_limit": 0, **(a2a or {})}}
    settings.update(extra.pop("settings", {}))
    cfg = {
        "plugins": {"enabled": ["a2a-plugin"], "disabled": ["a2a-platform"],
                    "entries": {"a2a-plugin": {"settings": settings}}},
        "gateway": {"platforms": {"a2a": {"enabled": True}}},
        # As install.py prints, plus the terminal for the tests' long job.
        "platform_toolsets": {"a2a": ["terminal", "web", "a2a"], "cli": ["hermes-cli", "a2a"]},
    }
    cfg.update(extra)
    return cfg


def reset_hermes() -> None:
    """Forget what an earlier test's stand-in process state registered."""
    import hermes_cli.plugins as plugins
    from gateway.platform_registry import platform_registry
    from tools.registry import registry

    import toolsets
    from gateway import run

    plugins._reset_plugin_managers_for_tests()
    registry.clear()
    platform_registry.clear()
    toolsets.TOOLSETS.clear()
    run._warned_invalid_platform_toolsets.clear()


def message(text: str, context_id: str = "", task_id: str = "", parts: Optional[list] = None) -> dict:
    m: dict[str, Any] = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": parts or [{"text": text}]}
    if context_id:
        m["contextId"] = context_id
    if task_id:
        m["taskId"] = task_id
    return m


def jsonrpc_sync(url: str, method: str, params: dict, token: str = "", timeout: float = 60) -> dict:
    headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
    if token:
        headers["Authorization"] = "Bearer " + token
    req = urllib.request.Request(url, data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode(),
                                 headers=headers, method="POST")
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


async def jsonrpc(url: str, method: str, params: dict, token: str = "", timeout: float = 60) -> dict:
    return await asyncio.to_thread(jsonrpc_sync, url, method, params, token, timeout)


def task_of(resp: dict) -> dict:
    if "error" in resp:
        raise AssertionError(f"JSON-RPC error: {resp['error']}")
    return resp["result"].get("task") or resp["result"]


def text_of(obj: Optional[dict]) -> str:
    return "".join(p.get("text", "") for p in (obj or {}).get("parts", []))


def answer_of(task: dict) -> str:
    """A completed task's answer: its "answer" artifact (the COMPLETED
    status carries no copy of it)."""
    answers = [a for a in task.get("artifacts", []) if a.get("name") == "answer"]
    return text_of(answers[-1]) if answers else ""


class LongJob:
    """A tool that works until Hermes interrupts it (tools.interrupt)."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.interrupted = threading.Event()

    def __call__(self, args: dict, **kwargs: Any) -> str:
        from tools.interrupt import is_interrupted

        self.started.set()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if is_interrupted():
                self.interrupted.set()
                return json.dumps({"output": "[interrupted]", "returncode": 130})
            time.sleep(0.02)
        return "finished without an interrupt"


def register_test_tools(long_job: LongJob, progress_job: Any = None) -> None:
    """Tools of Hermes' own stand in for terminal work: registered the way
    Hermes' built-in tools are (straight into the registry)."""
    from tools.registry import registry

    registry.register(name="long_job", toolset="terminal", handler=long_job,
                      schema={"name": "long_job", "description": "Run a long job.", "parameters": {"type": "object", "properties": {}}})
    registry.register(name="web_search", toolset="web", handler=lambda args, **kw: "no results",
                      schema={"name": "web_search", "description": "Search the web.", "parameters": {"type": "object", "properties": {}}})
    if progress_job is not None:
        registry.register(name="progress_job", toolset="terminal", handler=progress_job,
                          schema={"name": "progress_job", "description": "Report progress.", "parameters": {"type": "object", "properties": {}}})


def remove_home(home: str) -> None:
    shutil.rmtree(home, ignore_errors=True)


class NewerHermesShape:
    """A test-class mixin: the test runs on the stand-in's Hermes 0.21 API
    shape (gateway/platforms/base.py use_api_shape: request_session_interrupt,
    dispatch_request), and self.dispatched lists the events the adapter
    handed over with dispatch_request."""

    async def asyncSetUp(self) -> None:
        from gateway.platforms import base

        base.use_api_shape("0.21")
        self.addCleanup(base.use_api_shape, "0.20.1")
        self.dispatched: list = []
        orig = base.BasePlatformAdapter.dispatch_request

        async def recording(adapter, event):
            self.dispatched.append(event)
            return await orig(adapter, event)

        base.BasePlatformAdapter.dispatch_request = recording
        await super().asyncSetUp()
