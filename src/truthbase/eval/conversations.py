"""Conversation evaluation: follow-up questions asked with the turns before them.

A conversation golden set (``shared/golden/CONVERSATIONS.md``) holds conversations of 2 or 3
turns, each turn a version-1 golden question without an id; every turn after the first carries
``follow-up`` and one kind tag (pronoun, ellipsis, comparison, drill-down, topic-shift,
unanswerable). Turn n is asked with turns 1..n-1 as history, their answers being the ones the
system itself gave (not the golden answers), and scored like a version-1 question: found in the
top 8 sources (R@8), answered with a correct citation, refused when unanswerable.

``resolve=False`` asks every follow-up as written (the baseline); ``resolve=True`` resolves it
against the history first (:func:`truthbase.conversation.resolve_question`, with ``model`` when
one is given). A topic-shift turn is also asked alone (no history), to show that the thread does
not drag the old topic in.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..answer import Answer, Answerer, ask
from ..config import RetrievalSettings
from ..conversation import ResolveSettings, is_standalone, resolve_question
from ..embed import Embedder
from ..llm.client import ChatModel
from ..store import DocumentReader, Searchable
from ..turns import CitedSpan, Resolution, Turn
from .answers import _record, golden_spans
from .golden import GoldenDocument, GoldenError, GoldenQuestion, GoldenSet
from .metrics import RetrievedChunk, first_hit_rank
from .retrieval import PreparedCorpus

__all__ = [
    "FOLLOW_UP_KINDS",
    "Conversation",
    "ConversationSet",
    "as_golden_set",
    "evaluate_conversations",
    "load_conversations",
    "summarize_turns",
    "topic_shift_detection",
]

#: The kind tags of a follow-up turn (CONVERSATIONS.md), one per turn.
FOLLOW_UP_KINDS = ("pronoun", "ellipsis", "comparison", "drill-down", "topic-shift", "unanswerable")
RECALL_K = 8


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ConversationTurn(_Model):
    question: str = Field(min_length=1)
    answerable: bool
    answer: str | None = None
    evidence: tuple[Any, ...] = ()
    tags: tuple[str, ...] = ()


class Conversation(_Model):
    id: str = Field(min_length=1)
    turns: tuple[ConversationTurn, ...] = Field(min_length=1)


class ConversationSet(_Model):
    version: int
    documents: dict[str, GoldenDocument]
    conversations: tuple[Conversation, ...]


def turn_id(conversation: str, index: int) -> str:
    """The id a turn is scored under: the conversation's id and the turn's 1-based number."""
    return f"{conversation}#{index}"


def as_golden_set(conversations: ConversationSet) -> GoldenSet:
    """The turns as one version-1 golden set (ids from :func:`turn_id`), for the corpus
    preparation and the scoring the other evaluations use; the golden rules validate them."""
    questions = [
        {"id": turn_id(c.id, i), **turn.model_dump()}
        for c in conversations.conversations
        for i, turn in enumerate(c.turns, 1)
    ]
    data = {
        "version": conversations.version,
        "documents": {k: v.model_dump() for k, v in conversations.documents.items()},
        "questions": questions,
    }
    try:
        return GoldenSet.model_validate(data)
    except ValidationError as exc:
        raise GoldenError(f"invalid conversation set:\n{exc}") from exc


def load_conversations(path: Path) -> tuple[ConversationSet, GoldenSet]:
    """Read a conversation golden set; also as a version-1 golden set (:func:`as_golden_set`)."""
    try:
        conversations = ConversationSet.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError) as exc:
        raise GoldenError(f"{path}: not a conversation golden set:\n{exc}") from exc
    return conversations, as_golden_set(conversations)


def follow_up_kind(tags: Sequence[str]) -> str | None:
    """A turn's follow-up kind (None for a first turn)."""
    if "follow-up" not in tags:
        return None
    return next((t for t in tags if t in FOLLOW_UP_KINDS), "other")


class _Scorer:
    """Asks one question and scores it against its golden record."""

    def __init__(
        self,
        store: Searchable,
        embedder: Embedder,
        retrieval: RetrievalSettings,
        prepared: PreparedCorpus,
        answerer: Answerer | None,
    ) -> None:
        self.store, self.embedder, self.retrieval = store, embedder, retrieval
        self.prepared, self.answerer = prepared, answerer
        self._hrefs: dict[tuple[str, int], str | None] = {}

    def _href(self, doc_id: str, unit: int) -> str | None:
        key = (doc_id, unit)
        if key not in self._hrefs:
            stored = self.store.unit(doc_id, unit)
            self._hrefs[key] = stored.href if stored is not None else None
        return self._hrefs[key]

    def rank(self, question: GoldenQuestion, answer: Answer) -> int | None:
        """The smallest k with all the evidence among the answer's first k sources."""
        names = self.prepared.names
        chunks = [
            RetrievedChunk(
                doc=names.get(s.doc_id, s.doc_id),
                unit=s.unit,
                text=s.text,
                href=self._href(s.doc_id, s.unit),
            )
            for s in answer.sources
        ]
        return first_hit_rank(question.evidence, chunks, RECALL_K)

    def score(
        self, question: GoldenQuestion, resolution: Resolution
    ) -> tuple[Answer, dict[str, Any]]:
        answer = ask(
            self.store,
            self.embedder,
            resolution.answer_question,
            self.retrieval,
            answerer=self.answerer,
            follow_up=resolution,
        )
        store: DocumentReader = self.store
        spans, _ = golden_spans(question, self.prepared, store)
        record = _record(question, answer, spans, store)
        record["found@8"] = self.rank(question, answer) is not None if question.answerable else None
        record["searched_for"] = resolution.searched_for
        if resolution.also_searched:
            record["also_searched"] = list(resolution.also_searched)
        record["resolution"] = resolution.kind
        record["new_words"] = list(resolution.new_words)
        record["new_words_held"] = answer.info.get("new_words_held")
        return answer, record


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def summarize_turns(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """R@8, answered with a correct citation (over answerable turns), unanswerable refused."""
    answerable = [r for r in records if r["answerable"]]
    unanswerable = [r for r in records if not r["answerable"]]
    return {
        "n": len(records),
        "recall@8": _share(sum(bool(r["found@8"]) for r in answerable), len(answerable)),
        "answered_with_correct_citation": _share(
            sum((not r["refused"]) and r["correct"] for r in answerable), len(answerable)
        ),
        "unanswerable_refused": _share(sum(r["refused"] for r in unanswerable), len(unanswerable)),
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
    }


def _topic_shifts(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    shifts = [r for r in records if r.get("kind_tag") == "topic-shift"]
    alone = [r["alone"] for r in shifts]
    return {
        "n": len(shifts),
        "in_thread": summarize_turns(shifts),
        "asked_alone": summarize_turns(alone),
    }


def _rewrites(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The model's rewrites of the follow-ups: how many were used, kept as standalone or
    failed open, and the seconds each call took (the resolution's time, the model's call
    nearly all of it)."""
    asked = [r for r in records if r["kind_tag"] is not None]
    seconds = sorted(r["resolve_seconds"] for r in asked)
    kinds = [r["resolution"] for r in asked]
    return {
        "follow_ups": len(asked),
        "rewritten": kinds.count("rewritten"),
        "kept_standalone": kinds.count("standalone"),
        "failed_open": sum("rewrite failed" in r["resolution_reason"] for r in asked),
        "seconds_mean": round(sum(seconds) / len(seconds), 2) if seconds else None,
        "seconds_median": seconds[len(seconds) // 2] if seconds else None,
        "seconds_max": seconds[-1] if seconds else None,
    }


def evaluate_conversations(
    conversations: ConversationSet,
    golden: GoldenSet,
    prepared: PreparedCorpus,
    store: Searchable,
    embedder: Embedder,
    retrieval: RetrievalSettings,
    *,
    resolve: bool = True,
    model: ChatModel | None = None,
    answerer: Answerer | None = None,
    settings: ResolveSettings | None = None,
    on_turn: Callable[[str], None] | None = None,
    rewrite_timeout: float = 8.0,
) -> dict[str, Any]:
    """The conversation report: ``first_turns`` and ``follow_ups`` (with ``by_kind``), the
    topic shifts beside the same questions asked alone, the model's rewrites (how many, how
    long each took; with ``model``), and per-turn records."""
    scorer = _Scorer(store, embedder, retrieval, prepared, answerer)
    titles = {d.id: d.title for d in store.list_documents()}
    by_id = {q.id: q for q in golden.questions}
    records: list[dict[str, Any]] = []
    for conversation in conversations.conversations:
        history: list[Turn] = []
        for index in range(1, len(conversation.turns) + 1):
            question = by_id[turn_id(conversation.id, index)]
            if on_turn is not None:
                on_turn(question.id)
            started = time.perf_counter()
            if resolve:
                resolution = resolve_question(
                    question.question,
                    history,
                    model=model,
                    timeout=rewrite_timeout,
                    settings=settings,
                    titles=titles,
                )
            else:
                resolution = Resolution(
                    question=question.question,
                    searched_for=question.question,
                    kind="first" if not history else "standalone",
                    reason="asked as written",
                )
            resolved_in = time.perf_counter() - started
            answer, record = scorer.score(question, resolution)
            record["kind_tag"] = follow_up_kind(question.tags)
            record["resolve_seconds"] = round(resolved_in, 3)
            record["resolution_reason"] = resolution.reason
            if record["kind_tag"] == "topic-shift":
                alone = Resolution(
                    question=question.question,
                    searched_for=question.question,
                    kind="first",
                    reason="asked alone",
                )
                record["alone"] = scorer.score(question, alone)[1]
            records.append(record)
            history.append(answer.as_turn(question.question, resolution.searched_for))
    firsts = [r for r in records if r["kind_tag"] is None]
    follow_ups = [r for r in records if r["kind_tag"] is not None]
    kinds = [k for k in (*FOLLOW_UP_KINDS, "other") if any(r["kind_tag"] == k for r in follow_ups)]
    return {
        "resolve": resolve,
        "model": model is not None,
        "conversations": len(conversations.conversations),
        "first_turns": summarize_turns(firsts),
        "follow_ups": {
            **summarize_turns(follow_ups),
            "by_kind": {
                k: summarize_turns([r for r in follow_ups if r["kind_tag"] == k]) for k in kinds
            },
        },
        "topic_shifts": _topic_shifts(records),
        "rewrites": _rewrites(records) if model is not None else None,
        "topic_shift_detection": topic_shift_detection(conversations),
        "per_turn": records,
    }


# -- the new-topic rule alone, on the golden turns, with cross-validation ------------------------


def golden_threads(conversations: ConversationSet) -> list[tuple[str, list[Turn], bool]]:
    """Each follow-up with its golden history (reference answers and quotes stand in for the
    system's, as CONVERSATIONS.md allows for scoring a turn in isolation) and whether it is a
    topic shift."""
    cases: list[tuple[str, list[Turn], bool]] = []
    for conversation in conversations.conversations:
        history: list[Turn] = []
        for turn in conversation.turns:
            if history:
                cases.append((turn.question, list(history), "topic-shift" in turn.tags))
            quotes = tuple(
                CitedSpan(doc_id=str(e["doc"]), unit=0, start=0, end=0, quote=str(e["quote"]))
                for e in turn.evidence
                if isinstance(e, dict)
            )
            history.append(Turn(question=turn.question, answer=turn.answer or "", citations=quotes))
    return cases


def _balanced_accuracy(
    cases: Sequence[tuple[str, list[Turn], bool]], settings: ResolveSettings
) -> float:
    hits = {True: [0, 0], False: [0, 0]}
    for question, history, shift in cases:
        hits[shift][0] += is_standalone(question, history, settings) == shift
        hits[shift][1] += 1
    shares = [right / total for right, total in hits.values() if total]
    return sum(shares) / len(shares) if shares else 0.0


def _grid() -> list[ResolveSettings]:
    return [
        ResolveSettings(standalone_words=w, standalone_overlap=o, named_words=n)
        for w in (2, 3, 4)
        for o in (0.15, 0.25, 0.35, 0.5)
        for n in (5, 6, 7, 8)
    ]


def topic_shift_detection(conversations: ConversationSet, folds: int = 5) -> dict[str, Any]:
    """The new-topic rule (:func:`~truthbase.conversation.is_standalone`) as a classifier of
    the golden follow-ups (topic-shift or not), balanced accuracy: with the default settings
    on all of them, and the grid's best fitted on all but one fold of conversations and
    measured on the fold left out (``cross_validated``)."""
    cases_by_conversation = {
        c.id: golden_threads(ConversationSet(version=1, documents={}, conversations=(c,)))
        for c in conversations.conversations
    }
    ids = sorted(cases_by_conversation)
    default = ResolveSettings()
    everything = [case for i in ids for case in cases_by_conversation[i]]
    left_out: list[float] = []
    for fold in range(folds):
        held = {i for n, i in enumerate(ids) if n % folds == fold}
        train = [case for i in ids if i not in held for case in cases_by_conversation[i]]
        test = [case for i in held for case in cases_by_conversation[i]]
        if not test:
            continue
        best = max(_grid(), key=lambda s: (_balanced_accuracy(train, s), s == default))
        left_out.append(_balanced_accuracy(test, best))
    return {
        "cases": len(everything),
        "topic_shifts": sum(shift for _, _, shift in everything),
        "default_settings": _balanced_accuracy(everything, default),
        "cross_validated": sum(left_out) / len(left_out) if left_out else None,
        "folds": len(left_out),
    }
