"""Token signs in PostgreSQL: ``truthbase.chunk_tokens`` (migration 5), read for late
interaction and backfilled for chunks ingested without them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...errors import InvalidInput
from ..base import check_token_sign_map
from .pool import Pool
from .schema import WRITE_LOCK, index_embedder

__all__ = ["add_token_signs", "chunks_without_token_signs", "token_signs"]


def token_signs(pool: Pool, chunk_ids: Sequence[int]) -> dict[int, bytes]:
    """The packed token signs of those of these chunks that have them."""
    if not chunk_ids:
        return {}
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT chunk_id, signs FROM truthbase.chunk_tokens WHERE chunk_id = ANY(%s)",
            ([int(i) for i in chunk_ids],),
        ).fetchall()
    return {int(r[0]): bytes(r[1]) for r in rows}


def chunks_without_token_signs(pool: Pool) -> list[int]:
    """Ids of the chunks that have no token signs, ascending."""
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT c.id FROM truthbase.chunks c WHERE NOT EXISTS "
            "(SELECT 1 FROM truthbase.chunk_tokens t WHERE t.chunk_id = c.id) ORDER BY c.id"
        ).fetchall()
    return [int(r[0]) for r in rows]


def add_token_signs(pool: Pool, signs: Mapping[int, bytes]) -> int:
    """Token signs for chunks that lack them, in one transaction (a chunk's existing row is
    kept); an unknown chunk id or a bad blob raises InvalidInput before anything is written.
    Serialized with document writes (their advisory lock), so no chunk vanishes between the id
    check and the insert."""
    if not signs:
        return 0
    with pool.connection() as conn, conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        check_token_sign_map(signs, index_embedder(conn))
        ids = [int(chunk_id) for chunk_id in signs]
        known = {
            int(r[0])
            for r in conn.execute(
                "SELECT id FROM truthbase.chunks WHERE id = ANY(%s)", (ids,)
            ).fetchall()
        }
        unknown = sorted(set(ids) - known)
        if unknown:
            raise InvalidInput(f"no chunks with ids {unknown[:10]} ({len(unknown)} unknown)")
        inserted = conn.execute(
            "INSERT INTO truthbase.chunk_tokens(chunk_id, signs) "
            "SELECT * FROM unnest(%s::bigint[], %s::bytea[]) "
            "ON CONFLICT (chunk_id) DO NOTHING RETURNING chunk_id",
            (ids, [bytes(blob) for blob in signs.values()]),
        ).fetchall()
    return len(inserted)
