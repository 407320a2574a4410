"""The FTS5 query builder: specific questions, and a property that no input breaks FTS5.

The table indexes rows as the stores do: their terms (truthbase.text.fulltext, English), split at
spaces by FTS5's 'ascii' tokenizer."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from truthbase.retrieve.fts_query import MAX_TERMS
from truthbase.retrieve.fts_query import build_fts_query as _build_fts_query
from truthbase.retrieve.fts_query import query_terms as _query_terms
from truthbase.text.fulltext import term_string

TOKENIZE = "ascii"
EN = ["en"]


def build_fts_query(question: str, parts: bool = True) -> str | None:
    return _build_fts_query(question, parts=parts, languages=EN)


def query_terms(question: str, parts: bool = True) -> list[str]:
    return _query_terms(question, parts=parts, languages=EN)


ROWS = [
    "GV.OC-03: Legal, regulatory, and contractual requirements are understood",  # 1
    "GV.OC-01: The organizational mission is understood",  # 2
    "Self-RAG trains an arbitrary LM to retrieve, generate and critique",  # 3
    "Characteristics of trustworthy AI systems include validity and reliability",  # 4
    "Supply chain risk management (C-SCRM) is a systematic process",  # 5
    "The AI RMF 1.0 was released in January 2023",  # 6
    "Information technology (IT) and operational technology are in scope",  # 7
    "Résumé of the café's naïve approach",  # 8
    r"Use \cmidrule{2-3} to draw a partial rule",  # 9
    "A cmidrule is drawn by booktabs",  # 10
    "Long lines wrap with breaklines=true",  # 11
    "Start Chromium with \u2013no-sandbox in a container",  # 12: TeX's en dash for "--"
    "No sandbox here, and no lines to break",  # 13
]


@pytest.fixture(scope="module")
def db() -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(":memory:")
    conn.execute(f"create virtual table t using fts5(x, tokenize='{TOKENIZE}')")
    conn.executemany(
        "insert into t(rowid, x) values (?, ?)",
        [(i, term_string(row, "en")) for i, row in enumerate(ROWS, start=1)],
    )
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
        '"csf" OR "communiti" OR "profil"'
    )


def test_question_words_and_according_are_dropped() -> None:
    assert build_fts_query("According to the AI RMF, how does it define risk?") == (
        '"ai" OR "rmf" OR "defin" OR "risk"'
    )


def test_no_terms_left_gives_none() -> None:
    assert build_fts_query("") is None
    assert build_fts_query("   ") is None
    assert build_fts_query("What is it?") is None
    assert build_fts_query("?!.,;:()[]{}*^\"'") is None
    assert build_fts_query("can't and/or e.g. it's") is None


def test_identifier_is_phrase_plus_content_parts() -> None:
    assert query_terms("What does subcategory GV.OC-03 require?") == [
        '"subcategori"',
        '"gv oc 03"',  # hyphens and dots only: the phrase of its words, then its parts
        '"gv"',
        '"oc"',
        '"requir"',
    ]


def test_macro_option_flag_and_path_give_their_whole_term_first() -> None:
    assert query_terms(r"What does \cmidrule do?") == ['"＼cmidrule"', '"cmidrul"']
    assert query_terms("How do I set breaklines=true?") == [
        '"set"',
        '"breaklines＝true"',
        '"breaklin"',
        '"true"',
    ]
    assert query_terms("Run it with --no-sandbox") == [
        '"run"',
        '"－no－sandbox"',
        '"sandbox"',
    ]
    assert query_terms("Where is /etc/fstab?") == ['"／etc／fstab"', '"fstab"']  # etc: a stop word
    # a macro named like a stop word is still asked for
    assert query_terms(r"What does \if do?") == ['"＼if"']


def test_camel_case_word_then_its_humps() -> None:
    assert query_terms("getElementById") == ['"getelementbyid"', '"get"', '"element"', '"id"']


def test_quoted_identifier_phrase_is_made_as_the_index_makes_it() -> None:
    assert query_terms('"call os.path:join here"')[0] == '"call os．path：join os path join here"'


def test_parts_can_be_turned_off() -> None:
    assert query_terms("GV.OC-03 and 'No Critic'", parts=False) == [
        '"no critic"',
        '"gv oc 03"',
    ]
    assert build_fts_query("Self-RAG", parts=False) == '"self rag"'


def test_pure_number_and_one_letter_parts_stay_in_the_phrase_only() -> None:
    assert query_terms("F-1 of GPT-4") == ['"f 1"', '"gpt 4"', '"gpt"']
    assert query_terms("MEASURE 2.11") == ['"measur"', '"2 11"']


def test_possessive_is_dropped() -> None:
    assert query_terms("RAPTOR's tree and Self-RAG's critic") == [
        '"raptor"',
        '"tree"',
        '"self rag"',
        '"self"',
        '"rag"',
        '"critic"',
    ]


def test_quoted_phrases_double_typographic_and_single() -> None:
    assert query_terms('Define "trustworthy AI" here') == [
        '"trustworthi ai"',
        '"trustworthi"',
        '"ai"',
        '"defin"',
    ]
    assert query_terms("Define \u201ctrustworthy AI\u201d") == query_terms(
        'Define "trustworthy AI"'
    )
    assert query_terms("the 'No Critic' ablation") == ['"no critic"', '"critic"', '"ablat"']


def test_quoted_single_stop_word_is_kept() -> None:
    assert query_terms('the word "which"') == ['"which"', '"word"']


def test_acronyms_survive_the_stop_list_but_not_operators() -> None:
    assert query_terms("What is IT governance in the US?") == ['"it"', '"govern"', '"us"']
    assert query_terms("RAG AND LLMs OR NOT") == ['"rag"', '"llms"']
    # An all-caps question has no acronym signal: stop words are dropped as usual.
    assert query_terms("WHAT IS THE CSF?") == ['"csf"']


def test_duplicates_are_dropped_case_insensitively() -> None:
    assert query_terms("AI risk, ai Risk, AI, risks") == ['"ai"', '"risk"']


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


def test_a_named_identifier_ranks_its_passage_first(db: sqlite3.Connection) -> None:
    assert search(db, r"What does \cmidrule do?")[:2] == [9, 10]
    assert search(db, "cmidrule")[0] in (9, 10)  # the word alone finds both
    assert search(db, "How do I set breaklines=true?")[0] == 11
    assert search(db, "Which option is breaklines?")[0] == 11
    assert search(db, "Why does --no-sandbox matter?")[0] == 12


def test_stemming_and_diacritics_happen_on_both_sides(db: sqlite3.Connection) -> None:
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


def test_terms_are_made_in_every_language_asked() -> None:
    both = _query_terms("Geschlossene Teilmengen", languages=["de", "en"])
    assert both == ['"geschloss"', '"geschlossen"', '"teilmeng"', '"teilmengen"']
    # German stop words go when German is among the languages
    assert _query_terms("Was ist eine Teilmenge?", languages=["de"]) == ['"teilmeng"']
    assert '"ist"' in _query_terms("Was ist eine Teilmenge?", languages=["en"])


def test_cjk_question_gives_each_bigram_as_its_own_term() -> None:
    assert _query_terms("公司负责人是谁？", languages=["zh"]) == [
        '"公司"',
        '"司负"',
        '"负责"',
        '"责人"',
        '"人是"',
        '"是谁"',
    ]
    # a quoted CJK phrase stays a phrase of its bigrams; Latin words and numbers in a CJK
    # chunk are terms of their own
    assert _query_terms('"营业收入"', languages=["zh"]) == ['"营业 业收 收入"']
    assert _query_terms("2018年收入", languages=["zh"]) == ['"2018"', '"年收"', '"收入"']


def test_question_language_joins_the_index_languages() -> None:
    from truthbase.retrieve.fts_query import query_languages

    assert query_languages("Wann heißt eine Teilmenge abgeschlossen?", ["en"]) == ["de", "en"]
    assert query_languages("What is the Govern function?", ["en", "zh"]) == ["en", "zh"]
    assert query_languages("?", []) == ["en"]


def test_postgres_reads_a_whole_term_as_one_token() -> None:
    """PostgreSQL gets the FTS5 strings' tokens as FTS5's ascii tokenizer reads them: a name's
    whole term (full-width punctuation) stays one token there too."""
    from truthbase.store.postgres.terms import terms_from_match_expression

    expression = build_fts_query(r"\cmidrule and breaklines=true, GV.OC-01")
    assert expression is not None
    assert terms_from_match_expression(expression) == [
        "＼cmidrule",
        "cmidrul",
        "breaklines＝true",
        "breaklin",
        "true",
        "gv oc 01",
        "gv",
        "oc",
    ]
