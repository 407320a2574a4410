"""The document model: what a document is, from extraction to its stored chunks.

A document (``ExtractedDocument``, and ``DocumentInfo`` once stored) is a list of units (a PDF
page or an EPUB section: ``Unit``, with its canonical text, one glyph box per character, page
geometry, tables, OCR facts, the EPUB DOM map) cut into chunks (``ChunkDraft``, then ``Chunk``).
What the stages exchange *about* documents (search hits, sources, citations, segments, the
store's write bundle, viewers) is in :mod:`.records`, one floor up; this module imports nothing.

Every offset in the system is an offset into a unit's canonical text (see DESIGN.md). Rectangles
are in PDF user space: points, y growing upwards, as the page's content stream places glyphs,
before the viewer applies the page rotation and zoom.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Literal, NamedTuple, Protocol, overload

#: (x0, y0, x1, y1) in PDF user space, x0 <= x1 and y0 <= y1.
Rect = tuple[float, float, float, float]


class BoxColumn(Sequence[Rect | None]):
    """A unit's glyph boxes packed in one array (4 values a character) and a presence mask:
    17 bytes a character (33 where a value is not a float32) instead of ~200 for a list of
    4-float tuples, the same values bit for bit (pdfium's boxes are float32s, ``FS_RECTF``).
    Extraction keeps every page of a document until its document-wide decisions (ligatures,
    hyphens, table headers) are made, so the per-character cost is what bounds a long
    document's memory (issue 28: the 1,370-page lwarp manual). Read-only; an index gives a
    tuple (or None), a slice a list."""

    __slots__ = ("_present", "_values")

    def __init__(self, values: array[float], present: bytes) -> None:
        self._values = values
        self._present = present

    @classmethod
    def of(cls, boxes: Iterable[Rect | None]) -> BoxColumn:
        values: array[float] = array("d")
        present = bytearray()
        for box in boxes:
            if box is None:
                values.extend(_NO_BOX)
                present.append(0)
            else:
                values.extend(box)
                present.append(1)
        single = array("f", values)  # each value rounded to float32 (inf past its range)
        if array("d", single) == values:  # all of them exactly: half the bytes, same values
            return cls(single, bytes(present))
        return cls(values, bytes(present))

    def __len__(self) -> int:
        return len(self._present)

    @overload
    def __getitem__(self, index: int) -> Rect | None: ...

    @overload
    def __getitem__(self, index: slice) -> list[Rect | None]: ...

    def __getitem__(self, index: int | slice) -> Rect | list[Rect | None] | None:
        if isinstance(index, slice):
            return [self._box(i) for i in range(*index.indices(len(self._present)))]
        if index < 0:
            index += len(self._present)
        if not 0 <= index < len(self._present):
            raise IndexError("box index out of range")
        return self._box(index)

    def _box(self, i: int) -> Rect | None:
        if not self._present[i]:
            return None
        v = self._values
        return (v[4 * i], v[4 * i + 1], v[4 * i + 2], v[4 * i + 3])

    def __iter__(self) -> Iterator[Rect | None]:
        v, present = self._values, self._present
        for i in range(len(present)):
            yield (v[4 * i], v[4 * i + 1], v[4 * i + 2], v[4 * i + 3]) if present[i] else None

    def __eq__(self, other: object) -> bool:
        if isinstance(other, BoxColumn):
            return self._present == other._present and self._values == other._values
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # compared by value, like the list it replaces

    def __repr__(self) -> str:
        return f"BoxColumn({list(self)!r})"

    @property
    def values(self) -> array[float]:
        """x0, y0, x1, y1 of each character, one after the other (0s where there is no box):
        typecode "f" (float32) when every value is one, else "d"."""
        return self._values

    @property
    def present(self) -> bytes:
        """1 for a character with a box, 0 for one without."""
        return self._present


_NO_BOX = (0.0, 0.0, 0.0, 0.0)


def packed_boxes(boxes: Sequence[Rect | None]) -> Sequence[Rect | None]:
    """``boxes`` as a :class:`BoxColumn` when every box is a tuple of four floats (what packing
    keeps bit for bit); otherwise as they are (an int would come back a float)."""
    if isinstance(boxes, BoxColumn):
        return boxes
    for box in boxes:
        if box is not None and (
            type(box) is not tuple or len(box) != 4 or any(type(v) is not float for v in box)
        ):
            return boxes
    return BoxColumn.of(boxes)


DocumentKind = Literal["pdf", "epub"]

#: Who may see a document besides its owner: nobody (private) or every user (shared).
Visibility = Literal["private", "shared"]
VISIBILITIES: tuple[Visibility, ...] = ("private", "shared")
#: How a unit's text was made: a PDF page's own text layer, OCR of the rendered page, or an EPUB
#: section's XHTML.
TextSource = Literal["pdf", "ocr", "epub"]
#: What a chunk holds: running text, or rows of one table (each row one line, cells joined by
#: " | "; a row is never split across chunks).
ChunkKind = Literal["text", "table"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PageGeometry:
    """The boxes a viewer needs to place user-space rects on a rendered page."""

    mediabox: Rect
    cropbox: Rect
    rotation: int  # clockwise degrees: 0, 90, 180 or 270


#: A text node of an EPUB section's sanitized XHTML (``DomMap.html``), from ``<body>``: the
#: 0-based index among element children (elements only) at each level, then, last, the 0-based
#: index of the text node among its parent's text-node children (text nodes only).
NodePath = tuple[int, ...]


class DomRun(NamedTuple):
    """Canonical characters [start, end) come from DOM text node ``node`` at ``offset`` onwards.

    ``node`` indexes ``DomMap.nodes``; character ``start + k`` is the node's character
    ``offset + k`` (offsets in Unicode code points, as Python counts them).
    """

    start: int
    end: int
    node: int
    offset: int


@dataclass(slots=True, kw_only=True)
class DomMap:
    """Where each canonical character of an EPUB unit sits in the sanitized XHTML a reader shows.

    Canonical characters covered by no run were synthesized (inserted line breaks and cell
    separators). Runs are sorted by ``start`` and, equivalently, by document position.
    """

    html: str  # the sanitized XHTML document the reader renders; node paths resolve against it
    nodes: list[NodePath]
    runs: list[DomRun]
    anchors: dict[str, int] = field(default_factory=dict)  # element id -> canonical offset
    linear: bool = True  # False for a spine item marked linear="no" (placed after linear ones)


@dataclass(frozen=True, slots=True, kw_only=True)
class TocEntry:
    """One table-of-contents entry, resolved to a position in the canonical text."""

    title: str
    unit: int
    offset: int
    depth: int  # 0 for top-level entries
    href: str  # as written in the navigation document (with its fragment)


@dataclass(frozen=True, slots=True, kw_only=True)
class OcrInfo:
    """How an OCR'd page was read: the engine, its languages, the resolution and how sure it was.

    ``languages`` is the engine's language string (Tesseract's ``eng+deu``); ``rotation`` is the
    clockwise turn (0, 90, 180, 270) applied on top of the page's own /Rotate because the
    engine's orientation detection found the text sideways or upside down.
    """

    engine: str  # name and version, e.g. "tesseract 5.5.4"
    languages: str
    dpi: float
    mean_confidence: float  # mean word confidence, 0..100
    words: int
    rotation: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class TableRows:
    """A table found on a unit: each row is one line of the unit's canonical text.

    ``rows`` are the [start, end) spans of the row lines, top to bottom; the cells of a row are
    joined by " | " (synthesized characters, box None). ``header_rows`` leading rows are column
    headers; ``header`` is the header row's text, also for a table that continues one from an
    earlier page without repeating its header (then ``header_rows`` is 0).
    """

    rows: tuple[tuple[int, int], ...]
    header_rows: int = 0
    header: str = ""


@dataclass(slots=True, kw_only=True)
class Unit:
    """One page of a PDF (or one spine item of an EPUB) with its canonical text.

    ``boxes`` has one entry per character of ``text``: the glyph's loose box, or None for a
    character the extractor synthesized (an inserted space or line break).
    """

    index: int
    text: str
    boxes: Sequence[Rect | None]  # a list, or a BoxColumn (what extraction gives)
    label: str | None = None
    geometry: PageGeometry | None = None
    href: str | None = None
    dom: DomMap | None = None  # EPUB units only: the reader's text-to-DOM map
    language: str | None = (
        None  # ISO 639-1, detected at ingest (truthbase.text.language); None: unknown
    )
    text_source: TextSource = "pdf"
    ocr: OcrInfo | None = None  # text_source "ocr" only: how the page was read
    tables: list[TableRows] = field(default_factory=list)  # PDF: tables kept as rows
    # PDF: the [start, end) spans of text drawn inside figures (truthbase.text.figures), kept
    # out of sentences and prose chunks; found again from the text where a unit is re-read.
    figures: list[tuple[int, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if len(self.boxes) != len(self.text):
            raise ValueError(
                f"unit {self.index}: {len(self.text)} characters but {len(self.boxes)} boxes"
            )


@dataclass(slots=True, kw_only=True)
class ExtractionReport:
    """What extraction repaired or could not read, for the ingest summary."""

    ligature_words_repaired: int = 0
    ligature_codepoints: dict[str, str] = field(default_factory=dict)
    compound_hyphens_kept: int = 0  # line-end hyphens kept as "-" (compound words), not joined
    empty_units: int = 0
    ocr_pages: list[int] = field(default_factory=list)  # 0-based indexes of the OCR'd pages
    tables: int = 0  # ruled tables kept as rows (PDF), counted per page they appear on
    warnings: list[str] = field(default_factory=list)


@dataclass(slots=True, kw_only=True)
class ExtractedDocument:
    """A document after extraction, before chunking."""

    sha256: str
    title: str
    path: str
    kind: DocumentKind
    units: list[Unit]
    extractor_version: str
    report: ExtractionReport = field(default_factory=ExtractionReport)
    toc: list[TocEntry] = field(default_factory=list)  # EPUB nav, PDF outline; [] when none
    metadata: dict[str, str] = field(default_factory=dict)  # e.g. creator, language
    language: str | None = (
        None  # ISO 639-1, detected at ingest (truthbase.text.language); None: unknown
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ChunkDraft:
    """A chunk as the chunker produces it: a span of one unit plus its line rects.

    ``text`` is always ``unit.text[start:end]`` (what citations and highlights use). ``context``
    is not part of the span: for a table chunk whose rows do not include the header row, the
    column names; for a text chunk that holds rows of a results table the table finder did not
    see, that table's caption and column names it lacks (:mod:`truthbase.text.results`). Both
    are embedded and full-text indexed with the chunk but never cited.
    ``section`` is not part of the span either: the chunk's section path
    (:mod:`truthbase.sections`), embedded and full-text indexed with it, shown with search hits,
    never cited.
    """

    unit: int
    start: int
    end: int
    text: str
    rects: tuple[Rect, ...]
    kind: ChunkKind = "text"
    context: str = ""
    section: str = ""


class Located(Protocol):
    """Anything on a unit of a document: a chunk, a source, a cited span, a candidate sentence."""

    @property
    def doc_id(self) -> str: ...
    @property
    def unit(self) -> int: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...


def overlaps(a: Located, b: Located) -> bool:
    """Whether ``a`` and ``b`` share text: the same document and unit, overlapping offsets."""
    return a.doc_id == b.doc_id and a.unit == b.unit and a.start < b.end and b.start < a.end


@dataclass(frozen=True, slots=True, kw_only=True)
class Chunk:
    """A stored chunk."""

    id: int
    doc_id: str
    unit: int
    start: int
    end: int
    text: str
    rects: tuple[Rect, ...]
    href: str | None = None  # EPUB: the spine item's href
    kind: ChunkKind = "text"
    context: str = ""  # not in the span: column names, a results table's caption (ChunkDraft)
    section: str = ""  # not in the span: the chunk's section path (see ChunkDraft); "": none


@dataclass(frozen=True, slots=True, kw_only=True)
class DocumentInfo:
    """A stored document, as listings show it."""

    id: str
    title: str
    path: str
    kind: DocumentKind
    unit_count: int
    chunk_count: int
    ingested_at: str
    extractor_version: str
    owner: str | None = None  # a user id; None: the operator (CLI ingest)
    visibility: Visibility = "shared"
    holders: tuple[str, ...] = ()  # ids of users who uploaded the same bytes (they hold it too)
    flagged: bool = False  # the prompt-injection screen found instructions in its text
    language: str | None = None  # ISO 639-1; None: unknown (no letters, or an older index)
    owner_name: str | None = None  # the owner's name, for people to read (None: no such user)


def told_apart(doc_id: str, title: str, path: str, shared: Collection[str]) -> str:
    """``title``, followed by the document's file name when it is among the ``shared`` titles
    (several documents bear it: a package's user guide and its implementation, seven manuals
    of one bundle); an upload's file is named by its hash, so its id's first 8 characters
    stand there instead."""
    if title not in shared:
        return title
    name = PurePath(path).name
    if not name or PurePath(name).stem == doc_id:
        name = doc_id[:8]
    return title if name in title else f"{title} ({name})"


def listed_titles(documents: Iterable[DocumentInfo]) -> dict[str, str]:
    """Each document's title as a listing of ``documents`` shows it: :func:`told_apart` among
    them, so two that share a title are two different lines (their stored titles unchanged)."""
    listed = list(documents)
    counts = Counter(d.title for d in listed)
    shared = {title for title, n in counts.items() if n > 1}
    return {d.id: told_apart(d.id, d.title, d.path, shared) for d in listed}
