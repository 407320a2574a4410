"""Managing documents, what both backends share of it: the users who hold a document besides
its owner and the prompt-injection screen's verdicts. Deleting and renaming touch the full
text, which each backend keeps its own way."""

from __future__ import annotations

import json

from ...records import ScreenResult
from ..codec import now_iso
from .dialect import Connection, Dialect

__all__ = ["HoldingRows", "holders_of", "restore_holders", "write_screen"]


def write_screen(conn: Connection, doc_id: str, screen: ScreenResult) -> None:
    """The screen's verdict on a document, replacing any earlier one (in the caller's
    transaction)."""
    conn.execute(
        "INSERT INTO document_screens(doc_id, version, flagged, result) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (doc_id) DO UPDATE SET version = excluded.version, "
        "flagged = excluded.flagged, result = excluded.result",
        (doc_id, screen.version, screen.flagged, json.dumps(screen.to_json())),
    )


def holders_of(conn: Connection, doc_id: str) -> list[tuple[str, str]]:
    """A document's holders with when each was added: what a re-ingest keeps."""
    rows = conn.execute(
        "SELECT holder, added_at FROM document_holders WHERE doc_id = ?", (doc_id,)
    ).fetchall()
    return [(str(holder), str(added)) for holder, added in rows]


def restore_holders(conn: Connection, doc_id: str, holders: list[tuple[str, str]]) -> None:
    """Put back the holders :func:`holders_of` read before the document's rows went."""
    conn.executemany(
        "INSERT INTO document_holders(doc_id, holder, added_at) VALUES (?, ?, ?)",
        [(doc_id, holder, added) for holder, added in holders],
    )


class HoldingRows:
    """Holders and screen verdicts of :class:`~truthbase.store.base.DocumentAdmin` over
    :attr:`_sql`."""

    _sql: Dialect

    def add_holder(self, doc_id: str, holder: str) -> None:
        with self._sql.write() as conn:
            conn.execute(
                "INSERT INTO document_holders(doc_id, holder, added_at) "
                "SELECT id, ?, ? FROM documents WHERE id = ? ON CONFLICT DO NOTHING",
                (holder, now_iso(), doc_id),
            )

    def remove_holder(self, doc_id: str, holder: str) -> bool:
        with self._sql.write() as conn:
            cursor = conn.execute(
                "DELETE FROM document_holders WHERE doc_id = ? AND holder = ?", (doc_id, holder)
            )
            return cursor.rowcount == 1

    def document_holders(self, doc_id: str) -> list[str]:
        with self._sql.read() as conn:
            rows = conn.execute(
                "SELECT holder FROM document_holders WHERE doc_id = ? "
                f"ORDER BY added_at, holder{self._sql.byte_order}",
                (doc_id,),
            ).fetchall()
        return [str(r[0]) for r in rows]

    def document_screen(self, doc_id: str) -> ScreenResult | None:
        with self._sql.read() as conn:
            row = conn.execute(
                "SELECT result FROM document_screens WHERE doc_id = ?", (doc_id,)
            ).fetchone()
        return ScreenResult.from_json(json.loads(row[0])) if row else None

    def flagged_documents(self) -> dict[str, ScreenResult]:
        """The verdicts of the documents the screen flagged, by document id."""
        with self._sql.read() as conn:
            rows = conn.execute(
                "SELECT doc_id, result FROM document_screens WHERE flagged = ?", (True,)
            ).fetchall()
        return {str(r[0]): ScreenResult.from_json(json.loads(r[1])) for r in rows}
