"""Answer selection: figure text kept out of sentences, prose chunks and answers; a cited sentence
is whole; a question of two parts gets a sentence per part. With a hashing embedder (no model)
and, where marked, the real RAPTOR paper of the seed corpus."""

from __future__ import annotations

from functools import cache

import pytest

from tests.helpers.corpus import SEED
from tests.helpers.extractive import answerer, source
from truthbase.answer.parts import question_parts
from truthbase.answer.quotable import ends_sentence
from truthbase.chunking import chunk_unit
from truthbase.extract.pdf import extract_pdf
from truthbase.model import Unit
from truthbase.text.figures import figure_blocks, looks_like_labels
from truthbase.text.sentences import split_sentences

# -- figure text ------------------------------------------------------------------------------

# The shape of a vector figure in a PDF's text layer: its labels (node numbers, box titles),
# then the caption; the page's prose lines are long.
FIGURE_PAGE = (
    "The retrieval augmented models adapt to changes in world state and incorporate long-tail\n"
    "knowledge, but most existing methods retrieve only a few short contiguous text chunks.\n"
    "3 5 1 4 5 2 3\n"
    "Index #8\n"
    "Text: summary of\n"
    "nodes 2 and 3\n"
    "Formation of one tree layer\n"
    "Root layer\n"
    "Leaf layer\n"
    "RAPTOR Tree Contents of a node\n"
    "Figure 1: Tree construction process: RAPTOR recursively clusters chunks of text based on\n"
    "their vector embeddings and generates text summaries of those clusters, constructing a\n"
    "tree from the bottom up.\n"
)


def test_a_figures_labels_are_a_block_kept_out_of_the_captions_sentence() -> None:
    blocks = figure_blocks(FIGURE_PAGE)
    assert [FIGURE_PAGE[s:e] for s, e in blocks] == [
        FIGURE_PAGE[FIGURE_PAGE.index("3 5 1") : FIGURE_PAGE.index("\nFigure 1")]
    ]
    sentences = [FIGURE_PAGE[s:e] for s, e in split_sentences(FIGURE_PAGE)]
    caption = next(s for s in sentences if "Tree construction process" in s)
    assert caption.startswith("Figure 1: Tree construction process")
    assert not any("Leaf layer" in s and "Figure 1" in s for s in sentences)
    # The prose sentence above the figure keeps its words and takes none of the labels.
    assert sentences[0].endswith("contiguous text chunks.")


def test_figure_text_is_its_own_chunk_and_never_quoted() -> None:
    unit = Unit(
        index=0,
        text=FIGURE_PAGE,
        boxes=[None] * len(FIGURE_PAGE),
        figures=figure_blocks(FIGURE_PAGE),
    )
    chunks = chunk_unit(unit)
    assert not any(
        "Root layer" in c.text and ("Figure 1" in c.text or "knowledge" in c.text) for c in chunks
    )
    assert any("Root layer" in c.text for c in chunks)  # still searchable and highlightable
    answer = answerer().select(
        "How does RAPTOR build its tree of summaries from the leaf layer to the root layer?",
        [source(1, FIGURE_PAGE)],
    )
    assert answer.chosen
    assert all("Root layer" not in c.text and "Index #8" not in c.text for c in answer.candidates)
    # A chunk of labels alone (its caption in the next chunk) is labels too.
    labels = FIGURE_PAGE[figure_blocks(FIGURE_PAGE)[0][0] : FIGURE_PAGE.index("\nFigure 1")]
    assert looks_like_labels(labels)
    assert not looks_like_labels(FIGURE_PAGE[: FIGURE_PAGE.index("3 5 1")])


@cache
def _raptor_page_2() -> Unit:
    return extract_pdf(SEED / "raptor.pdf").units[1]


@pytest.mark.corpus
def test_the_raptor_papers_figure_1_labels_are_a_figure_block() -> None:
    unit = _raptor_page_2()
    assert unit.figures, "the labels above Figure 1 were not found"
    block = unit.text[unit.figures[0][0] : unit.figures[0][1]]
    assert "Root layer" in block and "Leaf layer" in block and "Figure 1" not in block
    caption = next(
        unit.text[s:e]
        for s, e in split_sentences(unit.text)
        if "construction process" in unit.text[s:e]
    )
    assert caption.startswith("Figure 1: Tree construction process")
    for chunk in chunk_unit(unit):
        assert not ("Root layer" in chunk.text and "construction process" in chunk.text)


# -- whole sentences --------------------------------------------------------------------------

# A footnote marker at the end of a short paragraph line, and a capital on the next line: the
# splitter takes the line for a heading and cuts the sentence there.
FOOTNOTE_CUT = (
    "Our experiments use three question answering datasets and one summarization model to write\n"
    "the summaries of the tree, which 1\n"
    "GPT-3.5 turbo then rewrites into the summaries of every cluster of the tree.\n"
    "2. Introduction to RAPTOR\n"
    "The tree has a root layer and a leaf layer of the original text chunks.\n"
)


def test_a_cited_sentence_is_never_cut_mid_way() -> None:
    pieces = [FOOTNOTE_CUT[s:e] for s, e in split_sentences(FOOTNOTE_CUT)]
    assert any(p.endswith("which 1") for p in pieces), "the splitter no longer cuts here"
    selection = answerer(max_sentences=3, keep_ratio=0.01).select(
        "Which model rewrites the summaries of every cluster in the experiments?",
        [source(1, FOOTNOTE_CUT, start=100)],
    )
    texts = [c.text for c in selection.candidates]
    assert all(ends_sentence(t) for t in texts), texts
    joined = next(c for c in selection.candidates if "which 1" in c.text)
    assert joined.text.endswith("cluster of the tree.")
    assert FOOTNOTE_CUT[joined.start - 100 : joined.end - 100] == joined.text  # unit offsets
    # A heading is no sentence, and is not glued to the next one either.
    assert not any("Introduction to RAPTOR" in t for t in texts)
    assert all(ends_sentence(c.text) for c in selection.chosen)


# -- questions of several parts ---------------------------------------------------------------


def test_question_parts() -> None:
    assert question_parts(
        "What does RAPTOR stand for, and how does it build its tree of summaries?"
    ) == ["What does RAPTOR stand for", "how does it build its tree of summaries"]
    assert question_parts("Who are Bingley and Darcy?") == ["Who are Bingley and Darcy?"]
    assert question_parts("How does RAPTOR build its tree?") == ["How does RAPTOR build its tree?"]


def test_a_two_part_question_gets_a_sentence_per_part() -> None:
    text = (
        "RAPTOR stands for Recursive Abstractive Processing for Tree-Organized Retrieval. "
        "The benchmark results improve on three datasets. "
        "The tree is built bottom up by clustering text chunks and summarizing each cluster. "
        "Retrieval reads the collapsed tree."
    )
    question = "What does RAPTOR stand for, and how is its tree built from clustering chunks?"
    one = answerer(max_sentences=1).select(question, [source(1, text)])
    chosen = [c.text for c in one.chosen]
    assert len(chosen) == 2, chosen
    assert chosen[0].startswith("RAPTOR stands for")
    assert chosen[1].startswith("The tree is built bottom up")
    # The same answerer gives one sentence to a question of one part.
    single = answerer(max_sentences=1).select("What does RAPTOR stand for?", [source(1, text)])
    assert [c.text[:18] for c in single.chosen] == ["RAPTOR stands for "]
