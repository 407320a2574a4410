"""Copy an SQLite index into another store (PostgreSQL) without re-extracting or re-embedding.

Each document is read back whole from the SQLite file (units with boxes, geometry and the EPUB
reader data; chunks with their rects, vectors and token signs; sentence windows with theirs) and
written with the target's ``add_document``: one transaction per document, documents already in
the target are skipped. The accounts come first (users with their ids and password hashes, API
tokens, revoked ones too, and the collections of documents users keep), so that the documents'
owners and holders, which name users by id, are the same people in the copy; a copied document
keeps its holders. Used by the tests to give PostgreSQL the seed index without a second
embedding run, and usable to move an index that outgrew its file.

Not copied: login sessions (a session is a signed-in browser of the server that serves the
source; its cookie is signed with that server's key, and signing in again is cheap, so a copy
served elsewhere starts with none), ingest jobs (their files live in the source server's data
folder; the documents they made are copied), the answer log, the segment index (made again on
use) and quota counters (windows of a minute or a day).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..model import ChunkDraft, ExtractedDocument, ExtractionReport, TocEntry, Unit, Visibility
from ..records import FloatMatrix, IndexedDocument, IndexEmbedder, WindowDraft
from .base import Store, StoreError
from .codec import rects_from_json, vectors_from_codes
from .sqlite import CHUNK_TEXT, SQLiteStore

__all__ = ["copy_sqlite_index"]


def copy_sqlite_index(source: Path, target: Store) -> int:
    """Copy the accounts and every document of the SQLite index ``source`` into ``target``;
    returns how many documents were written (those the target already has are left alone)."""
    store = SQLiteStore(source)
    try:
        _copy_accounts(store, target)
        embedder = store.index_embedder()
        if embedder is None:
            return 0
        db = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        try:
            return _copy(db, store, embedder, target)
        finally:
            db.close()
    finally:
        store.close()


def _copy_accounts(source: SQLiteStore, target: Store) -> None:
    """Every user of ``source`` that ``target`` lacks, with their id and hash, and every API
    token it lacks; StoreError, before any document is written, when ``target`` has a user of
    the same name under another id (the copied documents would name someone it does not have)."""
    users = source.users()
    for user in users:
        there = target.user(user.name)
        if there is not None and there.id != user.id:
            raise StoreError(
                f"the target has another user named {user.name!r} (id {there.id}, the source's "
                f"is {user.id}): copy into a store without them"
            )
    for user in users:
        if target.user(user.name) is None:
            target.add_user(user)
    for token in source.tokens():
        if target.token_by_hash(token.secret_hash) is None:
            target.add_token(token)
    for user_id in (None, *(user.id for user in users)):  # None: the operator's
        for collection in source.collections(user_id):
            if target.collection(user_id, collection.name) is None:
                target.add_collection(collection)


def _copy(
    db: sqlite3.Connection, store: SQLiteStore, embedder: IndexEmbedder, target: Store
) -> int:
    copied = 0
    documents = db.execute(
        # In the order they were ingested (of their first chunk), so that a fresh target gives
        # the chunks the same ids as the source (ties between equal scores break the same way).
        "SELECT id, title, path, kind, unit_count, extractor_version, report, toc, metadata, "
        "owner, visibility, language "
        "FROM documents d ORDER BY (SELECT min(c.id) FROM chunks c WHERE c.doc_id = d.id), "
        "d.rowid"
    ).fetchall()
    for row in documents:
        if target.has_document(row[0]):
            continue
        document = _read_document(store, row)
        owner = row[9]
        visibility: Visibility = "private" if row[10] == "private" else "shared"
        target.add_document(_read_indexed(db, document, embedder, owner, visibility))
        info = store.document(document.sha256)
        for holder in info.holders if info is not None else ():
            target.add_holder(document.sha256, holder)
        copied += 1
    return copied


def _read_document(store: SQLiteStore, row: Sequence[Any]) -> ExtractedDocument:
    """The document of a row of the query in :func:`_copy`, with all its units (read through
    the store, which knows their boxes, geometry and EPUB reader data)."""
    doc_id, title, path, kind, unit_count, version, report, toc, metadata = row[:9]
    language = row[11]
    units: list[Unit] = []
    for index in range(int(unit_count)):
        unit = store.unit(doc_id, index)
        if unit is None:
            raise StoreError(f"document {doc_id} lacks unit {index}")
        units.append(unit)
    report_data = json.loads(report)
    return ExtractedDocument(
        sha256=doc_id,
        title=title,
        path=path,
        kind="epub" if kind == "epub" else "pdf",
        units=units,
        extractor_version=version,
        report=ExtractionReport(**report_data),
        toc=[TocEntry(**entry) for entry in json.loads(toc)] if toc else [],
        metadata=json.loads(metadata) if metadata else {},
        language=language,
    )


def _read_indexed(
    db: sqlite3.Connection,
    document: ExtractedDocument,
    embedder: IndexEmbedder,
    owner: str | None,
    visibility: Visibility,
) -> IndexedDocument:
    """``document`` with its chunks, their vectors and token signs, and its sentence windows
    with theirs, as the source holds them (in the order of their ids)."""
    doc_id = document.sha256
    rows = db.execute(
        f'SELECT c.id, c.unit, c.start, c."end", {CHUNK_TEXT}, c.rects, c.vector, c.kind, '
        "c.context, c.section FROM chunks c "
        "JOIN units u ON u.doc_id = c.doc_id AND u.idx = c.unit WHERE c.doc_id = ? ORDER BY c.id",
        (doc_id,),
    ).fetchall()
    position = {row[0]: i for i, row in enumerate(rows)}
    chunks = [
        ChunkDraft(
            unit=r[1],
            start=r[2],
            end=r[3],
            text=r[4],
            rects=rects_from_json(r[5]),
            kind="table" if r[7] == "table" else "text",
            context=r[8],
            section=r[9],
        )
        for r in rows
    ]
    vectors = _matrix([r[6] for r in rows], embedder.dim)
    window_rows = db.execute(
        'SELECT w.chunk_id, w.start, w."end", w.vector FROM windows w '
        "JOIN chunks c ON c.id = w.chunk_id WHERE c.doc_id = ? ORDER BY w.id",
        (doc_id,),
    ).fetchall()
    windows = [WindowDraft(chunk=position[r[0]], start=r[1], end=r[2]) for r in window_rows]
    window_vectors = _matrix([r[3] for r in window_rows], embedder.dim)
    return IndexedDocument(
        document=document,
        chunks=chunks,
        vectors=vectors,
        embedder=embedder,
        windows=windows,
        window_vectors=window_vectors,
        token_signs=_read_token_signs(db, doc_id, [r[0] for r in rows]),
        owner=owner,
        visibility=visibility,
    )


def _read_token_signs(
    db: sqlite3.Connection, doc_id: str, chunk_ids: list[int]
) -> list[bytes] | None:
    """The token signs of the chunks ``chunk_ids`` in that order; None: the document has none
    (it is written with token data for every chunk or for none)."""
    # Opening the source as SQLiteStore brought it to the current schema: the table exists.
    signs = dict(
        db.execute(
            "SELECT t.chunk_id, t.signs FROM chunk_tokens t "
            "JOIN chunks c ON c.id = t.chunk_id WHERE c.doc_id = ?",
            (doc_id,),
        ).fetchall()
    )
    if not signs:
        return None
    if len(signs) != len(chunk_ids):
        raise StoreError(
            f"document {doc_id} has token signs for {len(signs)} of {len(chunk_ids)} chunks"
        )
    return [bytes(signs[chunk_id]) for chunk_id in chunk_ids]


def _matrix(blobs: list[bytes], dim: int) -> FloatMatrix:
    """The stored int8 vectors as the float32 rows they stand for (the target stores those, so
    its dense arm ranks as the source's)."""
    return vectors_from_codes([bytes(b) for b in blobs], dim)
