"""Which stored document file the server may serve, and what its messages may say about it.

A document's id is the sha256 of its bytes (:func:`truthbase.ingest.sha256_file`), and its path
was resolved at ingest. The server serves a file only when it is still a regular file at that
exact path, reached through no symbolic link, whose bytes hash to the id: a file replaced since
ingest (by other bytes, or by a link to anything, say an HTML page) is refused, not served under
the document's media type.

Messages to clients never name a server path
(:func:`truthbase.app.redaction.redact_paths`): paths go to the log.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Literal

__all__ = ["FileState", "file_key", "hash_matches"]

FileState = Literal["ok", "gone", "changed"]


def file_key(path: Path) -> tuple[str, int, int, int, int] | None:
    """The identity of the regular file at ``path`` (path, device, inode, mtime, size), or None
    when there is none there or the path passes through a symbolic link."""
    try:
        if os.path.realpath(path) != os.path.abspath(path):
            return None  # a link at the end or on the way
        info = path.lstat()
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return (str(path), info.st_dev, info.st_ino, info.st_mtime_ns, info.st_size)


def hash_matches(path: Path, doc_id: str) -> bool:
    """Whether the bytes at ``path`` hash to ``doc_id``, read without following a link."""
    digest = hashlib.sha256()
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    with os.fdopen(fd, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest() == doc_id
