"""The FTS5 query builder: specific questions, and a property that no input breaks FTS5."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from truthbase.retrieve.fts_query import MAX_TERMS, build_fts_query, query_terms

TOKENIZE = "porter unicode61 remove_diacritics 2"

ROWS = [
    "GV.OC-03: Legal, regulatory, and contractual requirements are understood",  # 1
    "GV.OC-01: The organizational mission is understood",  # 2
    "Self-RAG trains an arbitrary LM to retrieve, generate and critique",  # 3
    "Characteristics of trustworthy AI systems include validity and reliability",  # 4
    "Supply chain risk management (C-SCRM) is a systematic process",  # 5
    "The AI RMF 1.0 was released in January 2023",  # 6
    "Information technology (IT) and operational technology are in scope",  # 7
    "Résumé of the café's naïve approach",  # 8
]


@pytest.fixture(scope="module")
def db() -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(":memory:")
    conn.execute(f"create virtual table t using fts5(x, tokenize='{TOKENIZE}')")
    conn.executemany("insert into t(rowid, x) values (?, ?)", enumerate(ROWS, start=1))
    yield conn
    conn.close()


def search(conn: sqlite3.Connection, question: str) -> list[int]:
    expression = build_fts_query(question)
    assert expression is not None
    rows = conn.execute(
        "select rowid from t where t match ? order by bm25(t)", (expression,)
    ).fetchall()
    return [rowid for (rowid,) in rows]


def test_fts5_is_available() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute(f"create virtual table t using fts5(x, tokenize='{TOKENIZE}')")


def test_or_of_content_words_without_stop_words() -> None:
    assert build_fts_query("What is a CSF Community Profile?") == (
        '"CSF" OR "Community" OR "Profile"'
    )


def test_question_words_and_according_are_dropped() -> None:
    assert build_fts_query("According to the AI RMF, how does it define risk?") == (
        '"AI" OR "RMF" OR "define" OR "risk"'
    )


def test_no_terms_left_gives_none() -> None:
    assert build_fts_query("") is None
    assert build_fts_query("   ") is None
    assert build_fts_query("What is it?") is None
    assert build_fts_query("?!.,;:()[]{}*^\"'") is None
    assert build_fts_query("can't and/or e.g. it's") is None


def test_identifier_is_phrase_plus_content_parts() -> None:
    assert query_terms("What does subcategory GV.OC-03 require?") == [
        '"subcategory"',
        '"GV OC 03"',
        '"GV"',
        '"OC"',
        '"require"',
    ]


def test_parts_can_be_turned_off() -> None:
    assert query_terms("GV.OC-03 and 'No Critic'", parts=False) == ['"No Critic"', '"GV OC 03"']
    assert build_fts_query("Self-RAG", parts=False) == '"Self RAG"'


def test_pure_number_and_one_letter_parts_stay_in_the_phrase_only() -> None:
    assert query_terms("F-1 of GPT-4") == ['"F 1"', '"GPT 4"', '"GPT"']
    assert query_terms("MEASURE 2.11") == ['"MEASURE"', '"2 11"']


def test_possessive_is_dropped() -> None:
    assert query_terms("RAPTOR's tree and Self-RAG's critic") == [
        '"RAPTOR"',
        '"tree"',
        '"Self RAG"',
        '"Self"',
        '"RAG"',
        '"critic"',
    ]


def test_quoted_phrases_double_typographic_and_single() -> None:
    assert query_terms('Define "trustworthy AI" here') == [
        '"trustworthy AI"',
        '"trustworthy"',
        '"AI"',
        '"Define"',
    ]
    assert query_terms("Define \u201ctrustworthy AI\u201d") == query_terms(
        'Define "trustworthy AI"'
    )
    assert query_terms("the 'No Critic' ablation") == ['"No Critic"', '"Critic"', '"ablation"']


def test_quoted_single_stop_word_is_kept() -> None:
    assert query_terms('the word "which"') == ['"which"', '"word"']


def test_acronyms_survive_the_stop_list_but_not_operators() -> None:
    assert query_terms("What is IT governance in the US?") == ['"IT"', '"governance"', '"US"']
    assert query_terms("RAG AND LLMs OR NOT") == ['"RAG"', '"LLMs"']
    # An all-caps question has no acronym signal: stop words are dropped as usual.
    assert query_terms("WHAT IS THE CSF?") == ['"CSF"']


def test_duplicates_are_dropped_case_insensitively() -> None:
    assert query_terms("AI risk, ai Risk, AI") == ['"AI"', '"risk"']


def test_terms_are_capped() -> None:
    question = " ".join(f"word{i}" for i in range(MAX_TERMS + 20))
    assert len(query_terms(question)) == MAX_TERMS


@pytest.mark.parametrize(
    "question",
    [
        'a"b',
        '"unbalanced quote',
        "NEAR(a b)",
        "x:y",
        "col:value",
        "a* b^ -c +d",
        "(((",
        "AND OR NOT",
        "x\x00y zz",
        "null\x00",
        "\u2018\u2019\u201c\u201d",
        "'",
        'GV.OC-01"',
    ],
)
def test_syntax_hostile_input_never_raises(db: sqlite3.Connection, question: str) -> None:
    expression = build_fts_query(question)
    if expression is not None:
        db.execute("select rowid from t where t match ?", (expression,)).fetchall()


def test_identifier_phrase_ranks_the_exact_identifier_first(db: sqlite3.Connection) -> None:
    ranked = search(db, "What does GV.OC-03 require?")
    assert ranked[0] == 1
    assert 2 in ranked  # the parts still find the sibling subcategory (recall)


def test_acronym_and_hyphenated_identifier_match(db: sqlite3.Connection) -> None:
    assert search(db, "What is C-SCRM?")[0] == 5
    assert search(db, "What does Self-RAG's critic do?")[0] == 3
    assert search(db, "When was AI RMF 1.0 released?")[0] == 6
    assert search(db, "What is IT?") == [7]


def test_porter_stemming_and_diacritics_happen_in_fts5(db: sqlite3.Connection) -> None:
    assert search(db, "Which characteristic makes a system trustworthy?")[0] == 4
    assert search(db, "resume cafe naive") == [8]


@settings(max_examples=400, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text())
def test_any_text_gives_a_valid_fts5_expression(db: sqlite3.Connection, question: str) -> None:
    expression = build_fts_query(question)
    if expression is None:
        return
    assert expression.strip()
    db.execute("select rowid from t where t match ?", (expression,)).fetchall()


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.one_of(
            st.text(alphabet=st.sampled_from("\"'*^:()-+.,/\\ \u201c\u201d"), max_size=4),
            st.sampled_from(["AND", "OR", "NOT", "NEAR", "GV.OC-01", "the", "x", "\x00"]),
            st.text(max_size=6),
        ),
        max_size=12,
    ).map(" ".join)
)
def test_syntax_heavy_text_gives_a_valid_fts5_expression(
    db: sqlite3.Connection, question: str
) -> None:
    expression = build_fts_query(question)
    if expression is not None:
        db.execute("select rowid from t where t match ?", (expression,)).fetchall()
