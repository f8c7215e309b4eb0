"""Call streams (contract 1.2): many calls of one kind over one long-lived
bidirectional stream instead of one unary RPC each.

The host uses them both ways: it calls the plugin's ``Send`` over
``PlatformAdapterService.SendStream`` (when the plugin's Describe says 1.2
or later), and serves the plugin's ``HandleMessage`` calls on
``HostService.HandleMessages`` (the plugin opens it when the host's
``ConfigureRequest.host.protocol_minor`` is at least 2).

A call on a stream means exactly what the unary RPC means and fails with
the same code and message (``CallError``). Calls are matched to answers by
``call_id``, in any order. The caller's deadline travels with the call
(``timeout_ms``); a caller that stops waiting sends a ``cancel`` envelope,
and the served call is cancelled as a unary handler would be. The rules of
plugin/callstream.go hold here too: the stream is opened by the first call
and again after it breaks; one writer task sends the envelopes and no
caller waits longer than its own timeout; calls already sent when the
stream breaks fail UNAVAILABLE (outcome unknown, never resent), calls not
yet sent are made as unary RPCs; a callee that answers the stream
UNIMPLEMENTED before answering anything, or three streams in a row that end
before answering anything, make the caller use unary RPCs for good; a
request over 256 KiB goes as a unary RPC.
"""

from __future__ import annotations

import asyncio
import logging
import math
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Generic, Optional, TypeVar

import grpc

from .errors import Cancelled, DeadlineExceeded, StatusError, Unavailable, code_of, status_error, to_status

In = TypeVar("In")
Out = TypeVar("Out")

#: The largest request sent on a call stream; larger ones go unary.
CALL_STREAM_MAX_BYTES = 256 << 10
#: Streams in a row that may end without a single answer before the caller
#: gives up on streams.
MAX_DEAD_STREAMS = 3
#: How many envelopes may wait for a stream's writer.
CALL_QUEUE = 256


class _UseUnary(Exception):
    """The call should be made as a unary RPC."""


def timeout_ms(timeout: Optional[float]) -> int:
    """What is left of a timeout in whole milliseconds, rounded up; 0 for
    none."""
    if timeout is None:
        return 0
    return max(1, min(int(math.ceil(timeout * 1000)), 2**32 - 1))


@dataclass
class _Pending:
    fut: "asyncio.Future[Any]"
    sent: bool = False


@dataclass
class _Conn:
    call: Any  # grpc.aio.StreamStreamCall
    queue: "asyncio.Queue[tuple[int, Any, bool]]" = field(default_factory=lambda: asyncio.Queue(CALL_QUEUE))
    pending: Optional[dict[int, _Pending]] = field(default_factory=dict)
    answered: bool = False
    tasks: list[asyncio.Task] = field(default_factory=list)
    done: asyncio.Event = field(default_factory=asyncio.Event)


class CallStreamClient(Generic[In, Out]):
    """Makes calls of one kind over a call stream, falling back to unary.

    open opens a new stream call; wrap builds the envelope of a call,
    cancel_envelope the envelope cancelling an id; unary makes the same
    call as a unary RPC (the fallback); response/error read an answer
    envelope."""

    def __init__(
        self,
        open: Callable[[], Any],
        wrap: Callable[[int, int, In], Any],
        cancel_envelope: Callable[[int], Any],
        unary: Callable[[In, Optional[float]], Awaitable[Out]],
        logger: Optional[logging.Logger] = None,
    ):
        self._open = open
        self._wrap = wrap
        self._cancel = cancel_envelope
        self._unary = unary
        self._log = logger or logging.getLogger(__name__)
        self._cur: Optional[_Conn] = None
        self._next = 0
        self._dead = 0
        self._fallback = False
        self._closed = False

    @property
    def fallen_back(self) -> bool:
        """Whether calls go as unary RPCs for good."""
        return self._fallback

    async def call(self, req: In, timeout: Optional[float] = None) -> Out:
        """Make one call and wait for its answer, at most timeout seconds."""
        if self._closed:
            raise Cancelled("the connection is closed")
        if self._fallback or req.ByteSize() > CALL_STREAM_MAX_BYTES:  # type: ignore[attr-defined]
            return await self._unary(req, timeout)
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        cc = self._conn()
        self._next += 1
        cid = self._next
        p = _Pending(loop.create_future())
        assert cc.pending is not None
        cc.pending[cid] = p
        try:
            left = None if deadline is None else max(deadline - loop.time(), 0.001)
            cc.queue.put_nowait((cid, self._wrap(cid, timeout_ms(left), req), False))
        except asyncio.QueueFull:
            # The writer is behind by CALL_QUEUE envelopes: a unary call
            # does not wait for it.
            cc.pending.pop(cid, None)
            return await self._unary(req, timeout)
        try:
            left = None if deadline is None else max(deadline - loop.time(), 0)
            out = await asyncio.wait_for(asyncio.shield(p.fut), left)
        except asyncio.TimeoutError:
            self._abandon(cc, cid)
            raise DeadlineExceeded("the call's deadline passed before the plugin answered") from None
        except asyncio.CancelledError:
            self._abandon(cc, cid)
            raise
        except _UseUnary:
            left = None if deadline is None else max(deadline - loop.time(), 0.001)
            return await self._unary(req, left)
        return out

    def _conn(self) -> _Conn:
        if self._cur is not None:
            return self._cur
        cc = _Conn(call=self._open())
        self._cur = cc
        cc.tasks = [asyncio.ensure_future(self._write(cc)), asyncio.ensure_future(self._receive(cc))]
        return cc

    async def _write(self, cc: _Conn) -> None:
        while True:
            cid, env, is_cancel = await cc.queue.get()
            if not is_cancel:
                p = cc.pending.get(cid) if cc.pending is not None else None
                if p is None:
                    continue  # its caller gave up before its turn: never sent
                p.sent = True
            try:
                await cc.call.write(env)
            except (grpc.RpcError, asyncio.InvalidStateError, RuntimeError):
                # The stream ended: _receive learns why and answers the
                # calls still pending, this one included.
                return

    async def _receive(self, cc: _Conn) -> None:
        err: Optional[BaseException] = None
        try:
            while True:
                resp = await cc.call.read()
                if resp is grpc.aio.EOF:
                    break
                cc.answered = True
                self._dead = 0
                p = cc.pending.pop(resp.call_id, None) if cc.pending is not None else None
                if p is None or p.fut.done():
                    continue
                if resp.HasField("error"):
                    p.fut.set_exception(status_error(code_of(resp.error.code), resp.error.message))
                else:
                    p.fut.set_result(resp.response)
        except asyncio.CancelledError:
            err = Cancelled("the connection is closed")
        except grpc.RpcError as e:
            err = e
        except Exception as e:  # pragma: no cover - defensive
            err = e
        self._end(cc, err)

    def _end(self, cc: _Conn, err: Optional[BaseException]) -> None:
        if self._cur is cc:
            self._cur = None
        code = err.code() if isinstance(err, grpc.RpcError) and hasattr(err, "code") else None
        refused = code == grpc.StatusCode.UNIMPLEMENTED and not cc.answered
        if refused:
            self._fallback = True
            failure: BaseException = _UseUnary()
        elif err is None:
            failure = Unavailable("the call stream ended (the other side closed it); the call's outcome is unknown")
        elif isinstance(err, StatusError):
            failure = err
        else:
            failure = Unavailable(f"the call stream broke ({_describe(err)}); the call's outcome is unknown")
        if not cc.answered and not self._closed:
            self._dead += 1
            if self._dead >= MAX_DEAD_STREAMS:
                self._fallback = True
        pending, cc.pending = cc.pending or {}, None
        cc.done.set()
        for t in cc.tasks:
            if t is not asyncio.current_task():
                t.cancel()
        try:
            cc.call.cancel()
        except Exception:  # pragma: no cover - already over
            pass
        for p in pending.values():
            if p.fut.done():
                continue
            p.fut.set_exception(failure if p.sent else _UseUnary())

    def _abandon(self, cc: _Conn, cid: int) -> None:
        """Drop a call whose caller stopped waiting; one already sent is
        cancelled on the callee's side too (if the writer's queue is full
        the cancel is dropped and the call's deadline still bounds it)."""
        if cc.pending is None:
            return
        p = cc.pending.pop(cid, None)
        if p is not None and p.sent:
            try:
                cc.queue.put_nowait((cid, self._cancel(cid), True))
            except asyncio.QueueFull:
                pass
        if p is not None and not p.fut.done():
            p.fut.cancel()

    async def close(self) -> None:
        """End the open stream, if any; later calls fail."""
        self._closed = True
        cc = self._cur
        if cc is not None:
            self._end(cc, Cancelled("the connection is closed"))
            await asyncio.gather(*cc.tasks, return_exceptions=True)


def _describe(err: BaseException) -> str:
    if isinstance(err, grpc.RpcError) and hasattr(err, "code"):
        return f"{err.code().name}: {err.details()}"
    return str(err)


def call_error(err: BaseException) -> tuple[int, str]:
    """The CallError code and message of a failed served call."""
    code, msg = to_status(err)
    return code.value[0], msg


async def serve_calls(
    context: Any,
    handle: Callable[[Any], Awaitable[Any]],
    wrap: Callable[[int, Any, Optional[tuple[int, str]]], Any],
    method: str,
    logger: logging.Logger,
) -> None:
    """Serve one call stream (grpc.aio read/write API): every request
    envelope is handled as handle handles the unary call, concurrently and
    answered in any order, with the caller's deadline and a cancel envelope
    cancelling it; answers are written one at a time. When the caller ends
    the stream, the calls still running are answered before this returns;
    when the stream itself is cancelled, they are cancelled."""
    running: dict[int, asyncio.Task] = {}
    cancelled: set[int] = set()
    write_lock = asyncio.Lock()

    async def run(cid: int, req: Any, ms: int) -> None:
        try:
            if ms > 0:
                out = await asyncio.wait_for(handle(req), ms / 1000)
            else:
                out = await handle(req)
            resp = wrap(cid, out, None)
        except asyncio.CancelledError:
            if cid in cancelled:
                return  # the caller stopped waiting: no answer
            raise
        except asyncio.TimeoutError:
            resp = wrap(cid, None, (grpc.StatusCode.DEADLINE_EXCEEDED.value[0], f"{method}: the caller's deadline passed"))
        except Exception as e:
            if not isinstance(e, StatusError):
                logger.error("%s: a call raised; answering it as failed", method, exc_info=True)
            resp = wrap(cid, None, call_error(e))
        async with write_lock:
            try:
                await context.write(resp)
            except Exception:
                pass  # the stream is gone; the caller's calls fail on its side

    try:
        while True:
            env = await context.read()
            if env is grpc.aio.EOF:
                break
            cid = env.call_id
            if env.cancel:
                t = running.get(cid)
                if t is not None:
                    cancelled.add(cid)
                    t.cancel()
                continue
            t = asyncio.ensure_future(run(cid, env.request, env.timeout_ms))
            running[cid] = t
            t.add_done_callback(lambda _t, cid=cid: (running.pop(cid, None), cancelled.discard(cid)))
        if running:
            await asyncio.gather(*list(running.values()), return_exceptions=True)
    finally:
        for t in list(running.values()):
            t.cancel()
