"""Backfilling token signs in PostgreSQL: ``truthbase.chunk_tokens`` (migration 5).

A mixin of :class:`truthbase.store.postgres.PostgresStore` (it borrows the store's pooled
connections and its embedder lookup), the Postgres half of ``Store.chunks_without_token_signs``
and ``Store.add_token_signs`` (:mod:`truthbase.backfill` calls them); kept out of ``postgres.py``
to hold that module under its size budget.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..records import IndexEmbedder
from .base import check_token_sign_map


class PostgresTokens:
    """Token-sign backfill methods of the PostgreSQL store."""

    _pool: Any  # postgres._Pool: connection() yields a pooled psycopg connection

    def _token_connection(self) -> AbstractContextManager[Any]:
        return self._pool.connection()  # type: ignore[no-any-return]

    if TYPE_CHECKING:  # PostgresStore's

        @staticmethod
        def _index_embedder_on(conn: Any) -> IndexEmbedder | None: ...

    def chunks_without_token_signs(self) -> list[int]:
        """Ids of the chunks that have no token signs, ascending."""
        with self._token_connection() as conn:
            rows = conn.execute(
                "SELECT c.id FROM truthbase.chunks c WHERE NOT EXISTS "
                "(SELECT 1 FROM truthbase.chunk_tokens t WHERE t.chunk_id = c.id) ORDER BY c.id"
            ).fetchall()
        return [int(r[0]) for r in rows]

    def add_token_signs(self, signs: Mapping[int, bytes]) -> int:
        """Token signs for chunks that lack them, in one transaction (a chunk's existing row is
        kept); an unknown chunk id or a bad blob raises ValueError before anything is written.
        Serialized with document writes (their advisory lock), so no chunk vanishes between
        the id check and the insert."""
        from .postgres import _WRITE_LOCK  # at call time: postgres imports this module

        if not signs:
            return 0
        with self._token_connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_WRITE_LOCK,))
            check_token_sign_map(signs, self._index_embedder_on(conn))
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
