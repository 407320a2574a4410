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
  that ends like a sentence (not across a row, a list item, figure text or a numbered heading:
  a title page's lines are not the first words of the introduction's sentence): the sentence the
  splitter cut, made whole again; a line of its own is whole as a line, unless it is a
  caption or a numbered heading ("2.2 Encoding and escaping": neither is quoted nor joined).
  A span that no join makes whole is not quoted.

Figure text (:mod:`truthbase.text.figures`: the labels drawn in a figure, found above their
caption in the source, or a span that is nothing but such labels) is never quoted.

A page's running header or footer is no part of the sentence it touches: a line of
:data:`RUNNING_MIN_WORDS` words or more that stands on two or more pages of one document among
the sources (:func:`running_lines`) is cut from the head or the tail of a quoted span
(:func:`without_running_lines`). The first sentence of a page read "Published as a conference
paper at ICLR 2024 One drawback, however, of the collapsed tree approach is ..."; quoted so, it
reads as no sentence does, and its embedding matched the question less than the sentence's own.

Nor is a line of a code listing (:func:`code_line`: a listing's line number followed by code,
"62 \\DeclareSymbolFont{EulerScript}{U}{eus}{m}{n}", or code with no plain word, "8 }") part of
the sentence it touches, or a bare number on a line of its own (a page number, an EPUB's
paragraph number: the Debian Live manual numbers each paragraph, "307" / "lb config: ..."):
:func:`without_stray_lines` cuts such lines from the head and the tail of a quoted span, and a
span that is mostly code is not quoted. A package manual documented from
its source prints numbered code between its paragraphs, and the splitter, which sees no
sentence end in code, glued "7 \\DeclareMathVersion {\\l_@@_mversion_tl} 8 } 9 }" to the sentence
after it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from ..text.figures import figure_blocks, looks_like_labels
from ..text.sentences import opens_list_item, opens_section, reads_as_prose, title_like

__all__ = [
    "MIN_ITEM_WORDS",
    "RUNNING_MIN_WORDS",
    "code_line",
    "ends_sentence",
    "folded",
    "heads_a_block",
    "running_lines",
    "whole_spans",
    "without_caption_head",
    "without_running_lines",
    "without_stray_lines",
]

#: A list item quoted on its own has at least this many words (fewer: a heading such as
#: "2. Introduction to the CSF Core", which answers nothing).
MIN_ITEM_WORDS = 6

_SENTENCE_END = re.compile(r"[.!?…。！？][\"'”’»)\]]*$")
#: An identifier label that opens a list item: "GV.OC-03:", "ID.RA-10:", "Step 2:".
_LABEL = re.compile(r"[\w.-]*[\d.-][\w.-]*:\s|\w+ \d+:\s")
#: A caption's label: "Table 2.", "Figure 1:", "Fig. 3".
_CAPTION = re.compile(r"(?:fig(?:ure)?s?\.?|table|tab\.|chart|exhibit)\s*\d+", re.IGNORECASE)


#: A running header or footer line has at least this many words: fewer ("7", "Contents") is a
#: page number or a word, which a line of a sentence can also be.
RUNNING_MIN_WORDS = 3

_LINE = re.compile(r"[^\n]+")


def folded(text: str) -> str:
    """``text`` as a running line is compared: runs of whitespace one space, case folded."""
    return " ".join(text.split()).casefold()


def running_lines(pages: Iterable[tuple[str, int, str]]) -> dict[str, frozenset[str]]:
    """Per document, the lines (folded) of :data:`RUNNING_MIN_WORDS` words or more that stand on
    two or more of its pages among ``pages`` ((document, unit, text) of each source): its
    running headers and footers, as far as the sources show them."""
    seen: dict[tuple[str, str], set[int]] = {}
    for doc, unit, text in pages:
        for match in _LINE.finditer(text):
            line = folded(match.group())
            if len(line.split()) >= RUNNING_MIN_WORDS:
                seen.setdefault((doc, line), set()).add(unit)
    found: dict[str, set[str]] = {}
    for (doc, line), units in seen.items():
        if len(units) >= 2:
            found.setdefault(doc, set()).add(line)
    return {doc: frozenset(lines) for doc, lines in found.items()}


def without_running_lines(
    text: str, start: int, end: int, running: frozenset[str]
) -> tuple[int, int]:
    """``(start, end)`` less the running lines (``running``, folded) at the head and the tail
    of ``text[start:end]``, and the space around them; ``(start, start)`` when nothing else is
    left. A numbered heading or a caption line that a cut header leaves at the head goes too
    (the splitter cuts a heading from the body after it, not from a header before it)."""
    if folded(text[start:end]) in running:
        return start, start  # nothing but the header
    return _without_edge_lines(
        text, start, end, lambda line: folded(line) in running, keep_last=True
    )


def _without_edge_lines(
    text: str, start: int, end: int, apart: Callable[[str], bool], *, keep_last: bool
) -> tuple[int, int]:
    """``(start, end)`` less the lines at its head and its tail that are ``apart`` from the
    sentence they touch, and the space around them; a numbered heading or a caption line that
    the head's cut leaves there goes too. When every line is apart, the last one is kept
    (``keep_last``) or nothing is: ``(start, start)``."""
    head = start
    while start < end:
        cut = text.find("\n", start, end)
        if cut < 0:
            if not keep_last and apart(text[start:end]):
                return start, start
            break
        if not apart(text[start:cut]):
            break
        start = _skip_space(text, cut + 1, end)
    cut = text.find("\n", start, end)
    if start > head and cut > 0 and _heading_line(text[start:cut].strip()):
        start = _skip_space(text, cut + 1, end)
    while start < end:
        cut = text.rfind("\n", start, end)
        if cut < 0 or not apart(text[cut + 1 : end]):
            break
        end = cut
        while end > start and text[end - 1].isspace():
            end -= 1
    return start, end


#: Code: a backslash (a TeX command), a brace.
_CODE_MARK = re.compile(r"[\\{}]")
#: A code listing's line: its number, then code at once ("62 \\DeclareSymbolFont", "8 }").
_LISTING_LINE = re.compile(r"\d{1,5}[ \t]+[\\{}%]")
#: A word of prose: two letters or more, not the name of a command ("\\selectfont", "\\l_@@_tl").
_PLAIN_WORD = re.compile(r"(?<![\\@_\w])[^\W\d_]{2,}")


def code_line(line: str) -> bool:
    """Whether ``line`` is a line of a code listing: a listing's line number followed by code,
    or code (a backslash or a brace) with fewer than two plain words ("}", "{\\foo}{bar}")."""
    body = line.strip()
    if not _CODE_MARK.search(body):
        return False
    return _LISTING_LINE.match(body) is not None or len(_PLAIN_WORD.findall(body)) < 2


#: A number alone on its line: a page number, an EPUB's paragraph number.
_BARE_NUMBER = re.compile(r"\d{1,5}")


def _stray_line(line: str) -> bool:
    """A line that is no part of the sentence it touches: code, or a bare number."""
    return code_line(line) or _BARE_NUMBER.fullmatch(line.strip()) is not None


def _ends_what_is_left(text: str, start: int, end: int, whole_end: int) -> bool:
    """Whether the one line cut at the tail (``text[end:whole_end]``) ends the sentence that
    ``text[start:end]`` leaves open, mid-way: the rest ends in a plain word or a comma ("... pass
    the option scanall to psfrag.sty in the" / "\\usepackage command."). Then the line is the
    sentence's end, not a listing. Two lines cut, or a rest that ends as a sentence, with a
    colon ("Load it as follows:") or in code ("\\usepackage[utf8]{inputenc}"), are a listing,
    unless the line opens with a plain word in lower case, which goes on with the sentence
    whatever the rest ends in ("... may be patched with \\apptocmd" / "and \\pretocmd.")."""
    cut = text[end:whole_end].strip()
    rest = text[start:end].rstrip()
    words = rest.split()
    goes_on = rest.endswith(",") or (bool(words) and _PLAIN_WORD.fullmatch(words[-1]) is not None)
    opener = _PLAIN_WORD.match(cut)
    continues = opener is not None and opener.group()[0].islower()
    return "\n" not in cut and ends_sentence(cut) and (goes_on or continues)


def without_stray_lines(text: str, start: int, end: int) -> tuple[int, int]:
    """``(start, end)`` less the lines of code (:func:`code_line`) and the bare numbers (a page
    number, a paragraph's number) at the head and the tail of
    ``text[start:end]`` (not one last line that ends the sentence the rest leaves open:
    ``\\usepackage command.``), and the space around them; ``(start, start)`` when nothing else is
    left, or when a listing's numbered lines inside it still hold a third of its characters or
    more (a listing with lines of prose between its lines: "Disable PDF file embedding: 25
    \\DeclareRobustCommand ... A file annotation becomes a reference: 31 ..."). Code displayed
    inside a sentence stays ("checked using the following: \\showcaptionsetup{figure} ...
    placed just before the \\subfloat will show ...").
    A numbered heading or a caption line that the cut leaves at the head goes too, as
    :func:`without_running_lines` does."""
    whole_end = end
    start, end = _without_edge_lines(text, start, end, _stray_line, keep_last=False)
    if start < end < whole_end and _ends_what_is_left(text, start, end, whole_end):
        end = whole_end
    listing = sum(
        len(m.group())
        for m in _LINE.finditer(text, start, end)
        if _LISTING_LINE.match(m.group().strip()) is not None
    )
    if 3 * listing >= end - start:
        return start, start
    return start, end


#: A caption line's label and its punctuation: "Fig. 4. ", "Table 1: " ("Figure 3 compares"
#: names a figure in a sentence).
_CAPTION_LINE = re.compile(_CAPTION.pattern + r"[.:]\s", re.IGNORECASE)
#: The last word of a line that goes on in the next one ("... a comparison of" / "BM25 and DPR").
_GOES_ON = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "and",
        "or",
        "nor",
        "in",
        "on",
        "for",
        "to",
        "with",
        "by",
        "from",
        "as",
        "at",
        "via",
        "into",
        "than",
        "that",
        "which",
        "whose",
        "its",
        "their",
        "our",
        "his",
        "her",
        "is",
        "are",
        "was",
        "were",
        "be",
    ]
)


def without_caption_head(text: str, start: int, end: int) -> tuple[int, int]:
    """``(start, end)`` less a caption line at its head that the sentence under it was joined
    to: the splitter sees no sentence end after "Fig. 4. CSF Tiers for cybersecurity risk
    governance and management", so the caption opened the sentence "Tiers should complement
    ...". A caption line (a label and its punctuation, :data:`_CAPTION_LINE`) is cut when it
    does not end as a sentence, nor on a word or a mark that goes on (:data:`_GOES_ON`, a comma),
    and the next line opens with a capital; a caption wrapped over lines ("... key components
    of SELF-RAG training" / "and inference ...") stays whole."""
    cut = text.find("\n", start, end)
    if cut < 0:
        return start, end
    line = text[start:cut].strip()
    rest = _skip_space(text, cut + 1, end)
    if rest >= end or not _CAPTION_LINE.match(line) or ends_sentence(line):
        return start, end
    last = line.split()[-1]
    if line[-1] in ",;:-–(" or last.lower() in _GOES_ON or not text[rest].isupper():
        return start, end
    return rest, end


def _skip_space(text: str, at: int, end: int) -> int:
    while at < end and text[at].isspace():
        at += 1
    return at


#: The most words of a heading line (a line of a sentence that opens with a number and a
#: capital is longer, or ends as a sentence ends or goes on).
_HEADING_WORDS = 10


def heads_a_block(text: str) -> bool:
    """Whether ``text`` (a span, stripped) opens as a caption ("Figure 3.", "Table 2") or a
    numbered heading ("4.2 Package booktabs", "Section 4.2."): the start of another block, not
    a sentence that goes on from the one before."""
    return _CAPTION.match(text) is not None or opens_section(text)


def _heading_line(line: str) -> bool:
    """A numbered heading or a caption label as a whole line: "6.2. Adding a New Patch"."""
    return (
        bool(line)
        and len(line.split()) <= _HEADING_WORDS
        and line[-1] not in ",;:-–(.!?"
        and heads_a_block(line)
    )


def ends_sentence(text: str) -> bool:
    """Whether ``text`` ends as a sentence does: terminal punctuation, then any closers."""
    return _SENTENCE_END.search(text.rstrip()) is not None


#: A numbered line: its number ("3.", "4.2"), then its words.
_NUMBERED_LINE = re.compile(r"\d{1,2}(?:\.\d{1,2}){0,3}\.?[ \t]+(?P<title>\S[^\n]*)")


def _numbered_heading(text: str) -> bool:
    """A numbered heading on one line, however many words: a number, then words that read as a
    title (:func:`truthbase.text.sentences.title_like`: "3. Introduction to CSF Profiles and
    Tiers"),
    which a numbered item of a list, a sentence with a capital after its number, fails."""
    match = _NUMBERED_LINE.fullmatch(text.strip())
    return match is not None and title_like(match["title"])


def _item(text: str) -> bool:
    """A list item long enough to quote on its own (its marker or label not counted), and no
    numbered heading (:func:`_numbered_heading`)."""
    if len(text.split()) - 1 < MIN_ITEM_WORDS:
        return False
    body = text.lstrip()
    if _numbered_heading(body):
        return False
    return opens_list_item(body) or _LABEL.match(body) is not None


def _cut_short(line: str) -> bool:
    """A line of running text that stops mid-sentence: it reads as prose
    (:func:`truthbase.text.sentences.reads_as_prose`) and ends on a word, where the rest of its
    sentence went on past the source (a figure's glyphs, another column, the chunk's end): "For
    example, we suspected bugs in TraceMonkey's handling of type-unstable". A lead-in that ends
    with a colon is whole."""
    body = line.strip()
    return bool(body) and (body[-1].isalnum() or body[-1] == "-") and reads_as_prose(body)


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
            if not (
                _CAPTION.match(piece)
                or opens_list_item(piece)
                or opens_section(piece)
                or _cut_short(piece)
            ):
                out.append((start, end))
            continue
        for nxt in spans[i + 1 :]:
            following = text[nxt[0] : nxt[1]]
            if (
                nxt in row_set
                or nxt in banned
                or _item(following)
                or _heading_line(following)
                or _numbered_heading(following)
            ):
                # a title page's lines ("The eso-pic package", its author's address) joined
                # across "1 Introduction" would open the sentence under it
                break
            if ends_sentence(text[nxt[0] : nxt[1]]):
                out.append((start, nxt[1]))
                break
    return _quotations_whole(text, out, row_set)


#: A quotation is joined with the sentences after it up to this many characters, no further.
_QUOTATION_CHARS = 400


def _opens_quotation(piece: str) -> bool:
    """Whether ``piece`` opens a quotation it does not close: an odd count of straight double
    quotes, or more opening curly quotes than closing ones."""
    return piece.count('"') % 2 == 1 or piece.count("“") > piece.count("”")


def _quotations_whole(
    text: str, spans: list[tuple[int, int]], rows: set[tuple[int, int]]
) -> list[tuple[int, int]]:
    """``spans`` with a quotation the splitter cut at a sentence end inside it made whole: "The
    King then read from his book: \"Rule forty-two." and "All persons more than a mile high to
    leave the court.\"" are one sentence, as a reader quotes it. A span that opens a quotation
    is joined with the spans that follow it on its line (no line break between: a paragraph of
    a book, a novel's quotation that runs over paragraphs is not followed) until the quotation
    closes, within :data:`_QUOTATION_CHARS`; else it stays as it was."""
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(spans):
        start, end = spans[i]
        j = i
        if (start, end) not in rows and _opens_quotation(text[start:end]):
            while j + 1 < len(spans):
                nxt = spans[j + 1]
                if nxt in rows or "\n" in text[spans[j][1] : nxt[0]]:
                    break
                if nxt[1] - start > _QUOTATION_CHARS:
                    break
                j += 1
                if not _opens_quotation(text[start : nxt[1]]):
                    break
            if j > i and _opens_quotation(text[start : spans[j][1]]):
                j = i  # never closed within reach: as the splitter cut it
        out.append((start, spans[j][1]))
        i = j + 1
    return out
