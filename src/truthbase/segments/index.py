"""Building and loading a document's segment index: the I/O shell over build and summarize.

The index is cached in the store per (document, summarizer id): ``extractive-v1`` or
``llm:{model}``. A cached index built with other cutting rules (see
:func:`truthbase.segments.build.builder_id`) or another embedder is rebuilt on use.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..config import LLMSettings, SegmentSettings, SummarizerKind
from ..embed import Embedder
from ..errors import InvalidInput, NotFound
from ..llm.client import ChatModel
from ..records import FloatMatrix, Segment, StoredSegments
from ..store import SegmentStore
from ..text.valid import quoted
from .build import build_segments, builder_id
from .passages import strip_tags
from .summarize import EXTRACTIVE_ID, llm_summarizer_id, summarize_segments

__all__ = [
    "build_document_segments",
    "ensure_segments",
    "resolve_summarizer",
    "summarizer_id",
]


def resolve_summarizer(
    segments: SegmentSettings, llm: LLMSettings, requested: str | None, model: ChatModel | None
) -> SummarizerKind:
    """The summarizer to use: ``requested`` ("extractive", "llm", "auto" or None for
    ``segments.summarizer``); "auto" is llm when an LLM is configured and a model is at hand."""
    kind = requested or segments.summarizer
    if kind == "auto":
        return "llm" if model is not None and llm.base_url is not None else "extractive"
    if kind == "llm":
        if model is None:
            raise InvalidInput("the llm summarizer needs a chat model (set llm.base_url)")
        return "llm"
    if kind == "extractive":
        return "extractive"
    raise InvalidInput(f"unknown summarizer {quoted(kind)}: extractive, llm or auto")


def summarizer_id(kind: SummarizerKind, llm: LLMSettings) -> str:
    return llm_summarizer_id(llm.model) if kind == "llm" else EXTRACTIVE_ID


#: Summaries embedded per call (progress moves between calls).
_EMBED_BATCH = 8


def _summary_input(segment: Segment) -> str:
    return f"{segment.title}\n{strip_tags(segment.summary)}"


def build_document_segments(
    store: SegmentStore,
    doc_id: str,
    embedder: Embedder,
    settings: SegmentSettings,
    llm: LLMSettings,
    *,
    kind: SummarizerKind = "extractive",
    model: ChatModel | None = None,
    on_start: Callable[[str, int], None] | None = None,
    on_step: Callable[[], None] | None = None,
) -> StoredSegments:
    """Cut, summarize and embed one stored document's segments, and store them. ``settings``
    cut and summarize; ``llm`` names the model of the llm summarizer (and its timeout).

    For progress bars: ``on_start(doc_id, steps)`` says how many steps there are (two per
    segment: its summary, its summary's vector), ``on_step()`` marks each one done."""
    info = store.document(doc_id)
    if info is None:
        raise NotFound(f"no document {doc_id} in the index")
    texts: list[str] = []
    for index in range(info.unit_count):
        unit = store.unit(doc_id, index)
        texts.append(unit.text if unit is not None else "")
    segments = build_segments(doc_id, texts, store.document_toc(doc_id), settings, title=info.title)
    if on_start is not None:
        on_start(doc_id, 2 * len(segments))
    if kind == "llm" and model is None:
        raise InvalidInput("the llm summarizer needs a chat model")
    summarized = summarize_segments(
        segments,
        texts,
        max_sentences=settings.summary_sentences,
        model=model if kind == "llm" else None,
        model_id=llm.model,
        timeout=llm.timeout_s,
        passage_chars=settings.passage_chars,
        on_segment=(lambda _: on_step()) if on_step is not None else None,
    )
    batches: list[FloatMatrix] = []
    for i in range(0, len(summarized), _EMBED_BATCH):
        batch = summarized[i : i + _EMBED_BATCH]
        batches.append(embedder.embed([_summary_input(s) for s in batch]))
        if on_step is not None:
            for _ in batch:
                on_step()
    vectors = np.vstack(batches) if batches else np.zeros((0, embedder.dim), dtype=np.float32)
    stored = StoredSegments(
        segments=summarized,
        builder=builder_id(settings),
        vectors=np.asarray(vectors, dtype=np.float32),
        embedder=embedder.model_id,
    )
    store.put_segments(doc_id, summarizer_id(kind, llm), stored)
    return stored


def ensure_segments(
    store: SegmentStore,
    doc_id: str,
    embedder: Embedder,
    settings: SegmentSettings,
    llm: LLMSettings,
    *,
    kind: SummarizerKind = "extractive",
    model: ChatModel | None = None,
    rebuild: bool = False,
    on_start: Callable[[str, int], None] | None = None,
    on_step: Callable[[], None] | None = None,
) -> StoredSegments:
    """The document's cached segment index for this summarizer, built first when it is missing,
    stale (other cutting rules or embedder) or ``rebuild`` is asked."""
    cached = store.segments(doc_id, summarizer_id(kind, llm))
    if (
        cached is not None
        and not rebuild
        and cached.builder == builder_id(settings)
        and cached.embedder == embedder.model_id
    ):
        return cached
    return build_document_segments(
        store,
        doc_id,
        embedder,
        settings,
        llm,
        kind=kind,
        model=model,
        on_start=on_start,
        on_step=on_step,
    )
