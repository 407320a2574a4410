"""Line-end hyphens: word break or compound hyphen, decided from the document (pure functions).

pdfium marks every hyphen at the end of a line the same way (code 0x02 with IsHyphen, U+FFFE in
GetText), whether it splits one word ("paramet-" / "ric") or is a real compound hyphen that
happens to fall at the line end ("high-" / "level", "SELF-" / "RAG"). Like the private-use
ligature repair, the document itself is the evidence: elsewhere in its text, away from line ends,
does it write "high-level" or "highlevel"? The hyphen stays when the hyphenated form is attested
and the joined form is not more frequent; otherwise the halves join (the default, and what every
typographic break needs).

When the document attests neither form, one fallback keeps the hyphen: an uppercase letter or a
digit on both sides of it ("SELF-RAG", "GPT-4", "COVID-19"). Hyphenation dictionaries split
lowercase words; all-caps and numeric tokens are names and codes that break, if at all, at their
own hyphens. An all-caps word that really was split ("RECOMMENDA-TION") is usually attested in
its joined form elsewhere, and the joined form then wins.

Input texts carry U+FFFE where pdfium marked a line-end hyphen (the cleaned, ligature-expanded
page text, not yet normalized); one decision is returned per mark, in order.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: The mark the text core leaves where pdfium reported a line-end hyphen.
HYPHEN_MARK = "\ufffe"

# A word: letters and digits (no underscore). A compound: words joined by single hyphens
# (ASCII hyphen-minus, U+2010 hyphen, U+2011 non-breaking hyphen).
_PART = r"[^\W_]+"
_HYPHENS = "-\u2010\u2011"
_COMPOUND = re.compile(rf"{_PART}(?:[{_HYPHENS}]{_PART})*")
_SPLIT = re.compile(rf"[{_HYPHENS}]")
_RIGHT = re.compile(_PART)
_WORD_CHAR = re.compile(r"[^\W_]")


def _fold(word: str) -> str:
    if word.isascii():
        return word.casefold()  # ASCII is in NFC already
    return unicodedata.normalize("NFC", word).casefold()


@dataclass(frozen=True, slots=True)
class HyphenEvidence:
    """How often the document writes each word and each hyphenated pair, away from line ends."""

    words: Counter[str]  # every word and every part of a compound, case-folded
    pairs: Counter[tuple[str, str]]  # adjacent parts of a compound: "high-level" -> (high, level)

    @classmethod
    def of(cls, texts: Iterable[str]) -> HyphenEvidence:
        # Each compound is counted once per distinct spelling, not walked once per occurrence:
        # findall and Counter run in C, and the folding and splitting below then run once per
        # distinct compound. A compound never contains a mark, so the matches of a text are
        # those of its pieces between marks; only a piece's first and last match can touch one.
        plain: Counter[str] = Counter()
        touching: Counter[tuple[str, bool, bool]] = Counter()  # (compound, mark before, after)
        for text in texts:
            pieces = text.split(HYPHEN_MARK)
            last = len(pieces) - 1
            for k, piece in enumerate(pieces):
                found = _COMPOUND.findall(piece)
                if not found:
                    continue
                plain.update(found)
                # A piece's first match starts at the mark before it exactly when the piece
                # starts with a word character; its last ends at the next mark likewise.
                before = k > 0 and _WORD_CHAR.match(piece) is not None
                after = k < last and _WORD_CHAR.match(piece, len(piece) - 1) is not None
                if before:
                    plain[found[0]] -= 1
                    touching[(found[0], True, after and len(found) == 1)] += 1
                if after and (len(found) > 1 or not before):
                    plain[found[-1]] -= 1
                    touching[(found[-1], False, True)] += 1
        words: Counter[str] = Counter()
        pairs: Counter[tuple[str, str]] = Counter()
        spellings: list[tuple[tuple[str, bool, bool], int]] = []
        for compound, n in plain.items():
            if n <= 0:
                continue
            if _SPLIT.search(compound) is None:
                words[_fold(compound)] += n  # one part, touching no mark: a word
            else:
                spellings.append(((compound, False, False), n))
        for key, n in [*spellings, *touching.items()]:
            if n <= 0:
                continue
            compound, before, after = key
            parts = [_fold(p) for p in _SPLIT.split(compound)]
            # A part touching a line-end mark is a fragment (or half of an undecided
            # compound): neither it nor a pair with it is evidence.
            usable = [True] * len(parts)
            if before:
                usable[0] = False
            if after:
                usable[-1] = False
            for i, part in enumerate(parts):
                if usable[i]:
                    words[part] += n
                if i and usable[i - 1] and usable[i]:
                    pairs[(parts[i - 1], part)] += n
        return cls(words, pairs)


def _strong(ch: str) -> bool:
    return ch.isupper() or ch.isdigit()


def keep_hyphen(left: str, right: str, evidence: HyphenEvidence) -> bool:
    """True when the line-end hyphen between ``left`` and ``right`` is a compound's hyphen.

    ``left`` is the word piece before the hyphen, ``right`` the piece after it (letters and
    digits only). Attested usage decides; the uppercase/digit fallback only applies when the
    document writes neither form.
    """
    if not left or not right:
        return False  # not between two words: nothing to keep a hyphen for
    hyphenated = evidence.pairs[(_fold(left), _fold(right))]
    joined = evidence.words[_fold(left + right)]
    if hyphenated or joined:
        return hyphenated > 0 and hyphenated >= joined
    return _strong(left[-1]) and _strong(right[0])


def break_around(text: str, at: int) -> tuple[str, str]:
    """The word pieces either side of the mark at ``text[at]`` ("" where there is none)."""
    # The piece before: the run of word characters that ends at the mark (what a search for
    # ``[^\W_]+\Z`` up to the mark finds), walked back from the mark, not searched for from
    # the start of the page.
    start = at
    while start > 0 and _WORD_CHAR.match(text, start - 1) is not None:
        start -= 1
    after = _RIGHT.match(text, at + 1)
    return (text[start:at], after.group() if after else "")


def decide_line_end_hyphens(pages: Sequence[str]) -> list[list[bool]]:
    """For each page, one decision per U+FFFE mark in order: True keeps a hyphen, False joins."""
    if not any(HYPHEN_MARK in text for text in pages):
        return [[] for _ in pages]  # no mark to decide: no evidence to gather
    evidence = HyphenEvidence.of(pages)
    decisions: list[list[bool]] = []
    for text in pages:
        page: list[bool] = []
        at = text.find(HYPHEN_MARK)
        while at >= 0:
            left, right = break_around(text, at)
            page.append(keep_hyphen(left, right, evidence))
            at = text.find(HYPHEN_MARK, at + 1)
        decisions.append(page)
    return decisions
