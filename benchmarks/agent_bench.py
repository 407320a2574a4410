"""Agent-mode latency with the extractive fallback (no LLM) on Pride and Prejudice.

For `make bench`: ``bench_agent(store, settings)`` takes the bench's store, ingests the book when
it is missing, warms the book's segment index (built on first use, timed apart), then times whole
agent answers (tools, answer, citations resolved and verified; what `ask --mode agent` does
without an LLM) for overview and detail questions: p50 and max over ``runs`` runs of each
question. The questions are written for this bench from the book's text, not taken from the
golden set. Run alone: ``python benchmarks/agent_bench.py [--db PATH] [--runs 3]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from truthbase.answer import ask_agent
from truthbase.answer.agent_extractive import question_kind
from truthbase.config import LLMSettings, Settings
from truthbase.embed import Embedder, load_embedder
from truthbase.ingest import IngestOptions, ingest_paths
from truthbase.modes import agent_for
from truthbase.store import SQLiteStore, Store

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT.parent / "shared" / "corpus" / "epub" / "pride-and-prejudice-pg1342.epub"
TITLE = "Pride and Prejudice"

OVERVIEW_QUESTIONS = (
    "What is this book about?",
    "What are the main themes of the novel?",
)
DETAIL_QUESTIONS = (
    "In which county is Pemberley?",
    "Who does Mr. Collins marry?",
    "With whom does Lydia elope?",
)


def bench_agent(
    store: Store,
    settings: Settings,
    *,
    book: Path = BOOK,
    embedder: Embedder | None = None,
    runs: int = 3,
    overview: Sequence[str] = OVERVIEW_QUESTIONS,
    detail: Sequence[str] = DETAIL_QUESTIONS,
) -> dict[str, Any]:
    """Time agent answers with the extractive agent (the LLM settings are ignored)."""
    settings = settings.model_copy(update={"llm": LLMSettings()})
    embedder = embedder or load_embedder(settings.embedder)
    embedder.embed(["warm up the session"])
    ingest_s = None
    if not any(d.title == TITLE for d in store.list_documents()) and book.is_file():
        started = time.perf_counter()
        ingest_paths([book], store, embedder, IngestOptions.from_settings(settings))
        ingest_s = time.perf_counter() - started
    ids = [d.id for d in store.list_documents() if d.title == TITLE]
    if not ids:
        return {"skipped": f"{TITLE} is not in the index and {book} is missing"}
    agent = agent_for(settings, store, embedder, doc_id=ids[0])
    started = time.perf_counter()
    ask_agent(store, embedder, overview[0], agent)  # builds the segment index when missing
    first_s = time.perf_counter() - started

    def timed(question: str) -> dict[str, Any]:
        seconds: list[float] = []
        cpu: list[float] = []
        answerer = ""
        refused = False
        for _ in range(runs):
            began, began_cpu = time.perf_counter(), time.process_time()
            answer = ask_agent(store, embedder, question, agent)
            seconds.append(time.perf_counter() - began)
            cpu.append(time.process_time() - began_cpu)
            answerer, refused = answer.answerer, answer.refused
        return {
            "kind": question_kind(question),
            "p50_ms": 1000 * statistics.median(seconds),
            "max_ms": 1000 * max(seconds),
            # CPU time of this process (all its threads): on a shared machine the wall clock
            # also counts the waits for a core.
            "cpu_p50_ms": 1000 * statistics.median(cpu),
            "answerer": answerer,
            "refused": refused,
        }

    questions = {q: timed(q) for q in (*overview, *detail)}
    by_kind: dict[str, float] = {}
    for kind in ("overview", "detail"):
        p50s = [r["p50_ms"] for r in questions.values() if r["kind"] == kind]
        if p50s:
            by_kind[f"{kind}_p50_ms"] = statistics.median(p50s)
    return {
        "book_ingest_s": ingest_s,
        "first_answer_s": first_s,
        "runs": runs,
        **by_kind,
        "questions": questions,
    }


def print_agent(report: dict[str, Any]) -> None:
    if "skipped" in report:
        print(f"\nagent mode: skipped ({report['skipped']})")
        return
    print(
        f"\nagent mode, extractive agent on {TITLE}: overview p50 "
        f"{report.get('overview_p50_ms', float('nan')):.0f} ms, detail p50 "
        f"{report.get('detail_p50_ms', float('nan')):.0f} ms (first answer, segment index "
        f"included: {report['first_answer_s']:.1f} s)"
    )
    for question, r in report["questions"].items():
        state = "refused" if r["refused"] else "answered"
        print(
            f"  {r['kind']:8s} {question[:48]!r}: p50 {r['p50_ms']:.0f} ms, "
            f"max {r['max_ms']:.0f} ms, CPU p50 {r['cpu_p50_ms']:.0f} ms, {state} by "
            f"{r['answerer']}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", type=Path, default=None, help="an index to use (it is written)")
    parser.add_argument("--runs", type=int, default=3, help="runs per question")
    parser.add_argument("--json", type=Path, default=None, help="write the report here")
    args = parser.parse_args()
    settings = Settings()
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(args.db or Path(tmp) / "agent-bench.sqlite")
        try:
            report = bench_agent(store, settings, runs=args.runs)
        finally:
            store.close()
    print_agent(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    sys.exit(main())
