"""The search arms in PostgreSQL: ``truthbase.fts_arm`` and ``truthbase.dense_arm``
(``functions.sql``).

The full-text arm is BM25 in SQL as FTS5's bm25() computes it, over an OR of the query's terms
(:mod:`.terms`), scoring only the chunks that can still reach the top n; the dense arm is exact
cosine (a chunk scores the best of its own and its windows' vectors, as in SQLite), or HNSW.
:func:`truthbase.retrieve.hybrid.search` fuses them in Python, on both backends alike.
"""

from __future__ import annotations

from ...records import ArmHit, FloatMatrix
from ..codec import vector_literal
from .pool import Pool
from .schema import Hnsw
from .terms import terms_from_match_expression

__all__ = ["dense_search", "fts_search"]


def fts_search(
    pool: Pool, match_expression: str, limit: int, title_weight: float = 0.0
) -> list[ArmHit]:
    """BM25 (as FTS5's bm25() computes it, in SQL) over chunk text, plus the title (weight A)
    at ``title_weight`` (0: the title is not searched at all). ``match_expression`` is the
    FTS5 expression the retrieval layer builds; its terms become an OR of phrases (see
    :mod:`.terms`)."""
    terms = terms_from_match_expression(match_expression)
    if not terms:
        return []
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT chunk_id, rank, score FROM truthbase.fts_arm(%s::text[], %s, %s)",
            (terms, float(title_weight), int(limit)),
        ).fetchall()
    return [ArmHit(chunk_id=int(r[0]), rank=int(r[1]), score=float(r[2])) for r in rows]


def dense_search(pool: Pool, hnsw: Hnsw, query_vector: FloatMatrix, limit: int) -> list[ArmHit]:
    """Exact cosine (inner product of L2-normalized vectors), or HNSW when ``hnsw.enabled``;
    a chunk scores the best of its own and its windows' vectors."""
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT chunk_id, rank, score FROM truthbase.dense_arm(%s::vector, %s, %s, %s)",
            (vector_literal(query_vector), int(limit), hnsw.enabled, hnsw.ef_search),
        ).fetchall()
    return [ArmHit(chunk_id=int(r[0]), rank=int(r[1]), score=float(r[2])) for r in rows]
