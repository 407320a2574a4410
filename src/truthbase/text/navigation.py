"""Pages that point elsewhere: a table of contents or a back-of-book index.

Their lines are names followed by page numbers ("\\cmidrule . . . . . . 8, 12", "3.2 Frames
..... 41", "breakatwhitespace 36, 37"), so they hold every name a manual defines and win the
full-text arm for a question that names one, while answering none: the passage is on the page
they point to. Search ranks such a chunk after the others (:mod:`truthbase.retrieve.hybrid`).
"""

from __future__ import annotations

import re

__all__ = ["is_navigation"]

#: A dot leader to a page number or a list of them ("Frames . . . . 41", "\\kern ..... 572, 592").
_LEADER = re.compile(r"(?:\.\s*){4,}\s*[\dixvlc]+(?:\s*[,–-]\s*\d+)*\s*$", re.IGNORECASE)
#: An index entry without leaders: a name, then two or more page numbers or ranges, each
#: after a comma and a space (not "2,078,800", a number in a table).
_PAGES = re.compile(r"\S\s+\d+(?:[–-]\d+)?(?:,\s+\d+(?:[–-]\d+)?)+\s*$")
#: A line of numbers only (an entry's page list carried over, a page number): not counted.
_BARE = re.compile(r"^[\d.,\s–-]+$")

#: Fewest pointing lines, and their least share of the lines that are not bare numbers.
MIN_LINES = 3
MIN_SHARE = 0.5


def is_navigation(text: str) -> bool:
    """Whether ``text`` is mostly lines that point to pages: half or more of its lines (numbers
    alone not counted), and at least three, end in a dot leader to a page or in a list of
    pages. Prose that cites a page now and then is not."""
    lines = [line for line in text.split("\n") if line.strip() and not _BARE.match(line)]
    pointing = sum(1 for line in lines if _LEADER.search(line) or _PAGES.search(line))
    return pointing >= MIN_LINES and pointing >= MIN_SHARE * len(lines)
