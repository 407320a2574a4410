"""SQLite as the shared SQL (:mod:`truthbase.store.sql`) sees it: the thread's connection to
read on, a ``BEGIN IMMEDIATE`` transaction to write in. The file's writer lock serializes every
write, so the advisory locks PostgreSQL takes are no-ops here, and so is ``SKIP LOCKED``."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from ..sql import Connection
from .connection import CHUNK_TEXT, Database

__all__ = ["SQLiteDialect"]


class SQLiteDialect:
    """The :class:`~truthbase.store.sql.Dialect` of one index file."""

    integrity_error: type[Exception] = sqlite3.IntegrityError
    skip_locked = ""
    byte_order = ""  # SQLite compares text by bytes (BINARY) already
    #: SQLite binds at most 32766 parameters a statement (999 before 3.32).
    max_ids = 900
    chunk_text = CHUNK_TEXT

    def __init__(self, db: Database) -> None:
        self._db = db

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self._db.lock:
            yield self._db.conn

    def write(self) -> AbstractContextManager[Connection]:
        return self._db.transaction()

    def lock_documents(self, conn: Connection) -> None:
        """Nothing to do: ``BEGIN IMMEDIATE`` holds the file's writer lock."""

    def lock_owner(self, conn: Connection, owner: str | None) -> None:
        """Nothing to do: ``BEGIN IMMEDIATE`` holds the file's writer lock."""

    def ids_in(self, column: str, ids: Sequence[int]) -> tuple[str, list[Any]]:
        return f"{column} IN ({','.join('?' * len(ids))})", list(ids)

    def group_concat(self, expression: str) -> str:
        return f"group_concat({expression}, char(31))"
