"""The book tools an agent calls, in the OpenAI function-calling schema (a :class:`Toolbox`).

- ``get_related_segment_summaries(question)``: picks the segments that concern the question and
  returns their SOURCE TEXT (not their summaries) as passages, each followed by its position
  tag. With a chat model, the model picks up to 5 segment ids per batch of ``{id, title,
  summary}`` records (batches of about ``segments.select_batch_tokens``, at most 5 batches);
  without one, or when it fails or picks nothing known, hybrid search picks: the segments that
  hold the top hybrid hits of the question (:func:`truthbase.retrieve.hybrid.search`), their
  scores summed, with the cosine of the question to each segment's summary as a tie-breaker
  (:mod:`.select`). At most ``segments.tool_max_chars`` of text come back; past that, the
  passages that match the question best (search hits, then term overlap), in reading order
  (:mod:`.budget`). A caller's ``max_chars`` (the room left in the model's context, from the
  agent loop) lowers that cap so that the whole rendered output, tags and headings included,
  fits it: still the best matching passages first.
- ``get_full_book_segment_summaries()``: every segment's summary with its title, in reading
  order, per document.

Every passage shown with a tag is also returned as a :class:`~truthbase.records.Source`
(numbered from ``first_n``), so that a tag copied into the answer resolves and is verified
(:mod:`.render`). :class:`BookTools` is the thin shell over those pure parts: the tool schemas
and argument checks, the store (segment indexes, built on first use, see :mod:`.index`; units),
the embedder, the search and the model calls.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..config import LLMSettings, RetrievalSettings, SegmentSettings, SummarizerKind
from ..embed import Embedder, embed_queries
from ..llm.budget import message_tokens, room_chars, window_of
from ..llm.client import ChatModel, LLMError, LLMTimeout
from ..llm.prompts import build_select_messages
from ..model import Unit
from ..records import StoredSegments, ToolError, ToolOutput
from ..retrieve.hybrid import search
from ..store import SegmentStore
from .budget import best_passages, every_passage, fits, segment_passages
from .index import ensure_segments, resolve_summarizer
from .render import NO_DOCUMENTS, full_summaries, related_passages, summary_spans
from .select import CHARS_PER_TOKEN as SELECT_CHARS_PER_TOKEN
from .select import (
    MAX_BATCHES,
    SEARCH_DEPTH,
    Entry,
    UnitHits,
    batches,
    picked,
    rank_by_search,
    record,
    scope_entries,
    unit_hits,
)

__all__ = [
    "FULL_SUMMARIES",
    "RELATED_SEGMENTS",
    "TOOL_SCHEMAS",
    "BookTools",
]

#: The book tools' names, owned here with their schemas; the agent loops of :mod:`truthbase.answer`
#: (``agent_loop``, ``agent_extractive``) call the tools by these names.
RELATED_SEGMENTS = "get_related_segment_summaries"
FULL_SUMMARIES = "get_full_book_segment_summaries"

_MAX_QUESTION = 2_000
_DELIMITER = re.compile(r"(?:<|&lt;)\s*/?\s*question\s*(?:>|&gt;)", re.IGNORECASE)
#: Renderings tried to fit a caller's max_chars (each cuts the text by the last overshoot).
_FIT_TRIES = 4

TOOL_SCHEMAS: tuple[dict[str, Any], ...] = (
    {
        "type": "function",
        "function": {
            "name": RELATED_SEGMENTS,
            "description": (
                "Find the sections of the book(s) that concern a question and return "
                "their source text, each passage followed by its position tag "
                "[f{unit}-{start}-{end}]. Call it before answering any question about "
                "the book's content; cite the tags of the passages that support each "
                "claim."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "question": {
                        "type": "string",
                        "description": "The question, or what to look for, in full.",
                    }
                },
                "required": ["question"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": FULL_SUMMARIES,
            "description": (
                "Return the summary of every section of the book(s), in reading order, "
                "with position tags. Use it for overview questions: what the book is "
                "about, its plot, themes or structure."
            ),
            "parameters": {
                "type": "object",
                "properties": {},
                "additionalProperties": False,
            },
        },
    },
)


def _related_question(name: str, arguments: dict[str, Any]) -> str:
    """The checked ``question`` argument of the related-segments tool, stripped."""
    extra = sorted(set(arguments) - {"question"})
    if extra:
        raise ToolError(f"{name}: unknown argument(s) {', '.join(extra)}")
    question = arguments.get("question")
    if not isinstance(question, str) or not question.strip():
        raise ToolError(f"{name}: 'question' must be a non-empty string")
    if len(question) > _MAX_QUESTION:
        raise ToolError(f"{name}: 'question' is longer than {_MAX_QUESTION} characters")
    # A small model copies the prompt's delimiters into its query ("...marry?&lt;/question>":
    # llama-cpp-python's template HTML-escapes the prompt): they are no words to search for.
    return _DELIMITER.sub(" ", question).strip() or question.strip()


class BookTools:
    """:class:`~truthbase.records.Toolbox` over a store's segment indexes.

    ``store`` must keep segments (both backends do); ``embedder`` is the index's embedder;
    ``segments``, ``retrieval`` and ``llm`` are the settings sections the tools read (cutting,
    summaries and output sizes; the search; the model's name and timeout); ``model``, when
    given, picks related segments (and writes the summaries when the summarizer resolves to
    "llm"); ``doc_ids`` limits the tools to those documents (default: every document in the
    store); ``summarizer`` overrides ``segments.summarizer`` ("extractive", "llm" or "auto":
    llm only when ``model`` is given and ``llm.base_url`` set; "llm" without ``model`` is
    extractive). Segment indexes are built on first use.
    """

    def __init__(
        self,
        store: SegmentStore,
        embedder: Embedder,
        segments: SegmentSettings,
        retrieval: RetrievalSettings,
        llm: LLMSettings,
        *,
        model: ChatModel | None = None,
        doc_ids: Sequence[str] | None = None,
        summarizer: str | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.segments = segments
        self.retrieval = retrieval
        self.llm = llm
        self.model = model
        self.doc_ids = list(doc_ids) if doc_ids is not None else None
        requested = summarizer or segments.summarizer
        # The tools must answer: without a model, summaries asked of one are extractive.
        self.kind: SummarizerKind = resolve_summarizer(
            segments,
            llm,
            "extractive" if requested == "llm" and model is None else requested,
            model,
        )
        self._indexes: dict[str, StoredSegments] = {}
        self._units: dict[tuple[str, int], Unit | None] = {}
        #: How the last related-segments call picked ("llm" or "search"), for events and tests.
        self.last_selection = ""

    # -- the Toolbox protocol -------------------------------------------------------------

    def schemas(self) -> list[dict[str, Any]]:
        return copy.deepcopy(list(TOOL_SCHEMAS))

    def call(
        self,
        name: str,
        arguments: dict[str, Any],
        first_n: int = 1,
        *,
        max_chars: int | None = None,
    ) -> ToolOutput:
        if not isinstance(arguments, dict):
            raise ToolError(f"{name}: arguments must be a JSON object")
        if name == RELATED_SEGMENTS:
            question = _related_question(name, arguments)
            return self.related_segments(question, first_n, max_chars=max_chars)
        if name == FULL_SUMMARIES:
            if arguments:
                raise ToolError(f"{name}: takes no arguments, got {', '.join(sorted(arguments))}")
            return self.full_summaries(first_n)
        known = ", ".join((RELATED_SEGMENTS, FULL_SUMMARIES))
        raise ToolError(f"unknown tool {name!r}; the tools are {known}")

    # -- the store ------------------------------------------------------------------------

    def _scope(self) -> list[tuple[str, str]]:
        """(doc_id, title) of the documents in scope, in a stable order."""
        documents = self.store.list_documents()
        if self.doc_ids is None:
            return [(d.id, d.title) for d in documents]
        titles = {d.id: d.title for d in documents}
        return [(doc_id, titles[doc_id]) for doc_id in self.doc_ids if doc_id in titles]

    def index(self, doc_id: str) -> StoredSegments:
        """The document's segment index (built and stored on first use)."""
        if doc_id not in self._indexes:
            self._indexes[doc_id] = ensure_segments(
                self.store,
                doc_id,
                self.embedder,
                self.segments,
                self.llm,
                kind=self.kind,
                model=self.model if self.kind == "llm" else None,
            )
        return self._indexes[doc_id]

    def _entries(self) -> list[Entry]:
        return scope_entries([(title, self.index(doc_id)) for doc_id, title in self._scope()])

    def _load_units(self, keys: Iterable[tuple[str, int]]) -> dict[tuple[str, int], Unit | None]:
        """The unit cache, with the units of ``keys`` read from the store where missing."""
        for key in keys:
            if key not in self._units:
                self._units[key] = self.store.unit(*key)
        return self._units

    # -- get_full_book_segment_summaries --------------------------------------------------

    def full_summaries(self, first_n: int = 1) -> ToolOutput:
        entries = self._entries()
        units = self._load_units((e.segment.doc_id, s.unit) for e, s in summary_spans(entries))
        return full_summaries(entries, units, first_n)

    # -- get_related_segment_summaries ----------------------------------------------------

    def related_segments(
        self, question: str, first_n: int = 1, *, max_chars: int | None = None
    ) -> ToolOutput:
        """The chosen segments' passages within ``segments.tool_max_chars`` of text and, when
        given, ``max_chars`` of rendered output (the best matching passages kept)."""
        entries = self._entries()
        if not entries:
            return ToolOutput(content=NO_DOCUMENTS)
        hits: UnitHits | None = None
        chosen: list[Entry] = []
        if self.model is not None:
            chosen = self._model_pick(self.model, question, entries)
            self.last_selection = "llm"
        if not chosen:
            chosen, hits = self._search_pick(question, entries)
            self.last_selection = "search"
        units = self._load_units(
            (e.segment.doc_id, p.unit) for e in chosen for p in e.segment.parts
        )
        per_segment = segment_passages(chosen, units, self.segments.passage_chars)
        budget = self.segments.tool_max_chars
        if max_chars is not None:
            budget = min(budget, max_chars)
        for _ in range(_FIT_TRIES):
            if fits(per_segment, budget):
                shown = every_passage(per_segment)
            else:
                if hits is None:
                    hits, _ = self._hits(question, chosen)
                shown = best_passages(question, per_segment, units, hits, budget)
            output = related_passages(shown, units, first_n)
            over = len(output.content) - max_chars if max_chars is not None else 0
            if over <= 0 or budget <= 0:
                return output
            budget -= over  # the tags and headings took it: that much less text
        return output

    def _model_pick(self, model: ChatModel, question: str, entries: list[Entry]) -> list[Entry]:
        """The model's picks over batches of summaries; [] when it fails or picks nothing.

        A batch that fails is skipped; a timeout ends the picking (the picks so far stand)."""
        chosen: list[Entry] = []
        for batch in batches(entries, self._batch_tokens(model, question))[:MAX_BATCHES]:
            messages = build_select_messages(question, [record(e) for e in batch])
            try:
                reply = model.complete(messages, self.llm.timeout_s)
            except LLMTimeout:
                break  # the next batch would wait as long: search picks instead
            except LLMError:
                continue
            chosen.extend(picked(reply, batch))
        return chosen

    def _batch_tokens(self, model: ChatModel, question: str) -> int:
        """``segments.select_batch_tokens``, lowered to what the model's context has room for
        (records are estimated at :data:`.select.CHARS_PER_TOKEN`)."""
        tokens = self.segments.select_batch_tokens
        window = window_of(model)
        if window is not None:
            used = message_tokens(build_select_messages(question, []))
            room = room_chars(window[0], window[1], used)
            tokens = max(1, min(tokens, room // SELECT_CHARS_PER_TOKEN))
        return tokens

    def _hits(self, question: str, entries: list[Entry]) -> tuple[UnitHits, dict[str, float]]:
        scope = frozenset(self.doc_ids) if self.doc_ids is not None else None
        result = search(
            self.store, self.embedder, question, self.retrieval, k=SEARCH_DEPTH, doc_ids=scope
        )
        return unit_hits(entries, result.hits)

    def _search_pick(self, question: str, entries: list[Entry]) -> tuple[list[Entry], UnitHits]:
        """Segments by hybrid search (:func:`.select.rank_by_search`), and the hits per unit
        (to rank passages)."""
        hits, text_score = self._hits(question, entries)
        has_vectors = any(e.vector is not None for e in entries)
        query = embed_queries(self.embedder, [question])[0] if has_vectors else None
        top = rank_by_search(entries, text_score, query, self.segments.related_segments)
        return top, hits
