"""The documents of an index as both backends read them: the listing, one document, units,
chunks, counts, the recorded embedder, and a document's owner and visibility. The write of a
document (full text, vectors) is each backend's own."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ...errors import InvalidInput
from ...model import Chunk, DocumentInfo, Unit, Visibility, told_apart
from ...records import SIGN_CODE, IndexEmbedder
from ..codec import UNIT_COLUMNS, chunks_in_order, document_info, unit_from_row
from .dialect import Connection, Dialect, batches

__all__ = ["DocumentRows", "index_embedder"]

#: counts()'s names and their tables
_COUNTED = (
    ("documents", "documents"),
    ("units", "units"),
    ("chunks", "chunks"),
    ("token_chunks", "chunk_tokens"),
)


def index_embedder(conn: Connection) -> IndexEmbedder | None:
    """The embedder recorded by the first document write (an index written before token codes
    were recorded stores every dimension's sign: SIGN_CODE)."""
    rows = dict(
        conn.execute(
            "SELECT key, value FROM meta WHERE key IN ('embedder', 'embedding_dim', 'token_code')"
        ).fetchall()
    )
    if "embedder" not in rows:
        return None
    return IndexEmbedder(
        model_id=rows["embedder"],
        dim=int(rows["embedding_dim"]),
        token_code=rows.get("token_code", SIGN_CODE),
    )


def _document_columns(sql: Dialect) -> str:
    holders = sql.group_concat("h.holder")
    return (
        "d.id, d.title, d.path, d.kind, d.unit_count, "
        "(SELECT count(*) FROM chunks c WHERE c.doc_id = d.id), d.ingested_at, "
        "d.extractor_version, d.owner, d.visibility, "
        f"(SELECT {holders} FROM document_holders h WHERE h.doc_id = d.id), "
        "(SELECT s.flagged FROM document_screens s WHERE s.doc_id = d.id), "
        "d.language, (SELECT u.name FROM users u WHERE u.id = d.owner)"
    )


#: Ids or titles per query of :meth:`DocumentRows.document_titles` (under SQLite's 999 variables).
_TITLES_AT_ONCE = 500


def _rows_in(conn: Connection, query: str, values: Sequence[str]) -> list[tuple[Any, ...]]:
    """The rows of ``query`` for ``values``, its ``{marks}`` their placeholders, asked in runs
    of :data:`_TITLES_AT_ONCE` (under SQLite's 999 variables)."""
    rows: list[tuple[Any, ...]] = []
    for first in range(0, len(values), _TITLES_AT_ONCE):
        part = values[first : first + _TITLES_AT_ONCE]
        rows.extend(conn.execute(query.format(marks=", ".join("?" * len(part))), part).fetchall())
    return rows


class DocumentRows:
    """The reads of :class:`~truthbase.store.base.Documents` over :attr:`_sql`."""

    _sql: Dialect

    def has_document(self, doc_id: str) -> bool:
        with self._sql.read() as conn:
            row = conn.execute("SELECT 1 FROM documents WHERE id = ?", (doc_id,)).fetchone()
        return row is not None

    def list_documents(self) -> list[DocumentInfo]:
        order = self._sql.byte_order
        with self._sql.read() as conn:
            rows = conn.execute(
                f"SELECT {_document_columns(self._sql)} FROM documents d "
                f"ORDER BY d.title{order}, d.id{order}"
            ).fetchall()
        return [document_info(row) for row in rows]

    def document(self, doc_id: str) -> DocumentInfo | None:
        with self._sql.read() as conn:
            row = conn.execute(
                f"SELECT {_document_columns(self._sql)} FROM documents d WHERE d.id = ?",
                (doc_id,),
            ).fetchone()
        return document_info(row) if row else None

    def unit(self, doc_id: str, index: int) -> Unit | None:
        with self._sql.read() as conn:
            row = conn.execute(
                f"SELECT {UNIT_COLUMNS} FROM units WHERE doc_id = ? AND idx = ?", (doc_id, index)
            ).fetchone()
        return unit_from_row(row) if row is not None else None

    def chunks(self, chunk_ids: Sequence[int]) -> list[Chunk]:
        """The chunks with these ids, in the order asked (missing ids are left out)."""
        rows: list[Any] = []
        with self._sql.read() as conn:
            for batch in batches(self._sql, chunk_ids):
                among, params = self._sql.ids_in("c.id", batch)
                rows += conn.execute(
                    'SELECT c.id, c.doc_id, c.unit, c.start, c."end", '
                    f"{self._sql.chunk_text}, c.rects, u.href, "
                    "c.kind, c.context, c.section FROM chunks c "
                    f"JOIN units u ON u.doc_id = c.doc_id AND u.idx = c.unit WHERE {among}",
                    params,
                ).fetchall()
        return chunks_in_order(rows, chunk_ids)

    def chunk_texts(self, chunk_ids: Sequence[int]) -> dict[int, str]:
        """The text of each chunk with one of these ids (missing ids are left out)."""
        texts: dict[int, str] = {}
        with self._sql.read() as conn:
            for batch in batches(self._sql, chunk_ids):
                among, params = self._sql.ids_in("c.id", batch)
                rows = conn.execute(
                    f"SELECT c.id, {self._sql.chunk_text} FROM chunks c "
                    f"JOIN units u ON u.doc_id = c.doc_id AND u.idx = c.unit WHERE {among}",
                    params,
                )
                texts.update((int(chunk_id), str(text)) for chunk_id, text in rows.fetchall())
        return texts

    def chunk_documents(self, chunk_ids: Sequence[int]) -> dict[int, str]:
        """The document id of each chunk with one of these ids (missing ids are left out)."""
        owners: dict[int, str] = {}
        with self._sql.read() as conn:
            for batch in batches(self._sql, chunk_ids):
                among, params = self._sql.ids_in("id", batch)
                rows = conn.execute(f"SELECT id, doc_id FROM chunks WHERE {among}", params)
                owners.update((int(chunk_id), str(doc_id)) for chunk_id, doc_id in rows.fetchall())
        return owners

    def document_titles(self, doc_ids: Iterable[str]) -> dict[str, str]:
        """The title of each document with one of these ids (missing ids are left out): what a
        search hit shows, without :meth:`document`'s counts (a chunk count per document, which
        grows with the document). A title that several documents of the index bear is told
        apart by each one's file name (:func:`~truthbase.model.told_apart`)."""
        with self._sql.read() as conn:
            found = [
                (str(i), str(t), str(p))
                for i, t, p in _rows_in(
                    conn,
                    "SELECT id, title, path FROM documents WHERE id IN ({marks})",
                    sorted(set(doc_ids)),
                )
            ]
            shared = {
                str(t)
                for (t,) in _rows_in(
                    conn,
                    "SELECT title FROM documents WHERE title IN ({marks}) "
                    "GROUP BY title HAVING COUNT(*) > 1",
                    sorted({title for _, title, _ in found}),
                )
            }
        return {doc_id: told_apart(doc_id, title, path, shared) for doc_id, title, path in found}

    def index_embedder(self) -> IndexEmbedder | None:
        with self._sql.read() as conn:
            return index_embedder(conn)

    def languages(self) -> list[str | None]:
        """The languages of the index's units and document titles (None: unknown), sorted."""
        with self._sql.read() as conn:
            rows = conn.execute(
                "SELECT language FROM units UNION SELECT language FROM documents"
            ).fetchall()
        return sorted({row[0] for row in rows}, key=lambda code: code or "")

    def counts(self) -> dict[str, int]:
        with self._sql.read() as conn:
            return {
                name: int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
                for name, table in _COUNTED
            }

    def set_document_access(self, doc_id: str, owner: str | None, visibility: Visibility) -> bool:
        """A document's owner and visibility; False when there is no such document."""
        if visibility == "private" and owner is None:
            raise InvalidInput("a private document needs an owner")
        with self._sql.write() as conn:
            cursor = conn.execute(
                "UPDATE documents SET owner = ?, visibility = ? WHERE id = ?",
                (owner, visibility, doc_id),
            )
            return cursor.rowcount > 0
