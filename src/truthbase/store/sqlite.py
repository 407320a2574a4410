"""The embedded default store: one SQLite file with FTS5 for full text and vectors beside it.

Vectors live in the chunks table as float32 blobs; the dense arm is exact cosine over a numpy
matrix loaded once per index generation. This machine's Python cannot load SQLite extensions,
so sqlite-vec is out of reach without apsw; at tens of thousands of chunks an exact matrix
product is a few milliseconds (see `make bench`), so the extension would buy nothing here.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InvalidInput
from ..extract.epub_map import dom_map_from_json, dom_map_to_json
from ..model import (
    Chunk,
    ChunkDraft,
    DocumentInfo,
    ExtractedDocument,
    PageGeometry,
    Rect,
    Unit,
)
from ..records import ArmHit, FloatMatrix, IndexEmbedder, StoredAnswer, WindowDraft
from .base import (
    StoreError,
    check_document_inputs,
    check_same_embedder,
    check_token_sign_map,
)
from .segments_sqlite import SQLiteSegments

SCHEMA_VERSION = 6  # 2: sentence windows, title in full text; 3: EPUB reader data; 4: answers;
# 5: segments; 6: token signs
#: Versions that the schema script brings up to date in place (it only adds tables).
ADDITIVE_FROM = frozenset({3, 4, 5})

IdArray = npt.NDArray[np.int64]


def _schema_script() -> str:
    return resources.files("truthbase.store").joinpath("schema.sql").read_text("utf-8")


def _encode_boxes(boxes: Sequence[Rect | None]) -> bytes | None:
    if all(box is None for box in boxes):
        return None  # EPUB units and empty pages: rebuilt from the text length
    array = np.full((len(boxes), 4), np.nan, dtype=np.float32)
    for i, box in enumerate(boxes):
        if box is not None:
            array[i] = box
    return array.tobytes()


def _decode_boxes(blob: bytes | None, length: int) -> list[Rect | None]:
    if not blob:
        return [None] * length
    array = np.frombuffer(blob, dtype=np.float32).reshape(-1, 4).astype(np.float64)
    boxes: list[Rect | None] = []
    for row in array:
        if np.isnan(row[0]):
            boxes.append(None)
        else:
            boxes.append((float(row[0]), float(row[1]), float(row[2]), float(row[3])))
    return boxes


def _document_row(document: ExtractedDocument) -> tuple[Any, ...]:
    """(id, title, path, kind, unit_count, ingested_at, extractor_version, report, toc,
    metadata) of a new document, as both backends insert it."""
    return (
        document.sha256,
        document.title,
        document.path,
        document.kind,
        len(document.units),
        datetime.now(UTC).isoformat(timespec="seconds"),
        document.extractor_version,
        json.dumps(asdict(document.report)),
        json.dumps([asdict(entry) for entry in document.toc]) if document.toc else None,
        json.dumps(document.metadata) if document.metadata else None,
    )


def _unit_rows(document: ExtractedDocument) -> list[tuple[Any, ...]]:
    """(doc_id, idx, label, href, text, boxes, geometry, html, dom_map) of each unit, as both
    backends insert them (and :func:`_unit_from_row` reads them back)."""
    return [
        (
            document.sha256,
            unit.index,
            unit.label,
            unit.href,
            unit.text,
            _encode_boxes(unit.boxes),
            json.dumps(asdict(unit.geometry)) if unit.geometry else None,
            unit.dom.html if unit.dom else None,
            dom_map_to_json(unit.dom) if unit.dom else None,
        )
        for unit in document.units
    ]


def _unit_from_row(row: Sequence[Any]) -> Unit:
    """A unit from (idx, label, href, text, boxes, geometry, html, dom_map), as both backends
    select it."""
    idx, label, href, text, boxes, geometry, html, dom_map = row
    page: PageGeometry | None = None
    if geometry:
        g = json.loads(geometry)
        page = PageGeometry(
            mediabox=tuple(g["mediabox"]),
            cropbox=tuple(g["cropbox"]),
            rotation=int(g["rotation"]),
        )
    return Unit(
        index=idx,
        text=text,
        boxes=_decode_boxes(bytes(boxes) if boxes is not None else None, len(text)),
        label=label,
        href=href,
        geometry=page,
        dom=dom_map_from_json(dom_map, html) if dom_map and html is not None else None,
    )


def _rects_json(rects: Sequence[Rect]) -> str:
    return json.dumps([[round(v, 3) for v in rect] for rect in rects])


def _rects_from_json(text: str) -> tuple[Rect, ...]:
    return tuple((r[0], r[1], r[2], r[3]) for r in json.loads(text))


class SQLiteStore(SQLiteSegments):
    """A TruthBase index in one SQLite file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if path.parent and not path.parent.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the index {path}: {exc}") from exc
        self._lock = threading.RLock()
        self._matrix: tuple[FloatMatrix, IdArray, IdArray] | None = None
        self._matrix_generation = -1
        self._migrate()

    # -- schema ---------------------------------------------------------------------------

    def _migrate(self) -> None:
        db = self._db
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
                db.executescript(_schema_script())
                with self._transaction():
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
        script = _schema_script()
        # Every statement of the script is IF NOT EXISTS, so a crash between it and the meta
        # row leaves a file that the next open completes.
        db.executescript(script)
        with self._transaction():
            db.execute(
                "INSERT OR REPLACE INTO meta(key, value) "
                "VALUES ('schema_version', ?), ('generation', '0')",
                (str(SCHEMA_VERSION),),
            )

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- writes ---------------------------------------------------------------------------

    def has_document(self, doc_id: str) -> bool:
        with self._lock:
            row = self._db.execute("SELECT 1 FROM documents WHERE id=?", (doc_id,)).fetchone()
        return row is not None

    def add_document(
        self,
        document: ExtractedDocument,
        chunks: Sequence[ChunkDraft],
        vectors: FloatMatrix,
        embedder: IndexEmbedder,
        windows: Sequence[WindowDraft] = (),
        window_vectors: FloatMatrix | None = None,
        token_signs: Sequence[bytes] | None = None,
    ) -> None:
        """Write a document, its units, chunks, full text, vectors (of chunks and of their
        sentence windows) and token signs in one transaction."""
        check_document_inputs(chunks, vectors, embedder, windows, window_vectors, token_signs)
        with self._transaction() as db:
            current = self._index_embedder_locked()
            if current is None:
                db.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('embedder', ?), "
                    "('embedding_dim', ?)",
                    (embedder.model_id, str(embedder.dim)),
                )
            else:
                check_same_embedder(current, embedder)
            db.execute(
                "INSERT INTO documents(id, title, path, kind, unit_count, ingested_at, "
                "extractor_version, report, toc, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                _document_row(document),
            )
            db.executemany(
                "INSERT INTO units(doc_id, idx, label, href, text, boxes, geometry, html, dom_map) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                _unit_rows(document),
            )
            chunk_ids: list[int] = []
            for chunk, vector in zip(chunks, vectors, strict=True):
                cursor = db.execute(
                    'INSERT INTO chunks(doc_id, unit, start, "end", text, rects, vector) '
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        document.sha256,
                        chunk.unit,
                        chunk.start,
                        chunk.end,
                        chunk.text,
                        _rects_json(chunk.rects),
                        np.asarray(vector, dtype=np.float32).tobytes(),
                    ),
                )
                assert cursor.lastrowid is not None
                chunk_ids.append(cursor.lastrowid)
                db.execute(
                    "INSERT INTO chunks_fts(rowid, title, text) VALUES (?, ?, ?)",
                    (cursor.lastrowid, document.title, chunk.text),
                )
            if windows and window_vectors is not None:
                db.executemany(
                    'INSERT INTO windows(chunk_id, start, "end", vector) VALUES (?, ?, ?, ?)',
                    [
                        (
                            chunk_ids[window.chunk],
                            window.start,
                            window.end,
                            np.asarray(vector, dtype=np.float32).tobytes(),
                        )
                        for window, vector in zip(windows, window_vectors, strict=True)
                    ],
                )
            if token_signs is not None:
                db.executemany(
                    "INSERT INTO chunk_tokens(chunk_id, signs) VALUES (?, ?)",
                    [(i, bytes(b)) for i, b in zip(chunk_ids, token_signs, strict=True)],
                )
            db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='generation'")

    def add_answer(self, question: str, answer: dict[str, Any]) -> int:
        """Keep an answer as it was shown; returns its id."""
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO answers(question, answer, created_at) VALUES (?, ?, ?)",
                (
                    question,
                    json.dumps(answer, ensure_ascii=False),
                    datetime.now(UTC).isoformat(timespec="seconds"),
                ),
            )
            assert cursor.lastrowid is not None
            return cursor.lastrowid

    # -- reads ----------------------------------------------------------------------------

    def answers(self) -> list[StoredAnswer]:
        """Every stored answer, oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, question, answer, created_at FROM answers ORDER BY id"
            ).fetchall()
        return [StoredAnswer(int(r[0]), str(r[1]), json.loads(r[2]), str(r[3])) for r in rows]

    def _index_embedder_locked(self) -> IndexEmbedder | None:
        rows = dict(
            self._db.execute(
                "SELECT key, value FROM meta WHERE key IN ('embedder', 'embedding_dim')"
            ).fetchall()
        )
        if "embedder" not in rows:
            return None
        return IndexEmbedder(model_id=rows["embedder"], dim=int(rows["embedding_dim"]))

    def index_embedder(self) -> IndexEmbedder | None:
        with self._lock:
            return self._index_embedder_locked()

    _DOC_COLUMNS = (
        "d.id, d.title, d.path, d.kind, d.unit_count, "
        "(SELECT count(*) FROM chunks c WHERE c.doc_id = d.id), d.ingested_at, d.extractor_version"
    )

    @staticmethod
    def _document_info(row: tuple[object, ...]) -> DocumentInfo:
        return DocumentInfo(
            id=str(row[0]),
            title=str(row[1]),
            path=str(row[2]),
            kind="epub" if row[3] == "epub" else "pdf",
            unit_count=int(str(row[4])),
            chunk_count=int(str(row[5])),
            ingested_at=str(row[6]),
            extractor_version=str(row[7]),
        )

    def list_documents(self) -> list[DocumentInfo]:
        with self._lock:
            rows = self._db.execute(
                f"SELECT {self._DOC_COLUMNS} FROM documents d ORDER BY d.title, d.id"
            ).fetchall()
        return [self._document_info(row) for row in rows]

    def document(self, doc_id: str) -> DocumentInfo | None:
        with self._lock:
            row = self._db.execute(
                f"SELECT {self._DOC_COLUMNS} FROM documents d WHERE d.id = ?", (doc_id,)
            ).fetchone()
        return self._document_info(row) if row else None

    def unit(self, doc_id: str, index: int) -> Unit | None:
        with self._lock:
            row = self._db.execute(
                "SELECT idx, label, href, text, boxes, geometry, html, dom_map FROM units "
                "WHERE doc_id = ? AND idx = ?",
                (doc_id, index),
            ).fetchone()
        return _unit_from_row(row) if row is not None else None

    def chunks(self, chunk_ids: Sequence[int]) -> list[Chunk]:
        """The chunks with these ids, in the order asked (missing ids are left out)."""
        if not chunk_ids:
            return []
        placeholders = ",".join("?" * len(chunk_ids))
        with self._lock:
            rows = self._db.execute(
                f'SELECT c.id, c.doc_id, c.unit, c.start, c."end", c.text, c.rects, u.href '
                f"FROM chunks c JOIN units u ON u.doc_id = c.doc_id AND u.idx = c.unit "
                f"WHERE c.id IN ({placeholders})",
                list(chunk_ids),
            ).fetchall()
        by_id = {
            row[0]: Chunk(
                id=row[0],
                doc_id=row[1],
                unit=row[2],
                start=row[3],
                end=row[4],
                text=row[5],
                rects=_rects_from_json(row[6]),
                href=row[7],
            )
            for row in rows
        }
        return [by_id[i] for i in chunk_ids if i in by_id]

    def token_signs(self, chunk_ids: Sequence[int]) -> dict[int, bytes]:
        """The packed token signs of those of these chunks that have them."""
        ids = sorted({int(i) for i in chunk_ids})
        found: dict[int, bytes] = {}
        with self._lock:
            # SQLite binds at most 32766 parameters a statement (999 before 3.32)
            for first in range(0, len(ids), 900):
                batch = ids[first : first + 900]
                rows = self._db.execute(
                    f"SELECT chunk_id, signs FROM chunk_tokens "
                    f"WHERE chunk_id IN ({','.join('?' * len(batch))})",
                    batch,
                ).fetchall()
                found.update((int(r[0]), bytes(r[1])) for r in rows)
        return found

    def chunks_without_token_signs(self) -> list[int]:
        """Ids of the chunks that have no token signs, ascending."""
        with self._lock:
            rows = self._db.execute(
                "SELECT c.id FROM chunks c WHERE NOT EXISTS "
                "(SELECT 1 FROM chunk_tokens t WHERE t.chunk_id = c.id) ORDER BY c.id"
            ).fetchall()
        return [int(r[0]) for r in rows]

    def add_token_signs(self, signs: Mapping[int, bytes]) -> int:
        """Token signs for chunks that lack them, in one transaction (a chunk's existing row is
        kept); an unknown chunk id or a bad blob raises ValueError before anything is written."""
        if not signs:
            return 0
        with self._transaction() as db:
            check_token_sign_map(signs, self._index_embedder_locked())
            rows = [(int(chunk_id), bytes(blob)) for chunk_id, blob in signs.items()]
            ids = sorted({chunk_id for chunk_id, _ in rows})
            known: set[int] = set()
            for first in range(0, len(ids), 900):  # SQLite's bound-parameter limit
                batch = ids[first : first + 900]
                known.update(
                    int(r[0])
                    for r in db.execute(
                        f"SELECT id FROM chunks WHERE id IN ({','.join('?' * len(batch))})", batch
                    )
                )
            unknown = [i for i in ids if i not in known]
            if unknown:
                raise InvalidInput(f"no chunks with ids {unknown[:10]} ({len(unknown)} unknown)")
            before = db.total_changes
            db.executemany(
                "INSERT OR IGNORE INTO chunk_tokens(chunk_id, signs) VALUES (?, ?)", rows
            )
            return db.total_changes - before

    def counts(self) -> dict[str, int]:
        with self._lock:
            counts = {
                table: int(self._db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
                for table in ("documents", "units", "chunks")
            }
            counts["token_chunks"] = int(
                self._db.execute("SELECT count(*) FROM chunk_tokens").fetchone()[0]
            )
        return counts

    # -- search arms ----------------------------------------------------------------------

    def fts_search(
        self, match_expression: str, limit: int, title_weight: float = 0.0
    ) -> list[ArmHit]:
        """BM25 over chunk text, plus the document title's column at ``title_weight`` (0: the
        title is not searched at all). FTS5's bm25() is lower-is-better: the score is negated."""
        if title_weight <= 0:
            match_expression = f"text : ({match_expression})"
        with self._lock:
            rows = self._db.execute(
                "SELECT rowid, bm25(chunks_fts, ?, 1.0) AS score FROM chunks_fts "
                "WHERE chunks_fts MATCH ? ORDER BY score LIMIT ?",
                (float(title_weight), match_expression, limit),
            ).fetchall()
        return [
            ArmHit(chunk_id=int(row[0]), rank=rank, score=-float(row[1]))
            for rank, row in enumerate(rows, start=1)
        ]

    def _vector_matrix(self) -> tuple[FloatMatrix, IdArray, IdArray]:
        """All vectors, grouped by chunk: (matrix, chunk ids, start row of each chunk's group)."""
        generation = int(
            self._db.execute("SELECT value FROM meta WHERE key='generation'").fetchone()[0]
        )
        if self._matrix is None or generation != self._matrix_generation:
            # Each chunk's own vector and its windows', grouped by chunk id.
            rows = self._db.execute(
                "SELECT id, vector FROM chunks UNION ALL SELECT chunk_id, vector FROM windows "
                "ORDER BY 1"
            ).fetchall()
            owners = np.array([row[0] for row in rows], dtype=np.int64)
            if rows:
                matrix = np.vstack([np.frombuffer(row[1], dtype=np.float32) for row in rows])
            else:
                matrix = np.zeros((0, 1), dtype=np.float32)
            starts = group_starts(owners)
            self._matrix = (matrix, owners[starts], starts)
            self._matrix_generation = generation
        return self._matrix

    def dense_search(self, query_vector: FloatMatrix, limit: int) -> list[ArmHit]:
        """Exact cosine (vectors are L2-normalized, so a dot product); a chunk scores the best of
        its own vector and its sentence windows' (max-sim)."""
        with self._lock:
            matrix, chunk_ids, starts = self._vector_matrix()
        if len(chunk_ids) == 0:
            return []
        scores = matrix @ np.asarray(query_vector, dtype=np.float32).reshape(-1)
        chunk_scores = np.maximum.reduceat(scores, starts)
        limit = min(limit, len(chunk_ids))
        top = np.argpartition(-chunk_scores, limit - 1)[:limit]
        # Ties (equal cosine) go to the lower chunk id, so the order is deterministic.
        top = top[np.lexsort((chunk_ids[top], -chunk_scores[top]))]
        return [
            ArmHit(chunk_id=int(chunk_ids[i]), rank=rank, score=float(chunk_scores[i]))
            for rank, i in enumerate(top, start=1)
        ]


def group_starts(sorted_ids: IdArray) -> IdArray:
    """Start index of each run of equal values in ``sorted_ids`` (for ``np.maximum.reduceat``)."""
    if len(sorted_ids) == 0:
        return np.zeros(0, dtype=np.int64)
    change = np.flatnonzero(sorted_ids[1:] != sorted_ids[:-1]) + 1
    return np.concatenate(([0], change)).astype(np.int64)
