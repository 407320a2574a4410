"""Each chunk's section path: where in its document's structure the chunk begins.

The structure is the document's own table of contents where it has one (a PDF's outline, an
EPUB's navigation document: ``ExtractedDocument.toc``), else headings found from the page
layout of a PDF's text pages (:func:`layout_headings`): numbered lines ("3.2 Self-RAG
Training", "4. Results") whose numbers follow each other as a heading outline's do, and short
lines set clearly larger than the body text. A chunk's path is the titles of the entries in
effect at its first character, outermost first, joined by :data:`PATH_SEPARATOR`.

The path goes into the full text (the title field, with the document title) and into the text
that is embedded for the chunk, never into its span or highlight: a passage rarely repeats the
heading it sits under ("the critic is trained on..."), while questions often name it.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from .model import ChunkDraft, ExtractedDocument, TocEntry, Unit
from .text.sentences import title_like

__all__ = [
    "PATH_SEPARATOR",
    "document_sections",
    "layout_headings",
    "section_paths",
    "with_section_paths",
]

PATH_SEPARATOR = " > "
# A title longer than this is cut (a malformed outline entry can hold a whole paragraph).
_MAX_TITLE = 120
# A heading line: at most this many characters (longer lines are running text; its words are
# counted by text.sentences.title_like).
_MAX_HEADING_CHARS = 90
# A line set this much larger than the document's body text (median glyph height) is a heading
# when it is short; 1.3 is well above the spread of body sizes (superscripts and math aside,
# which are too short to count) and below the usual section sizes (12-14 pt over 9-10 pt).
_LARGE = 1.3
# A line that recurs on at least this many pages is a running header or footer, not a heading.
_RUNNING = 3
_NUMBERED = re.compile(r"(?P<number>\d{1,2}(?:\.\d{1,2}){0,3})\.?[ \t]+(?P<title>\S.*)")


def _clean(title: str) -> str:
    title = " ".join(title.split())
    return title if len(title) <= _MAX_TITLE else title[: _MAX_TITLE - 1].rstrip() + "…"


def section_paths(toc: Sequence[TocEntry], drafts: Sequence[ChunkDraft]) -> list[str]:
    """The section path of each chunk: the titles of the entries of ``toc`` (in reading order
    of their positions) in effect at the chunk's first character, outermost first; "" for a
    chunk before the first entry."""
    # Sorting is stable: entries at one position keep their outline order.
    entries = sorted((e for e in toc if _clean(e.title)), key=lambda e: (e.unit, e.offset))
    order = sorted(range(len(drafts)), key=lambda i: (drafts[i].unit, drafts[i].start))
    paths = [""] * len(drafts)
    stack: list[TocEntry] = []
    upcoming = 0
    for i in order:
        here = (drafts[i].unit, drafts[i].start)
        while (
            upcoming < len(entries) and (entries[upcoming].unit, entries[upcoming].offset) <= here
        ):
            entry = entries[upcoming]
            while stack and stack[-1].depth >= entry.depth:
                stack.pop()
            stack.append(entry)
            upcoming += 1
        paths[i] = PATH_SEPARATOR.join(_clean(e.title) for e in stack)
    return paths


def _lines(unit: Unit) -> list[tuple[int, str]]:
    """(start offset, text) of each line of the unit's text that is not a table row."""
    rows = {row for table in unit.tables for row in table.rows}
    lines: list[tuple[int, str]] = []
    pos = 0
    for line in unit.text.split("\n"):
        if line.strip() and (pos, pos + len(line)) not in rows:
            lines.append((pos, line))
        pos += len(line) + 1
    return lines


def _height(unit: Unit, start: int, end: int) -> float | None:
    """The median glyph height of characters [start, end) of the unit (None: no boxes)."""
    heights = [b[3] - b[1] for b in unit.boxes[start:end] if b is not None]
    return statistics.median(heights) if heights else None


def _follows(number: tuple[int, ...], last: tuple[int, ...]) -> bool:
    """Whether heading number ``number`` may come right after ``last`` in an outline: the
    first child (3.2 -> 3.2.1) or the next sibling of ``last`` or of one of its ancestors
    (3.2.1 -> 3.2.2, 3.3 or 4); the first heading is 1."""
    if number == (*last, 1):
        return True
    return any(number == (*last[:depth], last[depth] + 1) for depth in range(len(last)))


def layout_headings(units: Sequence[Unit]) -> list[TocEntry]:
    """Headings of a PDF's text pages found from the layout (no outline needed): numbered
    title-like lines whose numbers follow one another as an outline's do (depth: the number's
    parts less one), and short title-like lines whose glyphs are :data:`_LARGE` times the body
    text's median height (depth 0; consecutive such lines are one heading). Lines that recur
    on :data:`_RUNNING` pages or more (running headers) and OCR'd pages (word boxes, not
    glyph sizes) are left out."""
    pages = [u for u in units if u.text_source == "pdf"]
    heights = [b[3] - b[1] for u in pages for b in u.boxes if b is not None]
    if not heights:
        return []
    body = statistics.median(heights)
    recurring = Counter(
        line.strip() for u in pages for line in {text.strip() for _, text in _lines(u)}
    )
    entries: list[TocEntry] = []
    last: tuple[int, ...] = ()
    for unit in pages:
        previous_large: TocEntry | None = None
        for start, line in _lines(unit):
            text = line.strip()
            if len(text) > _MAX_HEADING_CHARS or recurring[text] >= _RUNNING:
                previous_large = None
                continue
            match = _NUMBERED.fullmatch(text)
            if match and title_like(match["title"]):
                number = tuple(int(part) for part in match["number"].split("."))
                if _follows(number, last):
                    last = number
                    entries.append(_entry(text, unit.index, start, len(number) - 1))
                    previous_large = None
                    continue
            height = _height(unit, start, start + len(line))
            if height is None or height < _LARGE * body or not title_like(text):
                previous_large = None
                continue
            if previous_large is not None:  # the next line of the same heading
                previous_large = replace(previous_large, title=f"{previous_large.title} {text}")
                entries[-1] = previous_large
            else:
                previous_large = _entry(text, unit.index, start, 0)
                entries.append(previous_large)
    return entries


def _entry(title: str, unit: int, offset: int, depth: int) -> TocEntry:
    return TocEntry(title=title, unit=unit, offset=offset, depth=depth, href="")


def document_sections(document: ExtractedDocument) -> list[TocEntry]:
    """The entries a document's section paths come from: its table of contents, else (a PDF
    without an outline) the headings of its layout."""
    if document.toc:
        return list(document.toc)
    if document.kind == "pdf":
        return layout_headings(document.units)
    return []


def with_section_paths(
    document: ExtractedDocument, drafts: Sequence[ChunkDraft]
) -> list[ChunkDraft]:
    """The chunks of ``document`` with their section paths (``ChunkDraft.section``)."""
    paths = section_paths(document_sections(document), drafts)
    return [replace(d, section=p) if p else d for d, p in zip(drafts, paths, strict=True)]
