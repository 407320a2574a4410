"""Table rows as the extractive answerer quotes them: a row is one span, whole; a row too long to
quote (longer than ``extractive.max_chars``) is quoted by its cells' sentences, each scored with
the row's first cell. With a hashing embedder (no model) and, where marked, the real CSF 2.0
Tiers table of the seed corpus (rows of about 1,000 characters)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from tests.helpers.corpus import SEED
from tests.helpers.extractive import answerer, source
from truthbase.answer import Source
from truthbase.answer.rows import (
    PageNames,
    column_names_by_page,
    header_rows,
    names_row,
    row_label,
    row_spans,
    rows_apart,
    table_words,
)
from truthbase.config import ExtractiveSettings
from truthbase.extract.pdf import extract_pdf
from truthbase.text.sentences import split_sentences

TABLE = (
    "The Tiers describe how practices mature.\n"
    "Tier | Governance | Management\n"
    "Tier 1: Partial | Practices are ad hoc. Information is shared informally. | Awareness of "
    "risk is limited across the organization and its suppliers.\n"
    "Tier 3: Repeatable | Practices are approved as policy. Information is shared routinely "
    "throughout the organization. | Methods respond to changes in risk consistently.\n"
    "Suppliers are assessed in every Tier.\n"
)


def _spans(text: str, max_chars: int) -> tuple[list[str], dict[str, str]]:
    rows = row_spans(text)
    long_rows = {(s, e) for s, e in rows if e - s > max_chars}
    spans, labels = rows_apart(text, split_sentences(text), rows, long_rows)
    return [text[s:e] for s, e in spans], {text[s:e]: label for (s, e), label in labels.items()}


def test_a_row_within_the_limit_is_one_span_whole() -> None:
    pieces, labels = _spans(TABLE, max_chars=700)
    assert "Tier | Governance | Management" in pieces
    assert any(p.startswith("Tier 3: Repeatable | Practices are approved") for p in pieces)
    assert not labels
    assert pieces[0] == "The Tiers describe how practices mature."
    assert pieces[-1] == "Suppliers are assessed in every Tier."


def test_a_row_over_the_limit_is_quoted_by_its_cells_sentences_labelled_by_its_head() -> None:
    pieces, labels = _spans(TABLE, max_chars=100)
    assert "Tier | Governance | Management" in pieces  # 30 characters: whole
    assert "Tier 3: Repeatable" in pieces and "Tier 1: Partial" in pieces
    assert "Information is shared routinely throughout the organization." in pieces
    assert "Information is shared informally." in pieces
    assert labels["Information is shared routinely throughout the organization."] == (
        "Tier 3: Repeatable"
    )
    assert labels["Information is shared informally."] == "Tier 1: Partial"
    assert "Tier 3: Repeatable" not in labels  # the label is not labelled by itself
    assert not any(" | " in p and len(p) > 100 for p in pieces)
    assert pieces[-1] == "Suppliers are assessed in every Tier."


def test_the_cell_sentence_of_the_row_the_question_names_is_cited() -> None:
    # Before, a row longer than max_chars was quoted whole or not at all: not at all.
    selection = answerer(max_chars=100, max_sentences=1).select(
        "At Tier 3, how is information shared?", [source(1, TABLE)]
    )
    assert [c.text for c in selection.chosen] == [
        "Information is shared routinely throughout the organization."
    ]
    # The same table with room for its rows quotes the row whole, as before.
    whole = answerer(max_chars=700, max_sentences=1).select(
        "At Tier 3, how is information shared?", [source(1, TABLE)]
    )
    assert [c.text[:18] for c in whole.chosen] == ["Tier 3: Repeatable"]


@pytest.mark.corpus
def test_the_csf_tiers_tables_long_rows_are_quotable_by_sentence() -> None:
    unit = extract_pdf(SEED / "nist-csf-2.0.pdf").units[28]
    long_rows = [(s, e) for s, e in row_spans(unit.text) if e - s > 700]
    assert len(long_rows) >= 2, "the Tiers table's rows are no longer this long"
    candidates = answerer().candidates("Tiers", [source(1, unit.text)])
    texts = {c.text for c in candidates}
    assert (
        "The organization’s risk management practices are formally approved and expressed as "
        "policy." in texts
    )
    assert "Cybersecurity information is shared within the organization on an informal basis." in (
        texts
    )
    assert all(len(t) <= ExtractiveSettings().max_chars for t in texts)


def test_a_line_before_a_long_row_is_never_joined_into_its_first_cell() -> None:
    cells = " ".join(f"Practice {i} is approved as policy by the board." for i in range(4))
    text = (
        "The notional tiers of the framework are summarised\n"
        "in the following table for reference\n"
        f"Tier 3: Repeatable | {cells} | Methods respond to changes in risk consistently.\n"
    )
    # The row (259 characters) is over the limit; the line and the first cell joined (155) not.
    candidates = answerer(max_chars=200).candidates("the notional tiers table", [source(1, text)])
    assert candidates
    assert not any("reference" in c.text for c in candidates)  # it ends nowhere: not quoted
    assert not any(" | " in c.text for c in candidates)


def test_empty_first_and_last_cells_leave_no_bar_and_no_label() -> None:
    cells = " ".join(f"Practice {i} is approved as policy by the board." for i in range(3))
    trailing = f"Tier 3: Repeatable | {cells} | Methods respond to changes in risk |\n"
    pieces, labels = _spans(trailing, max_chars=100)
    assert "Methods respond to changes in risk" in pieces
    assert not any(p.endswith("|") or p.startswith("|") for p in pieces)
    assert set(labels.values()) == {"Tier 3: Repeatable"}
    leading = f"| {cells} | Methods respond to changes in risk.\n"
    pieces, labels = _spans(leading, max_chars=100)
    assert "Practice 0 is approved as policy by the board." in pieces
    assert not any("|" in p for p in pieces) and not labels  # no first cell: no label


def test_a_first_cell_too_long_to_be_a_label_is_split_like_the_others() -> None:
    head = " ".join(f"Context sentence {i} of the first cell is long." for i in range(4))
    text = f"{head} | Information is shared routinely. | Methods respond consistently.\n"
    pieces, labels = _spans(text, max_chars=100)
    assert "Context sentence 0 of the first cell is long." in pieces
    assert "Information is shared routinely." in pieces and not labels


def test_each_part_of_a_question_reads_the_row_labels() -> None:
    selection = answerer(max_chars=100, max_sentences=3).select(
        "What are the practices at Tier 1 and how is information shared at Tier 3?",
        [source(1, TABLE)],
    )
    chosen = [c.text for c in selection.chosen]
    assert "Information is shared routinely throughout the organization." in chosen, chosen
    assert "Practices are approved as policy." not in chosen  # Tier 3's, but not sharing


MONTHS = (
    "03/18/2016 | 05/20/2016 | Boeing Company | El Segundo | 26\n"
    "03/21/2016 | 05/27/2016 | Rockwell Collins, Inc. | Poway | 2\n"
    "Summary by Month | Notices | Employees Affected | Permanent Layoff\n"
    "July 2015 | 71 | 8,574 | 30\n"
    "August 2015 | 69 | 5,890 | 28\n"
)


def test_a_tables_column_names_are_told_from_its_rows() -> None:
    rows = row_spans(MONTHS)
    # The first row of the second table (another number of cells than the row above it):
    # short names, no digit, values under them.
    assert [MONTHS[s:e] for s, e in header_rows(MONTHS, rows)] == [
        "Summary by Month | Notices | Employees Affected | Permanent Layoff"
    ]
    # A table of words alone has no column names told apart; nor has a row of long text over
    # a row with a number (a note beside a table), nor one inside a table.
    words = "Tier | Governance | Management\nTier A | Ad hoc | Limited\nTier B | Policy | Routine\n"
    assert header_rows(words, row_spans(words)) == set()
    note = (
        "Explanation of the shareholders' relations | None of the ten largest holders is "
        "related to another\nA | 3\n"
    )
    assert header_rows(note, row_spans(note)) == set()
    inside = "Month | Notices\nJuly | 71\nMonth | Employees\nJuly | 8,574\n"
    assert [inside[s:e] for s, e in header_rows(inside, row_spans(inside))] == ["Month | Notices"]


def test_a_value_is_cited_from_its_row_not_from_the_column_names() -> None:
    question = "How many employees were affected by notices in July 2015?"
    # Rows read as written (without their column names' words, as before rows were read with
    # their table), the hashing embedder scores the row at .61 of the column names: within a
    # keep ratio of .5 it could stand beside them in an answer, so it is cited in their place.
    near = answerer(max_sentences=1, keep_ratio=0.5, rows_read_with_table=False).select(
        question, [source(1, MONTHS)]
    )
    assert [c.text for c in near.chosen] == ["July 2015 | 71 | 8,574 | 30"]
    # The column names still count for whether to answer: the best support is theirs.
    assert near.candidates[0].text.startswith("Summary by Month")
    # Farther below them than the keep ratio (.8), no sentence takes their place: they are
    # cited as before, rather than a sentence that could not have been cited beside them.
    far = answerer(max_sentences=1, rows_read_with_table=False).select(
        question, [source(1, MONTHS)]
    )
    assert [c.text[:16] for c in far.chosen] == ["Summary by Month"]
    # Read with its column names (the default), the row holds the question's words too.
    read = answerer(max_sentences=1).select(question, [source(1, MONTHS)])
    assert [c.text for c in read.chosen] == ["July 2015 | 71 | 8,574 | 30"]


def test_a_question_in_the_text_is_quoted_with_its_reply() -> None:
    text = (
        '"Mr. Bingley does not know Mr. Wickham himself?" "No; he never saw him till the other '
        'morning at Meryton." Elizabeth walked on in silence.'
    )
    selection = answerer(max_sentences=1).select(
        "Had Bingley known Wickham before the meeting?", [source(1, text)]
    )
    assert [c.text for c in selection.chosen] == [
        '"Mr. Bingley does not know Mr. Wickham himself?" "No; he never saw him till the other '
        'morning at Meryton."'
    ]
    # The question is never a candidate alone; its reply still is.
    texts = [c.text for c in selection.candidates]
    assert not any(t.endswith('himself?"') for t in texts)
    assert '"No; he never saw him till the other morning at Meryton."' in texts
    # A question after a question is no reply, and a question that ends the passage has none.
    asked = '"But who has won the race?" "And who will judge it?" The Dodo said nothing.'
    texts = [c.text for c in answerer().select("Who won the race?", [source(1, asked)]).candidates]
    assert '"But who has won the race?"' in texts
    last = "The race was run in a circle. But who in the end has won the race?"
    texts = [c.text for c in answerer().select("Who won the race?", [source(1, last)]).candidates]
    assert "But who in the end has won the race?" in texts


def test_the_contenders_choose_as_all_candidates_do_beside_column_names() -> None:
    # Column names best, prose of other sources below them: the contenders (scored only where
    # they can reach the keep ratio of the best) and all candidates cite the same sentences.
    chooser = answerer(max_sentences=2)
    question = "Which patient group, hospital site and review staff?"
    asked = ["patient", "group", "hospital", "site", "review", "staff"]
    filler = [
        "weather",
        "coast",
        "mild",
        "ferries",
        "harbour",
        "storm",
        "bakeries",
        "bridge",
        "tourism",
        "museum",
    ]
    rng = random.Random(7)

    def words(most: int, fill: int) -> str:
        picked = rng.sample(asked, rng.randint(0, most)) + rng.sample(filler, fill)
        return " ".join(picked).capitalize()

    for _ in range(40):
        table = "Patient Group | Hospital Site | Review Staff\nControl | 120 | 14\n"
        sources = [source(1, table + " ".join(words(2, 6) + " today." for _ in range(3)))]
        sources += [
            source(n, " ".join(words(3, rng.randint(2, 7)) + " here." for _ in range(3)), unit=n)
            for n in range(2, 7)
        ]
        scores = [1.0] * len(sources)
        every = chooser.choose(chooser.candidates(question, sources), (), (), scores)
        some = chooser.choose(chooser.contenders(question, sources), (), (), scores)
        assert [c.text for c in some.chosen] == [c.text for c in every.chosen]


@pytest.mark.parametrize(
    "after",
    [
        "CHAPTER XX.",  # a chapter that ends on a question
        "Figure 3. Recall at k of the three retrievers on the long questions.",
        "Section 4.2. Delivery and acceptance of the goods.",
        "Page 12 of 40",
    ],
)
def test_a_question_is_not_joined_to_what_is_no_reply(after: str) -> None:
    asked = "But why, after all that had passed, had she refused him?"
    text = f"{asked}\n{after}\nThe next morning brought a letter from Longbourn."
    texts = [
        c.text for c in answerer().select("Why had she refused him?", [source(1, text)]).candidates
    ]
    assert asked in texts, texts


NICS_TITLE = "NICS Firearm Background Checks November - 2015"
NICS_HEAD = f"{NICS_TITLE}\nState / Territory | Permit | Handgun | Long Gun | Totals\n"
NICS_ROWS = (
    "Illinois | 87,190 | 24,412 | 17,227 | 129,861\n"
    "Kentucky | 264,140 | 12,155 | 14,847 | 295,891\n"
    "Kansas | 894 | 7,086 | 8,702 | 18,433\n"
)


def _nics_sources() -> list[Source]:
    # The table's title and column names in one chunk, its rows in the next, which carries the
    # title as its context (as chunking stores a table cut over chunks).
    head = source(1, NICS_HEAD + "Alabama | 18,870 | 23,022 | 22,650 | 71,137\n")
    rows = replace(source(2, NICS_ROWS, start=len(head.text)), context=NICS_TITLE)
    return [head, rows]


@pytest.mark.parametrize("read_with_table", [True, False])
def test_a_row_the_question_names_is_read_with_its_tables_caption_and_column_names(
    read_with_table: bool,
) -> None:
    # The lexical feature (the question's idf share in the sentence); which sentence is cited
    # also weighs the cosine, a real model's: tests/integration/test_tables.py.
    question = "How many permit checks did Kentucky run in the NICS November 2015 statistics?"
    chooser = answerer(rows_read_with_table=read_with_table)
    lexical = {
        c.text.split(" | ")[0]: c.lexical for c in chooser.candidates(question, _nics_sources())
    }
    if read_with_table:
        # "Kentucky", then "permit" (a column name, in the other chunk), "NICS", "November",
        # "2015" and "checks" (the caption, the chunk's context).
        assert lexical["Kentucky"] > lexical[NICS_TITLE] > 0
        assert lexical["Kentucky"] > lexical["State / Territory"]
    else:  # the row holds one of the question's words, the caption four
        assert 0 < lexical["Kentucky"] < lexical[NICS_TITLE]
    # A row the question does not name is read as written either way: its table's words would
    # lift every row of the table to the caption's level.
    assert lexical["Kansas"] == lexical["Illinois"] == 0


def test_a_row_is_read_with_the_column_names_of_its_own_table_only() -> None:
    # The rows above a table's column names belong to another table: they are read with the
    # passage's context alone, the rows under them with the column names too.
    chooser = answerer()
    raw = chooser._scorer().sentences([replace(source(1, MONTHS), context="WARN report")])
    tables = {item.text: item.table for item in raw}
    assert tables["03/18/2016 | 05/20/2016 | Boeing Company | El Segundo | 26"] == "WARN report"
    assert tables["July 2015 | 71 | 8,574 | 30"] == (
        "WARN report\nSummary by Month | Notices | Employees Affected | Permanent Layoff"
    )
    # The column names are not read with themselves, and prose is read as written.
    assert tables["Summary by Month | Notices | Employees Affected | Permanent Layoff"] == ""
    prose = chooser._scorer().sentences([source(1, "The WARN report lists notices by month.")])
    assert [item.table for item in prose] == [""]


def test_a_row_is_named_by_its_label_not_by_a_piece_of_a_date() -> None:
    asked = {"kentucki", "kentucky", "2016", "2019", "total", "juli", "july"}
    assert names_row(asked, "Kentucky")
    assert names_row(asked, "2019")  # a number that is the whole label
    assert not names_row(asked, "03/18/2016")  # a piece of the date every row holds
    assert not names_row(asked, "Alabama")
    assert names_row(asked, row_label("Totals | 804,006 | 2,236,457", ""))
    assert row_label("BM25 with RAPTOR 27.93% 21.17%", "") == "BM25 with RAPTOR"
    assert row_label("cell sentence", "Tier 3: Repeatable") == "Tier 3: Repeatable"


def _page_names(*sources: Source) -> PageNames:
    """The column names of ``sources`` by page, as the scorer finds them."""
    found = [header_rows(s.text, row_spans(s.text)) for s in sources]
    return column_names_by_page(sources, found)


def test_a_row_is_read_with_its_own_tables_column_names_only() -> None:
    staff = "Staff member | Role title | Office\nAda | Analyst | Room 4\n"
    prose = "The figures below are in millions.\n"
    money = "Total revenue | 10,000 | 12,000\n"
    text = staff + prose + money
    one = source(1, text)
    names = _page_names(one)
    start = text.index("Total revenue")
    # Another table's column names (three cells over a row of three, but prose between them).
    assert table_words(one, start, money.strip(), names) == ""
    # The same table cut over two chunks: the rows of the second are read with the first's
    # column names, once each even where the chunk's context repeats them.
    head = source(1, "Month | Notices | Employees\nJuly 2015 | 71 | 8,574\n")
    rest_text = "August 2015 | 69 | 5,890\n"
    rest = replace(
        source(2, rest_text, start=len(head.text)), context="WARN\nMonth | Notices | Employees"
    )
    names = _page_names(head, rest)
    assert table_words(rest, rest.start, rest_text.strip(), names) == (
        "WARN\nMonth | Notices | Employees"
    )
    # A row with another number of cells is not read with them.
    alone = replace(rest, context="WARN")
    names = _page_names(head, alone)
    assert table_words(alone, alone.start, "August 2015 | 69", names) == "WARN"
    assert table_words(alone, alone.start, rest_text.strip(), names) == (
        "WARN\nMonth | Notices | Employees"
    )
