"""Token signs in SQLite: the ``chunk_tokens`` table (schema 6), read for late interaction and
backfilled for chunks ingested without them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...errors import InvalidInput
from ..base import check_token_sign_map
from .connection import Database, index_embedder

__all__ = ["add_token_signs", "chunks_without_token_signs", "token_signs"]

#: Ids per ``IN (...)``: SQLite binds at most 32766 parameters a statement (999 before 3.32).
_BATCH = 900


def token_signs(db: Database, chunk_ids: Sequence[int]) -> dict[int, bytes]:
    """The packed token signs of those of these chunks that have them."""
    ids = sorted({int(i) for i in chunk_ids})
    found: dict[int, bytes] = {}
    with db.lock:
        for first in range(0, len(ids), _BATCH):
            batch = ids[first : first + _BATCH]
            rows = db.conn.execute(
                f"SELECT chunk_id, signs FROM chunk_tokens "
                f"WHERE chunk_id IN ({','.join('?' * len(batch))})",
                batch,
            ).fetchall()
            found.update((int(r[0]), bytes(r[1])) for r in rows)
    return found


def chunks_without_token_signs(db: Database) -> list[int]:
    """Ids of the chunks that have no token signs, ascending."""
    with db.lock:
        rows = db.conn.execute(
            "SELECT c.id FROM chunks c WHERE NOT EXISTS "
            "(SELECT 1 FROM chunk_tokens t WHERE t.chunk_id = c.id) ORDER BY c.id"
        ).fetchall()
    return [int(r[0]) for r in rows]


def add_token_signs(db: Database, signs: Mapping[int, bytes]) -> int:
    """Token signs for chunks that lack them, in one transaction (a chunk's existing row is
    kept); an unknown chunk id or a bad blob raises InvalidInput before anything is written."""
    if not signs:
        return 0
    with db.transaction() as conn:
        check_token_sign_map(signs, index_embedder(conn))
        rows = [(int(chunk_id), bytes(blob)) for chunk_id, blob in signs.items()]
        ids = sorted({chunk_id for chunk_id, _ in rows})
        known: set[int] = set()
        for first in range(0, len(ids), _BATCH):
            batch = ids[first : first + _BATCH]
            known.update(
                int(r[0])
                for r in conn.execute(
                    f"SELECT id FROM chunks WHERE id IN ({','.join('?' * len(batch))})", batch
                )
            )
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise InvalidInput(f"no chunks with ids {unknown[:10]} ({len(unknown)} unknown)")
        before = conn.total_changes
        conn.executemany("INSERT OR IGNORE INTO chunk_tokens(chunk_id, signs) VALUES (?, ?)", rows)
        return conn.total_changes - before
