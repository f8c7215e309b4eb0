"""An event loop on a thread of its own, for hosts that are not asyncio
programs or whose loop should not carry the plugin traffic.

Everything of this package runs on one asyncio loop: the one
``Manager.start`` ran on. A threaded host (or one whose own loop is busy
with other things, like a chat gateway) starts a LoopThread, runs the
Manager there and calls into it from any thread::

    lt = LoopThread()
    manager = lt.run(start_manager())          # from plain threads
    res = await lt.run_async(manager.call_tool(req))   # from another loop
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Any, Awaitable, Coroutine, Optional, TypeVar

T = TypeVar("T")


class LoopThread:
    """An asyncio loop running forever on a daemon thread until close."""

    def __init__(self, name: str = "agentplugin-host"):
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()
        self._ready.wait()

    def _main(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.call_soon(self._ready.set)
        try:
            self._loop.run_forever()
        finally:
            self._loop.close()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The thread's loop."""
        return self._loop

    def submit(self, coro: Coroutine[Any, Any, T]) -> "concurrent.futures.Future[T]":
        """Schedule coro on the loop and return a thread-safe future."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: Optional[float] = None) -> T:
        """Run coro on the loop and wait for its result from this (other)
        thread. Calling it on the loop's own thread would wait forever, so
        that is refused."""
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("LoopThread.run called on the loop's own thread; await the coroutine instead")
        return self.submit(coro).result(timeout)

    async def run_async(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run coro on this thread's loop and await it from another loop.
        Cancelling the awaiting task cancels coro."""
        if asyncio.get_running_loop() is self._loop:
            return await coro
        return await asyncio.wrap_future(self.submit(coro))

    def close(self, timeout: float = 5.0) -> None:
        """Stop the loop (tasks still running on it are abandoned) and wait
        for the thread."""
        if self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)


async def await_on(loop: asyncio.AbstractEventLoop, coro: Awaitable[T]) -> T:
    """Await coro on loop from whatever loop the caller runs on (the same
    loop: directly)."""
    if asyncio.get_running_loop() is loop:
        return await coro
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop))  # type: ignore[arg-type]
