"""The extractive agent: the agent mode without a language model (or when the model fails).

It calls the same book tools the model would, by a simple rule, and answers with verbatim text of
the book, so nothing is invented:

- :func:`question_kind` tells an *overview* question ("What is this book about?", "Summarize
  the book", "What are the main themes?") from a *detail* question, by pure word patterns.
- Overview: ``get_full_book_segment_summaries()``; the answer is the most relevant of the
  summaries' tagged passages (:func:`pick_overview`): the most typical of the whole book
  (:func:`centrality`), leaning towards the question, at most one per unit, no near-duplicates,
  in reading order, each verbatim and followed by its [n] and position tag.
- Detail: ``get_related_segment_summaries(question)``; the passages it returned are ranked (by
  the index's hybrid search when the shell has the store, :func:`hybrid_ranker`, else
  :func:`rank_passages`) and the extractive answerer
  (:class:`~truthbase.answer.extractive.ExtractiveAnswerer`) answers from the best
  ``agent.detail_sources`` (8), as the answer pipeline does from its 8 retrieved chunks; it
  refuses (NO_ANSWER) when its refusal model does (:mod:`.refusal_model`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ..access import DocScope
from ..cite.tags import format_tag
from ..config import RetrievalSettings
from ..embed import Embedder, embed_question_with
from ..llm.client import ToolCall
from ..model import overlaps
from ..records import NO_ANSWER, Source, Toolbox
from ..retrieve.hybrid import search
from ..segments.tools import FULL_SUMMARIES, RELATED_SEGMENTS
from ..store import Searchable
from ..text.vocabulary import idf_table, jaccard, terms, weighted_coverage
from .agent_loop import ToolRun, run_tool
from .extractive import ExtractiveAnswerer
from .scoring import usable

__all__ = [
    "AGENT_EXTRACTIVE",
    "ExtractiveAgentResult",
    "PassageRanker",
    "QuestionKind",
    "centrality",
    "extractive_agent",
    "hybrid_ranker",
    "pick_overview",
    "question_kind",
    "rank_passages",
]

#: The answerer name of the extractive agent (events and stored answers say it).
AGENT_EXTRACTIVE = "agent-extractive"

QuestionKind = Literal["overview", "detail"]

#: Orders a detail question's passages, best first.
PassageRanker = Callable[[str, Sequence[Source], Embedder], list[Source]]

_SUBJECT = r"(?:book|novel|story|text|work|document|report|paper|volume|it)"
_OVERVIEW = re.compile(
    r"\b(?:"
    rf"what(?:'s|\s+is|\s+are|\s+was)\s+(?:this|the|that|these)?\s*{_SUBJECT}s?\s+(?:all\s+)?about"
    r"|summar(?:y|ise|ize|ising|izing|ies)|synopsis|overview|gist|recap|outline\s+of"
    r"|main\s+(?:themes?|ideas?|points?|topics?|arguments?|plot|story|characters|message)"
    rf"|(?:key|central|major)\s+(?:themes?|ideas?|topics?)|themes?\s+of\s+(?:this|the)\s+{_SUBJECT}"
    rf"|(?:plot|storyline)\s+of\s+(?:this|the)\s+{_SUBJECT}"
    rf"|what\s+happens\s+in\s+(?:this|the)\s+{_SUBJECT}"
    rf"|tell\s+me\s+about\s+(?:this|the)\s+{_SUBJECT}"
    rf"|describe\s+(?:this|the)\s+{_SUBJECT}"
    r")\b",
    re.IGNORECASE,
)


def question_kind(question: str) -> QuestionKind:
    """``overview`` for questions about a whole book (what it is about, a summary, its main
    themes or plot), else ``detail``."""
    text = " ".join(unicodedata.normalize("NFKC", question).replace("’", "'").split())
    return "overview" if _OVERVIEW.search(text) else "detail"


@dataclass(frozen=True, slots=True, kw_only=True)
class OverviewPick:
    source: Source
    score: float


def centrality(texts: Sequence[str]) -> list[float]:
    """How typical each text is of all of them: the cosine of its tf-idf vector (stemmed
    content terms) to the mean of all the normalized vectors. Pure and fast (no model)."""
    bags = [Counter(terms(t)) for t in texts]
    idf, _ = idf_table([list(b) for b in bags])
    vectors: list[dict[str, float]] = []
    for bag in bags:
        weights = {t: (1.0 + math.log(c)) * idf[t] for t, c in bag.items()}
        norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
        vectors.append({t: w / norm for t, w in weights.items()})
    centroid: dict[str, float] = {}
    for vector in vectors:
        for t, w in vector.items():
            centroid[t] = centroid.get(t, 0.0) + w / len(vectors)
    norm = math.sqrt(sum(w * w for w in centroid.values())) or 1.0
    return [sum(w * centroid.get(t, 0.0) for t, w in v.items()) / norm for v in vectors]


def pick_overview(
    question: str,
    sources: Sequence[Source],
    embedder: Embedder,
    *,
    count: int,
    shortlist: int = 40,
    min_chars: int = 40,
    max_chars: int = 400,
    duplicate_jaccard: float = 0.6,
) -> list[OverviewPick]:
    """Up to ``count`` passages that best answer an overview question, in reading order.

    Each usable passage gets its :func:`centrality` (a question such as "what is this book
    about" shares few words with any one passage; the passages most typical of all of them
    stand for the book: its main characters and matters); the ``shortlist`` most central are
    re-scored with a quarter of the embedding cosine to the question added (so "what are the
    main themes" or "summarize the ending" lean their way; no more, since "what is this book
    about" is closest to the book's front and back matter: licenses, prefaces). At most one
    passage per unit of a document, so the answer spans the book rather than one chapter.
    """
    pool = [s for s in sources if usable(" ".join(s.text.split()), min_chars, max_chars)]
    if not pool or count <= 0:
        return []
    central = centrality([s.text for s in pool])
    top = sorted(range(len(pool)), key=lambda i: (-central[i], pool[i].n))[:shortlist]
    vectors = embed_question_with(embedder, question, [pool[i].text for i in top])
    cosines = np.clip(vectors[1:] @ vectors[0], 0.0, 1.0)
    scores = {i: central[i] + 0.25 * float(c) for i, c in zip(top, cosines, strict=True)}
    order = sorted(top, key=lambda i: (-scores[i], pool[i].n))
    chosen: list[OverviewPick] = []
    units: set[tuple[str, int]] = set()
    chosen_terms: list[list[str]] = []
    for i in order:
        source = pool[i]
        key = (source.doc_id, source.unit)
        t = terms(source.text)
        if key in units or any(jaccard(t, o) >= duplicate_jaccard for o in chosen_terms):
            continue
        chosen.append(OverviewPick(source=source, score=scores[i]))
        units.add(key)
        chosen_terms.append(t)
        if len(chosen) >= count:
            break
    chosen.sort(key=lambda p: p.source.n)
    return chosen


@dataclass(slots=True, kw_only=True)
class ExtractiveAgentResult:
    text: str  # with [n] markers and position tags, or NO_ANSWER
    kind: QuestionKind
    runs: list[ToolRun]
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def sources(self) -> list[Source]:
        return [s for r in self.runs for s in r.sources]


def _tag(source: Source) -> str:
    return format_tag(source.unit, source.start, source.end)


def extractive_agent(
    toolbox: Toolbox,
    question: str,
    embedder: Embedder,
    answerer: ExtractiveAnswerer,
    *,
    overview_sentences: int,
    detail_sources: int,
    rank: PassageRanker | None = None,
) -> ExtractiveAgentResult:
    """Answer ``question`` with the book tools and verbatim book text; see the module docstring.

    A tool that fails (:class:`ToolError`) leaves the agent without sources: it refuses.
    """
    kind = question_kind(question)
    if kind == "overview":
        call = ToolCall(id="extractive-1", name=FULL_SUMMARIES, arguments="{}")
    else:
        call = ToolCall(
            id="extractive-1", name=RELATED_SEGMENTS, arguments=_json_question(question)
        )
    run = run_tool(toolbox, call, step=1, first_n=1, forced=True)
    result = ExtractiveAgentResult(text=NO_ANSWER, kind=kind, runs=[run])
    result.info["question_kind"] = kind
    if run.error is not None:
        result.info["tool_error"] = run.error
        return result
    if kind == "overview":
        picks = pick_overview(
            question,
            run.sources,
            embedder,
            count=overview_sentences,
            duplicate_jaccard=answerer.settings.duplicate_jaccard,
        )
        if picks:
            result.text = " ".join(
                f"{' '.join(p.source.text.split())} [{p.source.n}]{_tag(p.source)}" for p in picks
            )
        result.info["overview_scores"] = [round(p.score, 4) for p in picks]
        return result
    ranked = (rank or rank_passages)(question, run.sources, embedder)[:detail_sources]
    # The answerer sees the best passages numbered 1..k, as retrieval ranks them in the answer
    # pipeline (its rank feature and threshold were calibrated that way); the answer cites them
    # by their numbers in this turn.
    renumbered = [dataclasses.replace(s, n=i) for i, s in enumerate(ranked, 1)]
    selection = answerer.select(question, renumbered)
    if not selection.refused:
        result.text = " ".join(
            f"{' '.join(c.text.split())} [{ranked[c.n - 1].n}]" for c in selection.chosen
        )
    result.info.update(
        {
            "support": round(selection.support, 4),
            "best_score": round(selection.best_score, 4),
            "missing_terms": list(selection.missing_terms),
            "unfilled_slot": selection.unfilled_slot,
            "threshold": answerer.settings.threshold,
            "answer_probability": round(selection.probability, 4),
            "ranked_sources": [s.n for s in ranked],
        }
    )
    return result


def rank_passages(question: str, sources: Sequence[Source], embedder: Embedder) -> list[Source]:
    """The sources best first: half the embedding cosine to the question, half the share of the
    question's idf mass (stemmed terms, idf over these sources) that each contains. The shell
    ranks by the index's hybrid search instead when it has the store (:func:`hybrid_ranker`)."""
    if not sources:
        return []
    wanted = terms(question)
    words = [terms(s.text) for s in sources]
    idf, unseen = idf_table(words)
    vectors = embed_question_with(embedder, question, [s.text for s in sources])
    cosines = np.clip(vectors[1:] @ vectors[0], 0.0, 1.0)
    scores = [
        0.5 * float(c) + 0.5 * weighted_coverage(wanted, w, idf, unseen)
        for c, w in zip(cosines, words, strict=True)
    ]
    order = sorted(range(len(sources)), key=lambda i: (-scores[i], sources[i].n))
    return [sources[i] for i in order]


def hybrid_ranker(
    store: Searchable,
    retrieval: RetrievalSettings,
    *,
    enough: int,
    depth: int = 50,
    doc_ids: DocScope = None,
) -> PassageRanker:
    """A ranker by the index's hybrid search: each passage takes the best rank of the search
    hits that overlap it; passages no hit overlaps follow, in :func:`rank_passages` order
    (ordered only when fewer than ``enough``, the passages the answerer reads, have a hit)."""

    def rank(question: str, sources: Sequence[Source], embedder: Embedder) -> list[Source]:
        hits = search(store, embedder, question, retrieval, k=depth, doc_ids=doc_ids).hits
        best: dict[int, int] = {}
        for r, hit in enumerate(hits):
            c = hit.chunk
            for s in sources:
                if overlaps(s, c) and s.n not in best:
                    best[s.n] = r
        # Passages are shorter than chunks, so several share a hit: among them the one that
        # matches the question best goes first.
        found = rank_passages(question, [s for s in sources if s.n in best], embedder)
        within = {s.n: i for i, s in enumerate(found)}
        found.sort(key=lambda s: (best[s.n], within[s.n]))
        rest = [s for s in sources if s.n not in best]
        return found + (rank_passages(question, rest, embedder) if len(found) < enough else rest)

    return rank


def _json_question(question: str) -> str:
    return json.dumps({"question": question}, ensure_ascii=False)
