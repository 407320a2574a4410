"""The access policy (truthbase.access): who sees which document, and the SQLite index's upgrade
to schema 7 (owner, visibility, accounts) in place. The arms' filter and the accounts tables on
both backends: tests/integration/test_access_store.py."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from truthbase.access import (
    may_manage,
    may_see,
    narrow,
    require_visible,
    sees_everything,
    visible_ids,
)
from truthbase.errors import InvalidInput, NotFound
from truthbase.model import DocumentInfo, Visibility
from truthbase.people import OPERATOR, Viewer
from truthbase.store import SQLiteStore
from truthbase.store.sqlite import SCHEMA_VERSION


def _doc(doc_id: str, owner: str | None, visibility: Visibility) -> DocumentInfo:
    return DocumentInfo(
        id=doc_id,
        title=doc_id,
        path=f"/{doc_id}.pdf",
        kind="pdf",
        unit_count=1,
        chunk_count=1,
        ingested_at="t",
        extractor_version="x",
        owner=owner,
        visibility=visibility,
    )


DOCS = [
    _doc("operator-shared", None, "shared"),
    _doc("ann-private", "ann", "private"),
    _doc("ann-shared", "ann", "shared"),
    _doc("bob-private", "bob", "private"),
]
# Documents name their owner by the user's id (here the same string as the name, for
# reading); the viewer carries both.
ANN = Viewer(user="ann", user_id="ann")
BOB = Viewer(user="bob", user_id="bob")
ADMIN = Viewer(user="root", admin=True, user_id="root")


def test_a_user_sees_shared_documents_and_their_own_and_nothing_else() -> None:
    assert visible_ids(ANN, DOCS) == {"operator-shared", "ann-private", "ann-shared"}
    assert visible_ids(BOB, DOCS) == {"operator-shared", "ann-shared", "bob-private"}
    assert not may_see(BOB, DOCS[1]) and may_see(ANN, DOCS[1])


def test_the_operator_the_local_user_and_admins_see_everything_without_a_filter() -> None:
    for viewer in (OPERATOR, Viewer(), ADMIN):
        assert sees_everything(viewer)
        assert visible_ids(viewer, DOCS) is None  # no filter at all: the arms stay as they were
        assert all(may_see(viewer, d) and may_manage(viewer, d) for d in DOCS)


def test_a_shared_document_of_another_user_is_readable_not_manageable() -> None:
    assert may_see(BOB, DOCS[2]) and not may_manage(BOB, DOCS[2])
    assert may_manage(ANN, DOCS[2])
    assert not may_manage(ANN, DOCS[0])  # the operator's shared document


def test_a_hidden_document_is_not_found_exactly_as_a_missing_one() -> None:
    with pytest.raises(NotFound) as hidden:
        require_visible(BOB, DOCS[1], "ann-private")
    with pytest.raises(NotFound) as missing:
        require_visible(BOB, None, "ann-private")
    assert str(hidden.value) == str(missing.value)
    assert require_visible(ANN, DOCS[1], "ann-private") is DOCS[1]


def test_narrowing_to_one_document_keeps_the_scope() -> None:
    assert narrow(None, "x") == {"x"}
    assert narrow(frozenset({"x", "y"}), "x") == {"x"}
    assert narrow(frozenset({"y"}), "x") == frozenset()  # not theirs: as if it did not exist
    assert narrow(frozenset({"y"}), None) == {"y"}


def test_a_version_6_index_gains_owner_visibility_and_the_account_tables(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    SQLiteStore(path).close()
    db = sqlite3.connect(path)
    # back to version 6: no owner or visibility columns, no account tables
    db.execute("DROP INDEX documents_by_owner")
    db.execute("ALTER TABLE documents DROP COLUMN owner")
    db.execute("ALTER TABLE documents DROP COLUMN visibility")
    for table in ("sessions", "api_tokens", "users"):
        db.execute(f"DROP TABLE {table}")
    db.execute(
        "INSERT INTO documents(id, title, path, kind, unit_count, ingested_at, "
        "extractor_version, report) VALUES ('d', 'T', '/d.pdf', 'pdf', 0, 't', 'x', '{}')"
    )
    db.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    store = SQLiteStore(path)
    try:
        (info,) = store.list_documents()
        assert info.owner is None and info.visibility == "shared"
        assert store.user_count() == 0
        assert store.set_document_access("d", "ann", "private")
        assert store.document("d") == _doc_of(info, "ann", "private")
        with pytest.raises(InvalidInput):
            store.set_document_access("d", None, "private")
        assert not store.set_document_access("nope", None, "shared")
    finally:
        store.close()
    db = sqlite3.connect(path)
    version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    db.close()
    assert int(version) == SCHEMA_VERSION == 22


def _doc_of(info: DocumentInfo, owner: str, visibility: Visibility) -> DocumentInfo:
    return DocumentInfo(
        id=info.id,
        title=info.title,
        path=info.path,
        kind=info.kind,
        unit_count=info.unit_count,
        chunk_count=info.chunk_count,
        ingested_at=info.ingested_at,
        extractor_version=info.extractor_version,
        owner=owner,
        visibility=visibility,
    )
