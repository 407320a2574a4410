"""`make bench`'s answer-gap measure (benchmarks/answer_latency.py) runs the extractive answerer
as it is and as it was (every sentence embedded) on real questions over the seed index, and the
two give the same answers. It broke once unseen: the answerer's ``contenders`` took a new
argument that the bench's subclass did not."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from truthbase.config import Settings
from truthbase.store import SQLiteStore

pytestmark = [pytest.mark.slow, pytest.mark.corpus]

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "answer_latency.py"


def test_the_answer_gap_bench_runs_both_ways_with_the_same_answers(seed_db: Path) -> None:
    spec = importlib.util.spec_from_file_location("answer_latency", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    store = SQLiteStore(seed_db)
    try:
        report = bench.bench_answer_gap(
            store,
            [
                "What are the six Functions of the CSF Core?",
                "How does RAPTOR build its tree of summaries?",
                "What does Self-RAG's critic model predict?",
            ],
            Settings(),
        )
    finally:
        store.close()
    assert report["questions"] == 3
    for variant in ("every", "contenders"):
        assert report[variant]["sources_to_first_token_p50_ms"] > 0, report
    assert report["same_answers"] is True
