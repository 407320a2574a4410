"""What is text and what is not: the check every door asks before the tokenizer and the stores."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from truthbase.errors import InvalidInput
from truthbase.text.valid import (
    has_lone_surrogate,
    json_may_hold_surrogate,
    quoted,
    require_text,
)

#: Text with surrogate halves mixed in (Hypothesis's text never holds one).
_TEXT = st.text(st.characters() | st.integers(0xD800, 0xDFFF).map(chr))


def test_a_lone_surrogate_is_not_text_and_a_pair_is() -> None:
    assert has_lone_surrogate("a\ud800b")
    assert not has_lone_surrogate("a\U0001f600b")  # one character, not two halves
    with pytest.raises(InvalidInput, match="the query is not valid text"):
        require_text("x\udcff", "query")
    assert require_text("grüße 日本", "query") == "grüße 日本"


@given(st.lists(_TEXT | st.integers(), max_size=4), st.booleans())
def test_the_first_look_never_misses_a_surrogate_json_decodes_to(
    items: list[str | int], ascii_only: bool
) -> None:
    text = json.dumps(items, ensure_ascii=ascii_only)
    if has_lone_surrogate(json.dumps(json.loads(text), ensure_ascii=False)):
        assert json_may_hold_surrogate(text)


def test_the_first_look_sees_escapes_and_passes_plain_json() -> None:
    assert json_may_hold_surrogate('{"doc_id": "\\ud800"}')
    assert json_may_hold_surrogate('{"doc_id": "\\uDFFF"}')
    assert not json_may_hold_surrogate(json.dumps({"doc_id": "grüße", "n": 1}))
    assert not json_may_hold_surrogate('{"doc_id": "\\u00e9"}')


def test_quoted_repeats_a_long_value_cut_with_its_length() -> None:
    assert quoted("memman") == "'memman'"
    long = "x" * 100_000
    shown = quoted(long)
    assert len(shown) < 120 and shown.startswith("'xxx") and shown.endswith("(100,000 characters)")
    assert quoted(["a"] * 50).endswith("as written)")
