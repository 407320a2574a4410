"""Per-chunk token signs in the SQLite store: the blobs round trip by chunk id, leave with their
document, are validated before the transaction, and a version 5 index gains the table in place.
(Both backends, the copy into PostgreSQL and migration 5 there: test_postgres_tokens.py.)"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from truthbase.ingest import pack_signs
from truthbase.model import ChunkDraft, ExtractedDocument, Unit
from truthbase.records import IndexedDocument, IndexEmbedder, token_sign_row_bytes
from truthbase.store import SQLiteStore
from truthbase.store.sqlite import SCHEMA_VERSION

DIM = 12  # not a multiple of 8: each token's row is padded to 2 bytes
EMBEDDER = IndexEmbedder("m", DIM)


def _document(sha: str, texts: list[str]) -> tuple[ExtractedDocument, list[ChunkDraft]]:
    text = " ".join(texts)
    document = ExtractedDocument(
        sha256=sha,
        title=f"Doc {sha}",
        path=f"/{sha}.pdf",
        kind="pdf",
        units=[Unit(index=0, text=text, boxes=[None] * len(text))],
        extractor_version="t",
    )
    chunks, start = [], 0
    for t in texts:
        chunks.append(ChunkDraft(unit=0, start=start, end=start + len(t), text=t, rects=()))
        start += len(t) + 1
    return document, chunks


def _vectors(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _token_matrices(n_tokens: list[int], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((n, DIM)).astype(np.float32) for n in n_tokens]


def test_packing_is_one_padded_bit_row_per_token() -> None:
    matrix = _token_matrices([3], 0)[0]
    blob = pack_signs(matrix)
    assert token_sign_row_bytes(DIM) == 2 and token_sign_row_bytes(384) == 48
    assert len(blob) == 3 * 2
    rows = np.frombuffer(blob, dtype=np.uint8).reshape(3, 2)
    assert np.array_equal(np.unpackbits(rows, axis=1, count=DIM).astype(bool), matrix > 0)


def test_signs_round_trip_by_chunk_id_and_leave_with_their_document(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite"
    store = SQLiteStore(path)
    try:
        doc_a, chunks_a = _document("a", ["alpha one", "alpha two", "alpha three"])
        signs_a = [pack_signs(m) for m in _token_matrices([4, 1, 7], 1)]
        store.add_document(
            IndexedDocument(
                document=doc_a,
                chunks=chunks_a,
                vectors=_vectors(3, 1),
                embedder=EMBEDDER,
                token_signs=signs_a,
            )
        )
        doc_b, chunks_b = _document("b", ["beta one", "beta two"])
        store.add_document(
            IndexedDocument(
                document=doc_b, chunks=chunks_b, vectors=_vectors(2, 2), embedder=EMBEDDER
            )
        )  # no token data
        assert store.counts() == {"documents": 2, "units": 2, "chunks": 5, "token_chunks": 3}
        ids = {c.text: c.id for c in store.chunks(list(range(1, 6)))}
        a_ids = [ids[t.text] for t in chunks_a]
        b_ids = [ids[t.text] for t in chunks_b]
        assert store.token_signs(a_ids) == dict(zip(a_ids, signs_a, strict=True))
        # chunks without data and unknown ids are absent; order and repeats do not matter
        got = store.token_signs([b_ids[0], a_ids[2], 999, a_ids[2], -1])
        assert got == {a_ids[2]: signs_a[2]}
        assert store.token_signs([]) == {} and store.token_signs(b_ids) == {}
        # more ids than SQLite binds in one statement
        assert store.token_signs(list(range(-5000, 5000))) == dict(zip(a_ids, signs_a, strict=True))
    finally:
        store.close()
    db = sqlite3.connect(path)
    db.execute("PRAGMA foreign_keys=ON")
    db.execute("DELETE FROM documents WHERE id = 'a'")
    db.commit()
    assert db.execute("SELECT count(*) FROM chunk_tokens").fetchone() == (0,)
    assert db.execute("SELECT count(*) FROM chunks").fetchone() == (2,)
    db.close()
    store = SQLiteStore(path)
    try:
        assert store.token_signs(a_ids + b_ids) == {}
        assert store.counts()["token_chunks"] == 0
    finally:
        store.close()


@pytest.mark.parametrize(
    ("signs", "message"),
    [
        ([b"\x00\x01"], "2 chunks but 1 token sign blobs"),
        ([b"\x00\x01"] * 3, "2 chunks but 3 token sign blobs"),
        ([b"\x00\x01", b""], "chunk 1 are 0 bytes, not a positive multiple of 2"),
        ([b"\x00\x01\x02", b"\x00\x01"], "chunk 0 are 3 bytes, not a positive multiple of 2"),
        ([b"\x00\x01", "ab"], "chunk 1 are str, not bytes"),
    ],
)
def test_bad_token_signs_are_refused_before_anything_is_written(
    tmp_path: Path, signs: list[bytes], message: str
) -> None:
    store = SQLiteStore(tmp_path / "t.sqlite")
    try:
        document, chunks = _document("a", ["one", "two"])
        with pytest.raises(ValueError, match=message):
            store.add_document(
                IndexedDocument(
                    document=document,
                    chunks=chunks,
                    vectors=_vectors(2, 0),
                    embedder=EMBEDDER,
                    token_signs=signs,
                )
            )
        assert store.counts() == {"documents": 0, "units": 0, "chunks": 0, "token_chunks": 0}
        assert store.index_embedder() is None
    finally:
        store.close()


def test_a_version_5_index_gains_the_token_table_and_keeps_its_documents(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    store = SQLiteStore(path)
    document, chunks = _document("a", ["kept one", "kept two"])
    store.add_document(
        IndexedDocument(document=document, chunks=chunks, vectors=_vectors(2, 3), embedder=EMBEDDER)
    )
    store.close()
    db = sqlite3.connect(path)
    db.execute("DROP TABLE chunk_tokens")
    db.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    store = SQLiteStore(path)
    try:
        assert [d.id for d in store.list_documents()] == ["a"]
        assert [c.text for c in store.chunks([1, 2])] == ["kept one", "kept two"]
        assert store.token_signs([1, 2]) == {}  # older documents simply have no token data
        new, new_chunks = _document("b", ["new one"])
        blob = pack_signs(_token_matrices([5], 4)[0])
        store.add_document(
            IndexedDocument(
                document=new,
                chunks=new_chunks,
                vectors=_vectors(1, 4),
                embedder=EMBEDDER,
                token_signs=[blob],
            )
        )
        assert store.token_signs([1, 2, 3]) == {3: blob}
    finally:
        store.close()
    db = sqlite3.connect(path)
    version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    db.close()
    assert int(version) == SCHEMA_VERSION == 22  # 9: the full text rebuilt over terms
