"""The rows of a results table the extractor did not find, and the words that name their columns.

A table drawn without rules ("Table 2: Overall experiment results ...", then a header of column
names, then lines such as "Our SELF-RAG 13B 55.8 69.3 74.5 ... 70.3 71.3") reaches the text
layer as plain lines, and the page's chunks cut it anywhere: the chunk that holds a row often
holds neither the caption nor the column names, so a question that names them ("What citation
precision does the 13B Self-RAG model reach on ASQA?") finds the caption and not the row.

:func:`is_results_line` reads one line as a row of values; :class:`ResultsPage` reads a page
once (its lines, which of them are rows, where each block of rows begins and ends) and gives a
chunk of it that holds two rows or more the words that name its rows' columns
(:meth:`ResultsPage.context`): the table's caption and the header lines right above its rows,
where the chunk itself lacks them. The page is read once however many chunks ask, and every
search for a caption or a header is bounded, so a long page (one EPUB spine item of a whole
book, a page of ten thousand numbers) costs time linear in its length. Chunking keeps them
beside the chunk (``ChunkDraft.context``: embedded and full-text indexed with it, outside its
span, never cited), as it keeps a detected table's column names.

Pure and deterministic: strings in, strings out.
"""

from __future__ import annotations

import re
from bisect import bisect_right

__all__ = ["VALUE", "ResultsPage", "is_results_line"]

#: A number of a results table: 27.93%, -1.5, 1,024, ±0.3 (the answerer's results-row rule
#: shares it).
VALUE = re.compile(r"[-+±]?\d+(?:[.,]\d+)*%?")
#: A cell's value as rows print it, beyond :data:`VALUE`: a minus sign (U+2212), a spread
#: ("55.8±0.3"), a footnote mark or an arrow after it ("69.3†", "55.8↑").
_CELL_VALUE = re.compile(r"[-+±\u2212]?\d+(?:[.,]\d+)*%?(?:±\d+(?:[.,]\d+)*%?)?[*†‡↑↓]?")
#: Dot leaders: a contents line, not a row.
_LEADER = re.compile(r"(?:\.\s?){5,}")
#: The characters numbers are written with, beside digits.
_NUMBER_MARKS = frozenset(".,%±\u2212()*†‡↑↓")
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
#: A caption below the rows is looked for this many lines after them ...
_CAPTION_BELOW_LINES = 2
#: ... one above them this many lines above their header.
_CAPTION_ABOVE_LINES = 8
#: A line of column names has few function words; a line of prose has many.
_FUNCTION_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "and",
        "or",
        "to",
        "in",
        "is",
        "are",
        "was",
        "were",
        "be",
        "that",
        "this",
        "which",
        "for",
        "with",
        "as",
        "on",
        "by",
        "at",
        "from",
        "it",
        "we",
        "our",
        "their",
        "its",
        "not",
        "than",
    ]
)
_MAX_FUNCTION_SHARE = 0.2


def _is_cell(word: str) -> bool:
    """A value ("27.93%", "(0.3)") or an empty cell ("–")."""
    bare = word[1:-1] if word.startswith("(") and word.endswith(")") else word
    return _CELL_VALUE.fullmatch(bare) is not None or word in _EMPTY_CELLS


def is_results_line(line: str) -> bool:
    """Whether ``line`` reads as a row of a results table: a label of letters ("BM25 with
    RAPTOR", "1 layer"), then two values or more (or empty cells, "–") after its first word,
    values being two in five words or more, the last word a value, and nearly nothing but
    letters and digits ("BM25 with RAPTOR 27.93% 21.17% 5.70% 17.03%"). Not a row: a sentence
    that quotes two numbers ("scores are 53.1%, 55.7%, and 36.6% when ...": too many words
    around them; "in 2019 and 2020 respectively": a word last), a contents line ("5.1 Govern
    21": one value after its number), a figure's axis ("0 1 2 3 4": no label), a line of dot
    leaders. Some lines that are not rows pass (a contents line without leaders, "Chapter 3
    Methods 45"); a chunk needs two to get a context, and its context only adds words to it."""
    words = line.split()
    # The last word is a value or an empty cell: the test that turns most lines away, first.
    if len(words) < 3 or not _is_cell(words[-1]) or _LEADER.search(line):
        return False
    if not any(sum(ch.isalpha() for ch in w) >= 2 for w in words):
        return False
    values = sum(_is_cell(w) for w in words[1:])
    if values < 2 or values * 5 < len(words) * 2:
        return False
    # Letters and digits nearly everywhere; what numbers are written with ("55.8 (0.3)",
    # "−1.5", "27.93%", "69.3†") counts with them.
    filled = "".join(w for w in words if w not in _EMPTY_CELLS)
    kept = sum(ch.isalnum() or ch in _NUMBER_MARKS for ch in filled)
    return kept >= 0.7 * len(filled)


def _is_label(line: str) -> bool:
    """A group label between a table's rows: a few words, no sentence end, no values."""
    words = line.split()
    return (
        0 < len(words) <= _MAX_LABEL_WORDS
        and not line.rstrip().endswith((".", ":"))
        and not any(_CELL_VALUE.fullmatch(w) for w in words)
    )


def _names_columns(line: str) -> bool:
    """Whether a line above a table's rows can be its column names (or a group label): short,
    no sentence end, not a caption or a row, and few function words (a paragraph's last line
    that runs into the table, "... compared with three baselines, namely", has many)."""
    text = line.strip()
    if (
        len(text) > _MAX_HEADER_CHARS
        or text.endswith(".")
        or _CAPTION.match(line)
        or is_results_line(line)
    ):
        return False
    words = [w.lower().strip(",;:()") for w in text.split()]
    return len(words) <= _MAX_LABEL_WORDS or (
        sum(w in _FUNCTION_WORDS for w in words) <= _MAX_FUNCTION_SHARE * len(words)
    )


class ResultsPage:
    """One page's text read for its results rows, once: see the module docstring."""

    def __init__(self, text: str) -> None:
        self._starts: list[int] = []
        self._lines: list[str] = []
        pos = 0
        for line in text.split("\n"):
            self._starts.append(pos)
            self._lines.append(line)
            pos += len(line) + 1
        n = len(self._lines)
        self._row = [is_results_line(line) for line in self._lines]
        self._blank = [not line.strip() for line in self._lines]
        self.has_rows = sum(self._row) >= 2
        # The previous non-blank line of each line (-1: none).
        self._previous: list[int] = []
        last = -1
        for k in range(n):
            self._previous.append(last)
            if not self._blank[k]:
                last = k
        previous = self._previous
        # The first line of the block of rows each row belongs to: back over rows, blank lines
        # and a group label between rows ("Baselines with retrieval").
        self._top = list(range(n))
        for k in range(n):
            if not self._row[k]:
                continue
            p = previous[k]
            if p >= 0 and self._row[p]:
                self._top[k] = self._top[p]
            elif p >= 0 and _is_label(self._lines[p]):
                q = previous[p]
                if q >= 0 and self._row[q]:
                    self._top[k] = self._top[q]
        # The line past the last row of each row's block.
        self._bottom = [k + 1 for k in range(n)]
        following = n
        for k in range(n - 1, -1, -1):
            if self._row[k] and following < n and self._row[following]:
                self._bottom[k] = self._bottom[following]
            if not self._blank[k]:
                following = k

    def _inside(self, start: int, end: int) -> range:
        """The lines whose middle lies in [start, end)."""
        first = max(0, bisect_right(self._starts, start) - 1)
        if self._starts[first] + len(self._lines[first]) // 2 < start:
            first += 1
        last = bisect_right(self._starts, end - 1)
        while last > first and self._starts[last - 1] + len(self._lines[last - 1]) // 2 >= end:
            last -= 1
        return range(first, last)

    def _caption_from(self, at: int, stop: int) -> str:
        """The caption that starts at line ``at``: its lines up to a sentence end, line
        ``stop`` (its table's header or rows) or :data:`_MAX_CAPTION_CHARS`."""
        words: list[str] = []
        for k in range(at, stop):
            if self._row[k]:
                break
            words.extend(self._lines[k].split())
            chars = sum(len(w) + 1 for w in words)
            if self._lines[k].rstrip().endswith(".") or chars >= _MAX_CAPTION_CHARS:
                break
        text = ""
        for w in words:
            if len(text) + len(w) + 1 > _MAX_CAPTION_CHARS:
                break
            text = f"{text} {w}" if text else w
        return text

    def _header(self, top: int) -> list[int]:
        """The column-name lines right above the rows that begin at line ``top``. Not the page's
        first line: that is a running header ("Published as a conference paper at ICLR 2024")
        far more often than a table's column names."""
        header: list[int] = []
        i = top - 1
        while i >= 1 and len(header) < _MAX_HEADER_LINES:
            if not self._blank[i]:
                if not _names_columns(self._lines[i]):
                    break
                header.insert(0, i)
            i -= 1
        return header

    def _caption_above(self, head: int) -> int | None:
        """The caption line at most :data:`_CAPTION_ABOVE_LINES` above line ``head`` (a table's
        header, or its rows), not beyond another table's rows."""
        for k in range(head - 1, max(-1, head - 1 - _CAPTION_ABOVE_LINES), -1):
            if self._row[k]:
                return None
            if _CAPTION.match(self._lines[k]):
                return k
        return None

    def _caption_below(self, bottom: int) -> int | None:
        """The caption line right below rows that end before line ``bottom``."""
        for k in range(bottom, min(len(self._lines), bottom + _CAPTION_BELOW_LINES)):
            if _CAPTION.match(self._lines[k]):
                return k
        return None

    def _rows_right_above(self, k: int) -> int | None:
        """The row that is line ``k``'s nearest non-blank line above, if it is one."""
        j = self._previous[k]
        return j if j >= 0 and self._row[j] else None

    def _caption_of(self, top: int, bottom: int, head: int) -> int | None:
        """The caption line of the table whose rows are lines ``top`` to ``bottom`` (``head``:
        its first header line). Above it, unless the caption above stands right under another
        table's rows and that table has no caption above its own: then the page sets captions
        below tables, that caption is the other table's, and this one's is below its rows."""
        above = self._caption_above(head)
        if above is None:
            return self._caption_below(bottom)
        previous = self._rows_right_above(above)
        if previous is not None:
            previous_top = self._top[previous]
            previous_head = (self._header(previous_top) or [previous_top])[0]
            below = self._caption_below(bottom)
            if below is not None and self._caption_above(previous_head) is None:
                return below
        return above

    def context(self, start: int, end: int) -> str:
        """The caption and column names of the results table whose rows the chunk
        ``[start, end)`` holds (two or more; the first table's, when it holds rows of several),
        without what the chunk already holds; "" for a chunk without such rows."""
        if not self.has_rows:
            return ""
        rows = [i for i in self._inside(start, end) if self._row[i]]
        if len(rows) < 2:
            return ""
        top = self._top[rows[0]]
        header = self._header(top)
        head = header[0] if header else top
        at = self._caption_of(top, self._bottom[rows[0]], head)
        pieces: list[tuple[int, str]] = []
        if at is not None:
            stop = head if at < head else len(self._lines)
            pieces.append((self._starts[at], self._caption_from(at, stop)))
        pieces += [(self._starts[h], self._lines[h].strip()) for h in header]
        return " ".join(text for offset, text in pieces if text and not start <= offset < end)
