"""The SQLite file: its one connection, the lock that serializes it, transactions, and the schema.

Every other module of this package works through a :class:`Database` (its public ``conn``,
``lock`` and :meth:`Database.transaction`), never through a store's private state.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

from ...records import IndexEmbedder
from ..base import StoreError

__all__ = ["ADDITIVE_FROM", "SCHEMA_VERSION", "Database", "index_embedder"]

SCHEMA_VERSION = 7  # 2: sentence windows, title in full text; 3: EPUB reader data; 4: answers;
# 5: segments; 6: token signs; 7: chunk kind and context (tables kept as rows)
#: Versions that the schema script brings up to date in place (it only adds tables).
ADDITIVE_FROM = frozenset({3, 4, 5, 6})
#: Seconds a statement waits for another connection's (or process's) write lock.
BUSY_TIMEOUT_S = 30.0


def _schema_script() -> str:
    return resources.files(__package__).joinpath("schema.sql").read_text("utf-8")


class Database:
    """One connection to the index file (WAL, foreign keys on), shared by threads under
    ``lock``; any number of these, in any number of processes, may share the file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if path.parent and not path.parent.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.conn = sqlite3.connect(
                path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_S
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the index {path}: {exc}") from exc
        self.lock = threading.RLock()
        try:
            self._migrate()
        except BaseException:
            self.conn.close()
            raise

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` .. ``COMMIT`` under the lock (SQLite's writer lock serializes
        writers across connections and processes); ROLLBACK on any exception."""
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    def generation(self) -> int:
        """Bumped by every document write (caches of the vectors compare it)."""
        row = self.conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
        return int(row[0])

    def _migrate(self) -> None:
        db = self.conn
        try:
            db.execute("PRAGMA journal_mode=WAL")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path} is not a TruthBase index: {exc}") from exc
        db.execute("PRAGMA foreign_keys=ON")
        db.execute("PRAGMA synchronous=NORMAL")
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if tables and "meta" not in tables:
            raise StoreError(f"{self.path} is an SQLite file but not a TruthBase index")
        row = (
            db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if "meta" in tables
            else None
        )
        if row is not None:
            version = int(row[0])
            if version in ADDITIVE_FROM:
                _add_chunk_kind(db)
                db.executescript(_schema_script())
                with self.transaction():
                    db.execute(
                        "UPDATE meta SET value = ? WHERE key = 'schema_version'",
                        (str(SCHEMA_VERSION),),
                    )
                return
            if version != SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path} has schema version {version}, this TruthBase needs "
                    f"{SCHEMA_VERSION}: re-ingest into a new --db"
                )
            return
        # Every statement of the script is IF NOT EXISTS, so a crash between it and the meta
        # row leaves a file that the next open completes.
        db.executescript(_schema_script())
        with self.transaction():
            db.execute(
                "INSERT OR REPLACE INTO meta(key, value) "
                "VALUES ('schema_version', ?), ('generation', '0')",
                (str(SCHEMA_VERSION),),
            )


def _add_chunk_kind(db: sqlite3.Connection) -> None:
    """Version 7's chunk columns on an older file (its full-text view reads them)."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(chunks)")}
    if "kind" in columns:
        return
    db.executescript(
        "BEGIN; "
        "ALTER TABLE chunks ADD COLUMN kind TEXT NOT NULL DEFAULT 'text' "
        "CHECK (kind IN ('text', 'table')); "
        "ALTER TABLE chunks ADD COLUMN context TEXT NOT NULL DEFAULT ''; "
        "DROP VIEW IF EXISTS chunks_fts_content; "
        "COMMIT;"
    )


def index_embedder(conn: sqlite3.Connection) -> IndexEmbedder | None:
    """The embedder recorded by the first document write (the caller holds the lock)."""
    rows = dict(
        conn.execute(
            "SELECT key, value FROM meta WHERE key IN ('embedder', 'embedding_dim')"
        ).fetchall()
    )
    if "embedder" not in rows:
        return None
    return IndexEmbedder(model_id=rows["embedder"], dim=int(rows["embedding_dim"]))
