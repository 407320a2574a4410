"""Chunk and window vectors stored as int8 codes with a scale a row (schema 21): the encoding
round-trips, the dense arm's scores are the exact cosines of the stored vectors (on the real
seed index: chunk vectors and sentence windows), and an index of schema 20 (float32 vectors) is
converted in place into the blobs a fresh ingest writes."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from tests.helpers.corpus import GOLDEN_DEV
from truthbase.embed import Embedder
from truthbase.eval.golden import load_golden
from truthbase.store import SQLiteStore
from truthbase.store.codec import (
    quantize,
    vector_code,
    vector_code_rows,
    vector_codes,
    vectors_from_codes,
)

pytestmark = pytest.mark.corpus

DIM = 384


def _unit_rows(n: int, seed: int) -> npt.NDArray[np.float32]:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def stored_top(path: Path, query: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
    """The top ``k`` chunks by the best cosine of their own and their windows' stored vectors,
    decoded one blob at a time in float64."""
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT id, vector FROM chunks UNION ALL SELECT chunk_id, vector FROM windows"
        ).fetchall()
    best: dict[int, float] = {}
    for chunk_id, blob in rows:
        scale = float(np.frombuffer(blob[:4], dtype="<f4")[0])
        codes = np.frombuffer(blob[4:], dtype=np.int8).astype(np.float64)
        score = float(codes @ query.astype(np.float64)) * scale
        best[chunk_id] = max(score, best.get(chunk_id, -2.0))
    return sorted(best.items(), key=lambda item: (-item[1], item[0]))[:k]


def test_quantized_rows_are_within_half_a_scale() -> None:
    vectors = _unit_rows(50, 5)
    codes, scales = quantize(vectors)
    assert codes.dtype == np.int8 and codes.nbytes * 4 == vectors.nbytes
    assert (np.abs(codes).max(axis=1) == 127).all()  # each row's peak is its scale's 127
    error = np.abs(codes.astype(np.float32) * scales[:, None] - vectors)
    assert (error <= scales[:, None] / 2 + 1e-7).all()


def test_a_vector_code_round_trips() -> None:
    vectors = _unit_rows(40, 6)
    blobs = vector_code_rows(vectors)
    assert [len(b) for b in blobs] == [DIM + 4] * 40
    assert blobs == [vector_code(v) for v in vectors]  # one at a time as in a block
    codes, scales = vector_codes(blobs, DIM)
    want_codes, want_scales = quantize(vectors)
    assert np.array_equal(codes, want_codes)
    assert np.array_equal(scales, want_scales)
    decoded = vectors_from_codes(blobs, DIM)
    assert decoded.dtype == np.float32 and decoded.shape == (40, DIM)
    assert (np.abs(decoded - vectors) <= want_scales[:, None] / 2 + 1e-7).all()
    # The decoded rows, coded again (a copy into PostgreSQL and back), keep their codes.
    again, _ = vector_codes(vector_code_rows(decoded), DIM)
    assert np.array_equal(again, want_codes)


def test_float32_blobs_of_older_indexes_read_as_their_codes() -> None:
    vectors = _unit_rows(6, 7)
    old = [v.tobytes() for v in vectors]
    new = vector_code_rows(vectors)
    mixed = [old[0], new[1], old[2], new[3], new[4], old[5]]
    for blobs in (old, mixed):
        codes, scales = vector_codes(blobs, DIM)
        assert np.array_equal(codes, quantize(vectors)[0])
        assert np.array_equal(scales, quantize(vectors)[1])
    with pytest.raises(ValueError, match="not one of dim 384"):
        vector_codes([b"\x00" * 100], DIM)


def test_dense_search_is_the_exact_search_of_the_stored_vectors(
    seed_db: Path, embedder: Embedder
) -> None:
    with sqlite3.connect(seed_db) as conn:
        lengths = {r[0] for r in conn.execute("SELECT DISTINCT length(vector) FROM windows")}
        lengths |= {r[0] for r in conn.execute("SELECT DISTINCT length(vector) FROM chunks")}
    assert lengths == {DIM + 4}  # a fresh ingest writes int8 codes
    questions = [q.question for q in load_golden(GOLDEN_DEV).questions][:20]
    noise = _unit_rows(10, 11)
    queries = np.vstack([embedder.embed(questions), noise])
    store = SQLiteStore(seed_db)
    try:
        for query in queries:
            for k in (1, 10, 50):
                got = [(h.chunk_id, h.score) for h in store.dense_search(query, k)]
                want = stored_top(seed_db, query, k)
                assert [c for c, _ in got] == [c for c, _ in want]
                assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-6)
        one_doc = store.list_documents()[0].id
        hits = store.dense_search(queries[0], 10, [one_doc])
        assert hits and {c.doc_id for c in store.chunks([h.chunk_id for h in hits])} == {one_doc}
    finally:
        store.close()


def test_rows_deleted_behind_the_cache_are_left_out(
    seed_db: Path, embedder: Embedder, tmp_path: Path
) -> None:
    path = tmp_path / "stale.sqlite"
    path.write_bytes(seed_db.read_bytes())
    path.chmod(0o644)
    store = SQLiteStore(path)
    try:
        query = embedder.embed(["the Govern function of the framework"])[0]
        first = store.dense_search(query, 10)
        gone = first[0].chunk_id
        # Another process deletes rows without the store seeing a new generation yet.
        with sqlite3.connect(path) as conn:
            conn.execute("DELETE FROM windows WHERE chunk_id = ?", (gone,))
            conn.execute("DELETE FROM chunks WHERE id = ?", (gone,))
        after = store.dense_search(query, 10)
        assert gone not in {h.chunk_id for h in after}
        assert [h.chunk_id for h in after][:9] == [h.chunk_id for h in first][1:10]
        assert len(after) == 10  # the next chunk takes the deleted one's place
    finally:
        store.close()


def _as_schema_20(seed_db: Path, path: Path) -> dict[tuple[str, int], bytes]:
    """A copy of the seed index as schema 20 stored it: float32 vectors (each stored vector
    decoded, then moved a little, so that it is no row an int8 code gives back exactly);
    returns each row's blob as a fresh ingest of those float32 vectors writes it."""
    shutil.copyfile(seed_db, path)
    rng = np.random.default_rng(13)
    expected: dict[tuple[str, int], bytes] = {}
    with sqlite3.connect(path) as conn:
        for table in ("chunks", "windows"):
            rows = conn.execute(f"SELECT id, vector FROM {table} ORDER BY id").fetchall()
            floats = vectors_from_codes([bytes(b) for _, b in rows], DIM)
            floats += rng.normal(0, 1e-3, floats.shape).astype(np.float32)
            floats /= np.linalg.norm(floats, axis=1, keepdims=True)
            conn.executemany(
                f"UPDATE {table} SET vector = ? WHERE id = ?",
                [(v.tobytes(), i) for (i, _), v in zip(rows, floats, strict=True)],
            )
            for (i, _), blob in zip(rows, vector_code_rows(floats), strict=True):
                expected[(table, int(i))] = blob
        conn.execute("UPDATE meta SET value = '20' WHERE key = 'schema_version'")
    return expected


def test_a_schema_20_index_gets_the_codes_of_a_fresh_ingest(
    seed_db: Path, embedder: Embedder, tmp_path: Path
) -> None:
    path = tmp_path / "old.sqlite"
    expected = _as_schema_20(seed_db, path)
    with sqlite3.connect(path) as conn:
        assert {r[0] for r in conn.execute("SELECT length(vector) FROM windows")} == {4 * DIM}
    store = SQLiteStore(path)  # opening it migrates it
    try:
        query = embedder.embed(["How does the framework define governance?"])[0]
        hits = [(h.chunk_id, h.score) for h in store.dense_search(query, 10)]
    finally:
        store.close()
    with sqlite3.connect(path) as conn:
        version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        stored = {
            (table, int(i)): bytes(blob)
            for table in ("chunks", "windows")
            for i, blob in conn.execute(f"SELECT id, vector FROM {table}")
        }
    assert version[0] == "22"
    assert stored == expected
    want = stored_top(path, query, 10)
    assert [c for c, _ in hits] == [c for c, _ in want]
