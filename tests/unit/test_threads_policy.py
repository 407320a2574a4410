"""Saved threads' rules over a real SQLite store: a thread is its owner's alone (another user, an
admin too, gets NotFound; the local user's threads are nobody's user's), admins get counts and
never contents, and a stored turn reads back as the earlier turn a follow-up is resolved with."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from truthbase import accounts
from truthbase.app import Forbidden
from truthbase.app import threads as saved
from truthbase.errors import InvalidInput, NotFound
from truthbase.people import OPERATOR, Viewer
from truthbase.store import SQLiteStore
from truthbase.turns import CitedSpan, StoredTurn, search_terms

ANSWER = {
    "text": "Trees are built by clustering [1].",
    "refused": False,
    "citations": [
        {"n": 1, "doc_id": "d" * 64, "unit": 2, "start": 5, "end": 20, "quote": "clustering"},
        {"n": 2, "doc_id": "d" * 64, "unit": -1, "start": 0, "end": 1},  # damaged: left out
    ],
}


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    opened = SQLiteStore(tmp_path / "t.sqlite")
    yield opened
    opened.close()


def _viewer(store: SQLiteStore, name: str, *, admin: bool = False) -> Viewer:
    user = accounts.add_user(store, name, "correct horse battery", admin=admin)
    return Viewer(user=user.name, admin=admin, user_id=user.id)


def test_a_thread_is_its_owners_alone(store: SQLiteStore) -> None:
    ann, bob = _viewer(store, "ann"), _viewer(store, "bob")
    root = _viewer(store, "root", admin=True)
    thread_id = saved.save_turn(
        store, ann, None, "How are trees built?", ANSWER, answer_id=3, resolution=None
    )
    assert thread_id is not None
    assert [t.id for t in saved.threads(store, ann)] == [thread_id]
    for other in (bob, root, OPERATOR):
        assert saved.threads(store, other) == []
        with pytest.raises(NotFound):
            saved.open_thread(store, other, thread_id)
        with pytest.raises(NotFound):
            saved.continue_thread(store, other, thread_id)
        with pytest.raises(NotFound):
            saved.rename_thread(store, other, thread_id, "mine now")
        with pytest.raises(NotFound):
            saved.delete_thread(store, other, thread_id)
    with pytest.raises(Forbidden):
        saved.threads(store, Viewer(user="ghost"))  # a user without an id owns nothing
    (turn,) = saved.continue_thread(store, ann, thread_id)
    assert turn.question == "How are trees built?" and turn.answer == ANSWER["text"]
    assert turn.citations == (
        CitedSpan(doc_id="d" * 64, unit=2, start=5, end=20, quote="clustering"),
    )


def test_admins_get_counts_never_contents(store: SQLiteStore) -> None:
    ann, bob = _viewer(store, "ann"), _viewer(store, "bob")
    root = _viewer(store, "root", admin=True)
    first = saved.save_turn(store, ann, None, "one?", ANSWER, answer_id=1, resolution=None)
    saved.save_turn(store, ann, first, "two?", ANSWER, answer_id=2, resolution=None)
    saved.save_turn(store, OPERATOR, None, "local?", ANSWER, answer_id=3, resolution=None)
    with pytest.raises(Forbidden):
        saved.thread_counts(store, bob)
    counts = [c.to_json() for c in saved.thread_counts(store, root)]
    assert counts == [
        {"user": "(local)", "threads": 1, "turns": 1},
        {"user": "ann", "threads": 1, "turns": 2},
    ]


def test_titles_and_search_words_are_checked() -> None:
    with pytest.raises(InvalidInput):
        saved.search_words(" ".join(["w"] * 11))
    assert saved.search_words("  a   b ") == ["a", "b"]
    # words match whole words, after NFKC and case folding, punctuation aside
    assert search_terms("RAPTOR's ﬁle: 50%_off; Straße?") == {
        "raptor",
        "s",
        "file",
        "50",
        "_off",
        "strasse",
    }


def test_a_refused_turn_keeps_no_text() -> None:
    turn = StoredTurn(idx=0, question="q?", answer={**ANSWER, "refused": True})
    assert turn.as_turn().answer == "" and turn.searched_for is None
