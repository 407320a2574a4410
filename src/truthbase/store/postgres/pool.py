"""Connections to PostgreSQL: a small pool, each connection set up once (autocommit, the
``truthbase`` schema first on the search path, a statement timeout), handed out one per caller.

A server that restarts or goes away must give a clear error, never a hang: connecting waits at
most ``connect_timeout_s``, a statement at most ``statement_timeout_s``, a connection lost under
a caller is a :class:`~truthbase.store.base.StoreError` that says so (the server answers 503),
and a connection that sat idle is checked before it is handed out again (one that died with a
restart is replaced, so the first request after a restart does not fail on it).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import psycopg

from ..base import StoreError, StoreUnavailable
from ..sql import Cursor

__all__ = ["Connection", "Pool", "QmarkConnection"]

Connection = Any  # psycopg.Connection[tuple[Any, ...]]

_SEARCH_PATH = "SET search_path TO truthbase, public, extensions"
#: An idle connection older than this is pinged before reuse (a restart takes longer).
_PING_AFTER_S = 1.0


class Pool:
    """At most ``size`` connections; :meth:`connection` borrows one (a broken one is replaced,
    an open transaction rolled back before the next caller gets it)."""

    def __init__(
        self,
        url: str,
        size: int,
        *,
        connect_timeout_s: float = 10.0,
        statement_timeout_s: float = 300.0,
    ) -> None:
        if size < 1:
            raise ValueError("pool_size must be >= 1")
        self.url = url
        self.connect_timeout_s = connect_timeout_s
        self.statement_timeout_s = statement_timeout_s
        self._idle: list[tuple[Connection, float]] = []  # with when each was given back
        self._all: list[Connection] = []
        self._slots = threading.BoundedSemaphore(size)
        self._lock = threading.Lock()
        self._closed = False

    def _connect(self) -> Connection:
        try:
            conn = psycopg.connect(
                self.url,
                autocommit=True,
                connect_timeout=max(1, round(self.connect_timeout_s)),
                options=f"-c statement_timeout={round(self.statement_timeout_s * 1000)}",
            )
            conn.execute(_SEARCH_PATH)
        except psycopg.Error as exc:
            raise StoreUnavailable(f"cannot connect to the database: {exc}") from exc
        return conn

    @staticmethod
    def _alive(conn: Connection) -> bool:
        try:
            conn.execute("SELECT 1")
        except psycopg.Error:
            return False
        return True

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        if self._closed:
            raise StoreError("the store is closed")
        self._slots.acquire()
        conn: Connection | None = None
        try:
            with self._lock:
                conn, since = self._idle.pop() if self._idle else (None, 0.0)
            stale = conn is not None and time.monotonic() - since > _PING_AFTER_S
            if conn is not None and not conn.closed and stale and not self._alive(conn):
                self._discard(conn)  # died idle (a server restart): a fresh one instead
                conn = None
            if conn is None or conn.closed:
                conn = self._connect()
                with self._lock:
                    self._all.append(conn)
            try:
                yield conn
            except psycopg.OperationalError as exc:
                # The connection was lost (the server restarted or stopped), or the statement
                # ran past statement_timeout: the caller's work did not happen.
                raise StoreUnavailable(f"the database did not answer: {exc}".strip()) from exc
        finally:
            if conn is not None:
                healthy = not conn.closed and not conn.broken
                if healthy and conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                    try:
                        conn.rollback()
                    except psycopg.Error:
                        healthy = False
                if healthy and not self._closed:
                    with self._lock:
                        self._idle.append((conn, time.monotonic()))
                else:
                    self._discard(conn)
            self._slots.release()

    def _discard(self, conn: Connection) -> None:
        with self._lock:
            if conn in self._all:
                self._all.remove(conn)
        conn.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            conns, self._all, self._idle = self._all, [], []
        for conn in conns:
            conn.close()


@lru_cache(maxsize=512)
def _pyformat(sql: str) -> str:
    """``?`` placeholders as psycopg's ``%s`` (a literal ``%`` doubled)."""
    return sql.replace("%", "%%").replace("?", "%s")


class QmarkConnection:
    """A psycopg connection that takes the shared SQL's ``?`` placeholders."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Cursor:
        if not parameters:  # psycopg reads no placeholders (nor %%) without parameters
            return self.conn.execute(sql)  # type: ignore[no-any-return]
        return self.conn.execute(_pyformat(sql), parameters)  # type: ignore[no-any-return]

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> None:
        with self.conn.cursor() as cursor:
            cursor.executemany(_pyformat(sql), list(rows))
