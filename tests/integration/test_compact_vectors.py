"""The dense arm's int8 vectors in memory, rescored with the file's float32 vectors, rank as the
float32 matrix does, on the real seed index (chunk vectors and sentence windows)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from tests.helpers.corpus import GOLDEN_DEV
from truthbase.embed import Embedder
from truthbase.eval.golden import load_golden
from truthbase.store import SQLiteStore
from truthbase.store.sqlite import search as sqlite_search
from truthbase.store.sqlite.search import quantize

pytestmark = pytest.mark.corpus


def float32_top(path: Path, query: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
    """The top ``k`` chunks by the best float32 cosine of their own and their windows' vectors."""
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT id, vector FROM chunks UNION ALL SELECT chunk_id, vector FROM windows"
        ).fetchall()
    best: dict[int, float] = {}
    for chunk_id, blob in rows:
        score = float(np.frombuffer(blob, dtype=np.float32) @ query)
        best[chunk_id] = max(score, best.get(chunk_id, -2.0))
    return sorted(best.items(), key=lambda item: (-item[1], item[0]))[:k]


def test_quantized_rows_are_within_half_a_scale() -> None:
    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((50, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    codes, scales = quantize(vectors)
    assert codes.dtype == np.int8 and codes.nbytes * 4 == vectors.nbytes
    error = np.abs(codes.astype(np.float32) * scales[:, None] - vectors)
    assert (error <= scales[:, None] / 2 + 1e-7).all()


@pytest.fixture(params=["int8", "float32"])
def in_memory(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The int8 codes with rescoring (any index over EXACT_IN_MEMORY_ROWS rows), or the float32
    rows of a small index."""
    rows = 0 if request.param == "int8" else 1_000_000
    monkeypatch.setattr(sqlite_search, "EXACT_IN_MEMORY_ROWS", rows)
    return str(request.param)


def test_dense_search_is_the_float32_search(
    seed_db: Path, embedder: Embedder, in_memory: str
) -> None:
    questions = [q.question for q in load_golden(GOLDEN_DEV).questions][:20]
    rng = np.random.default_rng(11)
    noise = rng.standard_normal((10, embedder.dim)).astype(np.float32)
    queries = np.vstack([embedder.embed(questions), noise / np.linalg.norm(noise, axis=1)[:, None]])
    store = SQLiteStore(seed_db)
    try:
        assert (store._vectors.vectors(store._db).exact is not None) == (in_memory == "float32")
        for query in queries:
            for k in (1, 10, 50):
                got = [(h.chunk_id, h.score) for h in store.dense_search(query, k)]
                want = float32_top(seed_db, query, k)
                assert [c for c, _ in got] == [c for c, _ in want]
                assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-5)
        one_doc = store.list_documents()[0].id
        hits = store.dense_search(queries[0], 10, [one_doc])
        assert hits and {c.doc_id for c in store.chunks([h.chunk_id for h in hits])} == {one_doc}
    finally:
        store.close()


def test_rows_deleted_behind_the_cache_are_left_out(
    seed_db: Path, embedder: Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The int8 path reads the shortlist back from the file, and so notices the rows gone.
    monkeypatch.setattr(sqlite_search, "EXACT_IN_MEMORY_ROWS", 0)
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
    finally:
        store.close()
