"""Stand-in for tools.interrupt: interrupts scoped to a thread, so that
interrupting one agent does not stop tools of another."""

from __future__ import annotations

import threading

_interrupted_threads: set[int] = set()
_lock = threading.Lock()


def set_interrupt(active: bool, thread_id: int | None = None) -> None:
    """Set or clear the interrupt of a thread (the current one by default)."""
    tid = thread_id if thread_id is not None else threading.current_thread().ident
    with _lock:
        if active:
            _interrupted_threads.add(tid)
        else:
            _interrupted_threads.discard(tid)


def is_interrupted() -> bool:
    """Whether an interrupt was requested for the current thread."""
    with _lock:
        return threading.current_thread().ident in _interrupted_threads
