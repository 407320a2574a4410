"""Thread shares' rules over a real SQLite store (no documents: the answer cites one that is
not in the index): only a signed-in owner shares and revokes; a link opens for signed-in users
only; a cited document that is not there (deleted) makes the link 404 exactly as an unknown or
revoked one; revoking is for good and deleting the thread takes its links."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from truthbase import accounts
from truthbase.app import Forbidden, NotSignedIn, shares
from truthbase.app import threads as saved
from truthbase.errors import NotFound
from truthbase.people import OPERATOR, Viewer
from truthbase.store import SQLiteStore
from truthbase.turns import StoredTurn

NO_CITATION = {"text": "Nothing cited.", "refused": False, "citations": [], "sources": []}
CITES_MISSING = {
    "text": "Trees are built by clustering [1].",
    "citations": [{"n": 1, "doc_id": "d" * 64, "unit": 2, "start": 5, "end": 20}],
    "sources": [{"n": 1, "doc_id": "e" * 64, "text": "a source only"}],
}


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    opened = SQLiteStore(tmp_path / "s.sqlite")
    yield opened
    opened.close()


def _viewer(store: SQLiteStore, name: str) -> Viewer:
    user = accounts.add_user(store, name, "correct horse battery")
    return Viewer(user=user.name, user_id=user.id)


def _thread(store: SQLiteStore, owner: Viewer, answer: dict[str, object]) -> str:
    thread_id = saved.save_turn(store, owner, None, "How?", answer, answer_id=None, resolution=None)
    assert thread_id is not None
    return thread_id


def test_only_a_signed_in_owner_shares_and_revokes(store: SQLiteStore) -> None:
    ann, bob = _viewer(store, "ann"), _viewer(store, "bob")
    thread_id = _thread(store, ann, NO_CITATION)
    share = shares.share_thread(store, ann, thread_id)
    assert len(share.token) == 32 and share.to_json()["url"] == f"/?shared={share.token}"
    assert shares.share_thread(store, ann, thread_id) == share  # the open link again
    for other in (bob, OPERATOR):
        with pytest.raises(NotFound):
            shares.share_thread(store, other, thread_id)
        with pytest.raises(NotFound):
            shares.revoke_share(store, other, thread_id)
    local_thread = _thread(store, OPERATOR, NO_CITATION)
    with pytest.raises(Forbidden):
        shares.share_thread(store, OPERATOR, local_thread)


def test_a_link_opens_read_only_for_signed_in_users_until_revoked(store: SQLiteStore) -> None:
    ann, bob = _viewer(store, "ann"), _viewer(store, "bob")
    thread_id = _thread(store, ann, NO_CITATION)
    token = shares.share_thread(store, ann, thread_id).token
    opened = shares.open_shared(store, bob, token)
    assert opened.info.id == thread_id and [t.question for t in opened.turns] == ["How?"]
    with pytest.raises(NotSignedIn):
        shares.open_shared(store, OPERATOR, token)
    with pytest.raises(NotFound):  # the viewer of a link cannot add turns
        saved.continue_thread(store, bob, thread_id)
    shares.revoke_share(store, ann, thread_id)
    with pytest.raises(NotFound, match=shares.UNKNOWN_SHARE):
        shares.open_shared(store, bob, token)
    again = shares.share_thread(store, ann, thread_id).token
    assert again != token and shares.open_shared(store, bob, again).info.id == thread_id
    with pytest.raises(NotFound, match=shares.UNKNOWN_SHARE):
        shares.open_shared(store, bob, token)  # a revoked link stays closed
    assert store.delete_thread(thread_id)
    assert store.shared_thread_id(again) is None  # the thread's links went with it


def test_a_missing_cited_document_closes_the_link_as_an_unknown_token(
    store: SQLiteStore,
) -> None:
    ann, bob = _viewer(store, "ann"), _viewer(store, "bob")
    thread_id = _thread(store, ann, CITES_MISSING)
    token = shares.share_thread(store, ann, thread_id).token
    turns = store.thread_turns(thread_id)
    assert shares.shown_documents(turns) == {"d" * 64, "e" * 64}
    assert shares.shown_documents([StoredTurn(idx=0, question="q", answer={})]) == set()
    for viewer in (ann, bob):
        with pytest.raises(NotFound) as closed:
            shares.open_shared(store, viewer, token)
        with pytest.raises(NotFound) as unknown:
            shares.open_shared(store, viewer, "x" * 32)
        assert str(closed.value) == str(unknown.value) == shares.UNKNOWN_SHARE
