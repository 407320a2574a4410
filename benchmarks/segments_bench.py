"""Segment index build time (extractive summaries) and the book tools' latency.

For `make bench`: ``bench_segments(store, settings)`` takes the bench's store (the seed PDFs
ingested), ingests the books it is given when they are missing, and reports per document the
segment count and build time (cut + summarize + embed + store), then the tools' latency
(p50/max over a few runs): the full summaries of Pride and Prejudice, and related segments for
questions written for this bench (not from the golden set). Run alone:
``python benchmarks/segments_bench.py [--db PATH]``.
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

from truthbase.config import Settings
from truthbase.embed import Embedder, load_embedder
from truthbase.ingest import IngestOptions, ingest_paths
from truthbase.modes import book_tools
from truthbase.segments.index import build_document_segments
from truthbase.segments.tools import FULL_SUMMARIES, RELATED_SEGMENTS
from truthbase.store import SQLiteStore, Store

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT.parent / "shared" / "corpus" / "seed"
BOOK = ROOT.parent / "shared" / "corpus" / "epub" / "pride-and-prejudice-pg1342.epub"

#: Written for this bench from the books' text; not golden questions.
BOOK_QUESTIONS = (
    "What does the housekeeper at Pemberley tell Elizabeth about Mr. Darcy?",
    "Why does Mrs. Bennet send Jane to Netherfield on horseback?",
    "Who reads Fordyce's Sermons aloud to the Bennet sisters?",
    "How does Lady Catherine try to stop Elizabeth from marrying Darcy?",
)
LIBRARY_QUESTIONS = (
    "How does RAPTOR build its tree of summaries?",
    "What are the six functions of the CSF core?",
)


def _timed(runs: int, call: Any) -> dict[str, float]:
    seconds: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - started)
    return {
        "p50_ms": 1000 * statistics.median(seconds),
        "max_ms": 1000 * max(seconds),
        "runs": runs,
    }


def bench_segments(
    store: Store,
    settings: Settings,
    *,
    books: Sequence[Path] = (BOOK,),
    embedder: Embedder | None = None,
    runs: int = 3,
) -> dict[str, Any]:
    """Build every document's segment index (extractive, rebuilt) and time the tools."""
    embedder = embedder or load_embedder(settings.embedder)
    embedder.embed(["warm up the session"])
    present = [Path(p) for p in books if Path(p).is_file()]
    ingest_s = None
    if present:
        started = time.perf_counter()
        ingest_paths(present, store, embedder, IngestOptions.from_settings(settings))
        ingest_s = time.perf_counter() - started
    documents: list[dict[str, Any]] = []
    for info in store.list_documents():
        started = time.perf_counter()
        stored = build_document_segments(
            store, info.id, embedder, settings.segments, settings.llm, kind="extractive"
        )
        seconds = time.perf_counter() - started
        sizes = [sum(p.end - p.start for p in s.parts) for s in stored.segments]
        documents.append(
            {
                "doc_id": info.id,
                "title": info.title,
                "kind": info.kind,
                "units": info.unit_count,
                "segments": len(stored.segments),
                "median_chars": statistics.median(sizes) if sizes else 0,
                "build_s": seconds,
            }
        )
    report: dict[str, Any] = {"books_ingest_s": ingest_s, "documents": documents}
    book = next((d for d in documents if d["title"].startswith("Pride and Prejudice")), None)
    if book is not None:
        tools = book_tools(settings, store, embedder, doc_ids=[book["doc_id"]])
        report["book_full_summaries"] = _timed(runs, lambda: tools.call(FULL_SUMMARIES, {}))
        report["book_related"] = {
            q: _timed(runs, lambda q=q: tools.call(RELATED_SEGMENTS, {"question": q}))
            for q in BOOK_QUESTIONS
        }
    library = book_tools(settings, store, embedder)
    report["library_full_summaries"] = _timed(runs, lambda: library.call(FULL_SUMMARIES, {}))
    report["library_related"] = {
        q: _timed(runs, lambda q=q: library.call(RELATED_SEGMENTS, {"question": q}))
        for q in LIBRARY_QUESTIONS
    }
    return report


def print_segments(report: dict[str, Any]) -> None:
    print("\nsegment index (extractive summaries), build per document:")
    for d in report["documents"]:
        print(
            f"  {d['title'][:48]:48s} {d['kind']:4s} {d['units']:3d} units "
            f"{d['segments']:3d} segments (median {d['median_chars'] / 1000:.1f}k chars) "
            f"{d['build_s']:.2f} s"
        )
    for key in ("book_full_summaries", "library_full_summaries"):
        if key in report:
            t = report[key]
            print(f"  {key}: p50 {t['p50_ms']:.0f} ms, max {t['max_ms']:.0f} ms")
    for key in ("book_related", "library_related"):
        for question, t in report.get(key, {}).items():
            print(f"  {key} {question[:50]!r}: p50 {t['p50_ms']:.0f} ms, max {t['max_ms']:.0f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", type=Path, default=None, help="an index to use (it is written)")
    parser.add_argument("--json", type=Path, default=None, help="write the report here")
    args = parser.parse_args()
    settings = Settings()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.db or Path(tmp) / "segments-bench.sqlite"
        store = SQLiteStore(path)
        try:
            if not store.list_documents():
                ingest_paths(
                    [SEED],
                    store,
                    load_embedder(settings.embedder),
                    IngestOptions.from_settings(settings),
                )
            report = bench_segments(store, settings)
        finally:
            store.close()
    print_segments(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    sys.exit(main())
