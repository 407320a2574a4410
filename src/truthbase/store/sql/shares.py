"""Read-only links to saved threads, written once for both backends: the ``thread_shares``
table. Who may share, revoke or open one is the application's (:mod:`truthbase.app.shares`);
these methods read and write what they are asked."""

from __future__ import annotations

from datetime import UTC, datetime

from .dialect import Dialect

__all__ = ["ShareRows"]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


class ShareRows:
    """:class:`~truthbase.store.base.ThreadShares` over :attr:`_sql`."""

    _sql: Dialect

    def add_share(self, token: str, thread_id: str) -> None:
        """A new open share of the thread under ``token``."""
        with self._sql.write() as conn:
            conn.execute(
                "INSERT INTO thread_shares(token, thread_id, created_at) VALUES (?, ?, ?)",
                (token, thread_id, _now()),
            )

    def open_share(self, thread_id: str) -> str | None:
        """The token of the thread's share that is not revoked, None when there is none."""
        with self._sql.read() as conn:
            row = conn.execute(
                "SELECT token FROM thread_shares WHERE thread_id = ? AND revoked_at IS NULL "
                "ORDER BY created_at DESC",
                (thread_id,),
            ).fetchone()
        return str(row[0]) if row is not None else None

    def shared_thread_id(self, token: str) -> str | None:
        """The thread ``token`` opens: None for an unknown or revoked token."""
        with self._sql.read() as conn:
            row = conn.execute(
                "SELECT thread_id FROM thread_shares WHERE token = ? AND revoked_at IS NULL",
                (token,),
            ).fetchone()
        return str(row[0]) if row is not None else None

    def revoke_shares(self, thread_id: str) -> int:
        """Revoke every open share of the thread; how many were open."""
        with self._sql.write() as conn:
            cur = conn.execute(
                "UPDATE thread_shares SET revoked_at = ? "
                "WHERE thread_id = ? AND revoked_at IS NULL",
                (_now(), thread_id),
            )
            return int(cur.rowcount)
