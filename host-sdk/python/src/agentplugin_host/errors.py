"""Errors of the host SDK, and the gRPC codes that carry them across.

A call that fails on the other side arrives as a :class:`StatusError` whose
class says what went wrong (:class:`UnknownTool`, :class:`InvalidArgument`,
…), mirroring the Go sentinels of package ``plugin`` (``ErrUnknownTool`` …).
A host's callback raises the same classes to answer with that code; any
other exception becomes ``UNKNOWN`` with its message.
"""

from __future__ import annotations

from typing import Optional

import grpc


class PluginError(Exception):
    """Base of every error this package raises."""


class HandshakeError(PluginError):
    """An executable did not complete the go-plugin handshake: not a plugin,
    a plugin of another protocol major, or one that exited or stayed silent
    past the start timeout. Such candidates are skipped."""


class PluginUnavailable(PluginError):
    """A call was made through a plugin handle while the plugin had no
    running process: starting, restarting after a crash, failed or stopped."""

    def __init__(self, plugin: str, why: str, cause: Optional[BaseException] = None):
        super().__init__(f"plugin {plugin!r} is unavailable ({why})")
        self.plugin = plugin
        self.why = why
        self.__cause__ = cause


class NoResult(PluginError):
    """The plugin ended a tool call without sending a result, which a
    conforming plugin never does."""


class StatusError(PluginError):
    """A call failed with a gRPC status: ``code`` and ``message`` are what
    the other side sent (or, raised by a host callback, what it sends)."""

    #: The code of the class; StatusError itself carries any code.
    default_code: grpc.StatusCode = grpc.StatusCode.UNKNOWN

    def __init__(self, message: str, code: Optional[grpc.StatusCode] = None):
        super().__init__(message)
        self.message = message
        self.code = code if code is not None else self.default_code

    def __str__(self) -> str:
        """The other side's message as it wrote it; transport and runtime
        codes keep a word of the code ("unavailable: …"), which says more
        than their message alone (as the Go side's errors read)."""
        if self.code in _PLAIN_CODES:
            return self.message
        return self.code.name.lower().replace("_", " ") + ": " + self.message


class UnknownTool(StatusError):
    """CallTool named a tool the toolset does not have (``NOT_FOUND``)."""

    default_code = grpc.StatusCode.NOT_FOUND


class InvalidArgument(StatusError):
    """A request, its arguments or the configuration are wrong
    (``INVALID_ARGUMENT``)."""

    default_code = grpc.StatusCode.INVALID_ARGUMENT


class NotReady(StatusError):
    """The call needs an earlier step first, e.g. Send before Connect
    (``FAILED_PRECONDITION``)."""

    default_code = grpc.StatusCode.FAILED_PRECONDITION


class Unimplemented(StatusError):
    """An optional RPC the other side does not offer (``UNIMPLEMENTED``)."""

    default_code = grpc.StatusCode.UNIMPLEMENTED


class Cancelled(StatusError):
    """The call was cancelled (``CANCELLED``)."""

    default_code = grpc.StatusCode.CANCELLED


class DeadlineExceeded(StatusError):
    """The call ran out of time (``DEADLINE_EXCEEDED``)."""

    default_code = grpc.StatusCode.DEADLINE_EXCEEDED


class Unavailable(StatusError):
    """The connection failed or broke; the call's outcome is unknown
    (``UNAVAILABLE``)."""

    default_code = grpc.StatusCode.UNAVAILABLE


_PLAIN_CODES = frozenset({
    grpc.StatusCode.UNKNOWN, grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.ALREADY_EXISTS,
})

_BY_CODE = {
    cls.default_code: cls
    for cls in (UnknownTool, InvalidArgument, NotReady, Unimplemented, Cancelled, DeadlineExceeded, Unavailable)
}


def status_error(code: grpc.StatusCode, message: str) -> StatusError:
    """The StatusError subclass for code, carrying message."""
    return _BY_CODE.get(code, StatusError)(message, code)


def code_of(n: int) -> grpc.StatusCode:
    """The grpc.StatusCode of a google.rpc.Code number (UNKNOWN when it is
    none)."""
    return _BY_NUMBER.get(n, grpc.StatusCode.UNKNOWN)


_BY_NUMBER = {c.value[0]: c for c in grpc.StatusCode}


def from_rpc_error(err: grpc.RpcError) -> StatusError:
    """Turn a gRPC error into the StatusError of its code."""
    code = err.code() if hasattr(err, "code") else grpc.StatusCode.UNKNOWN
    details = err.details() if hasattr(err, "details") else str(err)
    return status_error(code or grpc.StatusCode.UNKNOWN, details or "")


def to_status(err: BaseException) -> tuple[grpc.StatusCode, str]:
    """The code and message a served call answers with for err."""
    if isinstance(err, StatusError):
        return err.code, err.message
    if isinstance(err, grpc.RpcError):
        e = from_rpc_error(err)
        return e.code, e.message
    return grpc.StatusCode.UNKNOWN, f"{type(err).__name__}: {err}"
