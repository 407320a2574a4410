"""Cut a document into segments: by its table of contents, else by size.

Pure. Positions are *global*: a unit's characters follow the previous unit's, so a range may
run across units (a chapter split over two spine items, ten pages of a PDF); a segment stores
the per-unit parts of its range.

With a table of contents (EPUB nav/NCX, PDF outline): each entry opens a node that runs to the
next entry of the same or a lower depth. A node of up to ``alone_chars`` is one segment; a
larger node with sub-entries yields its lead text and its children's segments; a larger node
without any is one segment up to ``split_chars`` and is otherwise cut at sentence boundaries
into ranges of at most ``range_max_chars``. Neighbouring small pieces of one level (siblings,
and a parent's lead text with its first child) are batched into segments of
``batch_min_chars``..``batch_max_chars``. Text before the first entry is the front matter.

Without a usable table of contents, the whole document is cut into ranges of about
``range_min_chars``..``range_max_chars``, at a unit (page) boundary when there is one in reach,
else at a sentence boundary.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..config import SegmentSettings
from ..model import TocEntry
from ..records import Segment, SegmentPart
from ..text.sentences import split_sentences

__all__ = ["FRONT_MATTER", "build_segments", "builder_id"]

#: Title of the text before the first table-of-contents entry.
FRONT_MATTER = "Front matter"
_BUILDER_VERSION = "segments-v1"
_TITLE_MAX = 300
#: A range cut may land this share of the ideal piece size before or after the ideal point.
_SLACK = 0.15


def builder_id(settings: SegmentSettings) -> str:
    """The cache key of the cutting rules and sizes: stored segments built otherwise are stale."""
    s = settings
    return (
        f"{_BUILDER_VERSION}:{s.alone_chars}/{s.batch_min_chars}/{s.batch_max_chars}/"
        f"{s.split_chars}/{s.range_min_chars}/{s.range_max_chars}"
    )


class _Text:
    """The document's units as one string of global positions, with cut candidates."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = list(texts)
        self.starts: list[int] = []
        total = 0
        for text in self.texts:
            self.starts.append(total)
            total += len(text)
        self.total = total
        self._sentence_starts: dict[int, list[int]] = {}

    def pos(self, unit: int, offset: int) -> int:
        unit = min(max(unit, 0), len(self.texts) - 1)
        return self.starts[unit] + min(max(offset, 0), len(self.texts[unit]))

    def parts(self, a: int, b: int) -> tuple[SegmentPart, ...]:
        out: list[SegmentPart] = []
        for unit, start in enumerate(self.starts):
            end = start + len(self.texts[unit])
            lo, hi = max(a, start), min(b, end)
            if lo < hi:
                out.append(SegmentPart(unit, lo - start, hi - start))
        return tuple(out)

    def blank(self, a: int, b: int) -> bool:
        return all(not self.texts[p.unit][p.start : p.end].strip() for p in self.parts(a, b))

    def sentence_starts(self, unit: int) -> list[int]:
        """Global positions where a sentence of ``unit`` starts (computed once per unit)."""
        if unit not in self._sentence_starts:
            base = self.starts[unit]
            self._sentence_starts[unit] = [base + s for s, _ in split_sentences(self.texts[unit])]
        return self._sentence_starts[unit]

    def units_between(self, a: int, b: int) -> range:
        first = max(bisect.bisect_right(self.starts, a) - 1, 0)
        last = max(bisect.bisect_right(self.starts, max(b - 1, a)) - 1, 0)
        return range(first, last + 1)

    def whitespace_near(self, a: int, b: int, ideal: int) -> int | None:
        """The whitespace position in [a, b) closest to ``ideal``."""
        best: int | None = None
        for part in self.parts(a, b):
            text = self.texts[part.unit]
            base = self.starts[part.unit]
            for i in range(part.start, part.end):
                if text[i].isspace() and (
                    best is None or abs(base + i - ideal) < abs(best - ideal)
                ):
                    best = base + i + 1
        return best if best is not None and best < b else None


def _closest(candidates: Sequence[int], lo: int, hi: int, ideal: float) -> int | None:
    """The candidate in [lo, hi] closest to ``ideal`` (``candidates`` sorted)."""
    i = bisect.bisect_left(candidates, lo)
    best: int | None = None
    while i < len(candidates) and candidates[i] <= hi:
        if best is None or abs(candidates[i] - ideal) < abs(best - ideal):
            best = candidates[i]
        i += 1
    return best


def _cut_range(doc: _Text, a: int, b: int, min_chars: int, max_chars: int) -> list[tuple[int, int]]:
    """[a, b) in about equal ranges of ``min_chars``..``max_chars`` where the size allows (never
    over ``max_chars``), cut at a unit boundary when one is within reach of the ideal point,
    else at a sentence start, else at whitespace."""
    size = b - a
    if size <= max_chars:
        return [(a, b)]
    n = max(1, round(2 * size / (min_chars + max_chars)))
    if size / n > max_chars:
        n += 1
    slack = int(_SLACK * size / n)
    ranges: list[tuple[int, int]] = []
    pos = a
    for i in range(n - 1):
        ideal = pos + (b - pos) / (n - i)
        lo = max(pos + 1, int(ideal) - slack)
        hi = min(int(ideal) + slack, pos + max_chars, b - 1)
        units = doc.units_between(lo, hi + 1)
        cut = _closest([doc.starts[u] for u in units], lo, hi, ideal)
        if cut is None:
            starts = [s for u in units for s in doc.sentence_starts(u)]
            cut = _closest(starts, lo, hi, ideal)
        if cut is None:
            cut = doc.whitespace_near(lo, hi + 1, int(ideal))
        if cut is None:
            cut = min(max(int(ideal), pos + 1), b - 1)
        ranges.append((pos, cut))
        pos = cut
    ranges.append((pos, b))
    return ranges


@dataclass(slots=True)
class _Node:
    title: str
    start: int
    depth: int
    end: int = 0
    children: list[_Node] = field(default_factory=list)


@dataclass(slots=True)
class _Piece:
    start: int
    end: int
    titles: list[str]
    batchable: bool

    @property
    def size(self) -> int:
        return self.end - self.start


def _toc_nodes(doc: _Text, toc: Sequence[TocEntry]) -> list[_Node]:
    """Top-level nodes of the table of contents in reading order, each with its subtree.

    Entries are ordered by position (outlines are not always in reading order); entries at the
    same position merge (the shallowest depth, titles joined); a depth never exceeds the
    previous entry's plus one.
    """
    entries = sorted(
        (
            (doc.pos(e.unit, e.offset), i, e)
            for i, e in enumerate(toc)
            if 0 <= e.unit < len(doc.texts)
        ),
        key=lambda t: (t[0], t[1]),
    )
    flat: list[_Node] = []
    for pos, _, entry in entries:
        title = " ".join(entry.title.split())
        if flat and flat[-1].start == pos:
            last = flat[-1]
            if title and title not in last.title:
                last.title = f"{last.title}; {title}" if last.title else title
            last.depth = min(last.depth, max(entry.depth, 0))
            continue
        flat.append(_Node(title=title, start=pos, depth=max(entry.depth, 0)))
    roots: list[_Node] = []
    stack: list[_Node] = []
    previous_depth = -1
    for node in flat:
        node.depth = min(node.depth, previous_depth + 1)
        previous_depth = node.depth
        while stack and stack[-1].depth >= node.depth:
            stack.pop()
        (stack[-1].children if stack else roots).append(node)
        stack.append(node)
    _close(roots, doc.total)
    return roots


def _close(nodes: list[_Node], end: int) -> None:
    for i, node in enumerate(nodes):
        node.end = nodes[i + 1].start if i + 1 < len(nodes) else end
        _close(node.children, node.end)


def _title(path: str, title: str) -> str:
    title = title or "(untitled)"
    return f"{path} › {title}" if path else title


def _node_pieces(doc: _Text, node: _Node, path: str, s: SegmentSettings) -> list[_Piece]:
    title = _title(path, node.title)
    size = node.end - node.start
    if size <= s.alone_chars or (not node.children and size <= s.split_chars):
        return [_Piece(node.start, node.end, [title], batchable=True)]
    if node.children:
        # Batched at their own level already: never joined with the node's siblings.
        pieces = _level_pieces(doc, node.start, node.children[0].start, node.children, title, s)
        for piece in pieces:
            piece.batchable = False
        return pieces
    ranges = _cut_range(doc, node.start, node.end, s.range_min_chars, s.range_max_chars)
    return [
        _Piece(a, b, [f"{title} ({i}/{len(ranges)})"], batchable=False)
        for i, (a, b) in enumerate(ranges, start=1)
    ]


def _level_pieces(
    doc: _Text, lead_start: int, lead_end: int, nodes: list[_Node], path: str, s: SegmentSettings
) -> list[_Piece]:
    """The pieces of one level: the parent's lead text, then each node's, batched."""
    pieces: list[_Piece] = []
    if lead_end > lead_start:
        lead_title = path or FRONT_MATTER
        ranges = _cut_range(doc, lead_start, lead_end, s.range_min_chars, s.range_max_chars)
        for i, (a, b) in enumerate(ranges, start=1):
            title = lead_title if len(ranges) == 1 else f"{lead_title} ({i}/{len(ranges)})"
            pieces.append(_Piece(a, b, [title], batchable=len(ranges) == 1))
    for node in nodes:
        pieces.extend(_node_pieces(doc, node, path, s))
    return _batch(pieces, s)


def _batch(pieces: list[_Piece], s: SegmentSettings) -> list[_Piece]:
    """Neighbouring small pieces joined while the batch is under ``batch_min_chars`` and the
    join stays within ``batch_max_chars``."""
    out: list[_Piece] = []
    current: _Piece | None = None
    for piece in pieces:
        small = piece.batchable and piece.size < s.batch_min_chars
        if (
            current is not None
            and small
            and current.size < s.batch_min_chars
            and piece.end - current.start <= s.batch_max_chars
        ):
            current.end = piece.end
            current.titles.extend(piece.titles)
            continue
        if current is not None:
            out.append(current)
            current = None
        if small:
            current = _Piece(piece.start, piece.end, list(piece.titles), batchable=True)
        else:
            out.append(piece)
    if current is not None:
        out.append(current)
    return out


def _joined_title(titles: Sequence[str]) -> str:
    title = "; ".join(dict.fromkeys(t for t in titles if t))
    return title if len(title) <= _TITLE_MAX else title[: _TITLE_MAX - 1] + "…"


def build_segments(
    doc_id: str,
    texts: Sequence[str],
    toc: Sequence[TocEntry],
    settings: SegmentSettings,
    *,
    title: str = "",
) -> list[Segment]:
    """The segments of a document whose units have the canonical ``texts``, in reading order.

    ``toc`` may be empty (then ranges by size); ``title`` names a document that forms one
    segment without a table of contents. Blank ranges (only whitespace) make no segment.
    """
    doc = _Text(texts)
    if doc.total == 0:
        return []
    roots = _toc_nodes(doc, toc)
    pieces: list[_Piece]
    if roots:
        pieces = _level_pieces(doc, 0, roots[0].start, roots, "", settings)
    else:
        ranges = _cut_range(doc, 0, doc.total, settings.range_min_chars, settings.range_max_chars)
        name = title or "Text"
        pieces = [
            _Piece(a, b, [name if len(ranges) == 1 else f"{name} ({i}/{len(ranges)})"], False)
            for i, (a, b) in enumerate(ranges, start=1)
        ]
    segments: list[Segment] = []
    for piece in pieces:
        if doc.blank(piece.start, piece.end):
            continue
        segments.append(
            Segment(
                doc_id=doc_id,
                index=len(segments),
                title=_joined_title(piece.titles),
                parts=doc.parts(piece.start, piece.end),
            )
        )
    return segments
