"""Chunk and embed one extracted document into the record the store writes
(:class:`~truthbase.records.IndexedDocument`): its chunks, their sentence windows, the vectors
of both and the chunks' token vectors packed in the index's token code
(:mod:`truthbase.embed.token_code`). Pure but for the embedder."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from ..chunking import chunk_units
from ..embed import Embedder, TokenEmbedder, TokenVectors, Vectors, l2_normalize
from ..embed.token_code import TokenCode, default_token_code, token_code
from ..model import ChunkDraft, ExtractedDocument
from ..records import (
    SIGN_CODE,
    ChunkBatch,
    IndexedDocument,
    IndexEmbedder,
    ScreenResult,
    WindowDraft,
)
from ..sections import with_section_paths
from ..telemetry import start_span
from ..text.language import assign_languages
from .events import StageTimes
from .options import IngestOptions
from .windows import chunk_windows, embedded_text

__all__ = [
    "BATCH_CHUNKS",
    "EMBED_GROUP",
    "TOKEN_GROUP",
    "index_document",
    "pack_signs",
    "stored_rows",
]

#: Texts given to the embedder at once by :func:`_embed_distinct`: a call holds the tokenizer's
#: encodings of all its texts until it returns (34 MB for Pride and Prejudice's 4,988 windows in
#: one call), and the bundled embedder's vectors do not depend on what a text is batched with.
EMBED_GROUP = 256

#: Chunks whose token vectors are held at once (their float32 token vectors, 1.5 KB a token:
#: 128 chunks held 38 MB of the seed ingest's peak).
TOKEN_GROUP = 32

#: Chunks embedded and written at once when a document has more (``index_document``'s
#: ``batch_chunks``): with their windows ~1,200 texts, ~1 MB of vectors and ~2 MB of token
#: signs. A shorter document is embedded before its write (the store's write lock is then held
#: only for the write); a longer one holds it while its batches are embedded.
BATCH_CHUNKS = 256

#: ``(texts embedded so far)``: how far the embedding of one document is.
Meter = Callable[[int], None]


def pack_signs(vectors: Vectors) -> bytes:
    """Token vectors (n, dim) as their packed signs, row after row (positive: bit 1); read back
    by :func:`truthbase.retrieve.late.unpack_signs`. ValueError for no rows (the code checks)."""
    return token_code(SIGN_CODE, vectors.shape[-1]).pack(vectors)


def index_token_code(embedder: Embedder, options: IngestOptions) -> str:
    """The token code the document's chunks are packed in: the index's (``options.token_code``,
    set by the ingest path from the store), else a new index's default for this embedder
    (``chunking.token_projection``)."""
    if options.token_code is not None:
        return options.token_code
    return default_token_code(embedder.model_id, embedder.dim, options.chunking.token_projection)


def stored_rows(tokens: TokenVectors, punctuation: bool = True) -> Vectors:
    """The token rows kept for a chunk: every row, or without ``punctuation`` its word pieces'
    (:meth:`TokenVectors.word_rows`; every row of a chunk that has none). Punctuation-only
    pieces are a third of a code-heavy library's rows (the LaTeX manuals': 1.49 M of 4.54 M)
    and a sixth of the seed's; without them one dev question of 124 left the top 8
    (``chunking.punctuation_tokens``, docs/evals/disk.md)."""
    if punctuation:
        return tokens.vectors
    words = tokens.word_rows()
    return words if words.shape[0] else tokens.vectors


def _embed_distinct(
    embedder: Embedder, inputs: list[str], meter: Meter | None = None
) -> npt.NDArray[np.float32]:
    """Vectors of ``inputs``, each distinct text embedded once (overlapping chunks repeat
    windows), in calls of :data:`EMBED_GROUP` texts at most."""
    if not inputs:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    distinct = list(dict.fromkeys(inputs))
    # Longest first, so that the embedder's own length batches stay as full as in one call.
    order = sorted(range(len(distinct)), key=lambda i: len(distinct[i]), reverse=True)
    embedded = np.empty((len(distinct), embedder.dim), dtype=np.float32)
    for lo in range(0, len(order), EMBED_GROUP):
        rows = order[lo : lo + EMBED_GROUP]
        embedded[rows] = embedder.embed([distinct[i] for i in rows])
        if meter is not None:
            meter(len(rows))
    if meter is not None and len(inputs) > len(distinct):
        meter(len(inputs) - len(distinct))  # the repeats are done too (the meter counts inputs)
    row = {text: i for i, text in enumerate(distinct)}
    return embedded[[row[text] for text in inputs]]


def _embed_chunks(
    embedder: Embedder,
    inputs: list[str],
    code: TokenCode,
    meter: Meter | None = None,
    punctuation: bool = True,
) -> tuple[npt.NDArray[np.float32], list[bytes] | None]:
    """The chunks' vectors and packed token codes (None: no token data).

    The chunks go longest first in groups of :data:`TOKEN_GROUP`: a group's float32 token
    vectors (1.5 KB a token) are packed to signs before the next group is embedded, so a long
    book never holds them all (Pride and Prejudice's were 300 MB), and the embedder still
    batches texts of equal length together."""
    assert isinstance(embedder, TokenEmbedder)
    order = sorted(range(len(inputs)), key=lambda i: len(inputs[i]), reverse=True)
    out = np.zeros((len(inputs), embedder.dim), dtype=np.float32)
    packed: list[bytes] | None = [b""] * len(inputs)
    for lo in range(0, len(order), TOKEN_GROUP):
        rows = order[lo : lo + TOKEN_GROUP]
        vectors, tokens = embedder.embed_with_tokens([inputs[i] for i in rows])
        out[rows] = np.asarray(vectors, dtype=np.float32)
        if packed is not None and tokens is not None and all(len(t.tokens) for t in tokens):
            for row, token in zip(rows, tokens, strict=True):
                packed[row] = code.pack(stored_rows(token, punctuation))
        else:
            packed = None
        if meter is not None:
            meter(len(rows))
    return out, packed


def _windows(
    drafts: Sequence[ChunkDraft], texts: dict[int, str], options: IngestOptions
) -> list[WindowDraft]:
    return [
        WindowDraft(chunk=w.chunk, start=w.start, end=w.end)
        for w in chunk_windows(
            [(d.start, d.end) for d in drafts],
            [texts[d.unit] for d in drafts],
            window_chars=options.chunking.window_chars,
            overlap=options.chunking.window_overlap,
        )
    ]


@dataclass(frozen=True, slots=True)
class _Part:
    """A text embedded for a chunk: one of its windows' inputs, or (a chunk without windows)
    its own; ``prefix`` characters of it are the title/section/context put before the span."""

    text: str
    prefix: int


def _chunk_parts(
    drafts: Sequence[ChunkDraft],
    windows: Sequence[WindowDraft],
    chunk_inputs: Sequence[str],
    window_inputs: Sequence[str],
) -> list[list[_Part]]:
    """Each chunk's texts to embed when chunks get no pass of their own: its windows (which
    cover its text), else the chunk itself."""
    parts: list[list[_Part]] = [[] for _ in drafts]
    for window, text in zip(windows, window_inputs, strict=True):
        parts[window.chunk].append(_Part(text, len(text) - (window.end - window.start)))
    for index, text in enumerate(chunk_inputs):
        if not parts[index]:
            parts[index].append(_Part(text, len(text) - len(drafts[index].text)))
    return parts


def _groups(parts: Sequence[Sequence[_Part]]) -> list[list[int]]:
    """The chunks in groups of :data:`TOKEN_GROUP`, longest first (see :func:`_embed_chunks`)."""
    order = sorted(
        range(len(parts)), key=lambda i: sum(len(p.text) for p in parts[i]), reverse=True
    )
    return [order[lo : lo + TOKEN_GROUP] for lo in range(0, len(order), TOKEN_GROUP)]


def _group_texts(parts: Sequence[Sequence[_Part]], group: Sequence[int]) -> list[str]:
    return list(dict.fromkeys(p.text for i in group for p in parts[i]))


def _embed_from_parts(
    embedder: Embedder,
    parts: Sequence[Sequence[_Part]],
    groups: Sequence[Sequence[int]],
    *,
    code: TokenCode,
    with_signs: bool,
    meter: Meter | None,
    punctuation: bool = True,
) -> tuple[npt.NDArray[np.float32], dict[str, npt.NDArray[np.float32]], list[bytes] | None]:
    """One pass over the chunks' parts: the chunks' vectors, each part text's vector, and the
    chunks' packed token signs (None: no token data).

    A chunk's vector is the mean of its parts' vectors weighed by their span's length,
    normalized (its own vector when it is its one part); its token vectors are its parts',
    in order, the prefix pieces (title, section) kept from the first part only. Every token is
    then read in the context of its window instead of the whole chunk: the price of embedding
    each sentence once instead of twice (docs/evals/pooled-chunks.md)."""
    chunk_vectors = np.zeros((len(parts), embedder.dim), dtype=np.float32)
    by_text: dict[str, npt.NDArray[np.float32]] = {}
    packed: list[bytes] | None = [b""] * len(parts) if with_signs else None
    for group in groups:
        texts = _group_texts(parts, group)
        tokens: list[TokenVectors] | None = None
        if packed is not None:
            assert isinstance(embedder, TokenEmbedder)
            vectors, tokens = embedder.embed_with_tokens(texts)
            if tokens is None or not all(len(t.tokens) for t in tokens):
                packed, tokens = None, None
        else:
            vectors = embedder.embed(texts)
        row = {text: k for k, text in enumerate(texts)}
        for k, text in enumerate(texts):
            by_text[text] = np.asarray(vectors[k], dtype=np.float32)
        for i in group:
            rows = [row[p.text] for p in parts[i]]
            if len(rows) == 1:
                chunk_vectors[i] = vectors[rows[0]]
            else:
                weights = np.array([max(1, len(p.text) - p.prefix) for p in parts[i]], np.float32)
                mean = (np.asarray(vectors[rows], dtype=np.float32) * weights[:, None]).sum(0)
                chunk_vectors[i] = l2_normalize(mean[None, :])[0]
            if packed is not None and tokens is not None:
                bodies = [
                    _body(tokens[r], p.prefix if n else 0)
                    for n, (r, p) in enumerate(zip(rows, parts[i], strict=True))
                ]
                packed[i] = code.pack(
                    stored_rows(
                        TokenVectors(
                            np.concatenate([b.vectors for b in bodies]),
                            tuple(t for b in bodies for t in b.tokens),
                        ),
                        punctuation,
                    )
                )
        if meter is not None:
            meter(len(texts))
    return chunk_vectors, by_text, packed


def _body(tokens: TokenVectors, prefix: int) -> TokenVectors:
    """The word pieces of a part from character ``prefix`` on, with their rows (all when the
    embedder gives no piece offsets, or when that would leave none)."""
    if not prefix or not tokens.starts:
        return tokens
    keep = [k for k, start in enumerate(tokens.starts) if start >= prefix]
    if not keep:
        return tokens
    return TokenVectors(tokens.vectors[keep], tuple(tokens.tokens[k] for k in keep))


def index_document(
    document: ExtractedDocument,
    embedder: Embedder,
    options: IngestOptions,
    *,
    screen: ScreenResult | None,
    times: StageTimes | None = None,
    on_pages: Callable[[int, int], None] | None = None,
    batch_chunks: int | None = None,
) -> IndexedDocument:
    """Detect its languages, chunk, and embed (chunks and their sentence windows) one extracted
    document, owned by ``options.owner`` with ``options.visibility``, with the screen's
    verdict ``screen``. ``on_pages(done, total)`` hears the pages embedded (the share of the
    document's texts embedded, in pages).

    ``batch_chunks``: a document of more chunks than this is embedded while the store writes
    it, that many chunks at a time (:attr:`IndexedDocument.batches`, iterated once), so that
    its vectors, token signs and embedder inputs are never all held at once; None: all of it
    now. Its vectors are the same either way (a text's vector does not depend on its batch)."""
    times = times if times is not None else StageTimes()
    chunking = options.chunking
    started = time.perf_counter()
    chunk_span = start_span("chunk", units=len(document.units))
    assign_languages(document)  # the full-text terms are stemmed in each unit's language
    drafts = chunk_units(document.units, max_chars=chunking.max_chars, overlap=chunking.overlap)
    if chunking.section_paths:
        drafts = with_section_paths(document, drafts)
    texts = {unit.index: unit.text for unit in document.units}
    windows = _windows(drafts, texts, options)
    times.chunk = time.perf_counter() - started
    chunk_span.set_attribute("truthbase.chunks", len(drafts))
    chunk_span.end()

    title = document.title if chunking.title_context else ""
    # What the meter counts: each chunk, and each window text once in its batch.
    meter = _meter(len(drafts) + len(windows), len(document.units), on_pages)
    code = token_code(index_token_code(embedder, options), embedder.dim)
    embed = _Embedding(embedder, options, title, drafts, texts, windows, times, meter, code)
    index_embedder = IndexEmbedder(
        model_id=embedder.model_id, dim=embedder.dim, token_code=code.name
    )
    whole = batch_chunks is None or len(drafts) <= batch_chunks
    if whole:
        batch = embed.batch(0, len(drafts))
        return IndexedDocument(
            document=document,
            chunks=batch.chunks,
            vectors=batch.vectors,
            embedder=index_embedder,
            windows=batch.windows,
            window_vectors=batch.window_vectors,
            token_signs=batch.token_signs,
            owner=options.owner,
            visibility=options.visibility,
            screen=screen,
        )
    assert batch_chunks is not None
    return IndexedDocument(
        document=document,
        chunks=(),
        vectors=np.zeros((0, embedder.dim), dtype=np.float32),
        embedder=index_embedder,
        owner=options.owner,
        visibility=options.visibility,
        screen=screen,
        batches=embed.batches(batch_chunks),
    )


class _Embedding:
    """The embedding of one chunked document, a run of its chunks at a time."""

    def __init__(
        self,
        embedder: Embedder,
        options: IngestOptions,
        title: str,
        drafts: Sequence[ChunkDraft],
        texts: dict[int, str],
        windows: Sequence[WindowDraft],
        times: StageTimes,
        meter: Meter | None,
        code: TokenCode,
    ) -> None:
        self.embedder, self.options, self.title = embedder, options, title
        self.code = code
        self.drafts, self.texts, self.windows = drafts, texts, windows
        self.times, self.meter = times, meter
        # windows are in chunk order: the first window of each chunk and past it
        self.window_starts = np.searchsorted([w.chunk for w in windows], np.arange(len(drafts) + 1))

    def batches(self, size: int) -> Iterator[ChunkBatch]:
        for lo in range(0, len(self.drafts), size):
            yield self.batch(lo, min(len(self.drafts), lo + size))

    def batch(self, lo: int, hi: int) -> ChunkBatch:
        """Chunks ``lo`` to ``hi`` embedded, with their windows (which index the batch)."""
        started = time.perf_counter()
        embedder, title, drafts, texts = self.embedder, self.title, self.drafts, self.texts
        embed_span = start_span("embed", chunks=hi - lo)
        first, last = int(self.window_starts[lo]), int(self.window_starts[hi])
        windows = [replace(w, chunk=w.chunk - lo) for w in self.windows[first:last]]
        chunks = drafts[lo:hi]
        # A chunk's section path and a table chunk's column names (its context) are embedded
        # with it, before its text, as are its windows.
        chunk_inputs = [embedded_text(title, d.section, d.context, d.text) for d in chunks]
        window_inputs = [
            embedded_text(
                title,
                chunks[w.chunk].section,
                chunks[w.chunk].context,
                texts[chunks[w.chunk].unit][w.start : w.end],
            )
            for w in windows
        ]
        token_signs: list[bytes] | None = None
        with_signs = self.options.chunking.token_signs and isinstance(embedder, TokenEmbedder)
        if not self.options.chunking.chunk_pass and windows:
            parts = _chunk_parts(chunks, windows, chunk_inputs, window_inputs)
            counted = [0]

            def count(n: int) -> None:
                counted[0] += n
                if self.meter is not None:
                    self.meter(n)

            vectors, by_text, token_signs = _embed_from_parts(
                embedder,
                parts,
                _groups(parts),
                code=self.code,
                with_signs=with_signs,
                meter=count,
                punctuation=self.options.chunking.punctuation_tokens,
            )
            window_vectors = np.array([by_text[t] for t in window_inputs], dtype=np.float32)
            if self.meter is not None:  # the meter counts every chunk and window of the batch
                self.meter(max(0, len(chunks) + len(windows) - counted[0]))
        elif with_signs and chunks:
            # The chunk vectors and their token vectors come from one forward pass.
            vectors, token_signs = _embed_chunks(
                embedder,
                chunk_inputs,
                self.code,
                self.meter,
                self.options.chunking.punctuation_tokens,
            )
            window_vectors = _embed_distinct(embedder, window_inputs, self.meter)
        else:
            both = _embed_distinct(embedder, chunk_inputs + window_inputs, self.meter)
            vectors, window_vectors = both[: len(chunks)], both[len(chunks) :]
        self.times.embed += time.perf_counter() - started
        embed_span.end()
        return ChunkBatch(
            chunks=chunks,
            vectors=vectors,
            dim=embedder.dim,
            windows=windows,
            window_vectors=window_vectors,
            token_signs=token_signs,
            token_bits=self.code.bits,
        )


def _meter(texts: int, pages: int, on_pages: Callable[[int, int], None] | None) -> Meter | None:
    """Texts embedded, told as pages: ``on_pages(pages * done // texts, pages)``."""
    if on_pages is None:
        return None
    report = on_pages
    report(0, pages)
    done = [0]

    def advance(count: int) -> None:
        done[0] += count
        report(min(pages, pages * done[0] // max(1, texts)), pages)

    return advance
