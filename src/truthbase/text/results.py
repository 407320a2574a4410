"""The rows of a results table the extractor did not find, and the words that name their columns.

A table drawn without rules ("Table 2: Overall experiment results ...", then a header of column
names, then lines such as "Our SELF-RAG 13B 55.8 69.3 74.5 ... 70.3 71.3") reaches the text
layer as plain lines, and the page's chunks cut it anywhere: the chunk that holds a row often
holds neither the caption nor the column names, so a question that names them ("What citation
precision does the 13B Self-RAG model reach on ASQA?") finds the caption and not the row.

:func:`is_results_line` reads one line as a row of values; :func:`rows_context` gives a chunk
made mostly of such lines the words that name its rows' columns: the table's caption and the
header lines right above its rows, where the chunk itself lacks them. Chunking keeps them
beside the chunk (``ChunkDraft.context``: embedded and full-text indexed with it, outside its
span, never cited), as it keeps a detected table's column names.

Pure and deterministic: strings in, strings out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["VALUE", "is_results_line", "rows_context"]

#: A number of a results table: 27.93%, -1.5, 1,024, ±0.3.
VALUE = re.compile(r"[-+±]?\d+(?:[.,]\d+)*%?")
#: Dot leaders: a contents line, not a row.
_LEADER = re.compile(r"(?:\.\s?){5,}")
#: A cell left empty in a results table.
_EMPTY_CELLS = frozenset({"-", "–", "—", "n/a", "N/A"})
#: A table's caption line: "Table 2:", "Tab. 3.", "Tabelle 1 –".
_CAPTION = re.compile(r"\s*(?:table|tab\.|tabelle)\s*\d+[a-z]?\s*(?:[:.|]|[-–—]\s)", re.IGNORECASE)
#: At most this many header lines are taken from above a table's rows ...
_MAX_HEADER_LINES = 3
#: ... each at most this long (a longer line is prose, not column names).
_MAX_HEADER_CHARS = 160
#: A group label between rows ("Baselines with retrieval") has at most this many words.
_MAX_LABEL_WORDS = 5
#: The caption is kept up to this many characters (cut at a word).
_MAX_CAPTION_CHARS = 300
#: A caption below the rows is looked for this many lines after them.
_CAPTION_BELOW_LINES = 4


def is_results_line(line: str) -> bool:
    """Whether ``line`` reads as a row of a results table: a label of letters ("BM25 with
    RAPTOR", "1 layer"), then two values or more (or empty cells, "–") after its first word,
    values being two in five words or more, and nearly nothing but letters and digits ("BM25
    with RAPTOR 27.93% 21.17% 5.70% 17.03%"). Not a row: a sentence that quotes two numbers
    ("scores are 53.1%, 55.7%, and 36.6% when ...": too many words around them), a contents line
    ("5.1 Govern 21": one value after its number), a figure's axis ("0 1 2 3 4": no label), a
    line of dot leaders."""
    words = line.split()
    if len(words) < 3 or _LEADER.search(line):
        return False
    if not any(sum(ch.isalpha() for ch in w) >= 2 for w in words):
        return False
    values = sum(VALUE.fullmatch(w) is not None or w in _EMPTY_CELLS for w in words[1:])
    if values < 2 or values * 5 < len(words) * 2:
        return False
    filled = [w for w in words if w not in _EMPTY_CELLS]
    return sum(ch.isalnum() for w in filled for ch in w) >= 0.7 * sum(len(w) for w in filled)


def _lines(text: str) -> list[tuple[int, str]]:
    """Each line of ``text`` with its start offset."""
    out: list[tuple[int, str]] = []
    pos = 0
    for line in text.split("\n"):
        out.append((pos, line))
        pos += len(line) + 1
    return out


def _is_label(line: str) -> bool:
    """A group label between a table's rows: a few words, no sentence end, no values."""
    words = line.split()
    return (
        0 < len(words) <= _MAX_LABEL_WORDS
        and not line.rstrip().endswith((".", ":"))
        and not any(VALUE.fullmatch(w) for w in words)
    )


def _block_start(lines: Sequence[tuple[int, str]], first: int) -> int:
    """The index of the first line of the rows ``lines[first]`` belongs to: back over rows and
    over group labels that stand between rows."""
    i = first
    while i > 0:
        above = lines[i - 1][1]
        between_rows = _is_label(above) and i >= 2 and is_results_line(lines[i - 2][1])
        if not above.strip() or is_results_line(above) or between_rows:
            i -= 1
        else:
            break
    return i


def _block_end(lines: Sequence[tuple[int, str]], last: int) -> int:
    """The index past the last line of the rows ``lines[last]`` belongs to."""
    i = last + 1
    while i < len(lines) and (not lines[i][1].strip() or is_results_line(lines[i][1])):
        i += 1
    return i


def _caption_at(lines: Sequence[tuple[int, str]], at: int, stop: int) -> tuple[int, str]:
    """The caption that starts at ``lines[at]``: its lines up to a sentence end, ``stop`` (the
    rows), or :data:`_MAX_CAPTION_CHARS`; with its start offset."""
    words: list[str] = []
    for _, line in lines[at:stop]:
        if is_results_line(line):
            break
        words.extend(line.split())
        if line.rstrip().endswith(".") or sum(len(w) + 1 for w in words) >= _MAX_CAPTION_CHARS:
            break
    text = ""
    for w in words:
        if len(text) + len(w) + 1 > _MAX_CAPTION_CHARS:
            break
        text = f"{text} {w}" if text else w
    return lines[at][0], text


def rows_context(text: str, start: int, end: int) -> str:
    """The caption and column names of the results table whose rows the chunk
    ``text[start:end]`` holds (two or more; the first table's, when it holds rows of several),
    without what the chunk already holds; "" for a chunk without such rows."""
    lines = _lines(text)
    inside = [i for i, (s, line) in enumerate(lines) if s < end and s + len(line) > start]
    rows = [i for i in inside if is_results_line(lines[i][1])]
    if len(rows) < 2:
        return ""
    top = _block_start(lines, rows[0])
    header: list[tuple[int, str]] = []
    i = top - 1
    # Not the page's first line: that is a running header ("Published as a conference paper at
    # ICLR 2024") far more often than a table's column names.
    while i >= 1 and len(header) < _MAX_HEADER_LINES:
        offset, line = lines[i]
        if line.strip():
            if (
                _CAPTION.match(line)
                or is_results_line(line)
                or line.rstrip().endswith(".")
                or len(line.strip()) > _MAX_HEADER_CHARS
            ):
                break
            header.insert(0, (offset, line.strip()))
        i -= 1
    caption: tuple[int, str] | None = None
    for k in range(top - 1, -1, -1):
        if is_results_line(lines[k][1]):
            break  # another table's rows: its caption is not this one's
        if _CAPTION.match(lines[k][1]):
            caption = _caption_at(lines, k, top)
            break
    if caption is None:
        bottom = _block_end(lines, rows[-1])
        for k in range(bottom, min(len(lines), bottom + _CAPTION_BELOW_LINES)):
            if _CAPTION.match(lines[k][1]):
                caption = _caption_at(lines, k, len(lines))
                break
    outside = [
        piece
        for offset, piece in ([caption] if caption else []) + header
        if piece and not start <= offset < end
    ]
    return " ".join(outside)
