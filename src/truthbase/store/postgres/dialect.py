"""PostgreSQL as the shared SQL (:mod:`truthbase.store.sql`) sees it: a pooled connection that
takes ``?`` placeholders, a transaction, advisory locks where SQLite's writer lock serializes,
``FOR UPDATE SKIP LOCKED`` for claims, and arrays for lists of ids."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg

from ..sql import Connection
from .pool import Pool, QmarkConnection
from .schema import WRITE_LOCK

__all__ = ["PostgresDialect"]

#: Advisory lock space of upload limits (with the owner's hash as the second key).
_LIMITS_LOCK = 0x7472757468_03 & 0x7FFFFFFF


class PostgresDialect:
    """The :class:`~truthbase.store.sql.Dialect` of one database, over its pool."""

    integrity_error: type[Exception] = psycopg.errors.UniqueViolation
    skip_locked = " FOR UPDATE SKIP LOCKED"
    byte_order = ' COLLATE "C"'  # as SQLite sorts, whatever the database's locale
    max_ids = 100_000  # one array parameter holds them all
    chunk_text = "c.text"  # stored in the chunk's row (PostgreSQL's schema keeps the column)

    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self._pool.connection() as conn:
            yield QmarkConnection(conn)

    @contextmanager
    def write(self) -> Iterator[Connection]:
        with self._pool.connection() as conn, conn.transaction():
            yield QmarkConnection(conn)

    def lock_documents(self, conn: Connection) -> None:
        conn.execute("SELECT pg_advisory_xact_lock(?)", (WRITE_LOCK,))

    def lock_owner(self, conn: Connection, owner: str | None) -> None:
        conn.execute(
            "SELECT pg_advisory_xact_lock(?, hashtext(coalesce(?, '')))", (_LIMITS_LOCK, owner)
        )

    def ids_in(self, column: str, ids: Sequence[int]) -> tuple[str, list[Any]]:
        return f"{column} = ANY(?)", [[int(i) for i in ids]]

    def group_concat(self, expression: str) -> str:
        return f"string_agg({expression}, chr(31))"
