"""The capabilities baseline: `eval retrieval` and extractive `eval answers` on
golden/capabilities-dev.json, written as one file for the gate (tests/integration/
test_capabilities_gate.py).

Builds a fresh SQLite index of the set's documents (or reuses ``--db``) with the default
settings, runs both evaluations as the gate does, and writes ``{"retrieval": ..., "answers":
...}`` with the commit, the date and how long each step took (``seconds``: ingest, retrieval,
answers; wall time on a shared machine, for orientation only).

    PYTHONPATH=src .venv/bin/python benchmarks/capabilities_baseline.py \\
        --json docs/evals/capabilities-baseline.json
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from truthbase.cli.common import run_metadata
from truthbase.config import Settings
from truthbase.embed import load_embedder
from truthbase.eval.answers import evaluate_answers
from truthbase.eval.golden import default_corpus_root, load_golden
from truthbase.eval.retrieval import evaluate_retrieval, prepare_corpus
from truthbase.store import SQLiteStore

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_GOLDEN = ROOT.parent / "shared" / "golden" / "capabilities-dev.json"


def measure(golden_path: Path, db: Path) -> dict[str, Any]:
    settings = Settings()
    embedder = load_embedder(settings.embedder)
    golden = load_golden(golden_path)
    store = SQLiteStore(db)
    try:
        started = time.perf_counter()
        prepared = prepare_corpus(
            golden, default_corpus_root(golden_path), store, embedder, settings.chunking
        )
        ingested = time.perf_counter()
        retrieval = evaluate_retrieval(golden, prepared, store, embedder, settings.retrieval)
        retrieved = time.perf_counter()
        answers = evaluate_answers(golden, prepared, store, embedder, settings.retrieval)
        answered = time.perf_counter()
    finally:
        store.close()
    return {
        **run_metadata(),
        "golden": str(golden_path),
        "seconds": {
            "ingest": round(ingested - started, 1),
            "retrieval": round(retrieved - ingested, 1),
            "answers": round(answered - retrieved, 1),
        },
        "retrieval": retrieval,
        "answers": answers,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--golden", type=Path, default=DEFAULT_GOLDEN)
    parser.add_argument("--db", type=Path, default=None, help="An index to reuse [default: new]")
    parser.add_argument("--json", type=Path, required=True, help="Where to write the baseline")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db = args.db if args.db is not None else Path(folder) / "capabilities.sqlite"
        report = measure(args.golden, db)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    retrieval, answers = report["retrieval"], report["answers"]
    for tag, rows in retrieval.get("by_capability", {}).items():
        hybrid = rows["hybrid"]
        row = answers["by_capability"].get(tag, {})
        print(
            f"{tag} ({int(rows['n'])}): hybrid recall@8 {hybrid['recall@8']:.3f} mrr "
            f"{hybrid['mrr']:.3f}, fts recall@8 {rows['fts']['recall@8']:.3f}, dense recall@8 "
            f"{rows['dense']['recall@8']:.3f}; answered with a correct citation "
            f"{row.get('answered_with_correct_citation', 0.0):.3f}"
            + (f", cells held {row['cells_held']:.3f}" if "cells_held" in row else "")
        )
    print(f"seconds: {report['seconds']}; written: {args.json}")


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    main()
