"""Stand-in for Hermes' run_agent: the AIAgent loop and its OpenAI client.

``OpenAI`` is the symbol Hermes' own tests patch (``patch("run_agent.OpenAI",
…)``) to fake the model: an object with ``.chat.completions.create(**kw)``
returning a completion whose message may carry ``tool_calls``. Tools run on
the agent's thread (one call) or a thread pool (several), each through the
tool registry; ``interrupt()`` stops the loop at its next check and flags
the agent's (and its tool workers') threads, so ``tools.interrupt
.is_interrupted()`` answers True inside a running tool.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import json
import logging
import os
import threading
from typing import Any, Optional

from tools.interrupt import set_interrupt
from tools.registry import registry

logger = logging.getLogger(__name__)


class _OpenAIUnavailable:
    """Placeholder until a test patches run_agent.OpenAI."""

    def __init__(self, **kwargs: Any):
        raise RuntimeError("run_agent.OpenAI is not patched: the stand-in has no model")


OpenAI: Any = _OpenAIUnavailable


class AIAgent:
    """One conversation's agent loop."""

    def __init__(self, model: str = "stand-in-model", enabled_tools: Optional[set] = None, session_id: str = "",
                 platform: str = "", max_iterations: int = 30, system_prompt: str = "", api_max_retries: int = 3):
        self.model = model
        self.enabled_tools = set(enabled_tools or ())
        self.session_id = session_id
        self.platform = platform
        self.max_iterations = max_iterations
        self.system_prompt = system_prompt
        self.api_max_retries = api_max_retries
        self.client = OpenAI(api_key=os.getenv("OPENROUTER_API_KEY", "stand-in"), base_url="https://stand-in.invalid/v1")
        self._interrupt_requested = threading.Event()
        self._interrupt_message: Optional[str] = None
        self._execution_thread_id: Optional[int] = None
        self._tool_worker_threads: set[int] = set()
        self._tool_worker_threads_lock = threading.Lock()

    def interrupt(self, message: Optional[str] = None, *, hard_cancel: bool = False) -> None:
        """Ask the loop to stop (callable from any thread)."""
        self._interrupt_message = message
        self._interrupt_requested.set()
        if self._execution_thread_id is not None:
            set_interrupt(True, self._execution_thread_id)
        with self._tool_worker_threads_lock:
            for tid in self._tool_worker_threads:
                set_interrupt(True, tid)

    def is_interrupted(self) -> bool:
        return self._interrupt_requested.is_set()

    def _run_tool(self, name: str, args: dict, task_id: str, user_task: Any = None) -> str:
        tid = threading.current_thread().ident
        if tid != self._execution_thread_id:
            with self._tool_worker_threads_lock:
                self._tool_worker_threads.add(tid)
            if self.is_interrupted():
                set_interrupt(True, tid)
        try:
            return registry.dispatch(name, args, task_id=task_id, session_id=self.session_id, user_task=user_task)
        finally:
            if tid != self._execution_thread_id:
                with self._tool_worker_threads_lock:
                    self._tool_worker_threads.discard(tid)
                set_interrupt(False, tid)

    def run_conversation(self, user_message: Any, system_message: Optional[str] = None,
                         conversation_history: Optional[list] = None, task_id: Optional[str] = None,
                         stream_callback: Any = None, persist_user_message: Any = None, **kwargs: Any) -> dict:
        """Run the model (and its tool calls) on user_message. Returns
        {"final_response", "messages", "api_calls", "completed",
        "interrupted"} plus "interrupt_message" when an interrupt carried
        one, "failed"/"error" when the provider kept failing (the
        final_response then says so). An interrupted turn has no
        final_response. Tool handlers get task_id (the session's id in the
        gateway), session_id and user_task."""
        self._execution_thread_id = threading.current_thread().ident
        if self.is_interrupted():
            set_interrupt(True, self._execution_thread_id)
        effective_task_id = task_id or self.session_id
        messages: list[dict] = []
        system = system_message if system_message is not None else self.system_prompt
        if system:
            messages.append({"role": "system", "content": system})
        messages += list(conversation_history or [])
        messages.append({"role": "user", "content": user_message})
        first_new = len(messages) - 1
        tools = registry.get_definitions(self.enabled_tools)
        final: Optional[str] = None
        api_calls = 0
        interrupted = failed = False
        error: Optional[str] = None
        try:
            for _ in range(self.max_iterations):
                if self.is_interrupted():
                    interrupted = True
                    break
                kw: dict[str, Any] = {"model": self.model, "messages": messages, "stream": False}
                if tools:
                    kw["tools"] = tools
                resp = None
                for attempt in range(self.api_max_retries + 1):
                    try:
                        resp = self.client.chat.completions.create(**kw)
                        break
                    except Exception as e:
                        error = f"{type(e).__name__}: {e}"
                        if self.is_interrupted():
                            break
                api_calls += 1
                if resp is None:
                    if self.is_interrupted():
                        interrupted = True
                        break
                    failed = True
                    final = f"API call failed after {self.api_max_retries} retries: {error}"
                    break
                error = None
                msg = resp.choices[0].message
                calls = list(getattr(msg, "tool_calls", None) or [])
                if not calls:
                    final = msg.content or ""
                    messages.append({"role": "assistant", "content": final})
                    break
                messages.append({"role": "assistant", "content": msg.content or "", "tool_calls": [
                    {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
                    for c in calls]})

                def one(c: Any) -> str:
                    if c.function.name not in self.enabled_tools:
                        return json.dumps({"error": f"Tool '{c.function.name}' is not available in this session"})
                    try:
                        args = json.loads(c.function.arguments or "{}")
                    except ValueError as e:
                        return json.dumps({"error": f"invalid tool arguments: {e}"})
                    return self._run_tool(c.function.name, args, effective_task_id, user_message)

                if len(calls) == 1:
                    results = [one(calls[0])]
                else:
                    base = contextvars.copy_context()  # the session's variables, for each worker
                    with concurrent.futures.ThreadPoolExecutor(max_workers=min(8, len(calls))) as pool:
                        results = list(pool.map(lambda c: base.copy().run(one, c), calls))
                for c, r in zip(calls, results):
                    messages.append({"role": "tool", "tool_call_id": c.id, "content": r})
        finally:
            set_interrupt(False, self._execution_thread_id)
        logger.info("run_conversation of %s ended (interrupted=%s)", self.session_id, interrupted)
        result: dict[str, Any] = {"final_response": None if interrupted else final, "messages": messages[first_new:],
                                  "api_calls": api_calls, "completed": not (interrupted or failed),
                                  "interrupted": interrupted}
        if failed:
            result.update(failed=True, error=error)
        if interrupted and self._interrupt_message:
            result["interrupt_message"] = self._interrupt_message
        self._interrupt_requested.clear()
        self._interrupt_message = None
        return result
