"""Ligature expansion and private-use ligature repair (pure functions, no pdfium).

Unicode ligatures (U+FB00..U+FB06) expand through a fixed table. Private-use code points are
harder: some PDF producers (cairo, when re-printing through a browser) give ligature glyphs a
private-use code point (U+E000, U+E001, ...) in the font's ToUnicode map, and the code points are
assigned per font subset, so U+E000 can be "fi" in one font and a summation sign in another.
pdfium does not expose glyph names, so the meaning is inferred from the document itself: per
(font, code point), the ligature whose substitution turns the most words containing it into
words that are real (used elsewhere in the document without the private-use character, or in a
small built-in list of English words) wins. A key with no such evidence is left alone: a math
symbol must not become "fi".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..text.vocabulary import stem

#: U+FB00..U+FB06 as letters. U+FB05 keeps its long s: NFC (the canonical form) does not fold it,
#: and the matching rule's NFKC still reads it as "st".
UNICODE_LIGATURES: Mapping[str, str] = {
    "\ufb00": "ff",
    "\ufb01": "fi",
    "\ufb02": "fl",
    "\ufb03": "ffi",
    "\ufb04": "ffl",
    "\ufb05": "\u017ft",
    "\ufb06": "st",
}

#: The ligatures Latin text fonts carry; order breaks nothing (ties are refused, not broken).
PUA_CANDIDATES: tuple[str, ...] = ("fi", "fl", "ff", "ffi", "ffl")

#: A private-use glyph is identified by its font (subset names differ per subset) and code point.
PuaKey = tuple[str, int]


def is_private_use(code: int) -> bool:
    """True for the Basic Multilingual Plane's private-use area, where fonts park ligatures."""
    return 0xE000 <= code <= 0xF8FF


def pua_key_label(key: PuaKey) -> str:
    """How a key appears in the extraction report: 'FONTNAME U+E000'."""
    font, code = key
    return f"{font} U+{code:04X}".strip()


# Common English words with ff/fi/fl/ffi/ffl: evidence when the document itself does not use a
# word elsewhere without the private-use glyph (short papers, words only seen in headings).
_BUILTIN_WORDS_TEXT = """
    affect affected affecting affects afford affordable affiliation affirm affirmative baffle
    benefit benefits beneficial buffer buffers classification classified classifier classifiers
    classify coefficient coefficients confidence confident configuration configure configured
    conflict conflicts confirm confirmed conflicting defined define defines definition definitions
    deficit deficient difference differences different differently differential differs
    difficult difficulty diffusion effect effective effectively effectiveness effects efficacy
    efficiency efficient efficiently effort efforts fiction fictional field fields fifteen fifth
    fifty fig figure figures file files fill filled filling film filter filtered filtering
    filters final finally finance financial find finding findings finds fine finer finetune
    finetuned finetuning finish finished finite fire firm firms first fiscal fit fits fitted
    fitting five fix fixed flag flagged flags flame flat flaw flawed flaws fled flexibility
    flexible flight float floor flow flows fluency fluent fluid flux fly identification identified
    identifies identify identifying influence influenced influences influential inflation
    insufficient justification justified justify magnificent modification modifications modified
    modify notification notified offer offered offering offers office officer officers official
    officially offline offset often profile profiles profit proficient qualification qualified
    qualify ratified reflect reflected reflecting reflection reflections reflective reflects
    refine refined refinement sacrifice scientific scientist scientists signified signify
    significance significant significantly simplified simplify specific specifically
    specification specifications specified specifies specify specifying stuff sufficient
    sufficiently suffix suffixes traffic unified unify verification verified verifier verifies
    verify verifying workflow workflows artificial beneficiary certificate certification
    certified certify clarification clarified clarify conflicting effortless fidelity fiducial
    figurative flawless flexibly flourish inefficient insignificant magnify officiate
    overfitting oversimplified quantified quantify reaffirm
    shuffle shuffled staff staffing stiff suffer suffered suffers terrific unaffected unfit
"""
_BUILTIN_WORDS = frozenset(_BUILTIN_WORDS_TEXT.split())


@dataclass(frozen=True, slots=True)
class _Vocabulary:
    words: frozenset[str]
    stems: frozenset[str]

    @classmethod
    def of(cls, words: Iterable[str]) -> _Vocabulary:
        lowered = frozenset(w.lower() for w in words)
        return cls(lowered, frozenset(stem(w) for w in lowered))

    def with_words(self, words: Iterable[str]) -> _Vocabulary:
        """The vocabulary with ``words`` added (what ``of`` of all of them gives)."""
        added = {w.lower() for w in words} - self.words
        return _Vocabulary(self.words | added, self.stems | {stem(w) for w in added})

    def is_word(self, word: str) -> bool:
        w = word.lower()
        return w in self.words or w in _BUILTIN_WORDS or stem(w) in self.stems


#: One character of page text for inference: a plain character, or a private-use key.
Token = str | PuaKey
#: A word template: letters and private-use keys between non-letters.
Template = tuple[Token, ...]


def words_of(tokens: Sequence[Token]) -> list[Template]:
    """Split a page's tokens into words: runs of letters and private-use glyphs."""
    words: list[Template] = []
    current: list[Token] = []
    for token in tokens:
        if isinstance(token, tuple) or token.isalpha():
            current.append(token)
        elif current:
            words.append(tuple(current))
            current = []
    if current:
        words.append(tuple(current))
    return words


_MIN_LETTERS = 2


def _letters(template: Template) -> int:
    return sum(1 for token in template if isinstance(token, str))


def _spell(template: Template, mapping: Mapping[PuaKey, str]) -> str | None:
    """The word with keys replaced; None when a key has no replacement yet."""
    parts: list[str] = []
    for token in template:
        if isinstance(token, tuple):
            replacement = mapping.get(token)
            if replacement is None:
                return None
            parts.append(replacement)
        else:
            parts.append(token)
    return "".join(parts)


@dataclass(slots=True)
class PuaRepair:
    """The inferred meaning of private-use glyphs and how many word occurrences it repairs."""

    mapping: dict[PuaKey, str] = field(default_factory=dict)
    words_repaired: int = 0
    unresolved: dict[PuaKey, int] = field(default_factory=dict)


def infer_pua_ligatures(pages: Sequence[Sequence[Token]], *, max_rounds: int = 4) -> PuaRepair:
    """Decide, per (font, code point), which ligature a private-use glyph stands for.

    Rounds: a key resolved in one round adds its repaired words to the vocabulary, which is the
    evidence for rare keys of other font subsets (the same word set in a heading font).
    """
    words = [w for page in pages for w in words_of(page)]
    return infer_from_words(
        ["".join(w) for w in words if not any(isinstance(tok, tuple) for tok in w)],  # type: ignore[arg-type]
        [w for w in words if any(isinstance(tok, tuple) for tok in w)],
        [token for page in pages for token in page if isinstance(token, tuple)],
        max_rounds=max_rounds,
    )


def infer_from_words(
    plain: Iterable[str],
    keyed: Iterable[Template],
    keys: Iterable[PuaKey],
    *,
    max_rounds: int = 4,
) -> PuaRepair:
    """:func:`infer_pua_ligatures` from the document's words: ``plain`` (words without a
    private-use glyph, as strings), ``keyed`` (words with one, in document order) and ``keys``
    (every private-use glyph of the document, in order)."""
    # Only words with at least two real letters are evidence: a run of private-use glyphs alone
    # (the pieces of a big bracket in a math font) spells "fi" or "fifi" for any candidate.
    templates = [w for w in keyed if _letters(w) >= _MIN_LETTERS]
    vocabulary = _Vocabulary.of(w for w in plain if len(w) >= _MIN_LETTERS)
    by_key: dict[PuaKey, list[Template]] = defaultdict(list)
    for template in templates:
        for key in {tok for tok in template if isinstance(tok, tuple)}:
            by_key[key].append(template)

    mapping: dict[PuaKey, str] = {}
    for _ in range(max_rounds):
        newly: dict[PuaKey, str] = {}
        for key, occurrences in by_key.items():
            if key in mapping:
                continue
            scores: dict[str, int] = {}
            for candidate in PUA_CANDIDATES:
                trial = {**mapping, key: candidate}
                scores[candidate] = sum(
                    1
                    for template in occurrences
                    if (word := _spell(template, trial)) is not None and vocabulary.is_word(word)
                )
            ranked = sorted(scores.values(), reverse=True)
            best = max(scores, key=lambda c: scores[c])
            # Refuse ties and zero evidence: an unrepaired glyph beats a wrong one.
            if ranked[0] > 0 and ranked[0] > ranked[1]:
                newly[key] = best
        if not newly:
            break
        mapping.update(newly)
        # The words without keys are in the vocabulary already: only repaired ones are new.
        vocabulary = vocabulary.with_words(
            word for t in templates if (word := _spell(t, mapping)) is not None and word
        )

    repaired = sum(
        1 for t in templates if any(isinstance(tok, tuple) and tok in mapping for tok in t)
    )
    unresolved: dict[PuaKey, int] = {}
    for token in keys:
        if token not in mapping:
            unresolved[token] = unresolved.get(token, 0) + 1
    return PuaRepair(mapping=mapping, words_repaired=repaired, unresolved=unresolved)
