"""Rows of a results table the extractor did not find, and the caption and column names their
chunk carries (truthbase.text.results, used by truthbase.chunking), which the extractive
answerer counts among the passage's words."""

from __future__ import annotations

from dataclasses import replace

import pypdfium2 as pdfium
import pytest

from tests.helpers.corpus import SEED
from tests.helpers.extractive import answerer, source
from truthbase.chunking import chunk_unit
from truthbase.model import Unit
from truthbase.text import results
from truthbase.text.results import ResultsPage, is_results_line


@pytest.mark.parametrize(
    "line",
    [
        "BM25 with RAPTOR 27.93% 21.17% 5.70% 17.03%",
        "Our SELF-RAG 13B 55.8 69.3 74.5 73.1 80.2 31.7 37.0 71.6 70.3 71.3",
        "Perplexity.ai – – – – 71.2 – – – – –",  # empty cells count as cells
        "1 layer 66.6 61.1 61.1",  # a label after a row number
        "Ours −1.5 −2.3 −0.7",  # the minus sign U+2212
        "Ours 55.8±0.3 69.3±0.4 70.1±0.2",  # spreads
        "Ours 55.8* 69.3† 70.1↑",  # footnote marks and arrows
        "Ours 55.8 (0.3) 69.3 (0.4)",
    ],
)
def test_a_row_of_values_is_a_results_line(line: str) -> None:
    assert is_results_line(line)


@pytest.mark.parametrize(
    "line",
    [
        "RAPTOR's F-1 Match scores are 53.1%, 55.7%, and 36.6% when using GPT-3",  # prose
        "5.1 Govern 21",  # a contents line: one value after its number
        "−1 0 1 2 3 4 5",  # a figure's axis: no label
        "1.5 Kompaktheit . . . . . . . . . . . . 14",  # dot leaders
        "Table 2: Overall experiment results on six tasks.",
        "PopQA TQA Pub ARC Bio ASQA",  # column names, not values
        "in 2019 and 2020 respectively",  # a word last
    ],
)
def test_other_lines_are_not(line: str) -> None:
    assert not is_results_line(line)


PAGE = "\n".join(
    [
        "Published as a conference paper at ICLR 2024",
        "Table 2: Overall results on six tasks. Bold numbers are the best.",
        "PopQA TQA ASQA",
        "LM (acc) (acc) (pre)",
        "Llama2-c13B 20.0 59.3 49.4",
        "Baselines with retrieval",
        "Alpaca7B 46.7 64.1 40.2",
        "Our SELF-RAG 13B 55.8 69.3 70.3",
        "The model outperforms every baseline on all six tasks.",
    ]
)


def _context(text: str, start: int, end: int) -> str:
    """The context of the chunk [start, end) of a page ``text``."""
    return ResultsPage(text).context(start, end)


def _at(text: str, line: str) -> int:
    return text.index(line)


def test_a_chunk_of_rows_carries_the_caption_and_column_names_it_lacks() -> None:
    start = _at(PAGE, "Alpaca7B")
    context = _context(PAGE, start, len(PAGE))
    assert context == (
        "Table 2: Overall results on six tasks. Bold numbers are the best. PopQA TQA ASQA "
        "LM (acc) (acc) (pre)"
    ), "the group label between rows is not a column name, the running header not either"


def test_what_the_chunk_holds_is_not_repeated() -> None:
    start = _at(PAGE, "PopQA")
    assert _context(PAGE, start, len(PAGE)) == (
        "Table 2: Overall results on six tasks. Bold numbers are the best."
    )
    assert _context(PAGE, 0, len(PAGE)) == ""


def test_a_chunk_without_two_rows_has_no_context() -> None:
    start = _at(PAGE, "Our SELF-RAG")
    assert _context(PAGE, start, len(PAGE)) == ""
    assert _context(PAGE, 0, _at(PAGE, "Llama2")) == ""


def test_another_tables_caption_is_not_taken_and_a_caption_below_is() -> None:
    page = "\n".join(
        [
            "Intro text that ends here.",
            "Table 1: First table.",
            "Alpha 1.0 2.0 3.0",
            "Beta 4.0 5.0 6.0",
            "Both methods are compared below.",
            "Method Score Time",
            "ours 88.1 12.5",
            "theirs 80.2 14.0",
            "Table 2: Scores and times of two methods.",
        ]
    )
    start = _at(page, "ours")
    assert _context(page, start, len(page) - len("Table 2: Scores and times of two methods.")) == (
        "Table 2: Scores and times of two methods. Method Score Time"
    )


def test_captions_below_tables_go_to_their_own_table() -> None:
    # Styles that set a table's caption below it: the caption right under the first table's
    # rows is that table's, not the second's, which has its own below its rows.
    page = "\n".join(
        [
            "Intro text that ends here.",
            "Alpha 1.0 2.0 3.0",
            "Beta 4.0 5.0 6.0",
            "Table 1: First table results.",
            "Some prose follows here about things.",
            "Method Score Time",
            "ours 88.1 12.5",
            "theirs 80.2 14.0",
            "Table 2: Scores and times of two methods.",
            "More prose.",
        ]
    )
    start, end = _at(page, "ours"), _at(page, "Table 2")
    assert _context(page, start, end) == (
        "Table 2: Scores and times of two methods. Method Score Time"
    )


def test_a_caption_without_a_period_stops_at_the_column_names() -> None:
    page = "\n".join(
        ["Running head", "Table 1: Results on NQ", "Model EM F1", "aa 1.0 2.0", "bb 3.0 4.0"]
    )
    assert _context(page, _at(page, "aa"), len(page)) == "Table 1: Results on NQ Model EM F1"


def test_a_paragraph_running_into_the_rows_is_not_their_column_names() -> None:
    page = "\n".join(
        [
            "Running head",
            "report the numbers in the following listing as measured by",
            "the official scripts of each benchmark, namely",
            "aa 1.0 2.0",
            "bb 3.0 4.0",
        ]
    )
    assert _context(page, _at(page, "aa"), len(page)) == ""


def test_a_page_is_read_once_for_all_its_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    # A long unit (an EPUB spine item is a whole chapter or book) must cost time linear in its
    # length: each line is judged once, not once per chunk that asks.
    lines = [f"Model{i} {i % 97}.5 {i % 89}.25 {i % 83}.75" for i in range(3000)]
    text = "\n".join(["Table 1: Many rows.", "Model A B C", *lines])
    calls = [0]
    judge = results.is_results_line

    def counted(line: str) -> bool:
        calls[0] += 1
        return judge(line)

    monkeypatch.setattr(results, "is_results_line", counted)
    chunks = chunk_unit(Unit(index=0, text=text, boxes=[None] * len(text)))
    assert len(chunks) > 50
    assert all(c.context == "Table 1: Many rows. Model A B C" for c in chunks[1:])
    assert calls[0] <= 3 * len(text.split("\n")), calls[0]


@pytest.fixture(scope="module")
def self_rag_results_page() -> Unit:
    """Page 8 of the Self-RAG paper (Table 2, drawn without rules: plain lines to the extractor's
    table finder), its text as pdfium gives it."""
    doc = pdfium.PdfDocument(SEED / "self-rag.pdf")
    try:
        textpage = doc[7].get_textpage()
        text = textpage.get_text_range().replace("\r\n", "\n").replace("\ufffe", "")
        textpage.close()
    finally:
        doc.close()
    return Unit(index=7, text=text, boxes=[None] * len(text))


def test_the_chunk_of_a_row_of_a_real_table_names_its_columns(self_rag_results_page: Unit) -> None:
    chunks = chunk_unit(self_rag_results_page)
    row = next(c for c in chunks if "Our SELF-RAG 13B 55.8" in c.text and "ASQA" not in c.text)
    assert row.context.startswith("Table 2: Overall experiment results on six tasks.")
    assert "ASQA" in row.context and "(pre) (rec)" in row.context
    assert row.kind == "text" and "Table 2" not in row.text, "the context is outside the span"
    prose = [c for c in chunks if not any(is_results_line(line) for line in c.text.split("\n"))]
    assert prose and all(c.context == "" for c in prose)


def test_a_rows_passage_counts_its_caption_and_column_names_among_its_words() -> None:
    rows = "Alpaca13B 46.1 66.9 2.0 3.8\nOur SELF-RAG 13B 55.8 69.3 70.3 71.3\n"
    question = "What citation precision does the 13B Self-RAG model reach on ASQA?"
    bare = source(1, rows)
    named = replace(bare, context="Table 2: Results. ASQA (citation precision) (recall)")
    by_text = {c.text: c for c in answerer().candidates(question, [named])}
    without = {c.text: c for c in answerer().candidates(question, [bare])}
    row = "Our SELF-RAG 13B 55.8 69.3 70.3 71.3"
    assert by_text[row].context > without[row].context
    # A row of values the question names ("13B", "Self-RAG") is read with its table's caption
    # and column names (docs/evals/table-rows.md); without that setting its words are its own.
    assert by_text[row].lexical > without[row].lexical
    alone = answerer(rows_read_with_table=False)
    assert {c.text: c for c in alone.candidates(question, [named])}[row].lexical == (
        without[row].lexical
    )
    assert by_text[row].score > without[row].score
