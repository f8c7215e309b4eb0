"""A scripted model for the stand-in, patched in as ``run_agent.OpenAI``
the way Hermes' own tests fake the model. It answers from the
conversation it is given (so history matters) and calls tools by name.

What the peer wrote (inside the binary's untrusted-input frame) decides:

* ``remember the word W`` → "I will remember W."; ``what word`` → the W of
  an earlier turn in the history, or "I know no word."
* ``book a table`` → "[INPUT_REQUIRED] For how many people?"; the next
  message after that question → "Booked a table for <it>."
* ``long job`` / ``slow …`` → calls the ``long_job`` tool (runs until
  interrupted)
* ``ask AGENT: TEXT`` → calls ``a2a_call`` {"agent": AGENT, "message": TEXT};
  ``progress …`` → calls ``progress_job``; ``report`` → a reply with a
  ``MEDIA:`` file line; ``chart`` → a reply with a Markdown image; after a tool result → "<tool> said: <result>"
* ``crash`` → the model provider raises
* a turn that resumes interrupted work (the gateway's ``[System note: the
  gateway restarted …]`` recovery note alone) → calls ``long_job`` (the work
  goes on); the note before a message → the rules above for the message
* anything else → "echo: <text>"

Every call is recorded (the messages and the tool names offered).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
import uuid
from types import SimpleNamespace
from typing import Any, Optional


def peer_text(content: str) -> str:
    """The peer's words inside the binary's untrusted-input frame."""
    lines = [l for l in (content or "").splitlines()
             if not l.startswith("[A2A UNTRUSTED INPUT") and not l.startswith("(The text below was sent")]
    return "\n".join(lines).strip()


class Calls:
    """What the model was asked, across FakeOpenAI instances."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: list[dict] = []

    def add(self, kw: dict) -> None:
        with self.lock:
            self.requests.append(kw)

    def tools_offered(self, i: int = -1) -> set[str]:
        with self.lock:
            return {t["function"]["name"] for t in (self.requests[i].get("tools") or [])}

    def count(self) -> int:
        with self.lock:
            return len(self.requests)


CALLS = Calls()

#: How the stand-in gateway's recovery note starts (gateway/run.py).
RESUME_NOTE = "[System note: the gateway restarted"


def _message(content: str = "", tool_calls: Optional[list] = None) -> Any:
    return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=content, tool_calls=tool_calls),
                                                    finish_reason="tool_calls" if tool_calls else "stop")])


def _call(name: str, args: dict) -> Any:
    return _message(tool_calls=[SimpleNamespace(id="call_" + uuid.uuid4().hex[:8], type="function",
                                                function=SimpleNamespace(name=name, arguments=json.dumps(args)))])


def brain(messages: list[dict]) -> Any:
    last = messages[-1]
    if last["role"] == "tool":
        call = next(m for m in reversed(messages) if m["role"] == "assistant" and m.get("tool_calls"))
        name = call["tool_calls"][0]["function"]["name"]
        return _message(f"{name} said: {last['content']}")
    text = peer_text(last["content"])
    earlier = [m for m in messages[:-1] if m["role"] in ("user", "assistant")]
    if earlier and earlier[-1]["role"] == "assistant" and earlier[-1]["content"].startswith("[INPUT_REQUIRED]"):
        return _message(f"Booked a table for {text}.")
    m = re.match(r"remember the word (\w+)", text)
    if m:
        return _message(f"I will remember {m[1]}.")
    if text.startswith("what word"):
        for e in reversed(earlier):
            m = re.search(r"remember the word (\w+)", peer_text(e["content"])) if e["role"] == "user" else None
            if m:
                return _message(f"The word was {m[1]}.")
        return _message("I know no word.")
    if text.startswith("book a table"):
        return _message("[INPUT_REQUIRED] For how many people?")
    if text.startswith(RESUME_NOTE):
        note, _, rest = text.partition("]")
        if not rest.strip():
            return _call("long_job", {})  # the auto-resume turn: the interrupted work goes on
        text = peer_text(rest.strip())  # a message after a restart: the note, then the message
    if text.startswith("long job") or text.startswith("slow"):
        return _call("long_job", {})
    if text.startswith("progress"):
        return _call("progress_job", {})
    m = re.match(r"ask (\S+): (.+)", text, re.S)
    if m:
        return _call("a2a_call", {"agent": m[1], "message": m[2]})
    if text.startswith("crash"):
        raise RuntimeError("the model provider is down")
    if text.startswith("chart"):
        return _message("Here is the chart. ![the chart](https://charts.example/q3.png)")
    if text.startswith("report"):
        fd, path = tempfile.mkstemp(prefix="report-", suffix=".txt", dir=os.environ.get("FAKEMODEL_FILES"))
        with os.fdopen(fd, "w") as f:
            f.write("the quarterly report\n")
        return _message(f"Here is the report.\nMEDIA:{path}")
    return _message(f"echo: {text}")


class FakeOpenAI:
    """Stands in for openai.OpenAI(**kw): .chat.completions.create(**kw)."""

    def __init__(self, **kwargs: Any):
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    def _create(self, **kw: Any) -> Any:
        CALLS.add(kw)
        return brain(kw["messages"])
