"""The segment index in SQLite: the ``segments`` table (schema.sql) and the stored TOC.

A mixin of :class:`truthbase.store.sqlite.SQLiteStore` (it uses the store's connection, lock
and transaction), implementing :class:`truthbase.store.base.SegmentStore`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from ..model import TocEntry
from ..records import Segment, SegmentPart, StoredSegments


def parts_json(parts: Sequence[SegmentPart]) -> str:
    return json.dumps([[p.unit, p.start, p.end] for p in parts])


def parts_from_json(text: str) -> tuple[SegmentPart, ...]:
    return tuple(SegmentPart(int(u), int(s), int(e)) for u, s, e in json.loads(text))


def toc_from_json(text: str | None) -> list[TocEntry]:
    if not text:
        return []
    return [
        TocEntry(
            title=str(e.get("title", "")),
            unit=int(e["unit"]),
            offset=int(e.get("offset", 0)),
            depth=int(e.get("depth", 0)),
            href=str(e.get("href", "")),
        )
        for e in json.loads(text)
    ]


def stored_from_rows(doc_id: str, rows: Sequence[Sequence[Any]]) -> StoredSegments | None:
    """Rows of (idx, title, parts, summary, written_by, builder, embedder, vector), by idx."""
    if not rows:
        return None
    segments = [
        Segment(
            doc_id=doc_id,
            index=int(r[0]),
            title=str(r[1]),
            parts=parts_from_json(str(r[2])),
            summary=str(r[3]),
            summarizer=str(r[4]),
        )
        for r in rows
    ]
    blobs = [r[7] for r in rows]
    vectors = None
    if all(b is not None for b in blobs):
        vectors = np.vstack([np.frombuffer(bytes(b), dtype=np.float32) for b in blobs])
    return StoredSegments(
        segments=segments,
        builder=str(rows[0][5]),
        vectors=vectors,
        embedder=str(rows[0][6]) if rows[0][6] is not None else None,
    )


def segment_rows(doc_id: str, summarizer: str, stored: StoredSegments) -> list[tuple[Any, ...]]:
    """The rows ``put_segments`` writes, one per segment (vectors as float32 bytes)."""
    if stored.vectors is not None and len(stored.vectors) != len(stored.segments):
        raise ValueError(
            f"{len(stored.segments)} segments but {len(stored.vectors)} summary vectors"
        )
    rows: list[tuple[Any, ...]] = []
    for i, segment in enumerate(stored.segments):
        if segment.doc_id != doc_id or segment.index != i:
            raise ValueError(
                f"segment {segment.doc_id}:{segment.index} at position {i} of {doc_id}"
            )
        vector = (
            np.asarray(stored.vectors[i], dtype=np.float32).tobytes()
            if stored.vectors is not None
            else None
        )
        rows.append(
            (
                doc_id,
                summarizer,
                i,
                segment.title,
                parts_json(segment.parts),
                segment.summary,
                segment.summarizer or summarizer,
                stored.builder,
                stored.embedder,
                vector,
            )
        )
    return rows


class SQLiteSegments:
    """The :class:`~truthbase.store.base.SegmentStore` methods of the SQLite store."""

    _db: sqlite3.Connection
    _lock: Any  # threading.RLock

    def _transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError  # SQLiteStore's

    def document_toc(self, doc_id: str) -> list[TocEntry]:
        """The stored table of contents (EPUB navigation, PDF outline); [] when there is none."""
        with self._lock:
            row = self._db.execute("SELECT toc FROM documents WHERE id = ?", (doc_id,)).fetchone()
        return toc_from_json(row[0]) if row else []

    def segments(self, doc_id: str, summarizer: str) -> StoredSegments | None:
        with self._lock:
            rows = self._db.execute(
                "SELECT idx, title, parts, summary, written_by, builder, embedder, vector "
                "FROM segments WHERE doc_id = ? AND summarizer = ? ORDER BY idx",
                (doc_id, summarizer),
            ).fetchall()
        return stored_from_rows(doc_id, rows)

    def put_segments(self, doc_id: str, summarizer: str, stored: StoredSegments) -> None:
        rows = segment_rows(doc_id, summarizer, stored)
        with self._transaction() as db:
            db.execute(
                "DELETE FROM segments WHERE doc_id = ? AND summarizer = ?", (doc_id, summarizer)
            )
            db.executemany(
                "INSERT INTO segments(doc_id, summarizer, idx, title, parts, summary, "
                "written_by, builder, embedder, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
