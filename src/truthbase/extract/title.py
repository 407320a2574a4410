"""A PDF's title: its metadata title, unless that names a file; then the title its first page shows.

A converter that writes the Title entry with the name of the file it was fed leaves the reader
"float.dvi" (dvips) or "Microsoft Word - report.docx" in every listing and search hit, and the
full-text index and the embedder read that before each passage of the document. Such a title
is replaced by the lines set large near the top of the first text page
(:func:`shown_title`: "An Improved Environment for Floats"), followed by the file's name in
parentheses where the shown title does not contain it ("Fancy Cross-referencing (fancyref)"),
since that name is how its readers often know the document.

A PDF with no metadata title keeps its file's name ("raptor", "booktabs"): a name a person
chose, and short. The shown title in its place was measured and not adopted
(docs/evals/titles.md): a long printed title, read by the embedder before every sentence window,
made the dense arm's ranking worse on all three dev sets and moved two correct citations of 124
the wrong way. Pure: units in, a string out.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence

from ..model import Unit

__all__ = ["document_title", "shown_title", "usable_metadata_title"]

#: A name with an extension and no space: what a converter writes for the file it was fed.
_FILE_NAME = re.compile(r"\S+\.[A-Za-z][A-Za-z0-9]{0,4}")
#: An office program's prefix before a file name ("Microsoft Word - report.docx").
_PROGRAM = re.compile(r"(?i)microsoft\s+\w+\s+-\s+")
_PLACEHOLDERS = frozenset({"untitled", "title", "document", "no title", "none", "unknown"})
_LETTER = re.compile(r"[^\W\d_]")
#: Footnote marks set after a title word ("The at∗ package", "Floats∗").
_MARKS = str.maketrans("", "", "∗†‡§¶")
# The title is the first line near the top of the first text page set at least this much
# larger than the body text (the median glyph height of the first pages). Glyph boxes are the
# fonts' loose boxes, whose height depends on the font as well as its size: a bold "Contents"
# further down may be taller than the title, so the first large line counts, not the largest.
# 1.2: the titles of the LaTeX manuals measured 1.24 to 2.3 times their body text.
_LARGE = 1.2
# Lines set in the very same type continue the title (a title set on two lines); an author
# line in the next size down differs by more.
_SAME_TYPE = 0.01
# A digit or mark at a title line's end set below this share of the title's size is not the
# title's: a line number, a footnote mark.
_SMALL = 0.75
_MAX_LINES = 4  # a title runs over at most this many lines
_TOP_LINES = 15  # and starts within the first lines of its page
_FIRST_PAGES = 3  # the first text page is among these (a cover without text may come first)
_BODY_PAGES = 5  # the body's type size: the median over the first text pages
_MAX_CHARS = 160


def usable_metadata_title(title: str) -> bool:
    """Whether a metadata title is a title: not empty, not a placeholder, not a file name."""
    title = " ".join(title.split())
    if not _LETTER.search(title) or title.casefold() in _PLACEHOLDERS:
        return False
    return not (_FILE_NAME.fullmatch(title) or _PROGRAM.match(title))


def _letter_heights(unit: Unit, start: int, end: int) -> list[float]:
    return [
        b[3] - b[1]
        for ch, b in zip(unit.text[start:end], unit.boxes[start:end], strict=False)
        if b is not None and ch.isalpha()
    ]


def shown_title(units: Sequence[Unit]) -> str | None:
    """The first line near the top of the first text page set :data:`_LARGE` times the body
    text's size or more, with the lines after it in the same type (None: no such line, or no
    text layer)."""
    pages = [u for u in units if u.text_source == "pdf" and _LETTER.search(u.text)]
    if not pages or pages[0].index >= _FIRST_PAGES:
        return None
    heights = [h for u in pages[:_BODY_PAGES] for h in _letter_heights(u, 0, len(u.text))]
    if not heights:
        return None
    body = statistics.median(heights)
    page = pages[0]
    lines: list[tuple[int, str, float]] = []
    pos = 0
    for line in page.text.split("\n")[:_TOP_LINES]:
        letters = _letter_heights(page, pos, pos + len(line))
        lines.append((pos, line, statistics.median(letters) if letters else 0.0))
        pos += len(line) + 1
    first = next(
        (
            i
            for i, (_, line, height) in enumerate(lines)
            if height >= _LARGE * body and len(_LETTER.findall(line)) >= 3
        ),
        None,
    )
    if first is None:
        return None
    size = lines[first][2]
    picked: list[str] = []
    for start, line, height in lines[first : first + _MAX_LINES]:
        if abs(height - size) > _SAME_TYPE * size:
            break
        picked.append(_in_type(page, start, line, size))
    title = " ".join(" ".join(picked).translate(_MARKS).split()).strip(" -–—:;,")
    if len(_LETTER.findall(title)) < 3:
        return None
    return title if len(title) <= _MAX_CHARS else title[: _MAX_CHARS - 1].rstrip() + "…"


def _in_type(page: Unit, start: int, line: str, size: float) -> str:
    """``line`` (at ``start`` of ``page``) without the marks set smaller at its ends: a line
    number in the margin ("1 lineno.sty"), a footnote mark after the title."""
    small = [
        not ch.isalpha() and (box is None or box[3] - box[1] < _SMALL * size)
        for ch, box in zip(line, page.boxes[start : start + len(line)], strict=False)
    ]
    lo, hi = 0, len(line)
    while lo < hi and (small[lo] or line[lo].isspace()):
        lo += 1
    while hi > lo and (small[hi - 1] or line[hi - 1].isspace()):
        hi -= 1
    return line[lo:hi]


def _squashed(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def document_title(metadata: str, units: Sequence[Unit], stem: str) -> str:
    """The title of a PDF whose metadata title is ``metadata`` ("" for none), pages ``units``,
    and file name ``stem`` (without its extension); see the module docstring."""
    metadata = " ".join(metadata.replace("\x00", "").split())
    if not metadata:
        return stem
    if usable_metadata_title(metadata):
        return metadata
    shown = shown_title(units)
    if shown is None:
        return stem
    if _squashed(stem) and _squashed(stem) not in _squashed(shown):
        return f"{shown} ({stem})"
    return shown
