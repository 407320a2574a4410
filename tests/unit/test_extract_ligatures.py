"""Private-use ligature inference from the document's own words."""

from __future__ import annotations

from truthbase.extract.ligatures import PuaKey, Token, infer_pua_ligatures, words_of

FI: PuaKey = ("Body", 0xE000)
FL: PuaKey = ("Body", 0xE001)
SYMBOL: PuaKey = ("Math", 0xE000)


def _tokens(text: str, keys: dict[str, PuaKey]) -> list[Token]:
    return [keys.get(ch, ch) for ch in text]


KEYS = {"1": FI, "2": FL, "3": SYMBOL}


def test_words_of_keeps_keys_inside_words() -> None:
    assert words_of(_tokens("re2ect, x", KEYS)) == [("r", "e", FL, "e", "c", "t"), ("x",)]


def test_infers_from_words_used_elsewhere() -> None:
    page = _tokens(
        "the re2ection and re2ects; speci1c signi1cant. Later: reflection, specific, "
        "significant. A zorbl1ng.",
        KEYS,
    )
    repair = infer_pua_ligatures([page])
    assert repair.mapping == {FI: "fi", FL: "fl"}
    assert repair.words_repaired == 5  # zorbl1ng counts too: its glyph is repaired
    assert not repair.unresolved


def test_math_symbols_are_left_alone() -> None:
    # A big operator in a math font: alone, or next to subscripts; no word supports a ligature.
    page = _tokens("S = 3 t and 3NG here; also 33", KEYS)
    repair = infer_pua_ligatures([page])
    assert repair.mapping == {}
    assert repair.words_repaired == 0
    assert repair.unresolved == {SYMBOL: 4}


def test_rare_font_resolved_through_earlier_rounds() -> None:
    # "quafity" is no English word and never printed without a private-use glyph: the heading
    # font's glyph is resolved only once the body font's repair added the word.
    heading: PuaKey = ("Heading", 0xE005)
    page: list[Token] = [
        *_tokens("speci1c speci1c quaf1ty ", KEYS),
        *[heading if ch == "9" else ch for ch in "quaf9ty"],
    ]
    repair = infer_pua_ligatures([page])
    assert repair.mapping == {FI: "fi", heading: "fi"}
