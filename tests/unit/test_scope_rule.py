"""The scope rule of a question (truthbase.access.scope_of): what was asked, intersected with
what the viewer may see; a hidden document named is NotFound as a missing one, a collection's
hidden members drop out, an empty scope is InvalidInput. And an SQLite index of schema 15 opens
with the collections' tables (schema 17)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from truthbase.access import scope_of
from truthbase.errors import InvalidInput, NotFound
from truthbase.people import CollectionRecord
from truthbase.store import SQLiteStore
from truthbase.store.sqlite import SCHEMA_VERSION

VISIBLE = frozenset({"a", "b", "c"})


def test_named_documents_are_the_scope() -> None:
    assert scope_of(VISIBLE, ["a", "b"]) == {"a", "b"}
    assert scope_of(VISIBLE, ["a", "a"]) == {"a"}


def test_a_hidden_document_is_not_found_as_a_missing_one() -> None:
    with pytest.raises(NotFound) as hidden:
        scope_of(VISIBLE, ["a", "secret"])
    with pytest.raises(NotFound) as missing:
        scope_of(VISIBLE, ["a", "nothere"])
    assert str(hidden.value).replace("secret", "X") == str(missing.value).replace("nothere", "X")


def test_a_collection_keeps_only_what_the_viewer_may_see() -> None:
    assert scope_of(VISIBLE, (), {"b", "secret"}) == {"b"}
    assert scope_of(VISIBLE, ["a"], {"c"}) == {"a", "c"}  # both: the documents and the collection


def test_an_empty_scope_is_invalid_input() -> None:
    with pytest.raises(InvalidInput, match="no document"):
        scope_of(VISIBLE, (), {"secret"})
    with pytest.raises(InvalidInput):
        scope_of(VISIBLE, (), set())
    with pytest.raises(InvalidInput):
        scope_of(frozenset(), ())


def test_an_index_of_schema_15_opens_with_collections(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    SQLiteStore(db).close()
    with sqlite3.connect(db) as conn:  # back to 15: the collections' tables did not exist
        conn.execute("DROP TABLE collection_documents")
        conn.execute("DROP TABLE collections")
        conn.execute("UPDATE meta SET value = '15' WHERE key = 'schema_version'")
    store = SQLiteStore(db)
    try:
        store.add_collection(CollectionRecord(name="n", user_id=None, documents=("x",)))
        assert [c.documents for c in store.collections(None)] == [("x",)]
    finally:
        store.close()
    with sqlite3.connect(db) as conn:
        version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    assert int(version[0]) == SCHEMA_VERSION == 22
