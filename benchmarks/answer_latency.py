"""Where the extractive answer's time goes between the ``sources`` event and its first token.

Per question: the gap from ``sources`` to the first ``token`` (the goal: p50 <= 150 ms), and
inside it the time the answerer spends in the embedder (the question and every usable sentence
of the sources, in the embedder's own length-sorted batches) against the rest (splitting the
sources into sentences, their terms and idf, the scores, the choice). The extractive answerer
emits its whole answer at once after choosing it, so the gap is the time to choose it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from truthbase.answer.extractive import ExtractiveAnswerer
from truthbase.answer.follow_up import Focus
from truthbase.answer.model import Source
from truthbase.answer.scoring import Candidate
from truthbase.config import Settings
from truthbase.embed import Embedder, load_embedder
from truthbase.store import SQLiteStore


class TimedEmbedder:
    """An embedder that adds the seconds and texts of every call to its counters."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.seconds = 0.0
        self.texts = 0

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed(self, texts: Sequence[str]) -> Any:
        started = time.perf_counter()
        try:
            return self._inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - started
            self.texts += len(texts)

    def __getattr__(self, name: str) -> Any:  # embed_queries, embed_with_tokens, ...
        return getattr(self._inner, name)


class EveryCandidate(ExtractiveAnswerer):
    """The extractive answerer as it was: every usable sentence embedded before the choice."""

    def contenders(
        self,
        question: str,
        sources: Sequence[Source],
        first: int = 4,
        focus: Focus | None = None,
    ) -> list[Candidate]:
        return self.candidates(question, sources, focus)


def _p50(values: list[float]) -> float | None:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else None


def _gap(
    store: SQLiteStore, embedder: Embedder, question: str, settings: Settings, every: bool
) -> tuple[float, float, int, str] | None:
    """(sources -> first token s, of it in the embedder s, sentences embedded, answer text)."""
    from truthbase.answer import answer_question
    from truthbase.answer.model import DoneEvent, SourcesEvent, TokenEvent

    timed = TimedEmbedder(embedder)
    kind = EveryCandidate if every else ExtractiveAnswerer
    answerer = kind(timed, settings.extractive)  # type: ignore[arg-type]
    at_sources: float | None = None
    out: tuple[float, float, int] | None = None
    before = 0.0
    events = answer_question(store, embedder, question, settings.retrieval, answerer=answerer)
    for event in events:
        if isinstance(event, SourcesEvent) and at_sources is None:
            at_sources = time.perf_counter()
            before = timed.seconds
        if isinstance(event, TokenEvent) and at_sources is not None and out is None:
            out = (time.perf_counter() - at_sources, timed.seconds - before, timed.texts - 1)
        if isinstance(event, DoneEvent) and out is not None:
            return (*out, event.answer.text)
    return None


def bench_answer_gap(
    store: SQLiteStore, questions: list[str], settings: Settings
) -> dict[str, Any]:
    """sources -> first token per question, and the embedder's share of it, for the answerer
    now (``contenders``: only the sentences that can matter embedded) and as it was
    (``every``), each question both ways in turn, and whether the answers are the same."""
    embedder = load_embedder(settings.embedder)
    rows: dict[str, list[tuple[float, float, int, str]]] = {"every": [], "contenders": []}
    for question in questions:
        for variant in ("every", "contenders"):
            row = _gap(store, embedder, question, settings, variant == "every")
            if row is not None:
                rows[variant].append(row)
    report: dict[str, Any] = {"questions": len(questions), "goal_ms": 150}
    for variant, got in rows.items():
        gap = _p50([r[0] for r in got])
        total = sum(r[0] for r in got)
        report[variant] = {
            "sources_to_first_token_p50_ms": 1000 * gap if gap is not None else None,
            "embed_p50_ms": 1000 * (_p50([r[1] for r in got]) or 0.0),
            "embed_share": sum(r[1] for r in got) / total if total else None,
            "sentences_embedded_p50": _p50([float(r[2]) for r in got]),
        }
    report["same_answers"] = [r[3] for r in rows["every"]] == [r[3] for r in rows["contenders"]]
    return report


def print_answer_gap(report: dict[str, Any]) -> None:
    for variant, label in (("every", "every sentence embedded (before)"), ("contenders", "now")):
        r = report[variant]
        gap = r["sources_to_first_token_p50_ms"]
        if gap is None:
            print(f"  {label}: no answer had a token")
            continue
        print(
            f"  sources -> first token, {label}: p50 {gap:.0f} ms (goal <= {report['goal_ms']} "
            f"ms); in the embedder {r['embed_p50_ms']:.0f} ms ({100 * r['embed_share']:.0f}% of "
            f"the gap), question + {r['sentences_embedded_p50']:.0f} sentences (p50)"
        )
    print(f"  the same answers both ways: {report['same_answers']}")


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    import argparse
    from pathlib import Path

    from truthbase.eval.golden import load_golden

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--golden", type=Path, required=True)
    parser.add_argument("--questions", type=int, default=20)
    args = parser.parse_args()
    store = SQLiteStore(args.db)
    asked = [q.question for q in load_golden(args.golden).questions][: args.questions]
    print_answer_gap(bench_answer_gap(store, asked, Settings()))
    store.close()
