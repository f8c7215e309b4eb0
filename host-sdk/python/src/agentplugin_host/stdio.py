"""A plugin's output: its stderr (hclog JSON lines), what it writes to its
stdout after the handshake, and go-plugin's StreamStdio copy of both.

All of it is drained as long as the process lives — a pipe nobody reads
would stop the plugin at its next write — and turned into log records of
the host. The last lines of stderr are kept for crash reports.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import deque
from dataclasses import dataclass
from typing import Callable, Optional

#: How many lines of a plugin's stderr are kept for crash reports.
STDERR_LINES = 50

_LEVELS = {
    "trace": logging.DEBUG,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


def readable_log_line(line: str) -> tuple[str, str]:
    """Render an hclog JSON line as ``level: message k=v …`` and return it
    with its level; any other line comes back unchanged with level ""."""
    if not line.startswith("{"):
        return line, ""
    try:
        m = json.loads(line)
    except ValueError:
        return line, ""
    if not isinstance(m, dict) or not isinstance(m.get("@message"), str):
        return line, ""
    level = m.get("@level") if isinstance(m.get("@level"), str) else ""
    out = (level + ": " if level else "") + m["@message"]
    for k in sorted(k for k in m if not k.startswith("@")):
        out += f" {k}={m[k]}"
    return out, level


def log_level_of(level: str) -> int:
    """The logging level of an hclog level name (INFO when unknown)."""
    return _LEVELS.get(level.lower(), logging.INFO)


@dataclass
class _RingLine:
    seq: int
    text: str
    notable: bool  # not an hclog line below warn: worth a crash report


class LineRing:
    """The last lines of a plugin's stderr, across its restarts."""

    def __init__(self, size: int = STDERR_LINES):
        self._lines: deque[_RingLine] = deque(maxlen=size)
        self._seq = 0
        self._mu = threading.Lock()

    def mark(self) -> int:
        """A position: lines added later have seq >= mark."""
        with self._mu:
            return self._seq

    def add(self, line: str) -> None:
        """Keep one line (blank lines are dropped)."""
        line = line.rstrip("\r")
        if not line.strip():
            return
        text, level = readable_log_line(line)
        with self._mu:
            self._lines.append(_RingLine(self._seq, text, level in ("", "warn", "warning", "error")))
            self._seq += 1

    def tail(self, n: int = 0) -> list[str]:
        """The last n lines, oldest first (all of them when n <= 0)."""
        return self._select(n, 0, False)

    def notable_since(self, mark: int, n: int) -> list[str]:
        """The last n notable lines added at or after mark: what a crash
        report should quote."""
        return self._select(n, mark, True)

    def _select(self, n: int, mark: int, notable_only: bool) -> list[str]:
        with self._mu:
            out = [l.text for l in self._lines if l.seq >= mark and (l.notable or not notable_only)]
        if n > 0:
            out = out[-n:]
        return out


class LineSplitter:
    """Feeds every complete line written to it to fn; an unterminated tail
    waits for the next write."""

    def __init__(self, fn: Callable[[str], None]):
        self._fn = fn
        self._partial = b""

    def write(self, data: bytes) -> None:
        data = self._partial + data
        *lines, self._partial = data.split(b"\n")
        for raw in lines:
            line = raw.decode("utf-8", "replace").rstrip("\r")
            if line:
                self._fn(line)

    def flush(self) -> None:
        """Hand over an unterminated last line (at EOF)."""
        if self._partial:
            line, self._partial = self._partial.decode("utf-8", "replace"), b""
            if line.strip():
                self._fn(line)


def log_plugin_line(logger: logging.Logger, line: str, source: str) -> None:
    """Log one line a plugin wrote: an hclog line at its own level with its
    fields, anything else at INFO naming where it came from."""
    text, level = readable_log_line(line)
    if level:
        logger.log(log_level_of(level), "%s", text)
    else:
        logger.info("plugin wrote to %s: %s", source, text)


def stderr_sink(logger: logging.Logger, ring: Optional[LineRing]) -> Callable[[str], None]:
    """The line handler of a plugin's stderr: keep it, then log it."""

    def sink(line: str) -> None:
        if ring is not None:
            ring.add(line)
        log_plugin_line(logger, line, "stderr")

    return sink
