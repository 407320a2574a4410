"""A question of two parts, with the bundled embedder: each part's sentence is chosen by the
part's own cosine as well as the whole question's (``ExtractiveAnswerer._per_part``).

The sentences are the RAPTOR paper's (shared/corpus/seed, pages 7 and 8), as dev.json's d031
asks about them; the second part ("and what is its main drawback?") shares one content word
with its sentence, and by the whole question's cosine alone the answer cited two sentences about
the first part and none about the drawback.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from truthbase.answer import ExtractiveAnswerer
from truthbase.answer.model import Source
from truthbase.cite import parse_answer
from truthbase.config import ExtractiveSettings
from truthbase.embed import Embedder, Vectors

RAPTOR = (
    "The collapsed tree approach consistently performs better. We believe collapsed tree "
    "retrieval is better due to offering greater flexibility than tree traversal. One "
    "drawback, however, of the collapsed tree approach is that it requires cosine similarity "
    "search to be performed on all nodes in the tree. Collapsed tree with 2000 tokens produces "
    "the best results, so we use this querying strategy for our main results. Overall, given "
    "the collapsed tree approach's greater flexibility and its superior performance on the "
    "subset of the QASPER dataset, this is the querying approach with which we proceed."
)


class _Counting:
    """The embedder, counting each text it embeds."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.seen: Counter[str] = Counter()

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.seen.update(texts)
        return self.inner.embed(texts)


def _source() -> Source:
    return Source(
        n=1,
        doc_id="r" * 64,
        title="RAPTOR",
        unit=6,
        start=0,
        end=len(RAPTOR),
        text=RAPTOR,
        rects=(),
    )


QUESTION = "Which RAPTOR querying method performed better on QASPER, and what is its main drawback?"


def test_each_part_of_a_question_gets_a_sentence_about_it(embedder: Embedder) -> None:
    answerer = ExtractiveAnswerer(embedder, ExtractiveSettings(threshold=0.0))
    answer = parse_answer("".join(answerer.draft(QUESTION, [_source()]).tokens))
    assert "One drawback, however," in answer.text, answer.text


def test_the_parts_reuse_the_sentence_vectors_their_cosines_were_made_from(
    embedder: Embedder,
) -> None:
    counting = _Counting(embedder)
    answerer = ExtractiveAnswerer(counting, ExtractiveSettings(threshold=0.0))
    answer = parse_answer("".join(answerer.draft(QUESTION, [_source()]).tokens))
    assert "One drawback, however," in answer.text, answer.text
    sentences = [t for t in counting.seen if t in RAPTOR]
    assert len(sentences) >= 5, counting.seen
    assert all(counting.seen[t] == 1 for t in sentences), counting.seen
