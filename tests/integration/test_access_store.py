"""The access filter inside both backends' retrieval arms, the documents' owner and visibility,
and the accounts tables (users, sessions, API tokens), on a real SQLite file and a real
PostgreSQL (tests/helpers/pg_server.py)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tests.helpers.pg_server import Backend
from tests.helpers.token_data import EMBEDDER, unit_vectors
from truthbase.errors import InvalidInput
from truthbase.model import ChunkDraft, ExtractedDocument, Unit
from truthbase.people import ApiTokenRecord, SessionRecord, UserRecord
from truthbase.records import IndexedDocument


def _document(sha: str, texts: list[str]) -> tuple[ExtractedDocument, list[ChunkDraft]]:
    text = " ".join(texts)
    document = ExtractedDocument(
        sha256=sha,
        title=f"Doc {sha}",
        path=f"/{sha}.pdf",
        kind="pdf",
        units=[Unit(index=0, text=text, boxes=[None] * len(text))],
        extractor_version="t",
    )
    chunks, start = [], 0
    for t in texts:
        chunks.append(ChunkDraft(unit=0, start=start, end=start + len(t), text=t, rects=()))
        start += len(t) + 1
    return document, chunks


def test_the_arms_filter_inside_so_a_hidden_best_match_frees_its_place(backend: Backend) -> None:
    store = backend.open()
    try:
        # "hidden" holds the best full-text match and the nearest vectors; "seen" the weaker
        hidden, hidden_chunks = _document("a" * 64, ["zebra zebra zebra stripes", "zebra mane"])
        seen, seen_chunks = _document("b" * 64, ["one zebra among horses", "a quiet field"])
        query = unit_vectors(1, 7)[0]
        near = np.stack([query, query]).astype(np.float32)  # cosine 1: the top of the dense arm
        store.add_document(
            IndexedDocument(
                document=hidden,
                chunks=hidden_chunks,
                vectors=near,
                embedder=EMBEDDER,
                owner="ann",
                visibility="private",
            )
        )
        store.add_document(
            IndexedDocument(
                document=seen, chunks=seen_chunks, vectors=unit_vectors(2, 8), embedder=EMBEDDER
            )
        )
        by_id = {c.id: c.doc_id for c in store.chunks(list(range(1, 10)))}
        everything = store.fts_search('"zebra"', 1)
        assert [by_id[h.chunk_id] for h in everything] == [hidden.sha256]
        allowed = {seen.sha256}
        fts = store.fts_search('"zebra"', 1, 0.0, allowed)
        assert [by_id[h.chunk_id] for h in fts] == [seen.sha256]  # the limit went to what is seen
        assert store.fts_search('"zebra"', 5, 1.0, allowed)[0].rank == 1
        dense_all = store.dense_search(query, 2)
        assert {by_id[h.chunk_id] for h in dense_all} == {hidden.sha256}
        dense = store.dense_search(query, 2, allowed)
        assert len(dense) == 2 and {by_id[h.chunk_id] for h in dense} == {seen.sha256}
        assert [h.rank for h in dense] == [1, 2]
        assert store.fts_search('"zebra"', 5, 0.0, frozenset()) == []
        assert store.dense_search(query, 5, frozenset()) == []

        info = store.document(hidden.sha256)
        assert info.owner == "ann" and info.visibility == "private"
        assert store.document(seen.sha256).owner is None
        assert store.document(seen.sha256).visibility == "shared"
        assert store.set_document_access(seen.sha256, "bob", "private")
        listed = {d.id: (d.owner, d.visibility) for d in store.list_documents()}
        assert listed == {hidden.sha256: ("ann", "private"), seen.sha256: ("bob", "private")}
    finally:
        store.close()


def test_a_private_document_needs_an_owner() -> None:
    document, chunks = _document("c" * 64, ["text"])
    with pytest.raises(InvalidInput):
        IndexedDocument(
            document=document,
            chunks=chunks,
            vectors=unit_vectors(1, 1),
            embedder=EMBEDDER,
            visibility="private",
        )


def test_users_sessions_and_tokens_round_trip(backend: Backend) -> None:
    store = backend.open()
    try:
        assert store.user_count() == 0 and store.users() == []
        ann = UserRecord(name="ann", password_hash="$argon2id$x", admin=True, created_at="t0")
        store.add_user(ann)
        store.add_user(UserRecord(name="bob", password_hash="$argon2id$y", created_at="t1"))
        with pytest.raises(InvalidInput, match="exists"):
            store.add_user(ann)
        assert store.user("ann") == ann and store.user("nobody") is None
        assert [u.name for u in store.users()] == ["ann", "bob"] and store.user_count() == 2
        bob_id = store.user("bob").id
        assert store.user_by_id(bob_id) == store.user("bob") and store.user_by_id("bob") is None

        old = SessionRecord(id_hash="s-old", user_id=bob_id, created_at=0.0, expires_at=10.0)
        store.add_session(old)
        new = SessionRecord(id_hash="s-new", user_id=bob_id, created_at=100.0, expires_at=200.0)
        store.add_session(new)  # forgets the session that expired before it began
        assert store.session("s-new") == new and store.session("s-old") is None
        store.add_session(
            SessionRecord(id_hash="s-ann", user_id=ann.id, created_at=100.0, expires_at=300.0)
        )
        assert store.set_password("bob", "$argon2id$z")  # ends bob's sessions
        assert store.session("s-new") is None and store.session("s-ann") is not None
        assert store.user("bob").password_hash == "$argon2id$z"
        assert not store.set_password("nobody", "h")
        store.remove_session("s-ann")
        assert store.session("s-ann") is None

        token = ApiTokenRecord(
            id="t1", secret_hash="h1", user_id=bob_id, name="ci", created_at="t2"
        )
        store.add_token(token)
        store.add_token(ApiTokenRecord(id="t2", secret_hash="h2", user_id=ann.id, created_at="t3"))
        assert store.token_by_hash("h1") == token and store.token_by_hash("zz") is None
        assert [t.id for t in store.tokens()] == ["t1", "t2"]
        assert [t.id for t in store.tokens(bob_id)] == ["t1"] and store.tokens("bob") == []
        assert store.revoke_token("t1", "t4") and not store.revoke_token("t1", "t5")
        assert store.token_by_hash("h1").revoked and store.token_by_hash("h1").revoked_at == "t4"

        store.add_session(
            SessionRecord(id_hash="s-b", user_id=bob_id, created_at=100.0, expires_at=900.0)
        )
        assert store.remove_user("bob") and not store.remove_user("bob")
        # sessions and tokens go with their user
        assert store.session("s-b") is None and store.tokens(bob_id) == []
        assert store.token_by_hash("h1") is None and store.user_count() == 1
    finally:
        store.close()


def test_a_title_several_documents_bear_is_told_apart_by_file_name(backend: Backend) -> None:
    store = backend.open()
    try:
        vectors = unit_vectors(1, 3)
        placed = {
            "a" * 64: ("The Listings Package", "/lib/listings/listings.pdf"),
            "b" * 64: ("The Listings Package", "/lib/listings/listings-devel.pdf"),
            "c" * 64: ("The Listings Package", f"/data/uploads/cc/{'c' * 64}.pdf"),
            "d" * 64: ("booktabs", "/lib/booktabs/booktabs.pdf"),
        }
        for sha, (title, path) in placed.items():
            document, chunks = _document(sha, ["a rule in a table"])
            document = dataclasses.replace(document, title=title, path=path)
            store.add_document(
                IndexedDocument(
                    document=document, chunks=chunks, vectors=vectors, embedder=EMBEDDER
                )
            )
        assert store.document_titles(["a" * 64, "b" * 64, "c" * 64, "d" * 64]) == {
            "a" * 64: "The Listings Package (listings.pdf)",
            "b" * 64: "The Listings Package (listings-devel.pdf)",
            "c" * 64: "The Listings Package (cccccccc)",  # an upload: its file is its hash
            "d" * 64: "booktabs",
        }
        # Told apart whichever of them a search returns: the count is over the whole index.
        assert store.document_titles(["b" * 64]) == {
            "b" * 64: "The Listings Package (listings-devel.pdf)"
        }
        assert store.document("b" * 64).title == "The Listings Package"  # stored as it was
    finally:
        store.close()
