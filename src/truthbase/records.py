"""Records the pipeline stages exchange about documents (the ground floor, over :mod:`.model`).

:mod:`.model` says what a document is; this module holds what the stages pass each other about
documents, and lives here, not in the stage that happens to produce a record, because more than
one stage reads it: retrieval hits (``ArmHit``, ``SearchHit``: retrieve, store, answer, server),
the answer vocabulary (modes, ``NO_ANSWER``, citation states) with numbered sources and resolved
citations (cite, answer, segments, server), the segment index and the book tools' contract
(store, segments, answer), the store's write records (store, retrieve, ingest:
``IndexedDocument``, the token-sign format, the injection screen's verdict ``ScreenResult``),
and what the store keeps of answers (who asks, and the account records, are :mod:`.people`'s).
It imports only :mod:`.model` and :mod:`.errors`.

Pages are 1-based (the n-th page of the file); ``unit`` is the 0-based unit index; ``start`` and
``end`` are offsets into that unit's canonical text. Rects are in PDF user space.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

from .errors import InvalidInput
from .model import Chunk, ChunkDraft, ExtractedDocument, Rect, Visibility

#: Embedding vectors, one row per text (float32, L2-normalized).
FloatMatrix = npt.NDArray[np.float32]


def _rects_json(rects: tuple[Rect, ...]) -> list[list[float]]:
    return [list(r) for r in rects]


# -- retrieval ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ArmHit:
    """One chunk as one retrieval arm ranked it (rank is 1-based)."""

    chunk_id: int
    rank: int
    score: float


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchHit:
    """One ranked chunk with how each retrieval arm saw it."""

    chunk: Chunk
    score: float
    document_title: str
    page_label: str | None = None
    arm_ranks: dict[str, int] = field(default_factory=dict)
    arm_scores: dict[str, float] = field(default_factory=dict)


# -- answers and citations -------------------------------------------------------------------

#: What a refusing answerer says, and what an answer text that refuses contains.
NO_ANSWER = "NO_ANSWER"

#: Who writes an answer: verbatim sentences of the sources (no model), or the configured LLM.
AnswerMode = Literal["extractive", "llm"]
ANSWER_MODES: tuple[AnswerMode, ...] = ("extractive", "llm")
#: What a question may ask for (``ask --mode``, the chat endpoint, MCP's ``ask``): ``auto`` (llm
#: when one is configured, else extractive), an answer mode, or ``agent`` (the book tools first).
ChatMode = Literal["auto", "extractive", "llm", "agent"]
CHAT_MODES: tuple[ChatMode, ...] = ("auto", "extractive", "llm", "agent")
#: A chat mode once ``auto`` is decided (:func:`truthbase.answer.policy.resolve_chat_mode`).
ResolvedMode = Literal["extractive", "llm", "agent"]

#: The three states of a citation (see :class:`Citation`).
CitationState = Literal["supported", "quote_only", "unverified"]
CITATION_STATES: tuple[CitationState, ...] = ("supported", "quote_only", "unverified")


@dataclass(frozen=True, slots=True, kw_only=True)
class Source:
    """Source [n] of an answer: one retrieved chunk."""

    n: int  # 1-based, as the answer's [n] markers name it
    doc_id: str
    title: str
    unit: int
    start: int
    end: int
    text: str
    rects: tuple[Rect, ...]
    chunk_id: int | None = None
    score: float = 0.0
    section: str = ""  # the chunk's section path (truthbase.sections); "": none found
    # Not in the span: a table chunk's column names, or the caption and column names of the
    # results table whose rows the chunk holds (truthbase.chunking). The answerer counts its
    # words among the passage's (a sentence's context feature); nothing quotes it. Not part of
    # to_json: it is the stored chunk's, read again whenever the chunk is retrieved.
    context: str = ""

    @property
    def page(self) -> int:
        """The 1-based physical page."""
        return self.unit + 1

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "doc_id": self.doc_id,
            "title": self.title,
            "page": self.page,
            "unit": self.unit,
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "rects": _rects_json(self.rects),
            "chunk_id": self.chunk_id,
            "score": self.score,
            "section": self.section,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Conflict:
    """Where a claim departs from its page: the failing check (``code``, ``message``), the two
    sides ("85%" / "87%"), and the page's side located on the page: [page_start, page_end) of
    the unit's canonical text with its per-line ``rects`` (None and () when it was not found,
    e.g. a check that names stemmed words). ``text`` is the line every output shows: "the
    answer says 85% · the page says 87%"."""

    code: str
    message: str
    claim_says: str
    page_says: str
    page_start: int | None = None
    page_end: int | None = None
    rects: tuple[Rect, ...] = ()

    @property
    def text(self) -> str:
        sides = []
        if self.claim_says:
            sides.append(f"the answer says {self.claim_says}")
        if self.page_says:
            sides.append(f"the page says {self.page_says}")
        return " · ".join(sides)

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "message": self.message,
            "claim_says": self.claim_says,
            "page_says": self.page_says,
            "text": self.text,
            "page_start": self.page_start,
            "page_end": self.page_end,
            "rects": _rects_json(self.rects),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Citation:
    """A resolved citation: the span of source ``n``'s page that supports a claim.

    ``verified`` is True only when ``quote`` was found, under the matching rule, in the stored
    unit text at [start, end) (the quote check; kept for compatibility). ``claim`` is the answer
    text the citation is attached to, ``support`` how well the quote supports it.

    ``state`` is what the reader is shown (:data:`CitationState`): ``supported`` (the quote is on
    the page at its span and the claim passes the support checks; the only state that earns the
    verified badge), ``quote_only`` (the quote is on the page, the claim is not shown to follow
    from it), ``unverified`` (the quote is not found). ``reasons`` says why, in short strings,
    when the state is not ``supported``. Both are decided in :mod:`truthbase.cite.resolve`.
    """

    n: int
    doc_id: str
    unit: int
    start: int
    end: int
    quote: str
    rects: tuple[Rect, ...]
    verified: bool
    claim: str = ""
    support: float = 0.0
    via: Literal["marker", "tag"] = "marker"
    state: CitationState = "unverified"
    reasons: tuple[str, ...] = ()
    #: For a ``quote_only`` citation, the check that failed with the two sides, the page's
    #: side located on the page (:class:`Conflict`); None otherwise.
    conflict: Conflict | None = None

    @property
    def page(self) -> int:
        return self.unit + 1

    @property
    def supported(self) -> bool:
        return self.state == "supported"

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "doc_id": self.doc_id,
            "page": self.page,
            "unit": self.unit,
            "start": self.start,
            "end": self.end,
            "quote": self.quote,
            "rects": _rects_json(self.rects),
            "verified": self.verified,
            "claim": self.claim,
            "support": round(self.support, 4),
            "via": self.via,
            "state": self.state,
            "reasons": list(self.reasons),
            "conflict": None if self.conflict is None else self.conflict.to_json(),
        }


# -- the segment index and the book tools ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class SegmentPart:
    """A run of one unit's canonical text: [start, end) of unit ``unit``."""

    unit: int
    start: int
    end: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Segment:
    """One section of a document, in reading order (``index`` is 0-based within the document).

    A segment may cover parts of several units (small TOC siblings batched together).
    ``summary`` carries inline position tags ``[f{unit}-{start}-{end}]`` of the passages it
    summarizes; ``summarizer`` says who wrote it (cache key).
    """

    doc_id: str
    index: int
    title: str
    parts: tuple[SegmentPart, ...]
    summary: str = ""
    summarizer: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolOutput:
    """What one tool call returns: ``content`` goes to the model as the ``role: tool`` message;
    ``sources`` are the spans that content shows (with their tags), the only spans a position
    tag in the final answer may resolve to. ``n`` of each source is unique within one turn."""

    content: str
    sources: list[Source] = field(default_factory=list)
    segment_ids: list[str] = field(default_factory=list)  # "{doc_id}:{index}" of segments shown
    # The position tags each shown section's passages carry, by the section id the content
    # gives it ("S38"): small models cite the section id instead of a passage's tag.
    sections: dict[str, list[str]] = field(default_factory=dict)


class ToolError(InvalidInput):
    """A tool call that cannot run: unknown tool name or bad arguments (told to the model)."""


class Toolbox(Protocol):
    """The tools an agent may call, in the OpenAI function-calling schema."""

    def schemas(self) -> list[dict[str, Any]]: ...

    def call(
        self,
        name: str,
        arguments: dict[str, Any],
        first_n: int = 1,
        *,
        max_chars: int | None = None,
    ) -> ToolOutput:
        """Run tool ``name``; number the returned sources from ``first_n`` on. ``max_chars``:
        the most characters of content the caller has room for (the model's context); a tool
        that can choose what to show picks the best within it (the caller cuts the rest)."""
        ...


@dataclass(frozen=True, slots=True)
class StoredSegments:
    """A document's segment index for one summarizer id: ``builder`` names the cutting rules it
    was built with (:func:`truthbase.segments.build.builder_id`); ``vectors`` (one row per
    segment, or None) embed the summaries with the embedder ``embedder``."""

    segments: list[Segment]
    builder: str
    vectors: FloatMatrix | None = None
    embedder: str | None = None


# -- the store's records ----------------------------------------------------------------------

#: The largest page, unit, offset or citation number a record (or a request naming one) may
#: hold: past every real document, inside both backends' integers (2**63 reached SQLite: 500).
MAX_INDEX = 2**31 - 1
#: The longest query or question searched, and the longest quote or claim checked: a question is
#: a sentence or two, a quote a passage of one page; a longer one costs minutes and a GB (a 4 MB
#: question reached the answerer through MCP) and answers nothing better.
MAX_QUESTION_CHARS = 2000
MAX_QUOTE_CHARS = 20_000
#: The largest row id (an answer's) either backend can keep: 64-bit signed; past it no row
#: exists, and SQLite cannot even be asked.
MAX_ROW_ID = 2**63 - 1


#: The token code of an index that records none: the sign of every dimension of each token
#: vector (``truthbase.embed.token_code``).
SIGN_CODE = "signs"


def token_code_bits(code: str, dim: int) -> int:
    """Bits a token row of ``code`` holds: ``dim`` for :data:`SIGN_CODE`, else the number a
    projection's name starts with ("pca128:..." holds 128); InvalidInput for another name."""
    if code == SIGN_CODE:
        return dim
    kind, _, digest = code.partition(":")
    if kind.startswith("pca") and kind[3:].isdigit() and int(kind[3:]) > 0 and digest:
        return int(kind[3:])
    raise InvalidInput(f"unknown token code {code!r}")


@dataclass(frozen=True, slots=True)
class IndexEmbedder:
    """The embedder an index was built with; queries must use the same one. ``token_code``:
    how its chunks' token vectors are stored (:data:`SIGN_CODE` in an index that records
    none)."""

    model_id: str
    dim: int
    token_code: str = SIGN_CODE

    @property
    def token_bits(self) -> int:
        """Bits of one stored token row."""
        return token_code_bits(self.token_code, self.dim)


@dataclass(frozen=True, slots=True)
class WindowDraft:
    """A sentence window to store with its vector: ``chunk`` indexes the chunks passed along with
    it; ``start`` and ``end`` are offsets into that chunk's unit text."""

    chunk: int
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class StoredAnswer:
    """An answer as it was shown: ``answer`` is the answer object's JSON (with citations);
    ``asked_by`` its user's id (None: the operator, the local user, or not known)."""

    id: int
    question: str
    answer: dict[str, Any]
    created_at: str
    asked_by: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ScreenHit:
    """One match: which rule, where (unit, span into its canonical text), and its context."""

    rule: str
    unit: int
    start: int
    end: int
    excerpt: str

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "unit": self.unit,
            "start": self.start,
            "end": self.end,
            "excerpt": self.excerpt,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ScreenResult:
    """The screen's verdict on one document."""

    version: str  # the rules' version (truthbase.ingest.screen.SCREEN_VERSION)
    hits: tuple[ScreenHit, ...] = ()
    counts: dict[str, int] = field(default_factory=dict)  # rule -> hits (all, not only kept)

    @property
    def flagged(self) -> bool:
        return bool(self.hits)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "flagged": self.flagged,
            "counts": dict(self.counts),
            "hits": [h.to_json() for h in self.hits],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ScreenResult:
        return cls(
            version=str(data.get("version", "")),
            counts={str(k): int(v) for k, v in dict(data.get("counts", {})).items()},
            hits=tuple(
                ScreenHit(
                    rule=str(h["rule"]),
                    unit=int(h["unit"]),
                    start=int(h["start"]),
                    end=int(h["end"]),
                    excerpt=str(h.get("excerpt", "")),
                )
                for h in data.get("hits", [])
            ),
        )


def token_sign_row_bytes(dim: int) -> int:
    """Bytes of one token's packed signs: ``dim`` bits, rounded up to whole bytes."""
    return (dim + 7) // 8


def check_sign_blob(which: str, blob: object, dim: int) -> None:
    """One chunk's packed token code (``truthbase.embed.token_code``): bytes, a positive
    whole number of token rows of ``dim`` bits; InvalidInput otherwise."""
    if not isinstance(blob, bytes | bytearray | memoryview):
        raise InvalidInput(f"token signs of {which} are {type(blob).__name__}, not bytes")
    row_bytes = token_sign_row_bytes(dim)
    if len(blob) == 0 or len(blob) % row_bytes:
        raise InvalidInput(
            f"token signs of {which} are {len(blob)} bytes, not a positive multiple "
            f"of {row_bytes} ({dim} bits a token)"
        )


def _check_chunks(
    chunks: Sequence[ChunkDraft],
    vectors: FloatMatrix,
    windows: Sequence[WindowDraft],
    window_vectors: FloatMatrix | None,
    token_signs: Sequence[bytes] | None,
    dim: int,
    token_bits: int,
) -> None:
    """ValueError (InvalidInput for token signs) when chunks, windows and their vectors and
    token codes (``token_bits`` a token) do not fit together."""
    if len(chunks) != len(vectors):
        raise ValueError(f"{len(chunks)} chunks but {len(vectors)} vectors")
    if len(vectors) and vectors.shape[1] != dim:
        raise ValueError(f"vectors of dim {vectors.shape[1]}, embedder says {dim}")
    n_window_vectors = 0 if window_vectors is None else len(window_vectors)
    if len(windows) != n_window_vectors:
        raise ValueError(f"{len(windows)} windows but {n_window_vectors} window vectors")
    if window_vectors is not None and len(window_vectors) and window_vectors.shape[1] != dim:
        raise ValueError(f"window vectors of dim {window_vectors.shape[1]}, embedder says {dim}")
    for window in windows:
        if not 0 <= window.chunk < len(chunks):
            raise ValueError(f"window of chunk {window.chunk}: there are {len(chunks)} chunks")
    if token_signs is not None:
        if len(token_signs) != len(chunks):
            raise InvalidInput(f"{len(chunks)} chunks but {len(token_signs)} token sign blobs")
        for i, blob in enumerate(token_signs):
            check_sign_blob(f"chunk {i}", blob, token_bits)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ChunkBatch:
    """A run of one document's chunks as the store writes them at once: the chunks, their
    vectors, their windows (``WindowDraft.chunk`` indexes this batch's ``chunks``) with theirs,
    and their packed token codes (None: no token data). Checked like :class:`IndexedDocument`,
    with the embedder's ``dim`` and ``token_bits`` a token row (None: ``dim``, the signs of
    every dimension)."""

    chunks: Sequence[ChunkDraft]
    vectors: FloatMatrix
    dim: int
    windows: Sequence[WindowDraft] = ()
    window_vectors: FloatMatrix | None = None
    token_signs: Sequence[bytes] | None = None
    token_bits: int | None = None

    def __post_init__(self) -> None:
        _check_chunks(
            self.chunks,
            self.vectors,
            self.windows,
            self.window_vectors,
            self.token_signs,
            self.dim,
            self.dim if self.token_bits is None else self.token_bits,
        )


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class IndexedDocument:
    """Everything ``Store.add_document`` writes for one document, checked once, here: the
    extracted document, its chunks and their vectors (of ``embedder``), the chunks' sentence
    windows (``WindowDraft.chunk`` indexes ``chunks``) with theirs, and per chunk the packed
    signs of its token vectors (None: no token data). Raises ValueError when the parts do not
    fit together; a backend can then write it in one transaction without checking again.

    ``batches``: instead of ``chunks`` and the rest (then empty), the chunks come as batches
    made while the store writes them, inside the document's one transaction (ingest embeds a
    long document's chunks a batch at a time, so its memory does not grow with its length); an
    error raised by the batches rolls the whole document back. Iterated once."""

    document: ExtractedDocument
    chunks: Sequence[ChunkDraft]
    vectors: FloatMatrix
    embedder: IndexEmbedder
    windows: Sequence[WindowDraft] = ()
    window_vectors: FloatMatrix | None = None
    token_signs: Sequence[bytes] | None = None
    owner: str | None = None  # a user name; None: the operator (CLI ingest)
    visibility: Visibility = "shared"
    screen: ScreenResult | None = None  # the prompt-injection screen's verdict (None: not run)
    batches: Iterable[ChunkBatch] | None = None

    def __post_init__(self) -> None:
        if self.visibility == "private" and self.owner is None:
            raise InvalidInput("a private document needs an owner")
        if self.batches is not None and (self.chunks or self.windows or self.token_signs):
            raise ValueError("a document's chunks come either in batches or whole, not both")
        _check_chunks(
            self.chunks,
            self.vectors,
            self.windows,
            self.window_vectors,
            self.token_signs,
            self.embedder.dim,
            self.embedder.token_bits,
        )

    def chunk_batches(self) -> Iterable[ChunkBatch]:
        """The chunks as a backend writes them: the batches, or all of them as one."""
        if self.batches is not None:
            return self.batches
        return [
            ChunkBatch(
                chunks=self.chunks,
                vectors=self.vectors,
                dim=self.embedder.dim,
                windows=self.windows,
                window_vectors=self.window_vectors,
                token_signs=self.token_signs,
                token_bits=self.embedder.token_bits,
            )
        ]
