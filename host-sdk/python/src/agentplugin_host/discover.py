"""Finding plugin candidates in a plugins directory."""

from __future__ import annotations

import logging
import os
import stat
from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Candidate:
    """An executable that may be a plugin; only the handshake tells."""

    #: The file name: the plugin's name until Describe gives the real one.
    name: str
    #: The absolute path of the executable.
    path: str


def discover(directory: str, logger: Optional[logging.Logger] = None) -> list[Candidate]:
    """The executables in directory, sorted by name, without running them.
    Every entry skipped is logged with why: hidden (debug), a directory
    (info), not a regular file or not executable (warning — probably a
    mistake). Symbolic links are followed. An unreadable directory raises
    OSError naming it."""
    log = logger or logging.getLogger(__name__)
    root = os.path.abspath(directory)
    try:
        names = sorted(os.listdir(root))
    except OSError as e:
        raise OSError(f"read plugins directory {root}: {e.strerror} (create it or point the host at the right directory)") from e
    out = []
    for name in names:
        path = os.path.join(root, name)
        if name.startswith("."):
            log.debug("skipping hidden file in plugins directory: %s", path)
            continue
        try:
            st = os.stat(path)
        except OSError as e:
            log.warning("skipping plugin candidate %s: cannot stat it (a dangling symlink?): %s", path, e)
            continue
        if stat.S_ISDIR(st.st_mode):
            log.info("skipping directory in plugins directory (plugins are single executables): %s", path)
        elif not stat.S_ISREG(st.st_mode):
            log.warning("skipping plugin candidate %s: not a regular file", path)
        elif not st.st_mode & 0o111:
            log.warning("skipping plugin candidate %s: not executable (chmod +x it if it is a plugin)", path)
        else:
            out.append(Candidate(name=name, path=path))
    return out
