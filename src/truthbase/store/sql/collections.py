"""Collections, written once for both backends: the ``collections`` table (a name per user, the
user's id or NULL for the operator) and ``collection_documents`` (its document ids). A member
is an id, not a foreign key: a document deleted or re-ingested leaves it, and the scope rule
(:func:`truthbase.access.scope_of`) keeps only what the viewer may still see."""

from __future__ import annotations

from collections.abc import Collection

from ...errors import InvalidInput
from ...people import CollectionRecord
from .dialect import Connection, Dialect

__all__ = ["CollectionRows"]

# The user's collection: IS NOT DISTINCT FROM matches the operator's NULL too.
_OWNED = "user_id IS NOT DISTINCT FROM ? AND name = ?"


def _taken(name: str) -> InvalidInput:
    return InvalidInput(f"a collection named {name!r} exists already")


def _collection_id(conn: Connection, user_id: str | None, name: str) -> int | None:
    row = conn.execute(f"SELECT id FROM collections WHERE {_OWNED}", (user_id, name)).fetchone()
    return None if row is None else int(row[0])


class CollectionRows:
    """:class:`~truthbase.store.base.Collections` over :attr:`_sql`."""

    _sql: Dialect

    def collections(self, user_id: str | None) -> list[CollectionRecord]:
        with self._sql.read() as conn:
            rows = conn.execute(
                "SELECT c.name, c.created_at, m.doc_id FROM collections c "
                "LEFT JOIN collection_documents m ON m.collection_id = c.id "
                "WHERE c.user_id IS NOT DISTINCT FROM ? "
                f"ORDER BY c.name{self._sql.byte_order}, m.doc_id",
                (user_id,),
            ).fetchall()
        found: dict[str, tuple[str, list[str]]] = {}
        for name, created_at, doc_id in rows:
            members = found.setdefault(str(name), (str(created_at), []))[1]
            if doc_id is not None:
                members.append(str(doc_id))
        return [
            CollectionRecord(
                name=name, user_id=user_id, documents=tuple(members), created_at=created_at
            )
            for name, (created_at, members) in found.items()
        ]

    def collection(self, user_id: str | None, name: str) -> CollectionRecord | None:
        with self._sql.read() as conn:
            row = conn.execute(
                f"SELECT id, created_at FROM collections WHERE {_OWNED}", (user_id, name)
            ).fetchone()
            if row is None:
                return None
            members = conn.execute(
                "SELECT doc_id FROM collection_documents WHERE collection_id = ? ORDER BY doc_id",
                (int(row[0]),),
            ).fetchall()
        return CollectionRecord(
            name=name,
            user_id=user_id,
            documents=tuple(str(m[0]) for m in members),
            created_at=str(row[1]),
        )

    def add_collection(self, collection: CollectionRecord) -> None:
        try:
            with self._sql.write() as conn:
                row = conn.execute(
                    "INSERT INTO collections(user_id, name, created_at) VALUES (?, ?, ?) "
                    "RETURNING id",
                    (collection.user_id, collection.name, collection.created_at),
                ).fetchone()
                conn.executemany(
                    "INSERT INTO collection_documents(collection_id, doc_id) VALUES (?, ?)",
                    [(int(row[0]), d) for d in sorted(set(collection.documents))],
                )
        except self._sql.integrity_error as exc:
            raise _taken(collection.name) from exc

    def rename_collection(self, user_id: str | None, name: str, new_name: str) -> bool:
        try:
            with self._sql.write() as conn:
                changed = conn.execute(
                    f"UPDATE collections SET name = ? WHERE {_OWNED}", (new_name, user_id, name)
                ).rowcount
        except self._sql.integrity_error as exc:
            raise _taken(new_name) from exc
        return changed > 0

    def change_collection(
        self,
        user_id: str | None,
        name: str,
        *,
        add: Collection[str] = (),
        remove: Collection[str] = (),
    ) -> bool:
        with self._sql.write() as conn:
            collection_id = _collection_id(conn, user_id, name)
            if collection_id is None:
                return False
            conn.executemany(
                "INSERT INTO collection_documents(collection_id, doc_id) VALUES (?, ?) "
                "ON CONFLICT DO NOTHING",
                [(collection_id, d) for d in sorted(set(add))],
            )
            conn.executemany(
                "DELETE FROM collection_documents WHERE collection_id = ? AND doc_id = ?",
                [(collection_id, d) for d in sorted(set(remove))],
            )
        return True

    def remove_collection(self, user_id: str | None, name: str) -> bool:
        with self._sql.write() as conn:
            removed = conn.execute(f"DELETE FROM collections WHERE {_OWNED}", (user_id, name))
            return removed.rowcount > 0
