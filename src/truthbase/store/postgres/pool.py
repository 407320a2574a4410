"""Connections to PostgreSQL: a small pool, each connection set up once (autocommit, the
``truthbase`` schema first on the search path), handed out one per caller."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from ..base import StoreError

__all__ = ["Connection", "Pool"]

Connection = Any  # psycopg.Connection[tuple[Any, ...]]

_SEARCH_PATH = "SET search_path TO truthbase, public, extensions"


class Pool:
    """At most ``size`` connections; :meth:`connection` borrows one (a broken one is replaced,
    an open transaction rolled back before the next caller gets it)."""

    def __init__(self, url: str, size: int) -> None:
        if size < 1:
            raise ValueError("pool_size must be >= 1")
        self.url = url
        self._idle: list[Connection] = []
        self._all: list[Connection] = []
        self._slots = threading.BoundedSemaphore(size)
        self._lock = threading.Lock()
        self._closed = False

    def _connect(self) -> Connection:
        try:
            conn = psycopg.connect(self.url, autocommit=True, connect_timeout=30)
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to the database: {exc}") from exc
        conn.execute(_SEARCH_PATH)
        return conn

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        if self._closed:
            raise StoreError("the store is closed")
        self._slots.acquire()
        conn: Connection | None = None
        try:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None or conn.closed:
                conn = self._connect()
                with self._lock:
                    self._all.append(conn)
            yield conn
        finally:
            if conn is not None:
                healthy = not conn.closed and not conn.broken
                if healthy and conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                    try:
                        conn.rollback()
                    except psycopg.Error:
                        healthy = False
                with self._lock:
                    if healthy and not self._closed:
                        self._idle.append(conn)
                    else:
                        if conn in self._all:
                            self._all.remove(conn)
                        conn.close()
            self._slots.release()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            conns, self._all, self._idle = self._all, [], []
        for conn in conns:
            conn.close()
