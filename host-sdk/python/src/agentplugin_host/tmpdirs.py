"""Private temporary directories (for Unix sockets) that name the process
owning them, so that a later start can sweep those a killed process left.

A process that is killed (kill -9, an OOM kill) cannot remove its socket
directories; without a sweep every such death leaves one in the temporary
directory. ``make_owned_dir`` writes the owner's pid into the directory
(``owner.pid``); ``sweep_dead`` removes the directories of a prefix whose
owner is gone, and only those: a directory without the marker, of another
user, or whose owner runs (or whose pid another process took since) is
left alone.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from typing import Optional

OWNER_FILE = "owner.pid"


def make_owned_dir(prefix: str) -> str:
    """A new 0700 directory in the temporary directory, naming this process
    as its owner. Directories of the same prefix that dead processes left
    are swept first."""
    sweep_dead(prefix)
    d = tempfile.mkdtemp(prefix=prefix)
    with open(os.path.join(d, OWNER_FILE), "w") as f:
        f.write(f"{os.getpid()}\n")
    return d


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process has that pid: not ours to judge dead
    return True


def _owner(d: str) -> Optional[int]:
    try:
        with open(os.path.join(d, OWNER_FILE)) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def sweep_dead(prefix: str, root: Optional[str] = None, log: Optional[logging.Logger] = None) -> list[str]:
    """Remove the directories ``<root>/<prefix>*`` of this user whose owner
    process is dead; returns those removed."""
    root = root or tempfile.gettempdir()
    removed: list[str] = []
    try:
        names = [n for n in os.listdir(root) if n.startswith(prefix)]
    except OSError:
        return removed
    uid = os.getuid()
    for n in names:
        d = os.path.join(root, n)
        try:
            st = os.lstat(d)
        except OSError:
            continue
        if not os.path.isdir(d) or os.path.islink(d) or st.st_uid != uid:
            continue
        pid = _owner(d)
        if pid is None or pid <= 0 or pid == os.getpid() or _alive(pid):
            continue
        shutil.rmtree(d, ignore_errors=True)
        removed.append(d)
        (log or logging.getLogger("agentplugin_host")).info(
            "removed %s, left by process %d, which is gone", d, pid)
    return removed
