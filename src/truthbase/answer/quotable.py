"""Which spans of a source an extractive answer may quote: whole sentences, never figure text.

An answer reads as prose only if each quoted sentence is whole. The sentence splitter keeps text
together where it is in doubt, but some spans still end where no sentence does: a paragraph line
cut short by a footnote marker (", which 1"), a heading or caption line ("Table 2. Notional
Illustration of the CSF Tiers"), a list's lead-in. :func:`whole_spans` keeps

- a table row (its cells stand together, with no sentence end);
- a span that ends like a sentence (terminal punctuation, closing quotes or brackets after it);
- a list item of :data:`MIN_ITEM_WORDS` words or more (a bullet, a number or an identifier
  label opens it: "o GV.OC-03: Legal, regulatory ... are understood and managed");
- otherwise the span joined with the spans after it in the same source, up to the first one
  that ends like a sentence (not across a row, a list item or figure text): the sentence the
  splitter cut, made whole again; a line of its own is whole as a line, unless it is a
  caption or a numbered heading ("2.2 Encoding and escaping": neither is quoted nor joined).
  A span that no join makes whole is not quoted.

Figure text (:mod:`truthbase.text.figures`: the labels drawn in a figure, found above their
caption in the source, or a span that is nothing but such labels) is never quoted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..text.figures import figure_blocks, looks_like_labels
from ..text.sentences import opens_list_item, opens_section

__all__ = ["MIN_ITEM_WORDS", "ends_sentence", "whole_spans"]

#: A list item quoted on its own has at least this many words (fewer: a heading such as
#: "2. Introduction to the CSF Core", which answers nothing).
MIN_ITEM_WORDS = 6

_SENTENCE_END = re.compile(r"[.!?…。！？][\"'”’»)\]]*$")
#: An identifier label that opens a list item: "GV.OC-03:", "ID.RA-10:", "Step 2:".
_LABEL = re.compile(r"[\w.-]*[\d.-][\w.-]*:\s|\w+ \d+:\s")
#: A caption's label: "Table 2.", "Figure 1:", "Fig. 3".
_CAPTION = re.compile(r"(?:fig(?:ure)?s?\.?|table|tab\.|chart|exhibit)\s*\d+", re.IGNORECASE)


def ends_sentence(text: str) -> bool:
    """Whether ``text`` ends as a sentence does: terminal punctuation, then any closers."""
    return _SENTENCE_END.search(text.rstrip()) is not None


def _item(text: str) -> bool:
    """A list item long enough to quote on its own (its marker or label not counted)."""
    if len(text.split()) - 1 < MIN_ITEM_WORDS:
        return False
    body = text.lstrip()
    return opens_list_item(body) or _LABEL.match(body) is not None


def _overlaps(span: tuple[int, int], blocks: Sequence[tuple[int, int]]) -> bool:
    return any(span[0] < end and start < span[1] for start, end in blocks)


def whole_spans(
    text: str, spans: Sequence[tuple[int, int]], rows: Sequence[tuple[int, int]]
) -> list[tuple[int, int]]:
    """The quotable spans of a source's ``text``, from its sentence and row ``spans`` (in text
    order; ``rows``: those that are table rows), each whole; see the module docstring."""
    figures = figure_blocks(text)
    row_set = set(rows)
    banned = [
        (s, e)
        for s, e in spans
        if (s, e) not in row_set and (_overlaps((s, e), figures) or looks_like_labels(text[s:e]))
    ]
    out: list[tuple[int, int]] = []
    for i, (start, end) in enumerate(spans):
        piece = text[start:end]
        if (start, end) in banned:
            continue
        if (start, end) in row_set or ends_sentence(piece) or _item(piece):
            out.append((start, end))
            continue
        if "\n" not in piece:
            # A line of its own is whole as a line ("9000x9000 pixels at 800 DPI"), unless it
            # is a caption or a numbered heading, which answer nothing; joined, either would
            # open the next sentence.
            if not (_CAPTION.match(piece) or opens_list_item(piece) or opens_section(piece)):
                out.append((start, end))
            continue
        for nxt in spans[i + 1 :]:
            if nxt in row_set or nxt in banned or _item(text[nxt[0] : nxt[1]]):
                break
            if ends_sentence(text[nxt[0] : nxt[1]]):
                out.append((start, nxt[1]))
                break
    return out
