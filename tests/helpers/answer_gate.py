"""What the answer gates share: a golden set answered on a suite index with the default
settings, and the rule by which an answer metric has dropped against a stored baseline."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.helpers.corpus import SHARED
from truthbase.config import Settings
from truthbase.embed import Embedder
from truthbase.eval.answers import ANSWER_METRICS, evaluate_answers
from truthbase.eval.golden import load_golden
from truthbase.eval.retrieval import prepare_corpus
from truthbase.store import SQLiteStore

__all__ = ["TOLERANCE", "answer_metric_drops", "answer_report"]

TOLERANCE = 1e-9


def answer_report(golden_path: Path, db: Path, embedder: Embedder) -> dict[str, Any]:
    """``eval answers``'s report of ``golden_path`` (document paths relative to shared/) on the
    index ``db``, with the default settings."""
    settings = Settings()
    golden = load_golden(golden_path)
    store = SQLiteStore(db)
    try:
        prepared = prepare_corpus(golden, SHARED, store, embedder, settings.chunking)
        return evaluate_answers(golden, prepared, store, embedder, settings.retrieval)
    finally:
        store.close()


def answer_metric_drops(
    now: dict[str, Any],
    then: dict[str, Any],
    names: Sequence[str] = ANSWER_METRICS,
    where: str = "",
) -> list[str]:
    """The metrics of ``names`` that are worse in ``now`` than in the baseline ``then`` (more
    false refusals; any other share lower), each as "name: then -> now"; a metric the baseline
    does not hold is not compared."""
    drops = []
    for name in names:
        if name not in then:
            continue
        worse = (
            now[name] > then[name]
            if name == "false_refusals"
            else now.get(name, 0.0) < then[name] - TOLERANCE
        )
        if worse:
            label = f"{where} {name}" if where else name
            drops.append(f"{label}: {then[name]} -> {now.get(name)}")
    return drops
