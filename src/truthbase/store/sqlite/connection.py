"""The SQLite file: a connection per thread, the lock that serializes writers, transactions, and
the schema.

Every other module of this package works through a :class:`Database` (its public ``conn``,
``lock`` and :meth:`Database.transaction`), never through a store's private state. In WAL mode
readers never wait for the writer nor for each other, so each thread reads on its own
connection (``conn`` is the calling thread's) and only writes serialize: in this process on
``Database``'s writer lock, across processes on SQLite's own (``BEGIN IMMEDIATE``). One shared
connection under one lock (before) made every request of the server wait for the one before.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

import numpy as np

from ...text.fulltext import term_string
from ...text.language import detect_document
from ..base import StoreError, StoreFull
from ..boxes import repacked
from ..codec import vector_code_rows

__all__ = [
    "ADDED_COLUMNS",
    "ADDITIVE_FROM",
    "CHUNK_TEXT",
    "REBUILT_FROM",
    "SCHEMA_VERSION",
    "Database",
]

SCHEMA_VERSION = 22  # 2: sentence windows, title in full text; 3: EPUB reader data; 4: answers;
# 5: segments; 6: token signs; 7: document owner and visibility, users, sessions, API tokens;
# 8: ingest jobs, screen verdicts, document holders; 9: languages, full text over pre-made terms
# (truthbase.text.fulltext); 10: units.text_source and units.ocr (how a page's text was made);
# 11: chunk kind and context (tables kept as rows), the context indexed with the title;
# 12: users get a stable id, and documents, holders and jobs name their user by it;
# 13: sessions, API tokens and quota counters name their user by id too; 14: identifiers are
# whole full-text terms (:func:`_to_version_14` makes the terms again); 15: glyph boxes packed
# (truthbase.store.boxes), the float32 rows of earlier units re-packed (:func:`_to_version_15`);
# 16: saved threads (truthbase.app.threads), tables only; 17: collections of documents (the
# schema script adds their tables); 18: chunks' section paths (truthbase.sections) with their
# terms, indexed with the title (:func:`_to_version_18` makes the full-text view again); 19:
# feedback on answers and the answers' asker (truthbase.app.feedback), tables and a column;
# 20: shared threads' read-only links (truthbase.app.shares), a table only; 21: chunk and window
# vectors as int8 codes with a scale a row (truthbase.store.codec.vector_code), the float32
# vectors of earlier versions quantized in place (:func:`_to_version_21`); 22: a chunk's text
# is read from its unit (:data:`CHUNK_TEXT`), not stored again (:func:`_to_version_22`)
#: A chunk's text, the chunk as ``c`` and its unit as ``u``: the unit's text from the chunk's
#: start to its end (SQLite's ``substr`` counts characters from 1, as Python's offsets count
#: code points from 0). Stored once, in the unit, since version 22: the chunk's own copy was
#: 684 of the 15,287 bytes a chunk of the golden index (docs/evals/disk.md).
CHUNK_TEXT = 'substr(u.text, c.start + 1, c."end" - c.start)'
#: Versions brought up to date in place: :data:`ADDED_COLUMNS` adds the columns of versions 7
#: (existing documents: shared, no owner), 10, 11, 18 and 19, the schema script the tables they
#: lack.
ADDITIVE_FROM = frozenset({3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21})
#: Versions whose full text :func:`_to_version_9` rebuilds in place after the additive step
#: (languages and terms made again; the full-text view changed in 9 and 11).
REBUILT_FROM = frozenset({3, 4, 5, 6, 7, 8, 9, 10})
#: Columns added to existing tables by versions 7, 10, 11, 18 and 19, as (table, column, type): the
#: schema script's CREATE TABLE IF NOT EXISTS does not add them to a table that exists.
ADDED_COLUMNS = (
    ("documents", "owner", "TEXT"),
    (
        "documents",
        "visibility",
        "TEXT NOT NULL DEFAULT 'shared' CHECK (visibility IN ('private', 'shared'))",
    ),
    ("units", "text_source", "TEXT"),
    ("units", "ocr", "TEXT"),
    ("chunks", "kind", "TEXT NOT NULL DEFAULT 'text' CHECK (kind IN ('text', 'table'))"),
    ("chunks", "context", "TEXT NOT NULL DEFAULT ''"),
    ("chunks", "context_terms", "TEXT NOT NULL DEFAULT ''"),
    ("chunks", "section", "TEXT NOT NULL DEFAULT ''"),
    ("chunks", "section_terms", "TEXT NOT NULL DEFAULT ''"),
    # No foreign key when added to an old index: its users may not have their ids yet (they get
    # them after this step), and SQLite then refuses every write to users ("foreign key
    # mismatch"). Ids are random and never reused, so a removed asker's id matches nobody.
    ("answers", "asked_by", "TEXT"),
)
#: Seconds a statement waits for another connection's (or process's) write lock.
BUSY_TIMEOUT_S = 30.0


def _schema_script() -> str:
    return resources.files(__package__).joinpath("schema.sql").read_text("utf-8")


class _Local(threading.local):
    """A thread's own connection and lock (made on the thread's first use)."""

    conn: sqlite3.Connection | None = None
    lock: threading.RLock | None = None


class Database:
    """The index file (WAL, foreign keys on) with a connection per thread: reads run in
    parallel, writes (:meth:`transaction`) one at a time; any number of these, in any number of
    processes, may share the file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if path.parent and not path.parent.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
        self._local = _Local()
        # Every connection made, with its thread: close() closes them all, and a new one closes
        # those of threads that have ended (a thread pool's threads come and go).
        self._open: list[tuple[threading.Thread, sqlite3.Connection]] = []
        self._open_lock = threading.Lock()
        self._writer = threading.RLock()
        self._closed = False
        conn = self.conn
        try:
            self._migrate()
        except BaseException:
            conn.close()
            raise

    @property
    def conn(self) -> sqlite3.Connection:
        """The calling thread's connection (opened on its first use)."""
        conn = self._local.conn
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
        return conn

    @property
    def lock(self) -> threading.RLock:
        """The calling thread's own lock: a block of reads ``with db.lock`` on ``db.conn``
        waits for no other thread (each has its own connection); kept so that the modules'
        read blocks read the same as when one connection was shared."""
        lock = self._local.lock
        if lock is None:
            lock = threading.RLock()
            self._local.lock = lock
        return lock

    def _connect(self) -> sqlite3.Connection:
        if self._closed:
            raise StoreError(f"the index {self.path} is closed")
        try:
            # check_same_thread off: close() closes every thread's connection from its own.
            conn = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_S
            )
            # Per connection (the journal mode, set by _migrate, is the file's).
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error as exc:
            if getattr(exc, "sqlite_errorname", "") == "SQLITE_NOTADB":  # some other file
                raise StoreError(f"{self.path} is not a TruthBase index: {exc}") from exc
            raise StoreError(f"cannot open the index {self.path}: {exc}") from exc
        with self._open_lock:
            ended = [(t, c) for t, c in self._open if not t.is_alive()]
            for _, old in ended:
                old.close()
            self._open = [(t, c) for t, c in self._open if t.is_alive()]
            self._open.append((threading.current_thread(), conn))
        return conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` .. ``COMMIT`` on the thread's connection under the writer lock
        (one writer per process; SQLite's writer lock serializes writers across processes);
        ROLLBACK on any exception."""
        with self._writer:
            conn = self.conn
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:  # SQLite may have rolled back already
                        conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                if _cannot_grow(exc):
                    raise StoreFull(
                        f"cannot write to the index {self.path}: {exc} (the disk is full or a "
                        "file-size limit was reached); nothing of this write was kept: free "
                        "space and run it again"
                    ) from exc
                raise

    def close(self) -> None:
        with self._writer, self._open_lock:
            self._closed = True
            for _, conn in self._open:
                conn.close()
            self._open = []
            self._local = _Local()

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
                with self.transaction():
                    _add_columns(db, ADDED_COLUMNS)
                    # before the script, whose indexes on them need the user_id columns
                    _accounts_by_user_id(db)
                db.executescript(_schema_script())  # the tables they lack
                # One transaction: a crash leaves the old version, which the next open redoes.
                with self.transaction() as conn:
                    if version in REBUILT_FROM:
                        _to_version_9(conn)  # the terms made as today's code makes them
                    elif version < 14:
                        _to_version_14(conn)
                    if version < 12:
                        _to_version_12(conn)
                    if version < 13:
                        _quota_by_user_id(conn)
                    if version < 15:
                        _to_version_15(conn)
                    if version < 18:
                        _to_version_18(conn)
                    if version < 21:
                        _to_version_21(conn)
                    if version < 22:
                        _to_version_22(conn)
                    conn.execute(
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
        try:
            db.executescript(_schema_script())
        except sqlite3.OperationalError as exc:  # /dev/null, a full disk: no index can be made
            raise StoreError(f"cannot make a new index in {self.path}: {exc}") from exc
        with self.transaction():
            db.execute(
                "INSERT OR REPLACE INTO meta(key, value) "
                "VALUES ('schema_version', ?), ('generation', '0')",
                (str(SCHEMA_VERSION),),
            )


#: SQLite's primary result codes for a write the file system refused: SQLITE_FULL (ENOSPC) and
#: SQLITE_IOERR (a write past RLIMIT_FSIZE fails with EFBIG, which SQLite reports as an I/O error).
_SQLITE_FULL, _SQLITE_IOERR = 13, 10


def _cannot_grow(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in (_SQLITE_FULL, _SQLITE_IOERR)


def _add_columns(conn: sqlite3.Connection, columns: Sequence[tuple[str, str, str]]) -> None:
    """Each (table, column, type) of ``columns`` that its table lacks, added in place (the
    schema script's CREATE TABLE IF NOT EXISTS leaves an existing table as it is)."""
    for table, column, kind in columns:
        present = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        # A table the version lacks (answers before 4) comes whole from the schema script.
        if present and column not in present:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")


def _statements(script: str) -> list[str]:
    """The statements of an SQL script, whole (a ';' inside a comment or string stays)."""
    statements: list[str] = []
    current = ""
    for line in script.splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            statements.append(current)
            current = ""
    return statements


def _to_version_9(conn: sqlite3.Connection) -> None:
    """Schema 8 to 9 (or older), in the caller's transaction: each document's and unit's language is
    detected from the stored text, the chunks' and titles' full-text terms made, and the FTS5
    table re-created over them (the 'ascii' tokenizer) and rebuilt."""
    conn.execute("DROP TABLE IF EXISTS chunks_fts")
    conn.execute("DROP VIEW IF EXISTS chunks_fts_content")
    _add_columns(
        conn,
        (
            ("documents", "language", "TEXT"),
            ("documents", "title_terms", "TEXT NOT NULL DEFAULT ''"),
            ("units", "language", "TEXT"),
            ("chunks", "terms", "TEXT NOT NULL DEFAULT ''"),
        ),
    )
    for doc_id, title, metadata in conn.execute(
        "SELECT id, title, metadata FROM documents"
    ).fetchall():
        units = conn.execute(
            "SELECT idx, text FROM units WHERE doc_id = ? ORDER BY idx", (doc_id,)
        ).fetchall()
        hint = json.loads(metadata).get("language") if metadata else None
        found = detect_document([text for _, text in units], hint=hint)
        by_unit = dict(zip([idx for idx, _ in units], found.units, strict=True))
        conn.execute(
            "UPDATE documents SET language = ?, title_terms = ? WHERE id = ?",
            (found.document, term_string(title, found.document), doc_id),
        )
        conn.executemany(
            "UPDATE units SET language = ? WHERE doc_id = ? AND idx = ?",
            [(code, doc_id, idx) for idx, code in by_unit.items()],
        )
        chunks = conn.execute(
            f"SELECT c.id, c.unit, {CHUNK_TEXT} FROM chunks c "
            "JOIN units u ON u.doc_id = c.doc_id AND u.idx = c.unit WHERE c.doc_id = ?",
            (doc_id,),
        ).fetchall()
        conn.executemany(
            "UPDATE chunks SET terms = ? WHERE id = ?",
            [
                (term_string(text, by_unit.get(unit) or found.document), chunk_id)
                for chunk_id, unit, text in chunks
            ],
        )
    for statement in _statements(_schema_script()):
        if "chunks_fts" in statement and "CREATE" in statement:
            conn.execute(statement)
    conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")


def _to_version_14(conn: sqlite3.Connection) -> None:
    """Schema 11 to 13 up to 14, in the caller's transaction: the titles', chunks' and table
    contexts' full-text terms made again from the stored text in the stored languages (an
    identifier is one whole term since version 14, :mod:`truthbase.text.fulltext`), and the
    FTS5 index rebuilt over them."""
    for doc_id, title, language in conn.execute(
        "SELECT id, title, language FROM documents"
    ).fetchall():
        conn.execute(
            "UPDATE documents SET title_terms = ? WHERE id = ?",
            (term_string(title, language), doc_id),
        )
        chunks = conn.execute(
            f"SELECT c.id, {CHUNK_TEXT}, c.context, coalesce(u.language, ?) FROM chunks c "
            "JOIN units u ON u.doc_id = c.doc_id AND u.idx = c.unit WHERE c.doc_id = ?",
            (language, doc_id),
        ).fetchall()
        conn.executemany(
            "UPDATE chunks SET terms = ?, context_terms = ? WHERE id = ?",
            [
                (term_string(text, chunk_language), term_string(context, chunk_language), cid)
                for cid, text, context, chunk_language in chunks
            ],
        )
    conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")


def _to_version_18(conn: sqlite3.Connection) -> None:
    """Schema 17 (or older) to 18, in the caller's transaction: the full-text view made again
    from the schema script, with the chunks' section path terms in the title field. The chunks
    stored before have no section path (re-ingest gives them one), so the terms the FTS5
    index holds for them are the view's terms already: nothing to rebuild."""
    conn.execute("DROP VIEW IF EXISTS chunks_fts_content")
    for statement in _statements(_schema_script()):
        if "VIEW IF NOT EXISTS chunks_fts_content" in statement:
            conn.execute(statement)


#: Where a user's name stood for them before version 12, as (table, column).
USER_COLUMNS = (("documents", "owner"), ("jobs", "owner"), ("document_holders", "holder"))


def _give_users_ids(conn: sqlite3.Connection) -> None:
    """Every user without an id gets a random one (version 12; a no-op once done)."""
    _add_columns(conn, (("users", "id", "TEXT"),))
    conn.execute("UPDATE users SET id = lower(hex(randomblob(16))) WHERE id IS NULL")
    conn.execute("CREATE UNIQUE INDEX IF NOT EXISTS users_by_id ON users (id)")


def _to_version_12(conn: sqlite3.Connection) -> None:
    """Schema 11 to 12 (or older), in the caller's transaction: every user gets a random id, and
    each owner, holder and job owner that named a user names their id instead. A name with no
    user left (removed before version 12) becomes ``removed:NAME``, which no user's id is, so a
    user added later under that name holds none of it."""
    _give_users_ids(conn)
    for table, column in USER_COLUMNS:
        conn.execute(
            f"UPDATE {table} SET {column} = coalesce("
            f"(SELECT u.id FROM users u WHERE u.name = {table}.{column}), 'removed:' || {column}) "
            f"WHERE {column} IS NOT NULL"
        )


#: The tables that named their user by name (``user_name``) before version 13, with their
#: columns; each is made again with ``user_id`` (SQLite cannot change a column's foreign key).
ACCOUNT_TABLES = (
    ("sessions", ("id_hash", "created_at", "expires_at")),
    ("api_tokens", ("id", "secret_hash", "name", "created_at", "revoked_at")),
)


def _accounts_by_user_id(conn: sqlite3.Connection) -> None:
    """Schema 13's sessions and API tokens, in the caller's transaction: each table that still
    has ``user_name`` is made again from the schema script, its rows keyed by their user's id
    (rows whose user is gone, which the foreign key had removed already, are not kept). A table
    made again already is left as it is, so a crash before the version is written is redone."""
    creates = {
        table: statement
        for table, _ in ACCOUNT_TABLES
        for statement in _statements(_schema_script())
        if f"CREATE TABLE IF NOT EXISTS {table} (" in statement
    }
    for table, columns in ACCOUNT_TABLES:
        if "user_name" not in {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}:
            continue  # made again already, or not made yet (the script makes it)
        _give_users_ids(conn)
        conn.execute(f"ALTER TABLE {table} RENAME TO {table}_by_name")
        conn.execute(creates[table])
        kept = ", ".join(columns)
        old = ", ".join(f"t.{column}" for column in columns)
        conn.execute(
            f"INSERT INTO {table}(user_id, {kept}) SELECT u.id, {old} "
            f"FROM {table}_by_name t JOIN users u ON u.name = t.user_name"
        )
        conn.execute(f"DROP TABLE {table}_by_name")


def _quota_by_user_id(conn: sqlite3.Connection) -> None:
    """Schema 13's quota keys, in the caller's transaction: a signed-in user's counters
    (``user:NAME``, after a use's prefix such as ``search:``) are kept under ``user:ID``; those
    of a name with no user left are dropped (a user added later under it starts afresh)."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "quota_counters" not in tables:  # made on the first admission
        return
    name = "substr(quota_counters.key, instr(quota_counters.key, 'user:') + 5)"
    conn.execute(
        "DELETE FROM quota_counters WHERE instr(key, 'user:') > 0 AND NOT EXISTS "
        f"(SELECT 1 FROM users u WHERE u.name = {name})"
    )
    conn.execute(
        "UPDATE quota_counters SET key = substr(key, 1, instr(key, 'user:') + 4) || "
        f"(SELECT u.id FROM users u WHERE u.name = {name}) WHERE instr(key, 'user:') > 0"
    )


# -- schema 15: packed glyph boxes ------------------------------------------------------------


def _to_version_15(conn: sqlite3.Connection) -> None:
    """Schema 14 to 15 (or older), in the caller's transaction: every unit's float32 boxes
    re-packed (:func:`truthbase.store.boxes.repacked`: the same boxes, bit for bit), one
    document at a time. The pages freed are reused by later writes; ``VACUUM`` returns them."""
    for (doc_id,) in conn.execute("SELECT id FROM documents").fetchall():
        rows = conn.execute(
            "SELECT idx, text, boxes FROM units WHERE doc_id = ? AND boxes IS NOT NULL",
            (doc_id,),
        ).fetchall()
        updates = [
            (packed, doc_id, idx)
            for idx, text, blob in rows
            if (packed := repacked(blob, text)) is not None
        ]
        conn.executemany("UPDATE units SET boxes = ? WHERE doc_id = ? AND idx = ?", updates)


def _to_version_21(conn: sqlite3.Connection) -> None:
    """Schema 20 to 21 (or older), in the caller's transaction: every float32 vector of the
    chunks and windows tables stored as int8 codes with a scale
    (:func:`truthbase.store.codec.vector_code`: the blob a fresh ingest writes for the same
    vector), in blocks of rows. The pages freed are reused by later writes; ``VACUUM`` returns
    them."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'embedding_dim'").fetchone()
    if row is None:
        return  # no document was ever written: no vector to convert
    width = 4 * int(row[0])
    for table in ("chunks", "windows"):
        last = -1
        while True:
            rows = conn.execute(
                f"SELECT id, vector FROM {table} WHERE id > ? AND length(vector) = ? "
                "ORDER BY id LIMIT 4096",
                (last, width),
            ).fetchall()
            if not rows:
                break
            matrix = np.vstack([np.frombuffer(blob, dtype=np.float32) for _, blob in rows])
            conn.executemany(
                f"UPDATE {table} SET vector = ? WHERE id = ?",
                zip(vector_code_rows(matrix), [i for i, _ in rows], strict=True),
            )
            last = int(rows[-1][0])


def _to_version_22(conn: sqlite3.Connection) -> None:
    """Schema 21 (or older) to 22, in the caller's transaction: the chunks' copy of their text
    dropped (each chunk's text is its unit's text between its offsets, :data:`CHUNK_TEXT`; a
    copy of an index was checked equal for every chunk before the column went). The table is
    rewritten without the column; ``VACUUM`` returns the pages freed."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(chunks)").fetchall()}
    if "text" in columns:
        conn.execute("ALTER TABLE chunks DROP COLUMN text")
