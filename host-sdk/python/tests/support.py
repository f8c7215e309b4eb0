"""What the SDK tests share: the real a2a-plugin binary, free ports, an A2A
client over real HTTP (stdlib only) and a scripted host."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
import uuid
from typing import Any, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "src")
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
if SRC not in sys.path:
    sys.path.insert(0, SRC)

from agentplugin_host import pb  # noqa: E402

_binary: Optional[str] = None


def plugin_binary() -> str:
    """The a2a-plugin binary: $AGENTPLUGIN_A2A_BIN (the Go test that runs these
    tests builds it), else built here once with go build."""
    global _binary
    if _binary:
        return _binary
    path = os.environ.get("AGENTPLUGIN_A2A_BIN")
    if not path:
        path = os.path.join(tempfile.gettempdir(), "agentplugin-python-tests", "a2a-plugin")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        subprocess.run(["go", "build", "-o", path, "./cmd/a2a-plugin"], cwd=REPO, check=True)
    _binary = path
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def message(text: str, context_id: str = "", task_id: str = "", **extra: Any) -> dict:
    m: dict[str, Any] = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
    if context_id:
        m["contextId"] = context_id
    if task_id:
        m["taskId"] = task_id
    m.update(extra)
    return m


def _post(url: str, body: dict, headers: Optional[dict] = None) -> urllib.request.Request:
    h = {"Content-Type": "application/json", "A2A-Version": "1.0"}
    h.update(headers or {})
    return urllib.request.Request(url, data=json.dumps(body).encode(), headers=h, method="POST")


def jsonrpc_sync(url: str, method: str, params: dict, timeout: float = 30) -> dict:
    """One JSON-RPC call; returns the whole response object."""
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    with urllib.request.urlopen(_post(url, body), timeout=timeout) as r:
        return json.loads(r.read())


async def jsonrpc(url: str, method: str, params: dict, timeout: float = 30) -> dict:
    """jsonrpc_sync off the event loop (the host under test runs on it)."""
    return await asyncio.to_thread(jsonrpc_sync, url, method, params, timeout)


def stream_sync(url: str, params: dict, timeout: float = 30) -> list[dict]:
    """SendStreamingMessage: every SSE event's JSON-RPC result, in order."""
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": params})
    conn.request("POST", u.path or "/", body, {"Content-Type": "application/json", "A2A-Version": "1.0",
                                              "Accept": "text/event-stream"})
    resp = conn.getresponse()
    events = []
    for raw in resp:
        line = raw.decode().rstrip("\r\n")
        if line.startswith("data:"):
            ev = json.loads(line[5:].strip())
            events.append(ev.get("result", ev))
    conn.close()
    return events


async def stream(url: str, params: dict, timeout: float = 30) -> list[dict]:
    return await asyncio.to_thread(stream_sync, url, params, timeout)


def task_of(resp: dict) -> dict:
    """The task of a SendMessage result (fails loudly on an error)."""
    if "error" in resp:
        raise AssertionError(f"JSON-RPC error: {resp['error']}")
    return resp["result"].get("task") or resp["result"]


def text_of(obj: dict) -> str:
    return "".join(p.get("text", "") for p in obj.get("parts", []))


def answer_of(task: dict) -> str:
    """A completed task's answer: its "answer" artifact (the COMPLETED
    status carries no copy of it)."""
    answers = [a for a in task.get("artifacts", []) if a.get("name") == "answer"]
    return text_of(answers[-1]) if answers else ""


class ScriptedHost:
    """A host whose agent does what the inbound text says (the text reaches
    the host framed as untrusted input, so commands are found inside it):
    "progress …" (a progress message, then the answer), "ask …" (a
    question), "artifact …", "direct …" (a reply without a task), "fail …"
    (the turn fails), "slow …" (works until cancelled), anything else is
    echoed as "echo: <text>". Records every callback."""

    def __init__(self) -> None:
        self.platform: Any = None
        self.messages: list[pb.HandleMessageRequest] = []
        self.cancels: list[pb.CancelTurnRequest] = []
        self.completes: list[pb.CompleteRequest] = []
        self.delegations: list[pb.RecordDelegationRequest] = []
        self.complete_answer = "NONE"
        self.tools = [pb.ToolDefinition(name="web_search", description="Search the web.",
                                        parameters_json_schema='{"type":"object"}', toolset="web")]
        self._slow: dict[str, asyncio.Event] = {}
        self.got = asyncio.Queue()

    async def handle_message(self, req: pb.HandleMessageRequest) -> pb.HandleMessageResponse:
        self.messages.append(req)
        self.got.put_nowait(req)
        asyncio.ensure_future(self._play(req))
        return pb.HandleMessageResponse(turn_id="turn-" + req.task_id)

    def _send(self, req: pb.HandleMessageRequest, kind: int, text: str = "", ends_turn: bool = False, **kw: Any):
        return self.platform.send(pb.SendRequest(platform=req.platform, chat_id=req.chat_id, task_id=req.task_id,
                                                 kind=kind, text=text, ends_turn=ends_turn, **kw), timeout=10)

    def _end(self, req: pb.HandleMessageRequest, outcome: int, error: str = ""):
        return self.platform.processing_complete(pb.ProcessingCompleteRequest(
            platform=req.platform, chat_id=req.chat_id, task_id=req.task_id, outcome=outcome, error=error), timeout=10)

    @staticmethod
    def command(text: str) -> tuple[str, str]:
        body = text
        lines = [l for l in text.splitlines() if l.strip() and not l.startswith("[A2A ") and not l.startswith("(")]
        if lines:
            body = lines[-1].strip()
        word, _, rest = body.partition(" ")
        return word, body

    async def _play(self, req: pb.HandleMessageRequest) -> None:
        word, body = self.command(req.text)
        if word == "progress":
            await self._send(req, pb.SEND_KIND_PROGRESS, "working on it")
            await self._send(req, pb.SEND_KIND_FINAL, "done: " + body, ends_turn=True)
        elif word == "ask":
            await self._send(req, pb.SEND_KIND_INPUT_REQUIRED, "which one?", ends_turn=True)
        elif word == "artifact":
            await self._send(req, pb.SEND_KIND_ARTIFACT, artifact=pb.Artifact(
                artifact_id="a1", name="report", parts=[pb.Part(text="the report")], last_chunk=True))
            await self._send(req, pb.SEND_KIND_FINAL, "see the report", ends_turn=True)
        elif word == "direct":
            await self._send(req, pb.SEND_KIND_DIRECT_REPLY, "direct: " + body, ends_turn=True)
        elif word == "fail":
            await self._end(req, pb.OUTCOME_FAILURE, "the agent broke")
        elif word == "slow":
            ev = self._slow.setdefault(req.task_id, asyncio.Event())
            await self._send(req, pb.SEND_KIND_PROGRESS, "started")
            await ev.wait()
        else:
            await self._send(req, pb.SEND_KIND_FINAL, "echo: " + body, ends_turn=True)

    async def cancel_turn(self, req: pb.CancelTurnRequest) -> pb.CancelTurnResponse:
        self.cancels.append(req)
        ev = self._slow.get(req.task_id)
        if ev is None:
            return pb.CancelTurnResponse(cancelled=False)
        ev.set()
        return pb.CancelTurnResponse(cancelled=True)

    async def list_tools(self) -> list[pb.ToolDefinition]:
        return list(self.tools)

    async def complete(self, req: pb.CompleteRequest) -> pb.CompleteResponse:
        self.completes.append(req)
        return pb.CompleteResponse(text=self.complete_answer)

    async def record_delegation(self, req: pb.RecordDelegationRequest) -> None:
        self.delegations.append(req)


def proc_environ(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/environ", "rb") as f:
        raw = f.read()
    return dict(kv.decode().split("=", 1) for kv in raw.split(b"\0") if b"=" in kv)


def process_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")
