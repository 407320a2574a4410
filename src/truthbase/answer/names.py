"""What a question names: the named terms a source must hold for the question to be answered
(acronyms, numbers, capitalized names: policy rule 2), and the codes that pick one item of a
family the sources list ("ID.RA-08" beside ID.RA-07 and ID.RA-10), which the extractive
answerer's sentences must hold when some do. Pure functions of text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Protocol

from ..text.language import detect
from ..text.vocabulary import terms
from .model import Source

__all__ = [
    "code_terms",
    "holds_codes",
    "holds_phrases",
    "missing_named_terms",
    "named_terms",
    "one_of_a_family",
    "quoted_phrases",
]


class _Scored(Protocol):
    @property
    def scored(self) -> str: ...


_NAME_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_ABBREVIATION = re.compile(r"\b[A-Z][a-z]{0,3}\.$")  # Mr. Mrs. Dr. St.: no sentence ends there


# Runs of CJK script: a capital or a space marks no name there, so a Chinese question's one
# "word" (the whole sentence) must not become named terms; only its Latin and digit runs can.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
# Languages whose spelling capitalizes every noun: there a capital letter marks no name.
_NOUNS_CAPITALIZED = frozenset({"de", "lb"})


def named_terms(question: str, language: str | None = None) -> list[str]:
    """The question's named terms, stemmed: acronyms and other words with two or more capitals
    (CISA, HotpotQA), tokens with a digit (42001, 13B), and capitalized words that do not
    start the question or a sentence (Recall@20, Bennet), in order, without repeats.

    ``language`` (ISO 639-1; None: detected, :func:`truthbase.text.language.detect`) decides
    whether a capital marks a name: not in German, where every noun has one ("In welchem
    Semester ..." names no term but its acronyms and numbers). In CJK text only the Latin and
    digit runs can be names ("东北电气2018年" names 2018)."""
    text = unicodedata.normalize("NFKC", question)
    if language is None:
        language = detect(text)[0]
    capitals_name = language not in _NOUNS_CAPITALIZED
    out: list[str] = []
    for m in _NAME_TOKEN.finditer(text):
        at = m.start()
        for word in _CJK.split(m.group()):
            start = text.index(word, at) if word else at
            at = start + len(word)
            if not word:
                continue
            before = text[:start].rstrip()
            starts = (
                not before
                or before[-1] in "?!"
                or (before[-1] == "." and not _ABBREVIATION.search(before))
            )
            if (
                any(ch.isdigit() for ch in word)
                or sum(ch.isupper() for ch in word) >= 2
                or (capitals_name and word[0].isupper() and not starts)
            ):
                for t in terms(word):
                    if t not in out:
                        out.append(t)
    return out


#: A code of letters and digits joined by dots or hyphens ("ID.RA-08", "GV.RM-02", "GPT-4").
_CODE = re.compile(r"(?<![\w.\-])[^\W_]+(?:[.\-][^\W_]+)+(?![\w\-]|\.\w)")


#: A code of capitals only: two or more parts of two or more capitals joined by dots ("PR.AA",
#: "GV.SC"; not the hyphenated words of a title in capitals, "EU-US", "END-TO-END").
_CAPITALS_CODE = re.compile(r"[A-Z]{2,}(?:\.[A-Z]{2,})+")


def code_terms(text: str) -> list[str]:
    """The codes ``text`` names, case-folded, without repeats: compounds of letters and digits
    joined by dots or hyphens, with a letter and a digit ("ID.RA-08" -> "id.ra-08", "GPT-4";
    not "well-known", "Self-RAG" or "2.0"), or of capitals only, two or more to a part
    ("PR.AA", the category beside PR.AT and PR.DS; not "U.S." or "C-SCRM"). Their words are
    terms already, but "ID.RA-08" shares "id", "ra" and "08" with ID.RA-07 and ID.AM-08 on the
    same page, and an embedding hardly tells them apart: the whole code is what names one of
    them."""
    out: list[str] = []
    for m in _CODE.finditer(unicodedata.normalize("NFKC", text)):
        written = m.group()
        code = written.casefold()
        letters_and_digits = any(ch.isdigit() for ch in code) and any(ch.isalpha() for ch in code)
        capitals = _CAPITALS_CODE.fullmatch(written) is not None
        if (letters_and_digits or capitals) and code not in out:
            out.append(code)
    return out


def holds_codes(text: str, codes: Sequence[str]) -> bool:
    """Whether ``text`` names every one of ``codes`` (:func:`code_terms`), alone or inside a
    longer compound ("GPT-4-based" names GPT-4; "ID.RA-081" does not name ID.RA-08, nor
    "PR.AA-02", a subcategory, the category PR.AA)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return all(
        re.search(f"(?<![^\\W_]){re.escape(code)}(?![^\\W_]|\\s*[.\\-–—]\\s*\\d)", folded)
        is not None
        for code in codes
    )


def _shape(code: str) -> str:
    return re.sub(r"[^\W\d_]", "a", re.sub(r"\d", "9", code))


def one_of_a_family(codes: Sequence[str], candidates: Sequence[_Scored]) -> list[str]:
    """The ``codes`` that name one of a family in the candidates' sentences: another code of
    the same shape (letters for letters, digits for digits, the same joiners: ID.RA-07 beside
    ID.RA-08) is there. A code without one is context ("the demonstrations Self-RAG gives
    GPT-4"), not the item asked about, and the embedding tells such sentences apart anyway."""
    if not codes:
        return []
    shapes = {_shape(c) for c in codes}
    seen = {t for c in candidates for t in code_terms(c.scored) if _shape(t) in shapes}
    return [c for c in codes if any(_shape(t) == _shape(c) and t != c for t in seen)]


#: A phrase the question puts in quotation marks: after a space or an opening bracket, before
#: a space or punctuation (an apostrophe inside a word, "Self-RAG's", opens none).
_QUOTED = re.compile(
    r"(?:^|(?<=[\s(\[]))(?:'([^'\n]+)'|\"([^\"\n]+)\"|‘([^’\n]+)’|“([^”\n]+)”)(?=[\s,.;:!?)\]]|$)"
)
#: Most words of a quoted phrase that names something (a longer one quotes a passage).
_PHRASE_WORDS = 4


def _folded(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def quoted_phrases(question: str) -> list[str]:
    """The names the question puts in quotation marks ("the 'No Critic' ablation"), case-folded,
    of one to :data:`_PHRASE_WORDS` words with a letter, without repeats: the asker's own
    mark of the exact words a passage about it uses. A quoted question ("does 'What is the
    capital of France?' need retrieval?") is a passage, not a name."""
    out: list[str] = []
    for m in _QUOTED.finditer(unicodedata.normalize("NFKC", question)):
        written = next(g for g in m.groups() if g is not None).strip()
        phrase = _folded(written).strip(" .,;:")
        words = phrase.split()
        # a name: a capital or a digit in it, or two words or more; one common word in scare
        # quotes ("a 'good' score") names nothing
        marked = any(c.isupper() or c.isdigit() for c in written) or len(words) >= 2
        named = 1 <= len(words) <= _PHRASE_WORDS and marked and len(phrase) >= 3
        # a quoted question or exclamation is a passage the asker cites, not a name
        if named and not written.endswith(("?", "!")) and phrase not in out:
            out.append(phrase)
    return out


def holds_phrases(text: str, phrases: Sequence[str]) -> bool:
    """Whether ``text`` holds every one of ``phrases`` (:func:`quoted_phrases`) as whole words,
    case and spacing aside."""
    folded = _folded(text)
    return all(
        re.search(f"(?<![^\\W_]){re.escape(p)}(?![^\\W_])", folded) is not None for p in phrases
    )


def missing_named_terms(question: str, sources: Sequence[Source]) -> tuple[str, ...]:
    """The named terms of the question that occur in no source text and no source title."""
    wanted = named_terms(question)
    if not wanted:
        return ()
    have: set[str] = set()
    for source in sources:
        have.update(terms(source.text))
        have.update(terms(source.title))
    return tuple(t for t in wanted if t not in have)
