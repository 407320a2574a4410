r"""The turns of a conversation as the doors pass them, and how a follow-up was resolved.

A thread is the list of earlier turns a client sends with its next question: each turn's
question, the answer text it got, and the spans that answer cited (document, unit, offsets,
quote). A saved thread (:class:`ThreadInfo`, its :class:`StoredTurn`\ s) keeps each turn's whole
answer as it was shown; :meth:`StoredTurn.as_turn` reads it as a sent turn, so that a stored
turn and a sent one resolve a follow-up alike. :class:`Resolution` says what a follow-up was
searched as ("searched for: ..."), which documents the earlier turns make likelier, and why.

Ground floor (the records row): the application, the doors, the conversation stage and the
evaluation all read these records; it imports only :mod:`.errors`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .errors import InvalidInput

__all__ = [
    "MAX_CITATIONS",
    "MAX_TURNS",
    "CitedSpan",
    "Resolution",
    "ResolutionKind",
    "StoredTurn",
    "ThreadCount",
    "ThreadInfo",
    "Turn",
    "search_terms",
    "turns_from_json",
]

#: The most earlier turns a request may carry (older ones are dropped by the client, not here).
MAX_TURNS = 20
#: The most citations an earlier turn may carry (an answer cites a few sentences; a request with
#: thousands would make the follow-up's work grow with them).
MAX_CITATIONS = 64
_MAX_TEXT = 20_000

#: How a question was searched: ``first`` (no earlier turn), ``standalone`` (a new topic: searched
#: as written), ``resolved`` (filled from the earlier turns without a model), ``rewritten`` (a
#: model's standalone rewrite).
ResolutionKind = Literal["first", "standalone", "resolved", "rewritten"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CitedSpan:
    """A span an earlier answer cited: ``unit`` 0-based, ``start``/``end`` offsets into the
    unit's canonical text, ``quote`` the cited text (may be empty when the client drops it)."""

    doc_id: str
    unit: int
    start: int
    end: int
    quote: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "unit": self.unit,
            "start": self.start,
            "end": self.end,
            "quote": self.quote,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Turn:
    """One earlier turn of a thread: the question, the answer text (empty for a refusal) and the
    spans the answer cited; ``searched_for`` is what that turn was searched as, when known."""

    question: str
    answer: str = ""
    citations: tuple[CitedSpan, ...] = ()
    searched_for: str | None = None

    @property
    def cited_documents(self) -> tuple[str, ...]:
        """The documents the answer cited, in order of first citation."""
        return tuple(dict.fromkeys(c.doc_id for c in self.citations))

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.answer,
            "citations": [c.to_json() for c in self.citations],
            "searched_for": self.searched_for,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Resolution:
    """What a question was searched as: ``searched_for`` (the question itself for a first or
    standalone question), ``prior_documents`` (the documents the earlier turns cited, which the
    search prefers without being limited to them; empty for a new topic), ``kind`` and
    ``reason`` (one line, for the user and the trace)."""

    question: str
    searched_for: str
    kind: ResolutionKind
    reason: str
    prior_documents: tuple[str, ...] = ()
    #: The words the earlier turns lend the follow-up (their subject, then the last answer's
    #: most repeated words): the extractive answerer weighs them below the question's own.
    context_words: tuple[str, ...] = ()
    #: The follow-up's own content words that no earlier turn has: what it asks beyond the
    #: inherited topic, so the cited passages must hold them (:mod:`truthbase.answer.policy`).
    new_words: tuple[str, ...] = ()
    #: What an ordinal of the follow-up points at ("the second one": "MAP", the second item of
    #: the list the previous answer gave; "the two": every item): its answer is about them.
    referents: tuple[str, ...] = ()
    #: The other items of the list when the ordinal names one ("the second one": GOVERN,
    #: MEASURE, MANAGE beside MAP): a sentence that names them too is about the list, not the
    #: item, so the answer cites it only when nothing else is left.
    referent_others: tuple[str, ...] = ()
    #: The question with its ordinal replaced by the referents ("What does MAP do?"): what the
    #: answerer reads (empty: nothing replaced).
    resolved_question: str = ""
    #: Other phrasings searched beside ``searched_for``, their rankings fused with its: a
    #: model's rewrite keeps the resolution without a model here, so evidence the rewrite
    #: words away is still found (extractive and LLM answers; agent mode is asked
    #: ``searched_for`` and searches as it decides).
    also_searched: tuple[str, ...] = ()
    #: What the previous answer cited when the follow-up compares with it ("How does that
    #: compare with ...?", "Did the Dodo's idea work any better?"): a comparison has two sides,
    #: and the answer shows the earlier one again beside the new one, each with its citation.
    compared: tuple[CitedSpan, ...] = ()

    @property
    def answer_question(self) -> str:
        """The question the answerer reads: a model's standalone rewrite, else the question as
        asked with what its ordinal points at in place ("What does MAP do?"); the context words
        of a resolution without a model help the search find the passage, but would make the
        answerer pick the earlier turn's sentences again."""
        if self.kind == "rewritten":
            return self.searched_for
        return self.words_question

    @property
    def words_question(self) -> str:
        """The question as asked with what its ordinal points at in place, even beside a
        model's rewrite: what the extractive answerer reads, which chooses sentences by their
        words, and a small model's paraphrase moves the words away from the passage ("What are
        the embeddings used in RAPTOR's tree building process?" for "What are they embedded
        with?"; docs/evals/conversations.md, session 22)."""
        return self.resolved_question or self.question

    @property
    def changed(self) -> bool:
        """Whether the search differs from the question as written."""
        return self.searched_for != self.question or bool(self.prior_documents)

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "searched_for": self.searched_for,
            "kind": self.kind,
            "reason": self.reason,
            "prior_documents": list(self.prior_documents),
            "context_words": list(self.context_words),
            "new_words": list(self.new_words),
            "referents": list(self.referents),
            "referent_others": list(self.referent_others),
            "also_searched": list(self.also_searched),
            # How many, not which: the spans' quotes are the earlier answer's, and a stored
            # resolution is shown again to whoever opens the thread.
            "compared": len(self.compared),
        }


def _text(data: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> str:
    value = data.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise InvalidInput(f"{where}: {key!r} must be a non-empty string")
    if len(value) > _MAX_TEXT:
        raise InvalidInput(f"{where}: {key!r} is longer than {_MAX_TEXT} characters")
    return value


def _span(data: Any, where: str) -> CitedSpan:
    if not isinstance(data, Mapping):
        raise InvalidInput(f"{where}: a citation is an object")
    numbers = {}
    for key in ("unit", "start", "end"):
        value = data.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidInput(f"{where}: {key!r} must be an integer >= 0")
        numbers[key] = value
    doc_id = _text(data, "doc_id", where, required=True)
    return CitedSpan(doc_id=doc_id, quote=_text(data, "quote", where), **numbers)


_WORD = re.compile(r"\w+")


def search_terms(text: str) -> frozenset[str]:
    """The words of ``text`` as a thread search matches them: runs of letters, digits and ``_``
    after NFKC, case-folded. The same function cuts a search's words and a thread's questions
    and answers, so a word matches the start of a word of theirs ("embed" finds "embedded",
    "rag" does not find "fragment"), on both backends alike."""
    return frozenset(_WORD.findall(unicodedata.normalize("NFKC", text).casefold()))


def turns_from_json(data: Any) -> list[Turn]:
    """The earlier turns of a request (a JSON list of :meth:`Turn.to_json` objects; a citation
    may also carry other keys, such as a whole answer's citation records, which are ignored).
    InvalidInput names the first thing wrong."""
    if data is None:
        return []
    if not isinstance(data, Sequence) or isinstance(data, str | bytes):
        raise InvalidInput("history: a list of earlier turns")
    if len(data) > MAX_TURNS:
        raise InvalidInput(f"history: at most {MAX_TURNS} earlier turns")
    turns: list[Turn] = []
    for i, item in enumerate(data, 1):
        where = f"history turn {i}"
        if not isinstance(item, Mapping):
            raise InvalidInput(f"{where}: a turn is an object")
        citations = item.get("citations") or []
        if not isinstance(citations, Sequence) or isinstance(citations, str | bytes):
            raise InvalidInput(f"{where}: 'citations' must be a list")
        if len(citations) > MAX_CITATIONS:
            raise InvalidInput(f"{where}: at most {MAX_CITATIONS} citations")
        searched = item.get("searched_for")
        turns.append(
            Turn(
                question=_text(item, "question", where, required=True),
                answer=_text(item, "answer", where),
                citations=tuple(_span(c, where) for c in citations),
                searched_for=searched if isinstance(searched, str) else None,
            )
        )
    return turns


@dataclass(frozen=True, slots=True, kw_only=True)
class ThreadInfo:
    """A saved thread: ``owner`` is its user's id (None: the local user or the operator),
    ``turns`` how many it has; ``updated_at`` is its last turn's time (lists are newest first)."""

    id: str
    owner: str | None
    title: str
    created_at: str
    updated_at: str
    turns: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "turns": self.turns,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredTurn:
    """One turn of a saved thread: the question as asked, the answer object as it was shown
    (its JSON, with citations, spans and rects), its id in the answer log, and how a follow-up
    was searched (:meth:`Resolution.to_json`; None for a question on its own)."""

    idx: int
    question: str
    answer: dict[str, Any]
    answer_id: int | None = None
    resolution: dict[str, Any] | None = None
    created_at: str = ""

    @property
    def searched_for(self) -> str | None:
        value = (self.resolution or {}).get("searched_for")
        return value if isinstance(value, str) else None

    def as_turn(self) -> Turn:
        """This turn as an earlier turn of the thread's next question (a refusal keeps no text;
        a citation record the store no longer reads whole is left out)."""
        spans: list[CitedSpan] = []
        for citation in self.answer.get("citations") or []:
            try:
                spans.append(_span(citation, f"stored turn {self.idx}"))
            except InvalidInput:
                continue  # an old or damaged record: the follow-up loses one prior, no more
        text = self.answer.get("text")
        refused = bool(self.answer.get("refused"))
        return Turn(
            question=self.question,
            answer="" if refused or not isinstance(text, str) else text,
            citations=tuple(spans),
            searched_for=self.searched_for,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ThreadCount:
    """What an admin is shown of one user's threads: how many, and how many turns; never
    their contents. ``owner`` None: the local user's or the operator's."""

    owner: str | None
    threads: int
    turns: int
