"""Saved threads as use cases, for every door: a viewer's own conversations, listed, searched,
opened (each citation checked again against the index), renamed, deleted and continued.

The rules a door must not re-decide are here:

* A thread is its owner's alone: a thread of anyone else's is NotFound, exactly as a missing
  one, for admins too (the owner is the user's id; the local user's and the operator's are
  owned by nobody, ``None``).
* An admin (whoever sees everything) is shown counts per user, never contents
  (:func:`thread_counts`).
* Opening a thread checks every citation of every answer again (:func:`recheck_citation`): a
  document deleted since, no longer visible to the viewer, or ingested again with other text
  says so with the reason, and is never shown as a silently wrong highlight. The answers
  themselves are as they were shown.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ..access import may_see
from ..cite.audit import DOCUMENT_DELETED, check_citation
from ..cite.resolve import UnitCache
from ..errors import InvalidInput, NotFound
from ..people import REMOVED_USER, Viewer
from ..store import Accounts, DocumentReader, ThreadLog
from ..text.valid import display_line, require_text
from ..turns import MAX_TURNS, StoredTurn, ThreadInfo, Turn
from .accounts import require_admin
from .errors import Forbidden

__all__ = [
    "HIDDEN",
    "MAX_TITLE",
    "OpenedThread",
    "RecheckState",
    "ThreadCounts",
    "ThreadStore",
    "continue_thread",
    "delete_thread",
    "new_thread",
    "open_thread",
    "own_thread",
    "recheck_citation",
    "rechecked_turns",
    "rename_thread",
    "save_turn",
    "search_words",
    "thread_counts",
    "threads",
]

#: The longest title kept (a longer first question is cut).
MAX_TITLE = 200
_MAX_WORDS = 10
_MAX_WORD = 100

#: What a citation of a document the viewer may no longer see says.
HIDDEN = "the document is no longer visible to you"
_NOT_CHECKED = "shown as unverified when answered: not checked again"

#: A citation checked again: ``current`` (still on its page at its span), ``changed`` (the
#: document's text differs now), ``deleted``, ``hidden`` (no longer visible to the viewer),
#: ``unchecked`` (it was never shown as verified).
RecheckState = Literal["current", "changed", "deleted", "hidden", "unchecked"]


class ThreadStore(ThreadLog, DocumentReader, Accounts, Protocol):
    """What the thread use cases read."""


@dataclass(frozen=True, slots=True)
class OpenedThread:
    """A thread as its owner opens it: its turns, each answer with every citation's
    ``recheck`` (state and reason) added."""

    info: ThreadInfo
    turns: tuple[StoredTurn, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            **self.info.to_json(),
            "turns": [
                {
                    "idx": t.idx,
                    "question": t.question,
                    "answer": t.answer,
                    "answer_id": t.answer_id,
                    "searched_for": t.searched_for,
                    "resolution": t.resolution,
                    "created_at": t.created_at,
                }
                for t in self.turns
            ],
        }


@dataclass(frozen=True, slots=True)
class ThreadCounts:
    """One user's threads as an admin sees them: the user's name and the counts."""

    user: str
    threads: int
    turns: int

    def to_json(self) -> dict[str, Any]:
        return {"user": self.user, "threads": self.threads, "turns": self.turns}


def _owner(viewer: Viewer) -> str | None:
    """Whose threads the viewer's are: a signed-in user's id, None for the local user and the
    operator; a user without an id (never made by the gate) owns none, so never another's."""
    if viewer.local:
        return None
    if viewer.user_id is None:
        raise Forbidden("threads are kept per user id; this viewer has none")
    return viewer.user_id


def search_words(query: str | None) -> list[str]:
    """The words of a thread search (InvalidInput for too many or too long ones)."""
    words = (query or "").split()
    if len(words) > _MAX_WORDS:
        raise InvalidInput(f"a thread search takes at most {_MAX_WORDS} words")
    if any(len(w) > _MAX_WORD for w in words):
        raise InvalidInput(f"a thread search's words are at most {_MAX_WORD} characters")
    return words


def threads(store: ThreadLog, viewer: Viewer, query: str | None = None) -> list[ThreadInfo]:
    """The viewer's threads, newest first; with ``query``, those whose questions or answers
    hold, for each of its words, a word that begins with it
    (:func:`~truthbase.turns.search_terms`)."""
    return store.threads(_owner(viewer), search_words(query))


def own_thread(store: ThreadLog, viewer: Viewer, thread_id: str) -> ThreadInfo:
    """The viewer's thread ``thread_id``; NotFound for a missing one or anyone else's."""
    info = store.thread(require_text(thread_id, "thread id"))
    if info is None or info.owner != _owner(viewer):
        raise NotFound(f"no thread {thread_id}")
    return info


def _title(text: str) -> str:
    title = display_line(text)
    if not title:
        raise InvalidInput("a thread's title is empty")
    return title if len(title) <= MAX_TITLE else title[: MAX_TITLE - 1] + "…"


def new_thread(store: ThreadLog, viewer: Viewer, first_question: str) -> ThreadInfo:
    """A new thread of the viewer's, titled by its first question."""
    return store.add_thread(secrets.token_hex(16), _owner(viewer), _title(first_question))


def continue_thread(store: ThreadLog, viewer: Viewer, thread_id: str) -> tuple[Turn, ...]:
    """The earlier turns a question asked in the viewer's thread ``thread_id`` follows (the
    last :data:`~truthbase.turns.MAX_TURNS`); NotFound for anyone else's."""
    own_thread(store, viewer, thread_id)
    turns = store.thread_turns(thread_id)[-MAX_TURNS:]
    return tuple(t.as_turn() for t in turns)


def save_turn(
    store: ThreadLog,
    viewer: Viewer,
    thread_id: str | None,
    question: str,
    answer: dict[str, Any],
    *,
    answer_id: int | None,
    resolution: dict[str, Any] | None,
) -> str | None:
    """Append a finished answer to the viewer's thread ``thread_id`` (a new thread when None);
    the thread's id, or None when it was deleted while the answer ran."""
    if thread_id is None:
        thread_id = new_thread(store, viewer, question).id
    kept = store.add_turn(thread_id, question, answer, answer_id=answer_id, resolution=resolution)
    return thread_id if kept is not None else None


def rename_thread(store: ThreadLog, viewer: Viewer, thread_id: str, title: str) -> ThreadInfo:
    """A new title for the viewer's thread."""
    own_thread(store, viewer, thread_id)
    if not store.rename_thread(thread_id, _title(title)):
        raise NotFound(f"no thread {thread_id}")
    return own_thread(store, viewer, thread_id)


def delete_thread(store: ThreadLog, viewer: Viewer, thread_id: str) -> None:
    """Delete the viewer's thread (the answer log keeps its answers for ``truthbase verify``)."""
    own_thread(store, viewer, thread_id)
    if not store.delete_thread(thread_id):
        raise NotFound(f"no thread {thread_id}")


def recheck_citation(
    store: DocumentReader, units: UnitCache, viewer: Viewer, citation: Any
) -> tuple[RecheckState, str]:
    """A stored citation checked again against the index as the viewer may see it, with the
    reason ('' when it is current)."""
    if not isinstance(citation, dict):
        return "changed", "the citation is not an object"
    claims_page = citation.get("verified") is True or citation.get("state") in (
        "supported",
        "quote_only",
    )
    doc_id = citation.get("doc_id")
    document = store.document(doc_id) if isinstance(doc_id, str) else None
    if document is None:
        return "deleted", DOCUMENT_DELETED
    if not may_see(viewer, document):
        return "hidden", HIDDEN
    if not claims_page:
        return "unchecked", _NOT_CHECKED
    failure = check_citation(units, 0, citation)
    return ("changed", failure.why) if failure is not None else ("current", "")


def _hidden_removed(citation: dict[str, Any]) -> dict[str, Any]:
    # What the viewer may no longer see is not shown again: no quote, no rects.
    return {**citation, "quote": "", "rects": [], "claim": citation.get("claim", "")}


def _rechecked_answer(
    store: DocumentReader, units: UnitCache, viewer: Viewer, answer: dict[str, Any]
) -> dict[str, Any]:
    citations = answer.get("citations")
    if not isinstance(citations, list):
        return answer
    checked: list[Any] = []
    hidden_docs: set[str] = set()
    for citation in citations:
        state, reason = recheck_citation(store, units, viewer, citation)
        if not isinstance(citation, dict):
            checked.append(citation)
            continue
        if state == "hidden":
            hidden_docs.add(str(citation.get("doc_id")))
            citation = _hidden_removed(citation)
        checked.append({**citation, "recheck": {"state": state, "reason": reason}})
    sources = answer.get("sources")
    if isinstance(sources, list) and hidden_docs:
        sources = [
            {**s, "text": "", "rects": []}
            if isinstance(s, dict) and s.get("doc_id") in hidden_docs
            else s
            for s in sources
        ]
    return {**answer, "citations": checked, "sources": sources}


def open_thread(store: ThreadStore, viewer: Viewer, thread_id: str) -> OpenedThread:
    """The viewer's thread with every citation checked again (:func:`recheck_citation`)."""
    info = own_thread(store, viewer, thread_id)
    return OpenedThread(info, rechecked_turns(store, viewer, thread_id))


def rechecked_turns(store: ThreadStore, viewer: Viewer, thread_id: str) -> tuple[StoredTurn, ...]:
    """The thread's turns, each citation checked again as ``viewer`` may see it (whose thread
    it is, the caller has decided: its owner's, or a share's)."""
    units = UnitCache(store)
    return tuple(
        StoredTurn(
            idx=t.idx,
            question=t.question,
            answer=_rechecked_answer(store, units, viewer, t.answer),
            answer_id=t.answer_id,
            resolution=t.resolution,
            created_at=t.created_at,
        )
        for t in store.thread_turns(thread_id)
    )


def thread_counts(store: ThreadStore, viewer: Viewer) -> list[ThreadCounts]:
    """Per user, how many threads and turns (admins only; never their contents), by name."""
    require_admin(viewer)
    names = {u.id: u.name for u in store.users()}

    def name(owner: str | None) -> str:
        return "(local)" if owner is None else names.get(owner, REMOVED_USER)

    counts = [ThreadCounts(name(c.owner), c.threads, c.turns) for c in store.thread_counts()]
    return sorted(counts, key=lambda c: c.user)
