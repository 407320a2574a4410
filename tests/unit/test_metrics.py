"""Retrieval metrics under the hit rule of golden/README.md, with hand-computed expectations."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from truthbase.eval.golden import GoldenEvidence, GoldenQuestion
from truthbase.eval.metrics import (
    METRIC_NAMES,
    QuestionResult,
    RetrievedChunk,
    chunk_contains,
    evidence_ranks,
    first_hit_rank,
    mean_reciprocal_rank,
    ndcg_at,
    recall_at,
    score_question,
    summarize,
    summarize_by_tag,
    summarize_results,
)
from truthbase.text.matching import normalize

Q_A = "Individuals responsible for developing and leading cybersecurity programs"
Q_B = "A Community Profile is a baseline of CSF outcomes"

EV_A = GoldenEvidence(doc="csf", page=2, quote=Q_A)  # unit 1
EV_B = GoldenEvidence(doc="csf", page=11, quote=Q_B)  # unit 10
EV_EPUB = GoldenEvidence(doc="alice", section="chapter_001.xhtml", quote="DRINK ME ... beautifully")


def chunk(doc: str, unit: int, text: str, href: str | None = None) -> RetrievedChunk:
    return RetrievedChunk(doc=doc, unit=unit, text=text, href=href)


HIT_A = chunk("csf", 1, f"Intro. {Q_A.upper()} are the\naudience.")
HIT_B = chunk("csf", 10, f"Profiles. {Q_B}, created to address shared interests.")
MISS = chunk("csf", 3, "Nothing relevant here.")


def test_contains_needs_same_document_unit_and_quote() -> None:
    assert chunk_contains(EV_A, HIT_A)
    assert not chunk_contains(EV_A, chunk("csf", 2, HIT_A.text))  # page 3, not page 2
    assert not chunk_contains(EV_A, chunk("ai-rmf", 1, HIT_A.text))
    assert not chunk_contains(EV_A, chunk("csf", 1, "Individuals responsible for"))


def test_contains_uses_the_matching_rule() -> None:
    text = "cyber-\nsecurity: Indi\ufffe\nviduals respon\u00adsible for developing and leading cy"
    ev = GoldenEvidence(doc="csf", page=1, quote="Individuals responsible for developing")
    assert chunk_contains(ev, chunk("csf", 0, text))


def test_contains_epub_section_and_elision() -> None:
    text = "It was labelled DRINK ME in letters beautifully printed."
    assert chunk_contains(EV_EPUB, chunk("alice", 0, text, href="chapter_001.xhtml"))
    assert chunk_contains(EV_EPUB, chunk("alice", 7, text, href="OEBPS/chapter_001.xhtml#top"))
    assert chunk_contains(EV_EPUB, chunk("alice", 7, text, href="chapter%5F001.xhtml"))
    assert not chunk_contains(EV_EPUB, chunk("alice", 0, text, href="chapter_002.xhtml"))
    assert not chunk_contains(EV_EPUB, chunk("alice", 0, text, href=None))
    out_of_order = "beautifully printed: DRINK ME"
    assert not chunk_contains(EV_EPUB, chunk("alice", 0, out_of_order, href="chapter_001.xhtml"))


def test_prenormalized_text_is_used_as_given() -> None:
    assert chunk_contains(
        EV_A, RetrievedChunk(doc="csf", unit=1, text="", normalized=normalize(HIT_A.text))
    )
    # The normalized field wins: it is trusted, not recomputed.
    assert not chunk_contains(
        EV_A, RetrievedChunk(doc="csf", unit=1, text=HIT_A.text, normalized="other")
    )


def test_first_hit_rank_single_evidence() -> None:
    assert first_hit_rank([EV_A], [HIT_A, MISS]) == 1
    assert first_hit_rank([EV_A], [MISS, MISS, HIT_A]) == 3
    assert first_hit_rank([EV_A], [MISS] * 3) is None
    assert first_hit_rank([EV_A], []) is None


def test_first_hit_rank_needs_every_record() -> None:
    ranked = [HIT_B, MISS, MISS, MISS, MISS, MISS, HIT_A]
    assert evidence_ranks([EV_A, EV_B], ranked) == [7, 1]
    assert first_hit_rank([EV_A, EV_B], ranked) == 7
    assert first_hit_rank([EV_A, EV_B], [HIT_B, MISS]) is None


def test_first_hit_rank_is_cut_at_max_k() -> None:
    ranked = [MISS] * 15 + [HIT_A]
    assert first_hit_rank([EV_A], ranked) is None
    assert first_hit_rank([EV_A], ranked, max_k=16) == 16
    assert first_hit_rank([EV_A], [MISS, HIT_A], max_k=1) is None


def test_unanswerable_has_no_rank() -> None:
    with pytest.raises(ValueError, match="no evidence"):
        first_hit_rank([], [HIT_A])
    with pytest.raises(ValueError, match="no evidence"):
        ndcg_at([], [HIT_A])


def test_ndcg_hand_computed() -> None:
    # One record at rank 3: DCG = 1/log2(4) = 0.5, IDCG = 1.
    assert ndcg_at([EV_A], [MISS, MISS, HIT_A]) == pytest.approx(0.5)
    assert ndcg_at([EV_A], [HIT_A]) == pytest.approx(1.0)
    # Beyond rank 5 counts nothing.
    assert ndcg_at([EV_A], [MISS] * 5 + [HIT_A]) == 0.0
    # Two records at ranks 2 and 4: DCG = 1/log2(3) + 1/log2(5); IDCG = 1 + 1/log2(3).
    expected = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert ndcg_at([EV_A, EV_B], [MISS, HIT_A, MISS, HIT_B]) == pytest.approx(expected)


def test_ndcg_counts_a_repeated_record_once() -> None:
    overlap = chunk("csf", 1, f"{Q_A} again, in the overlap of the next chunk")
    # Both chunks contain EV_A; the second adds nothing new, so nDCG stays at 1, not 1.63.
    assert ndcg_at([EV_A], [HIT_A, overlap]) == pytest.approx(1.0)
    # The repeat does not take the place of the second record: 1 + 1/log2(4) over 1 + 1/log2(3).
    expected = (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert ndcg_at([EV_A, EV_B], [HIT_A, overlap, HIT_B]) == pytest.approx(expected)


def test_recall_mrr_and_summary_hand_computed() -> None:
    ranks = [1, 3, None, 8, 15, 2]
    assert recall_at(ranks, 1) == pytest.approx(1 / 6)
    assert recall_at(ranks, 5) == pytest.approx(3 / 6)
    assert recall_at(ranks, 8) == pytest.approx(4 / 6)
    assert recall_at(ranks, 15) == pytest.approx(5 / 6)
    mrr = (1 + 1 / 3 + 0 + 1 / 8 + 1 / 15 + 1 / 2) / 6
    assert mean_reciprocal_rank(ranks) == pytest.approx(mrr)
    summary = summarize(ranks, [1.0, 0.5, 0.0, 0.0, 0.0, 0.63])
    assert tuple(summary) == METRIC_NAMES
    assert summary == pytest.approx(
        {
            "recall@1": 1 / 6,
            "recall@5": 3 / 6,
            "recall@8": 4 / 6,
            "recall@15": 5 / 6,
            "mrr": mrr,
            "ndcg@5": 2.13 / 6,
        }
    )


def test_summary_input_checks() -> None:
    with pytest.raises(ValueError, match="no questions"):
        summarize([], [])
    with pytest.raises(ValueError, match="nDCG values"):
        summarize([1, 2], [1.0])
    with pytest.raises(ValueError, match="1-based"):
        summarize([0], [1.0])


def question(qid: str, evidence: list[GoldenEvidence], tags: tuple[str, ...]) -> GoldenQuestion:
    return GoldenQuestion(
        id=qid, question="?", answerable=True, answer="x", evidence=tuple(evidence), tags=tags
    )


def test_score_question_and_tag_breakdown() -> None:
    q1 = question("q1", [EV_A], ("fact",))
    q2 = question("q2", [EV_A, EV_B], ("multi-page", "fact"))
    r1 = score_question(q1, [MISS, HIT_A])
    r2 = score_question(q2, [HIT_B, MISS, MISS, MISS, MISS, MISS, MISS, MISS, MISS, HIT_A])
    assert (r1.id, r1.tags, r1.rank) == ("q1", ("fact",), 2)
    assert r1.ndcg == pytest.approx(1 / math.log2(3))
    assert isinstance(r1, QuestionResult)
    assert r2.rank == 10
    assert r2.ndcg == pytest.approx(1 / (1 + 1 / math.log2(3)))
    overall = summarize_results([r1, r2])
    assert overall["recall@1"] == 0.0
    assert overall["recall@5"] == 0.5
    assert overall["recall@15"] == 1.0
    assert overall["mrr"] == pytest.approx((1 / 2 + 1 / 10) / 2)
    by_tag = summarize_by_tag([r1, r2])
    assert list(by_tag) == ["fact", "multi-page"]
    assert by_tag["fact"]["n"] == 2.0
    assert by_tag["fact"]["mrr"] == pytest.approx(overall["mrr"])
    assert by_tag["multi-page"]["n"] == 1.0
    assert by_tag["multi-page"]["recall@8"] == 0.0
    assert by_tag["multi-page"]["recall@15"] == 1.0
    assert list(summarize_by_tag([r1, r2], tags=["multi-page", "absent"])) == ["multi-page"]


@given(
    st.lists(st.sampled_from(["A", "B", "AB", "-"]), max_size=12),
    st.sampled_from([[EV_A], [EV_B], [EV_A, EV_B]]),
)
def test_metric_invariants(layout: list[str], evidence: list[GoldenEvidence]) -> None:
    both = chunk("csf", 1, Q_A)  # a second chunk holding EV_A (an overlap), then HIT_B
    pieces = {"A": [HIT_A], "B": [HIT_B], "AB": [both, HIT_B], "-": [MISS]}
    ranked = [c for key in layout for c in pieces[key]]
    value = ndcg_at(evidence, ranked)
    assert 0.0 <= value <= 1.0 + 1e-12
    rank = first_hit_rank(evidence, ranked)
    per_record = evidence_ranks(evidence, ranked)
    if rank is None:
        assert None in per_record
    else:
        assert rank == max(r for r in per_record if r is not None)
        assert 1 <= rank <= 15
        # Found at rank: every record is contained by a chunk in the top `rank`.
        assert all(any(chunk_contains(ev, c) for c in ranked[:rank]) for ev in evidence)
