"""Backfill: token signs for the chunks of an index that was built before they were stored.

An index created before SQLite schema 6 (PostgreSQL migration 5) is upgraded in place with an
empty ``chunk_tokens`` table, so the late-interaction list (:mod:`truthbase.retrieve.late`)
silently skips its chunks. This re-embeds each such chunk exactly as ingest does (the same
``context_text`` of title and chunk text, the same embedder), packs its token vectors in the
index's token code and writes them batch by batch: an interrupted run keeps what it wrote, and
the next run picks up the chunks still missing. Vectors, windows and full text are left as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..config import ChunkingSettings
from ..embed import Embedder, TokenEmbedder, check_compatible
from ..embed.token_code import token_code
from ..model import Chunk
from ..store import DocumentReader, TokenSigns
from .embedding import stored_rows
from .windows import embedded_text

__all__ = ["BackfillReport", "Backfillable", "backfill_token_signs"]


class Backfillable(DocumentReader, TokenSigns, Protocol):
    """What a backfill reads and writes: chunks and documents, and the token signs."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BackfillReport:
    """What a backfill did: ``missing`` chunks lacked token signs before it, ``added`` got them;
    ``skipped_reason`` says why nothing was tried (None when it ran)."""

    missing: int
    added: int
    skipped_reason: str | None = None


def _batches(ids: Sequence[int], size: int) -> Iterator[Sequence[int]]:
    for first in range(0, len(ids), size):
        yield ids[first : first + size]


def chunk_inputs(chunks: Sequence[Chunk], titles: dict[str, str], title_context: bool) -> list[str]:
    """The texts ingest embeds for these chunks (see
    :func:`truthbase.ingest.embedding.index_document`): ``titles`` maps document ids to
    their titles."""
    return [
        embedded_text(titles[c.doc_id] if title_context else "", c.section, c.context, c.text)
        for c in chunks
    ]


def backfill_token_signs(
    store: Backfillable,
    embedder: Embedder,
    chunking: ChunkingSettings,
    *,
    batch: int = 64,
    on_progress: Callable[[int, int], None] | None = None,
) -> BackfillReport:
    """Add token signs to every chunk of ``store`` that has none, ``batch`` chunks a write.

    ``on_progress(done, total)`` is called once before the first batch and after each.
    Returns a report with ``skipped_reason`` set when the embedder has no token vectors (an
    OpenAI-compatible endpoint, a pooled-only ONNX model); raises
    :class:`~truthbase.embed.EmbedderMismatchError` when it is not the index's embedder.
    """
    if batch < 1:
        raise ValueError("batch must be at least 1")
    missing = store.chunks_without_token_signs()
    if not missing:
        return BackfillReport(missing=0, added=0)
    index = store.index_embedder()
    if index is None:  # chunks without a recorded embedder: not an index ingest wrote
        return BackfillReport(
            missing=len(missing), added=0, skipped_reason="the index records no embedder"
        )
    # Before the compatibility check: a remote embedder learns its dim by calling its server.
    if not isinstance(embedder, TokenEmbedder):
        return BackfillReport(
            missing=len(missing),
            added=0,
            skipped_reason=(
                f"the embedder {embedder.model_id!r} has no token vectors "
                "(late interaction needs a local ONNX model)"
            ),
        )
    check_compatible(index.model_id, index.dim, embedder)
    code = token_code(index.token_code, index.dim)  # packed as the index's other chunks are
    titles: dict[str, str] = {}
    added = 0
    done = 0
    if on_progress is not None:
        on_progress(0, len(missing))
    for ids in _batches(missing, batch):
        chunks = store.chunks(ids)  # a chunk deleted meanwhile is simply absent
        for chunk in chunks:
            if chunk.doc_id not in titles:
                info = store.document(chunk.doc_id)
                titles[chunk.doc_id] = info.title if info is not None else ""
        if chunks:
            _, tokens = embedder.embed_with_tokens(
                chunk_inputs(chunks, titles, chunking.title_context)
            )
            if tokens is None:
                return BackfillReport(
                    missing=len(missing),
                    added=added,
                    skipped_reason=(
                        f"the embedder {embedder.model_id!r} outputs pooled vectors only, "
                        "no token vectors"
                    ),
                )
            # A text with no word pieces (none at ingest either) gets no row.
            signs = {
                chunk.id: code.pack(stored_rows(t, chunking.punctuation_tokens))
                for chunk, t in zip(chunks, tokens, strict=True)
                if len(t.tokens)
            }
            added += store.add_token_signs(signs)
        done += len(ids)
        if on_progress is not None:
            on_progress(done, len(missing))
    return BackfillReport(missing=len(missing), added=added)
