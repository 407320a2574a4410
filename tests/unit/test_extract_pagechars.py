"""The column fast path (pagechars) gives what the per-character record functions (text,
ligatures) give: the same text, boxes, tokens and words on random pages full of the characters
the passes act on."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence

import pytest

from truthbase.extract.ligatures import (
    PUA_CANDIDATES,
    PuaKey,
    PuaRepair,
    Template,
    Token,
    _letters,
    _spell,
    _Vocabulary,
    infer_from_words,
    infer_pua_ligatures,
    words_of,
)
from truthbase.extract.pagechars import (
    PageChars,
    clean_page,
    expand_page_chars,
    has_private_use,
    pua_keys,
    pua_tokens_of,
    pua_words,
)
from truthbase.extract.text import RawChar, clean_chars, expand_page, pua_tokens
from truthbase.model import Rect

# What the reader can give: letters, whitespace (pdfium generates only space, CR and LF),
# pdfium's hyphen codes, soft hyphens, NULs, surrogate halves, ligatures, private-use glyphs,
# numerals that are not letters, and marks' neighbours.
_PLAIN = [*"abcdefghij ABC xyz 123,.;", "\u00b2", "\u2163", "\u00e9", "\u0301", "\u4e2d"]
_SPECIAL = [
    "\r",
    "\n",
    " ",
    "\t",
    "\x02",
    "\ufffe",
    "\u00ad",
    "\x00",
    "\ud835",
    "\udc00",
    "\ufb01",
    "\ufb03",
    "\ue000",
    "\ue001",
    "-",
]
_FONTS = ["F1", "F2", ""]


def _box(i: int) -> Rect:
    return (float(i), 0.5 * i, float(i) + 1.0, 10.0 + i)


def _random_page(rng: random.Random, n: int) -> list[RawChar]:
    chars: list[RawChar] = []
    for i in range(n):
        ch = rng.choice(_SPECIAL) if rng.random() < 0.3 else rng.choice(_PLAIN)
        code = ord(ch)
        # Generated characters have no box (the invariant the reader keeps).
        generated = ch in " \r\n" and rng.random() < 0.5
        box = None if generated or rng.random() < 0.05 else _box(i)
        # pdfium flags line-end hyphens; the reader also asks for '-'.
        hyphen = ch in "\x02-" and rng.random() < 0.5
        font = rng.choice(_FONTS) if 0xE000 <= code <= 0xF8FF else None
        chars.append(RawChar(code, box, generated, hyphen, font))
    return chars


def _columns(chars: list[RawChar]) -> PageChars:
    """What read_page gives for the characters read_chars gives."""
    return PageChars(
        "".join(chr(c.code) for c in chars),
        [c.box for c in chars],
        frozenset(i for i, c in enumerate(chars) if c.hyphen and c.code not in (0x02, 0xFFFE)),
        {i: c.font or "" for i, c in enumerate(chars) if 0xE000 <= c.code <= 0xF8FF},
    )


@pytest.mark.parametrize("seed", range(300))
def test_clean_and_expand_match_the_record_functions(seed: int) -> None:
    rng = random.Random(seed)
    chars = _random_page(rng, rng.randint(0, 60))
    cleaned = clean_chars(chars)
    columns = clean_page(_columns(chars))
    assert columns.text == "".join(chr(c.code) for c in cleaned)
    assert columns.boxes == [None if c.generated else c.box for c in cleaned]
    assert pua_tokens_of(columns) == pua_tokens(cleaned)
    assert has_private_use(columns) == any(0xE000 <= c.code <= 0xF8FF for c in cleaned)
    mapping = {("F1", 0xE000): "fi", ("", 0xE001): "ffl", ("F2", 0xE001): "fl"}
    for pua_map in ({}, mapping):
        expected = expand_page(cleaned, pua_map)
        got = expand_page_chars(columns, pua_map)
        assert (got.text, got.boxes) == (expected.text, expected.boxes)
    words = words_of(pua_tokens(cleaned))
    plain, keyed = pua_words(columns)
    assert plain == ["".join(w) for w in words if all(isinstance(t, str) for t in w)]  # type: ignore[arg-type]
    assert keyed == [w for w in words if any(isinstance(t, tuple) for t in w)]
    assert pua_keys(columns) == [t for t in pua_tokens(cleaned) if isinstance(t, tuple)]


def test_inference_from_words_matches_inference_from_tokens() -> None:
    rng = random.Random(7)
    vocabulary = ["office", "field", "define", "reflect", "first", "offer", "cat", "flow"]
    pages: list[list[RawChar]] = []
    for _ in range(5):
        chars: list[RawChar] = []
        for _ in range(40):
            word = rng.choice(vocabulary)
            font = rng.choice(["F1", "F2"])
            spelled = word.replace("ffi", "\ue002").replace("fi", "\ue000").replace("fl", "\ue001")
            if rng.random() < 0.5:
                spelled = word  # the word also stands without the glyph
            for ch in spelled + " ":
                code = ord(ch)
                private = 0xE000 <= code <= 0xF8FF
                chars.append(RawChar(code, _box(len(chars)), font=font if private else None))
        pages.append(chars)
    cleaned = [clean_page(_columns(p)) for p in pages]
    plain = [w for page in cleaned for w in pua_words(page)[0]]
    keyed = [w for page in cleaned for w in pua_words(page)[1]]
    keys = [k for page in cleaned for k in pua_keys(page)]
    fast = infer_from_words(plain, keyed, keys)
    tokens = [pua_tokens(clean_chars(p)) for p in pages]
    reference = _reference_infer(tokens)
    via_tokens = infer_pua_ligatures(tokens)
    assert fast.mapping == reference.mapping and fast.mapping
    assert fast.words_repaired == reference.words_repaired
    assert fast.unresolved == reference.unresolved
    assert (via_tokens.mapping, via_tokens.words_repaired) == (fast.mapping, fast.words_repaired)


def _reference_infer(pages: Sequence[Sequence[Token]], *, max_rounds: int = 4) -> PuaRepair:
    """infer_pua_ligatures as it was (extractor 4, before session 7): every template spelled
    again each round, the vocabulary rebuilt from all its words."""
    # Only words with at least two real letters are evidence: a run of private-use glyphs alone
    # (the pieces of a big bracket in a math font) spells "fi" or "fifi" for any candidate.
    templates = [w for page in pages for w in words_of(page) if _letters(w) >= 2]
    vocabulary = _Vocabulary.of(w for t in templates if (w := _spell(t, {})) is not None)
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
        repaired_words = [
            word for t in templates if (word := _spell(t, mapping)) is not None and word
        ]
        vocabulary = _Vocabulary.of([*vocabulary.words, *repaired_words])

    repaired = sum(
        1 for t in templates if any(isinstance(tok, tuple) and tok in mapping for tok in t)
    )
    unresolved: dict[PuaKey, int] = {}
    for page in pages:
        for token in page:
            if isinstance(token, tuple) and token not in mapping:
                unresolved[token] = unresolved.get(token, 0) + 1
    return PuaRepair(mapping=mapping, words_repaired=repaired, unresolved=unresolved)
