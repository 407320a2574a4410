"""Response bodies of the HTTP API (they make the OpenAPI document at /docs)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import Path
from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..model import DocumentInfo, PageGeometry, Rect
from ..records import MAX_INDEX, MAX_QUESTION_CHARS, MAX_ROW_ID, ChatMode, SearchHit
from ..text.valid import has_lone_surrogate
from ..turns import MAX_TURNS, CitedSpan, Turn

#: An answer's id as a path names it.
AnswerId = Annotated[
    int, Path(ge=1, le=MAX_ROW_ID, description="The answer's id (`done` carries it).")
]


class _Body(BaseModel):
    model_config = ConfigDict(frozen=True)


class DocumentOut(_Body):
    id: str = Field(description="sha256 of the document's bytes.")
    title: str
    display_title: str = Field(
        description="The title as a list shows it: followed by the file name where several of "
        "the listed documents share the title.",
    )
    kind: str
    language: str | None = Field(
        default=None, description="ISO 639-1 code of the detected language; null: unknown."
    )
    pages: int = Field(description="Number of units (pages of a PDF).")
    chunks: int
    ingested_at: str
    file_url: str = Field(description="Where GET serves the document's bytes.")
    owner: str | None = Field(default=None, description="Its user; None: the operator's.")
    visibility: str = Field(default="shared", description="private (its owner only) or shared.")
    contains_instructions: bool = Field(
        default=False,
        description="The prompt-injection screen found text addressed to a model in it.",
    )

    @classmethod
    def of(cls, info: DocumentInfo, display_title: str) -> DocumentOut:
        return cls(
            id=info.id,
            title=info.title,
            display_title=display_title,
            kind=info.kind,
            language=info.language,
            pages=info.unit_count,
            chunks=info.chunk_count,
            ingested_at=info.ingested_at,
            file_url=f"/api/documents/{info.id}/file",
            owner=info.owner_name,
            visibility=info.visibility,
            contains_instructions=info.flagged,
        )


class GeometryOut(_Body):
    mediabox: Rect
    cropbox: Rect
    rotation: int = Field(description="The page's own clockwise rotation: 0, 90, 180 or 270.")

    @classmethod
    def of(cls, geometry: PageGeometry) -> GeometryOut:
        return cls(mediabox=geometry.mediabox, cropbox=geometry.cropbox, rotation=geometry.rotation)


class SearchHitOut(_Body):
    rank: int
    score: float
    doc_id: str
    document: str
    page: int = Field(description="1-based page.")
    unit: int = Field(description="0-based unit index.")
    chunk_id: int
    start: int
    end: int
    text: str
    rects: list[Rect] = Field(description="One rect per rendered line, PDF user space.")
    kind: Literal["text", "table"] = Field(
        default="text", description='"table": rows of one table, one line per row.'
    )
    context: str = Field(
        default="",
        description="A table chunk's column names, or the caption and column names of the "
        "results table whose rows a text chunk holds (not part of its span).",
    )
    section: str = Field(
        default="",
        description='The chunk\'s section path, outermost first, joined by " > " (not part of '
        'its span); "" when the document has no structure found.',
    )

    @classmethod
    def of(cls, hit: SearchHit, rank: int) -> SearchHitOut:
        c = hit.chunk
        return cls(
            rank=rank,
            score=hit.score,
            doc_id=c.doc_id,
            document=hit.document_title,
            page=c.unit + 1,
            unit=c.unit,
            chunk_id=c.id,
            start=c.start,
            end=c.end,
            text=c.text,
            rects=list(c.rects),
            kind=c.kind,
            context=c.context,
            section=c.section,
        )


class SearchOut(_Body):
    query: str
    results: list[SearchHitOut]


class SpanOut(_Body):
    doc: str
    title: str
    page: int = Field(description="1-based page.")
    unit: int
    page_count: int
    start: int
    end: int
    text: str = Field(description="The span's canonical text.")
    rects: list[Rect] = Field(description="One rect per rendered line, PDF user space (y up).")
    geometry: GeometryOut | None
    page_text: str = Field(
        description="The page's stored canonical text: the viewer compares it with the PDF's "
        "own text to notice a file that changed since ingest."
    )
    label: str | None = Field(description="The printed page label, when the PDF has one.")
    text_source: str = Field(
        default="pdf",
        description="How the page's text was made: pdf (its text layer), ocr or epub. An OCR'd "
        "page has no text layer for the viewer to compare page_text with.",
    )
    file_matches: bool | None = Field(
        default=None,
        description="OCR'd pages only: whether the file still hashes to the document id, which "
        "tells the viewer that the stored rects fit it.",
    )


class HealthOut(_Body):
    status: str
    documents: int | None = Field(description="Documents the caller sees (None: not signed in).")
    version: str


class SectionOut(_Body):
    """One EPUB section (unit) for the reader: where its XHTML is and its text-to-DOM map."""

    doc: str
    title: str = Field(description="The book's title.")
    unit: int = Field(description="0-based unit (spine item) index.")
    unit_count: int
    href: str | None = Field(description="The spine item's href, as the OPF manifest writes it.")
    label: str | None = Field(description="The first table-of-contents title pointing into it.")
    linear: bool = Field(description='False for a spine item marked linear="no".')
    prev: int | None = Field(description="The previous unit's index (None at the first).")
    next: int | None = Field(description="The next unit's index (None at the last).")
    text_length: int = Field(description="Characters of canonical text.")
    html_url: str = Field(description="Where GET serves the section's sanitized XHTML.")
    nodes: list[list[int]] = Field(
        description="Text-node paths from <body>: element-child indexes, then the text node's "
        "index among its parent's text nodes."
    )
    runs: list[list[int]] = Field(
        description="[start, end, node, offset]: canonical [start, end) is text node `node` "
        "from code point `offset` on."
    )
    anchors: dict[str, int] = Field(description="Element id -> canonical offset.")


class DomSegmentOut(_Body):
    path: list[int] = Field(description="A text node's path (see SectionOut.nodes).")
    start: int = Field(description="Code-point offset into the text node's data.")
    end: int = Field(description="Exclusive end, code points.")


class EpubSpanOut(_Body):
    """A span of an EPUB section as DOM ranges: one segment per text node, in document order."""

    doc: str
    title: str
    unit: int
    unit_count: int
    href: str | None
    label: str | None
    start: int
    end: int
    text: str = Field(description="The span's canonical text.")
    segments: list[DomSegmentOut]


class CitedSpanIn(BaseModel):
    """A span an earlier answer cited (a ``citations`` record of its ``done`` event fits:
    other keys are ignored)."""

    model_config = ConfigDict(extra="ignore")

    doc_id: str = Field(min_length=1, max_length=200)
    unit: int = Field(ge=0, le=MAX_INDEX)
    start: int = Field(ge=0, le=MAX_INDEX)
    end: int = Field(ge=0, le=MAX_INDEX)
    quote: str = Field(default="", max_length=20_000)

    def to_span(self) -> CitedSpan:
        return CitedSpan(
            doc_id=self.doc_id, unit=self.unit, start=self.start, end=self.end, quote=self.quote
        )


class TurnIn(BaseModel):
    """One earlier turn of the thread: its question, the answer text it got and that answer's
    citations, and what it was searched as (its ``done`` event's ``searched_for``)."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=2000)
    answer: str = Field(default="", max_length=20_000)
    citations: list[CitedSpanIn] = Field(default_factory=list, max_length=100)
    searched_for: str | None = Field(default=None, max_length=4000)

    def to_turn(self) -> Turn:
        return Turn(
            question=self.question,
            answer=self.answer,
            citations=tuple(c.to_span() for c in self.citations),
            searched_for=self.searched_for,
        )


class ChatIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    mode: ChatMode = Field(
        default="auto",
        description="Who answers, as `truthbase ask --mode`: auto (llm when one is configured, "
        "else extractive), extractive, llm, or agent (the book tools first).",
    )
    doc: str | None = Field(
        default=None,
        pattern=r"^[0-9a-f]{64}$",
        description="Answer only from this document (its id), in every mode; one the caller "
        "may not see is 404, as one that does not exist.",
    )
    documents: list[str] = Field(
        default_factory=list,
        max_length=2000,
        description="Answer only from these documents (ids or unique prefixes) and those of "
        "`collection`, in every mode; one the caller may not see is 404.",
    )
    collection: str | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        description="Answer only from the caller's collection of this name (with `documents`, "
        "from both); the documents of it the caller may not see drop out, and a scope left "
        "empty is 400.",
    )
    history: list[TurnIn] = Field(
        default_factory=list,
        max_length=MAX_TURNS,
        description="The earlier turns of the thread this question follows, oldest first: a "
        "follow-up is resolved against them, and the done event's `searched_for` says what "
        "was searched.",
    )

    thread: str | None = Field(
        default=None,
        pattern=r"^[0-9a-f]{32}$",
        description="The caller's saved thread this question follows: its stored turns are "
        "the history (do not send `history` too) and the answer is appended to it. Without "
        "`thread` and `history` the answer starts a new saved thread; either way the done "
        "event's `thread` names it. Anyone else's thread is 404.",
    )

    def turns(self) -> list[Turn]:
        """The earlier turns as the application takes them."""
        return [t.to_turn() for t in self.history]

    @field_validator("question")
    @classmethod
    def _checked_question(cls, question: str) -> str:
        if has_lone_surrogate(question):
            raise ValueError("the question is not valid Unicode text (a lone surrogate)")
        # A blank question retrieves arbitrary passages and answers them: refuse it.
        if not question.strip():
            raise ValueError("the question is empty (only whitespace)")
        return question


class ThreadRenameIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1, max_length=200)
