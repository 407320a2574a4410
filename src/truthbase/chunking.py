"""Page-bound chunks of whole sentences, with character spans and per-line rects.

Sentences (see :mod:`truthbase.sentences`) are packed greedily up to ``max_chars`` per chunk. The
next chunk starts with the last sentences of the previous one whose span is at most
``overlap * max_chars`` characters, so a passage that straddles a chunk boundary is still whole in
one of them. A sentence longer than ``max_chars`` is cut at whitespace into pieces of at most the
overlap length (or ``max_chars`` without overlap), which the same packing then joins back into
overlapping chunks. A chunk never crosses a unit: one unit is one page.

Tables (``Unit.tables``, one line per row) are chunked apart from the text around them, as whole
rows: a row is never split across chunks, and a chunk of rows without its table's header row
carries the column names in ``ChunkDraft.context`` (not in its span, which citations use).
"""

from __future__ import annotations

from collections.abc import Iterable

from .geometry import span_line_rects
from .model import ChunkDraft, ChunkKind, TableRows, Unit
from .sentences import split_sentences

__all__ = ["chunk_spans", "chunk_unit", "chunk_units", "table_chunk_spans"]

# Long sentences are cut into pieces no shorter than this, whatever the overlap asks for.
_MIN_PIECE = 40


def _split_long(text: str, start: int, end: int, limit: int) -> list[tuple[int, int]]:
    """Cut [start, end) at whitespace into pieces of at most ``limit`` characters.

    A single token longer than ``limit`` stays one piece.
    """
    pieces: list[tuple[int, int]] = []
    pos = start
    while pos < end:
        if end - pos <= limit:
            pieces.append((pos, end))
            break
        cut = pos + limit  # the piece would be text[pos:cut]; look for whitespace at or before cut
        while cut > pos and not text[cut].isspace():
            cut -= 1
        if cut == pos:  # no whitespace: take the whole token
            cut = pos + limit
            while cut < end and not text[cut].isspace():
                cut += 1
        piece_end = cut
        while piece_end > pos and text[piece_end - 1].isspace():
            piece_end -= 1
        pieces.append((pos, piece_end))
        pos = cut
        while pos < end and text[pos].isspace():
            pos += 1
    return pieces


def _atoms(text: str, max_chars: int, overlap_chars: int) -> list[tuple[int, int]]:
    """Sentence spans, with sentences longer than ``max_chars`` cut into pieces."""
    piece = overlap_chars if overlap_chars >= _MIN_PIECE else max_chars
    piece = min(piece, max_chars)
    atoms: list[tuple[int, int]] = []
    for start, end in split_sentences(text):
        if end - start <= max_chars:
            atoms.append((start, end))
        else:
            atoms.extend(_split_long(text, start, end, piece))
    return atoms


def chunk_spans(text: str, *, max_chars: int = 800, overlap: float = 0.15) -> list[tuple[int, int]]:
    """Chunk spans [start, end) of ``text``: packed sentences with overlap, in order."""
    if max_chars < 1:
        raise ValueError(f"max_chars must be positive, not {max_chars}")
    if not 0.0 <= overlap < 1.0:
        raise ValueError(f"overlap must be in [0, 1), not {overlap}")
    overlap_chars = int(overlap * max_chars)
    atoms = _atoms(text, max_chars, overlap_chars)
    spans: list[tuple[int, int]] = []
    n = len(atoms)
    i = 0
    while i < n:
        first = atoms[i][0]
        j = i + 1
        while j < n and atoms[j][1] - first <= max_chars:
            j += 1
        spans.append((first, atoms[j - 1][1]))
        if j >= n:
            break
        # Carry the last sentences (at most overlap_chars in all) into the next chunk, as long as
        # that chunk still has room for the first sentence that did not fit.
        k = j
        last_end = atoms[j - 1][1]
        while (
            k - 1 > i
            and last_end - atoms[k - 1][0] <= overlap_chars
            and atoms[j][1] - atoms[k - 1][0] <= max_chars
        ):
            k -= 1
        i = k
    return spans


def table_chunk_spans(
    table: TableRows, *, max_chars: int = 800
) -> list[tuple[tuple[int, int], bool]]:
    """Spans of whole rows of ``table``, packed up to ``max_chars`` without overlap (a row is a
    record of its own: nothing straddles two rows), each with whether it holds a header row.

    A row longer than ``max_chars`` is a chunk alone: rows are never split.
    """
    spans: list[tuple[tuple[int, int], bool]] = []
    rows = table.rows
    i = 0
    while i < len(rows):
        first = rows[i][0]
        j = i + 1
        while j < len(rows) and rows[j][1] - first <= max_chars:
            j += 1
        spans.append(((first, rows[j - 1][1]), i < table.header_rows))
        i = j
    return spans


def _draft(
    unit: Unit, start: int, end: int, kind: ChunkKind = "text", context: str = ""
) -> ChunkDraft:
    return ChunkDraft(
        unit=unit.index,
        start=start,
        end=end,
        text=unit.text[start:end],
        rects=tuple(span_line_rects(unit.text, unit.boxes, start, end)),
        kind=kind,
        context=context,
    )


def chunk_unit(unit: Unit, *, max_chars: int = 800, overlap: float = 0.15) -> list[ChunkDraft]:
    """Chunks of one unit (page): text is ``unit.text[start:end]``, rects one per rendered line.

    A unit with tables (``unit.tables``) is cut at them: the text between tables is chunked as
    sentences, each table as whole rows (``table_chunk_spans``), kind "table"; a table chunk
    without the header row carries the column names as ``context`` (embedded and full-text
    indexed with it, outside the span, never cited).
    """
    if not unit.text.strip():
        return []
    if not unit.tables:
        return [
            _draft(unit, start, end)
            for start, end in chunk_spans(unit.text, max_chars=max_chars, overlap=overlap)
        ]
    chunks: list[ChunkDraft] = []
    pos = 0
    for table in sorted(unit.tables, key=lambda t: t.rows[0][0] if t.rows else 0):
        if not table.rows:
            continue
        chunks.extend(_text_chunks(unit, pos, table.rows[0][0], max_chars, overlap))
        for (start, end), has_header in table_chunk_spans(table, max_chars=max_chars):
            context = "" if has_header else table.header
            chunks.append(_draft(unit, start, end, kind="table", context=context))
        pos = table.rows[-1][1]
    chunks.extend(_text_chunks(unit, pos, len(unit.text), max_chars, overlap))
    return chunks


def _text_chunks(
    unit: Unit, start: int, end: int, max_chars: int, overlap: float
) -> list[ChunkDraft]:
    """Sentence chunks of the text ``unit.text[start:end]`` between tables."""
    region = unit.text[start:end]
    if not region.strip():
        return []
    return [
        _draft(unit, start + s, start + e)
        for s, e in chunk_spans(region, max_chars=max_chars, overlap=overlap)
    ]


def chunk_units(
    units: Iterable[Unit], max_chars: int = 800, overlap: float = 0.15
) -> list[ChunkDraft]:
    """Chunks of every unit, in unit order; units with only whitespace give none."""
    chunks: list[ChunkDraft] = []
    for unit in units:
        chunks.extend(chunk_unit(unit, max_chars=max_chars, overlap=overlap))
    return chunks
