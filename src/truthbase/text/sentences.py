"""Sentence spans of canonical page text.

PDF text has a line break at the end of every rendered line, so a line break alone says nothing:
inside a paragraph a sentence runs on across it. A sentence ends at terminal punctuation
(``. ! ? …``, with any closing quotes or brackets after it) followed by whitespace and something
that can start a sentence, unless the word before the period is an abbreviation, an initial or a
caption label's number. A new sentence also starts at a line that begins with a list item or a
bullet, after a heading-like line (short, no final punctuation, last word not lower case) when
the next line starts with a capital or a digit, and after a blank line. The labels drawn inside
a figure (:func:`truthbase.text.figures.figure_blocks`) are cut off from the text around them.

Pure and deterministic; the only entry point is :func:`split_sentences`. Where the rules are in
doubt they keep text together: a missed boundary costs a slightly longer sentence, a false one
can cut a passage in two.
"""

from __future__ import annotations

import itertools
import re

from .figures import figure_blocks

__all__ = [
    "opens_list_item",
    "opens_section",
    "reads_as_prose",
    "split_sentences",
    "title_like",
]

# fmt: off
#: Words that end with a period but (almost) never end a sentence, lower-cased, without the period.
_NON_FINAL = frozenset({
    "e.g", "i.e", "cf", "vs", "viz", "al", "approx", "resp", "fig", "figs", "eq", "eqs", "sec",
    "secs", "tab", "ref", "refs", "no", "nos", "vol", "vols", "pp", "ch", "chap", "app", "def",
    "thm", "lem", "prop", "cor", "dr", "mr", "mrs", "ms", "prof", "st", "sr", "jr", "gen", "rev",
    "fr", "op", "ed", "eds", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct",
    "nov", "dec", "ca", "esp", "incl",
    # German ("z. B.", "d. h.", "u. a." are initials; "z.B." an initialism)
    # (none that ends an English sentence: not "art", "max", "min", "mind")
    "bzw", "vgl", "abb", "nr", "kap", "bsp", "bspw", "ggf", "evtl", "inkl", "sog", "bd", "hrsg",
    "jh", "jhd", "anm", "bem", "bew", "kor", "aufl", "mio", "mrd", "tsd", "ff", "zzgl", "urspr",
    "verf", "vorl", "übers", "engl", "allg", "insb", "spez", "zit", "ebd", "usf",
})

#: Words after "N." that make it a German ordinal ("am 3. Oktober", "im 19. Jahrhundert").
_ORDINAL_NEXT = frozenset({
    "januar", "jänner", "februar", "märz", "april", "mai", "juni", "juli", "august", "september",
    "oktober", "november", "dezember", "jahrhundert", "jahrhunderts", "jh", "jahrtausend",
    "auflage", "aufl", "kapitel", "klasse", "stock", "semester", "platz", "mal",
})

#: Labels that, at the start of a line, make "Label N." a caption number, not a sentence end.
_CAPTION_LABELS = frozenset({
    "fig.", "figure", "figs.", "table", "tab.", "algorithm", "listing", "eq.", "equation", "box",
    "exhibit", "chart",
})

#: Words that name a lettered item: "Appendix A." can end a sentence.
_LETTER_LABELS = frozenset({
    "appendix", "annex", "section", "part", "table", "figure", "class", "type", "group", "option",
    "step", "level", "tier", "plan",
})
# fmt: on

_CLOSERS = "\"'”’»›)]}"
_OPENERS = "\"'“‘«‹([{"
#: Bullets that always start a list item at the start of a line.
_STRONG_BULLETS = frozenset("•▪◦‣●○■□►▶➢➤✓✔◆◇⁃∙·\uf0b7\uf0a7\uf076\uf0d8\uf0fc")
#: Characters that start a list item at a line start only when the context agrees.
_WEAK_BULLETS = frozenset("-–—*o")
#: A line ending in one of these runs on into the next line.
_CONTINUING_END = frozenset(",;:-–—/&+=([{")

# Terminal punctuation (a run of it, or an ellipsis), closers, then whitespace or the end.
_TERMINAL = re.compile(r"[.!?…]+[" + re.escape(_CLOSERS) + r"]*(?=\s|\Z)")
# Full-width terminals need no space after them.
_CJK_CLOSERS = "」』）”’"
_CJK_TERMINAL = re.compile(r"[。！？]+[" + _CJK_CLOSERS + r"]*")
#: Japanese quotative particles: after a quotation's closing bracket the sentence goes on.
_QUOTATIVE = frozenset("とっ")
_LINE_BREAK = re.compile(r"\r\n|[\n\r\u2028\u2029\x0b\x0c\x1c\x1d\x1e\x85]")
_INITIALISM = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]")
_NUMBER = re.compile(r"(?:\d+|[A-Z])(?:\.\d+)*")
# "1." "12)" "(3)" "a." "b)" "(c)" "iv." "(ii)" followed by whitespace.
_NUMBERED_ITEM = re.compile(
    r"\(?(?:\d{1,3}(?:\.\d{1,3})*|[a-zA-Z]|[ivxIVX]{1,5})[.)](?=[ \t\u00a0])"
)

# A line's length counts as short against this share of the page's long lines.
_SHORT_SHARE = 0.7
# ...or under this many characters, whatever the page.
_SHORT_ABSOLUTE = 30
#: Fewer lines than this: the longest one is the full width (the percentile means nothing).
_FEW_LINES = 10
#: A section number and a capital that open a heading in sentence case ("2.2 Encoding and
#: escaping", "3.6 Disabling keys"): such a line is a heading though its last word is lower case.
#: A manual's key entry opening its line: "breaklines=⟨true|false⟩ false", "† frame=⟨none⟩".
_KEY_ENTRY = re.compile(r"[†‡*∗]?[ \t]*[^\W\d][\w@-]*=")
_SECTION_NUMBER = re.compile(r"\d{1,2}(?:\.\d{1,2}){0,3}\.?[ \t\u00a0]+[^\W\d_]")


#: A heading has at most this many words (a longer line is running text).
_TITLE_WORDS = 12
_LETTERS = re.compile(r"[^\W\d_]")
#: Words of running prose that a heading hardly holds: personal pronouns and finite verbs. "In
#: this paper we proposed Preemptive Information" is a sentence's first line, though its last
#: word is a capital's; "About this manual" and "Effects of the number of passages" are headings.
_PROSE_WORDS = frozenset(
    [
        "i",
        "we",
        "you",
        "he",
        "she",
        "they",
        "our",
        "your",
        "their",
        "is",
        "are",
        "was",
        "were",
        "has",
        "have",
        "had",
        "does",
        "did",
        "can",
        "could",
        "will",
        "would",
        "should",
        "may",
        "might",
        "must",
    ]
)


def title_like(title: str) -> bool:
    """A heading's words: short, led by a capital, most longer words capitalized, no final
    sentence punctuation (a numbered list item in running text fails one of these)."""
    words = title.split()
    if not words or len(words) > _TITLE_WORDS or not title[0].isupper():
        return False
    if title.rstrip()[-1] in ".,;" or len(_LETTERS.findall(title)) < 2:
        return False
    long_words = [w for w in words if len(w) > 3 and _LETTERS.match(w)]
    capitalized = sum(1 for w in long_words if w[0].isupper())
    return not long_words or capitalized * 2 >= len(long_words)


def reads_as_prose(line: str) -> bool:
    """Whether a line reads as running text, not as a heading: a personal pronoun or a finite
    verb among its words (:data:`_PROSE_WORDS`), and no title (:func:`title_like`)."""
    words = (w.strip(".,;:!?()[]\"'“”‘’").lower() for w in line.split())
    return any(w in _PROSE_WORDS for w in words) and not title_like(line.strip())


def _first_letter(word: str) -> str:
    for ch in word:
        if ch.isalnum():
            return ch
    return ""


def _can_start(text: str, at: int) -> bool:
    """Whether the character at ``at`` can begin a sentence (after terminal punctuation)."""
    if at >= len(text):
        return False
    ch = text[at]
    if ch.isalpha():
        return not ch.islower()
    if ch.isdigit():
        return True
    if ch in _OPENERS:
        nxt = text[at + 1] if at + 1 < len(text) else ""
        if ch in "([{":
            return nxt.isalpha() and not nxt.islower()
        return nxt != "" and not nxt.islower() and not nxt.isspace()
    if ch in _STRONG_BULLETS:
        return True
    return ch not in ",;:.)]}%…-–—/"


def _word_before(text: str, end: int, floor: int) -> tuple[str, int]:
    """The whitespace-delimited word that ends at ``end``, and where it starts."""
    i = end
    while i > floor and not text[i - 1].isspace():
        i -= 1
    return text[i:end], i


def _rstrip_to(text: str, end: int, floor: int) -> int:
    """``end`` moved back over whitespace, not below ``floor``."""
    while end > floor and text[end - 1].isspace():
        end -= 1
    return end


def _is_non_final(text: str, dot: int, line_start: int) -> bool:
    """Whether the single period at ``dot`` belongs to an abbreviation, initial or caption."""
    word, word_start = _word_before(text, dot, line_start)
    stripped = word.lstrip(_OPENERS)
    if not stripped:
        return False
    lowered = stripped.lower()
    if lowered in _NON_FINAL:
        return True
    if len(stripped) == 1 and stripped.isalpha():
        # An initial ("J. Smith"), unless a label names it: "see Appendix A. The ..."
        label, _ = _word_before(text, _rstrip_to(text, word_start, line_start), line_start)
        return label.lower().strip(_OPENERS) not in _LETTER_LABELS
    if _INITIALISM.fullmatch(stripped):
        return True  # "U.S", "e.g", "Ph.D" is in neither but rare at a sentence end
    if stripped.isdigit() and len(stripped) <= 2 and _next_word(text, dot + 1) in _ORDINAL_NEXT:
        return True  # a German ordinal: "am 3. Oktober"
    if _NUMBER.fullmatch(stripped):
        # "Fig. 3. Steps for ..." at the start of a line is a caption, not two sentences.
        label_end = _rstrip_to(text, word_start, line_start)
        label, label_start = _word_before(text, label_end, line_start)
        if _rstrip_to(text, label_start, line_start) == line_start:
            return label.lower() in _CAPTION_LABELS
    return False


def _next_word(text: str, at: int) -> str:
    """The lower-cased letters of the word after ``at`` (past whitespace), as far as they go."""
    while at < len(text) and text[at].isspace():
        at += 1
    end = at
    while end < len(text) and text[end].isalpha():
        end += 1
    return text[at:end].lower()


def _list_marker(text: str, start: int, end: int) -> tuple[str, int] | None:
    """The kind of list marker that opens the line content [start, end) and where text follows."""
    ch = text[start]
    if ch in _STRONG_BULLETS:
        return "strong", start + 1
    if ch in _WEAK_BULLETS and start + 1 < end and text[start + 1] in " \t\u00a0":
        return "weak", start + 1
    m = _NUMBERED_ITEM.match(text, start, end)
    if m is not None:
        return "number", m.end()
    return None


def opens_list_item(text: str) -> bool:
    """Whether ``text`` begins with a list marker: a bullet, a dash or a number ("1." "(b)")."""
    return bool(text) and _list_marker(text, 0, len(text)) is not None


def _starts_upper(text: str, at: int, end: int) -> bool:
    """Whether the line content from ``at`` starts with a capital letter or a digit."""
    while at < end and text[at].isspace():
        at += 1
    if at >= end:
        return False
    if text[at] in _OPENERS and at + 1 < end:
        at += 1
    ch = text[at]
    return ch.isdigit() or (ch.isalpha() and not ch.islower())


def _heading_like(text: str, start: int, end: int, short: float) -> bool:
    """A line content [start, end) that can stand alone: short, unpunctuated, not lower-case."""
    if not _unpunctuated_short(text, start, end, short):
        return False
    words = text[start:end].split()
    letter = _first_letter(words[-1]) if words else ""
    return letter != "" and not letter.islower()


def _numbered_heading(text: str, start: int, end: int, short: float) -> bool:
    """A line content [start, end) that a section number and a capital open, short and
    unpunctuated: a heading in sentence case ("2.2 Encoding and escaping"), whatever its last
    word."""
    return _unpunctuated_short(text, start, end, short) and _opens_section(text, start, end)


def _opens_section(text: str, start: int, end: int) -> bool:
    numbered = _SECTION_NUMBER.match(text, start, end)
    return numbered is not None and not text[numbered.end() - 1].islower()


def opens_section(text: str) -> bool:
    """Whether ``text`` begins as a numbered section heading does: a section number and a
    capital ("2.2 Encoding and escaping", "4.1 CONTRIBUTION", "2 What the package provides")."""
    return _opens_section(text, 0, len(text))


def _unpunctuated_short(text: str, start: int, end: int, short: float) -> bool:
    last = text[end - 1]
    return end - start <= short and last not in _CONTINUING_END and last not in ".!?…"


def _lines(text: str) -> list[tuple[int, int]]:
    """Content spans [start, end) of each line, leading and trailing whitespace stripped.

    A blank line is (i, i) at the position of its break.
    """
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in _LINE_BREAK.finditer(text):
        spans.append(_strip(text, pos, m.start()))
        pos = m.end()
    spans.append(_strip(text, pos, len(text)))
    return spans


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _short_limit(lines: list[tuple[int, int]], quoting: bool) -> float:
    lengths = sorted(e - s for s, e in lines if e > s)
    if not lengths:
        return float(_SHORT_ABSOLUTE)
    # The full width of a line: the 90th percentile of the lengths; quoting a text of a few
    # lines (a chunk) the longest, as the percentile took the second-longest there (with two
    # lines the shorter one), and a heading over a single body line was never short.
    few = quoting and len(lengths) < _FEW_LINES
    at = len(lengths) - 1 if few else int(0.9 * (len(lengths) - 1))
    long_line = lengths[at]
    return max(_SHORT_SHARE * long_line, float(_SHORT_ABSOLUTE))


def split_sentences(text: str, *, quoting: bool = False) -> list[tuple[int, int]]:
    """Sentence spans [start, end) of ``text``, in order, without surrounding whitespace.

    The spans do not overlap and together cover every non-whitespace character of the text.
    ``quoting``: the sentences an answer may quote from a chunk, with three more cuts: before
    body text after a heading over it in a text of few lines, and after a numbered heading in
    sentence case ("2.2 Encoding and escaping", also before a line that opens with a TeX
    command: "3 Usage" / "\\setupctable ..."); and before a manual's key entry, a line that
    opens with "key=" after a line that ended a sentence or a key's syntax ("breaklines=⟨true|
    false⟩ false" after "... i.e. not used.": the lower-case key read as the sentence going
    on). Ingest keeps the splits without them, which its stored chunks and windows were cut by
    and its numbers measured on (with the first two, the library's chunks moved and
    library-dev lost a question at rank 8; selection.md).
    """
    lines = _lines(text)
    short = _short_limit(lines, quoting)
    terminals = [m for m in _TERMINAL.finditer(text)]
    terminals.extend(_CJK_TERMINAL.finditer(text))
    terminals.sort(key=lambda m: m.start())
    cuts: list[int] = [0]
    t = 0  # next terminal candidate
    prev: tuple[int, int] | None = None  # the last non-blank line
    prev_terminated = False  # the last non-blank line ended a sentence (or a clause before a list)
    blank_since_prev = False
    in_item = False  # the open sentence began with a list marker or bullet

    for start, end in lines:
        if start == end:
            blank_since_prev = True
            continue
        marker = _list_marker(text, start, end)
        if prev is None:
            in_item = marker is not None
        elif (
            blank_since_prev
            or prev_terminated
            or _line_opens_sentence(text, prev, start, end, marker, short, in_item, quoting)
            or (quoting and _opens_key_entry(text, prev, start))
        ):
            cuts.append(start)
            in_item = marker is not None
        blank_since_prev = False
        body = marker[1] if marker is not None else start  # a marker's own period ends nothing
        t, prev_terminated, in_item = _cut_at_terminals(
            text, terminals, t, cuts, start, body, end, in_item
        )
        prev = (start, end)

    cuts.append(len(text))
    # A figure's labels are a block of their own: cut at its edges, so no sentence (the
    # caption below it above all) reads them as its words.
    for start, end in figure_blocks(text):
        cuts.extend((start, end))
    return _spans(text, sorted(set(cuts)))


def _opens_key_entry(text: str, prev: tuple[int, int], start: int) -> bool:
    """Whether the line at ``start`` opens a key entry ("breaklines=⟨true|false⟩ false") after
    the line ``prev`` ended a sentence (a terminal: the lower-case key kept it open) or gave a
    key's syntax (one entry after another: "xleftmargin=⟨dimension⟩ 0pt")."""
    if _KEY_ENTRY.match(text, start) is None:
        return False
    last = text[prev[0] : prev[1]]
    if last[-1] == "." and _is_non_final(text, prev[1] - 1, prev[0]):
        return False  # "..., e.g." goes on: "e.g.\nbreaklines=true breaks lines"
    return last[-1] in ".!?" or (_KEY_ENTRY.match(last) is not None and "=⟨" in last)


def _line_opens_sentence(
    text: str,
    prev: tuple[int, int],
    start: int,
    end: int,
    marker: tuple[str, int] | None,
    short: float,
    in_item: bool,
    quoting: bool,
) -> bool:
    """Whether the line content [start, end) starts a sentence of its own after the line
    ``prev``, which ended none (no terminal, no blank line between): a strong bullet, any
    marker inside a list or after a colon, a weak bullet before a capital, a numbered item
    after a heading-like line, a capital after one (``quoting``: or a line of body text after
    a numbered heading)."""
    if marker is not None:
        kind, after = marker
        if kind == "strong" or in_item or text[prev[1] - 1] in ":;":
            return True
        if kind == "weak":
            return _starts_upper(text, after, end)
        return _heading_like(text, prev[0], prev[1], short)
    if quoting and text.startswith("\\", start) and _numbered_heading(text, *prev, short):
        return True  # a manual's entry under its heading: "3 Usage" / "\\setupctable ..."
    if not _starts_upper(text, start, end):
        return False
    # A heading whose last word is lower case only before a line of body text: before another
    # short line it may be the first line of a heading wrapped in two ("4 Euklidische und
    # nichteuklidische" / "Geometrie").
    # Quoting, a short line that reads as prose is a sentence's first line, not a heading: "In
    # this paper we proposed Preemptive Information" / "Extraction as a new direction ...".
    heading = _heading_like(text, prev[0], prev[1], short) and not (
        quoting and reads_as_prose(text[prev[0] : prev[1]])
    )
    return heading or (
        quoting and end - start > short and _numbered_heading(text, prev[0], prev[1], short)
    )


def _cut_at_terminals(
    text: str,
    terminals: list[re.Match[str]],
    t: int,
    cuts: list[int],
    start: int,
    body: int,
    end: int,
    in_item: bool,
) -> tuple[int, bool, bool]:
    """Cut after each terminal punctuation inside the line content [start, end) that ends a
    sentence (from ``body`` on: a list marker's own period ends nothing), appending to
    ``cuts``. ``terminals[t:]``: the candidates not yet passed, in order of their start.

    Returns the next candidate, whether the line itself ends a sentence (a terminal at its
    end, followed by something that can start one: the next line's start test decides), and
    whether the open sentence still began with a list marker."""
    ends_line = False
    while t < len(terminals) and terminals[t].start() < end:
        m = terminals[t]
        t += 1
        if m.start() < body:
            continue
        if m.group()[0] in "。！？":
            if m.group()[-1] in _CJK_CLOSERS and text[m.end() : m.end() + 1] in _QUOTATIVE:
                continue  # 「引用。」と言った: the quote's stop, the sentence goes on
            if m.end() < end:
                cuts.append(m.end())
                in_item = False
            else:
                ends_line = True
            continue
        nxt = m.end()
        while nxt < len(text) and text[nxt].isspace():
            nxt += 1
        punct = m.group().rstrip(_CLOSERS)
        if punct == "." and _is_non_final(text, m.start(), start):
            continue
        if m.end() >= end:
            # At the line end: the next line decides, through the usual start test.
            ends_line = nxt >= len(text) or _can_start(text, nxt)
            if ends_line:
                in_item = False
            continue
        if _can_start(text, nxt):
            cuts.append(m.end())
            in_item = False
    return t, ends_line, in_item


def _spans(text: str, cuts: list[int]) -> list[tuple[int, int]]:
    """The stripped, non-empty spans between consecutive ``cuts``."""
    spans: list[tuple[int, int]] = []
    for a, b in itertools.pairwise(cuts):
        s, e = _strip(text, a, b)
        if s < e:
            spans.append((s, e))
    return spans
