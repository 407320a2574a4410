"""The text of the book tools' outputs (pure): sections and passages, each passage followed by
its position tag, and the :class:`~truthbase.records.Source` of every tag shown (numbered from
``first_n``), so that a tag copied into the answer resolves and is verified.

Titles go into attributes with ``&``, ``"`` and ``<`` escaped; text goes through
:func:`truthbase.llm.prompts.escape_data`, so that a book cannot close a delimiter, and through
:func:`truthbase.cite.tags.neutralize_tags`, so that a tag-like string in a book's own text
("[f0-0-40]") is not shown as a tag: the only tags in a tool's output are those of the passages
it returns as sources.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..cite.tags import neutralize_tags
from ..geometry import span_line_rects
from ..llm.prompts import escape_data
from ..model import Unit
from ..records import Segment, Source, ToolOutput
from .budget import Shown, Units, unit_text
from .passages import Span, inside_segment, tag, tags_in
from .select import Entry

__all__ = [
    "NO_DOCUMENTS",
    "NO_SECTION",
    "full_summaries",
    "related_passages",
    "segment_id",
    "source",
    "summary_spans",
]

NO_DOCUMENTS = "The library has no documents."
NO_SECTION = "No section of the library concerns this question."


def segment_id(segment: Segment) -> str:
    return f"{segment.doc_id}:{segment.index}"


def _attr(value: str) -> str:
    return " ".join(value.split()).replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def _adjacent(a: Span, b: Span, segment: Segment) -> bool:
    """Whether passage ``b`` follows ``a`` with nothing but whitespace skipped (approximately:
    same unit and close, or ``b`` opens the next part)."""
    if a.unit == b.unit:
        return b.start - a.end <= 3
    return any(p.unit == b.unit and p.start == b.start for p in segment.parts)


def source(n: int, entry: Entry, span: Span, unit: Unit | None) -> Source:
    """Source ``n``: the span of ``unit`` (its text and line rects; empty without the unit)."""
    text = unit.text if unit is not None else ""
    rects = span_line_rects(text, unit.boxes, span.start, span.end) if unit else []
    return Source(
        n=n,
        doc_id=entry.segment.doc_id,
        title=entry.doc_title,
        unit=span.unit,
        start=span.start,
        end=span.end,
        text=text[span.start : span.end],
        rects=tuple(rects),
    )


def summary_spans(entries: Sequence[Entry]) -> list[tuple[Entry, Span]]:
    """The tags of the summaries that lie inside their segment, in order, each span once per
    document: the sources of :func:`full_summaries`."""
    out: list[tuple[Entry, Span]] = []
    seen: set[tuple[str, Span]] = set()
    for entry in entries:
        doc_id = entry.segment.doc_id
        for span in tags_in(entry.segment.summary):
            if not inside_segment(span, entry.segment) or (doc_id, span) in seen:
                continue
            seen.add((doc_id, span))
            out.append((entry, span))
    return out


def full_summaries(entries: Sequence[Entry], units: Units, first_n: int = 1) -> ToolOutput:
    """get_full_book_segment_summaries: every summary with its title, per document, in reading
    order; ``units`` holds the units of :func:`summary_spans`."""
    if not entries:
        return ToolOutput(content=NO_DOCUMENTS)
    spans = summary_spans(entries)
    sources = [
        source(first_n + i, entry, span, units.get((entry.segment.doc_id, span.unit)))
        for i, (entry, span) in enumerate(spans)
    ]
    sections: dict[str, list[str]] = {}
    for entry, span in spans:
        sections.setdefault(entry.key, []).append(tag(span))
    lines = [
        "Summaries of every section, in reading order. Each position tag points to the "
        "passage a sentence summarizes."
    ]
    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry.segment.doc_id] = counts.get(entry.segment.doc_id, 0) + 1
    for i, entry in enumerate(entries):
        doc_id = entry.segment.doc_id
        if i == 0 or entries[i - 1].segment.doc_id != doc_id:
            lines.append(
                f'\n<document title="{_attr(entry.doc_title)}" sections="{counts[doc_id]}">'
            )
        summary = entry.segment.summary
        lines.append(
            f'<section id="{entry.key}" title="{_attr(entry.segment.title)}">\n'
            f"{escape_data(summary) or '(no summary)'}\n</section>"
        )
        if i + 1 == len(entries) or entries[i + 1].segment.doc_id != doc_id:
            lines.append("</document>")
    return ToolOutput(
        content="\n".join(lines),
        sources=sources,
        segment_ids=[segment_id(e.segment) for e in entries],
        sections=sections,
    )


def related_passages(shown: Sequence[Shown], units: Units, first_n: int = 1) -> ToolOutput:
    """get_related_segment_summaries: the shown passages of each segment, each followed by its
    tag, ``[…]`` where text is skipped; ``units`` holds the units of the segments' parts."""
    if not shown:
        return ToolOutput(content=NO_SECTION)
    lines = [
        "Source text of the sections that concern the question. Each passage is followed by "
        "its position tag; cite the tags of the passages that support each claim."
    ]
    sources: list[Source] = []
    sections: dict[str, list[str]] = {}
    for item in shown:
        segment = item.entry.segment
        lines.append(
            f'\n<section id="{item.entry.key}" doc="{_attr(item.entry.doc_title)}" '
            f'title="{_attr(segment.title)}">'
        )
        previous: Span | None = None
        for span in item.spans:
            if previous is not None and not _adjacent(previous, span, segment):
                lines.append("[…]")
            text = unit_text(units, segment.doc_id, span.unit)[span.start : span.end]
            lines.append(f"{escape_data(neutralize_tags(' '.join(text.split())))} {tag(span)}")
            unit = units.get((segment.doc_id, span.unit))
            sources.append(source(first_n + len(sources), item.entry, span, unit))
            sections.setdefault(item.entry.key, []).append(tag(span))
            previous = span
        lines.append("</section>")
    return ToolOutput(
        content="\n".join(lines),
        sources=sources,
        segment_ids=[segment_id(item.entry.segment) for item in shown],
        sections=sections,
    )
