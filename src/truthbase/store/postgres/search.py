"""The search arms in PostgreSQL: ``truthbase.fts_arm`` and ``truthbase.dense_arm``
(``functions.sql``).

The full-text arm is BM25 in SQL as FTS5's bm25() computes it, over an OR of the query's terms
(:mod:`.terms`), scoring only the chunks that can still reach the top n; the dense arm is exact
cosine (a chunk scores the best of its own and its windows' vectors, as in SQLite), or HNSW.
:func:`truthbase.retrieve.hybrid.search` fuses them in Python, on both backends alike.
"""

from __future__ import annotations

from collections.abc import Collection

from ...records import ArmHit, FloatMatrix
from ..codec import vector_literal
from .pool import Connection, Pool
from .schema import Hnsw, hnsw_ready
from .terms import terms_from_match_expression

__all__ = ["dense_search", "fts_search"]


def _doc_array(doc_ids: Collection[str] | None) -> list[str] | None:
    """The arms' ``doc_ids text[]`` argument: NULL for no filter."""
    return None if doc_ids is None else sorted(doc_ids)


def fts_search(
    pool: Pool,
    match_expression: str,
    limit: int,
    title_weight: float = 0.0,
    doc_ids: Collection[str] | None = None,
) -> list[ArmHit]:
    """BM25 (as FTS5's bm25() computes it, in SQL) over chunk text, plus the title (weight A)
    at ``title_weight`` (0: the title is not searched at all). ``match_expression`` is the
    FTS5 expression the retrieval layer builds; its terms become an OR of phrases (see
    :mod:`.terms`). ``doc_ids`` (None: all) filters inside the SQL function."""
    terms = terms_from_match_expression(match_expression)
    if not terms:
        return []
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT chunk_id, rank, score FROM truthbase.fts_arm(%s::text[], %s, %s, %s::text[])",
            (terms, float(title_weight), int(limit), _doc_array(doc_ids)),
        ).fetchall()
    return [ArmHit(chunk_id=int(r[0]), rank=int(r[1]), score=float(r[2])) for r in rows]


def dense_search(
    pool: Pool,
    hnsw: Hnsw,
    query_vector: FloatMatrix,
    limit: int,
    doc_ids: Collection[str] | None = None,
) -> list[ArmHit]:
    """Exact cosine (inner product of L2-normalized vectors), or HNSW when ``hnsw.enabled``
    or, with ``hnsw.min_rows`` set, once the index has grown past it and its HNSW indexes are
    built (:func:`.schema.maybe_hnsw`); a chunk scores the best of its own and its windows'
    vectors. ``doc_ids`` (None: all) filters inside the SQL function; when the HNSW
    candidates hold fewer than ``limit`` chunks of them, the exact arm answers."""
    with pool.connection() as conn:
        use_index = hnsw.enabled or (hnsw.min_rows is not None and hnsw_ready(conn))
        rows = _dense_rows(conn, query_vector, limit, use_index, hnsw.ef_search, doc_ids)
        if use_index and doc_ids is not None and len(rows) < limit:
            rows = _dense_rows(conn, query_vector, limit, False, hnsw.ef_search, doc_ids)
    return [ArmHit(chunk_id=r[0], rank=r[1], score=r[2]) for r in rows]


def _dense_rows(
    conn: Connection,
    query_vector: FloatMatrix,
    limit: int,
    use_index: bool,
    ef_search: int,
    doc_ids: Collection[str] | None,
) -> list[tuple[int, int, float]]:
    rows = conn.execute(
        "SELECT chunk_id, rank, score FROM truthbase.dense_arm(%s::vector, %s, %s, %s, %s::text[])",
        (vector_literal(query_vector), int(limit), use_index, ef_search, _doc_array(doc_ids)),
    ).fetchall()
    return [(int(r[0]), int(r[1]), float(r[2])) for r in rows]
