"""Token signs, written once for both backends: the ``chunk_tokens`` table, read for late
interaction and backfilled for chunks ingested without them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...errors import InvalidInput
from ..base import check_token_sign_map
from .dialect import Dialect, batches
from .documents import index_embedder

__all__ = ["TokenRows"]


class TokenRows:
    """:class:`~truthbase.store.base.TokenSigns` over :attr:`_sql`."""

    _sql: Dialect

    def token_signs(self, chunk_ids: Sequence[int]) -> dict[int, bytes]:
        """The packed token signs of those of these chunks that have them."""
        found: dict[int, bytes] = {}
        with self._sql.read() as conn:
            for batch in batches(self._sql, chunk_ids):
                among, params = self._sql.ids_in("chunk_id", batch)
                rows = conn.execute(
                    f"SELECT chunk_id, signs FROM chunk_tokens WHERE {among}", params
                ).fetchall()
                found.update((int(r[0]), bytes(r[1])) for r in rows)
        return found

    def chunks_without_token_signs(self) -> list[int]:
        """Ids of the chunks without token signs, ascending."""
        with self._sql.read() as conn:
            rows = conn.execute(
                "SELECT c.id FROM chunks c WHERE NOT EXISTS "
                "(SELECT 1 FROM chunk_tokens t WHERE t.chunk_id = c.id) ORDER BY c.id"
            ).fetchall()
        return [int(r[0]) for r in rows]

    def add_token_signs(self, signs: Mapping[int, bytes]) -> int:
        """Token signs for chunks that lack them, in one transaction (a chunk's own are
        kept); an unknown chunk id or a bad blob raises InvalidInput before anything is
        written. Serialized with document writes, so no chunk vanishes between the id check
        and the insert."""
        if not signs:
            return 0
        with self._sql.write() as conn:
            self._sql.lock_documents(conn)
            check_token_sign_map(signs, index_embedder(conn))
            known: set[int] = set()
            held: set[int] = set()
            for batch in batches(self._sql, signs):
                among, params = self._sql.ids_in("id", batch)
                known.update(
                    int(r[0])
                    for r in conn.execute(f"SELECT id FROM chunks WHERE {among}", params).fetchall()
                )
                among, params = self._sql.ids_in("chunk_id", batch)
                held.update(
                    int(r[0])
                    for r in conn.execute(
                        f"SELECT chunk_id FROM chunk_tokens WHERE {among}", params
                    ).fetchall()
                )
            unknown = sorted({int(i) for i in signs} - known)
            if unknown:
                raise InvalidInput(f"no chunks with ids {unknown[:10]} ({len(unknown)} unknown)")
            rows = [(int(i), bytes(blob)) for i, blob in signs.items() if int(i) not in held]
            if rows:
                conn.executemany("INSERT INTO chunk_tokens(chunk_id, signs) VALUES (?, ?)", rows)
        return len(rows)
