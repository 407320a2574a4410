"""Chunking study: chunk size and overlap against quote coverage and retrieval quality.

For every (max_chars, overlap) pair this builds a fresh SQLite index of the golden set's
documents through the real ingest path (``ingest_file`` with ``ChunkingSettings(max_chars,
overlap)``, every other chunking setting at its default: sentence windows, title context, token
signs), then measures on it:

- quote_share: the share of golden evidence quotes (answerable questions whose documents are
  indexed) that lie whole inside at least one stored chunk of their page, by the same hit rule
  the retrieval metrics use (``truthbase.eval.metrics.chunk_contains``);
- the full retrieval eval (``evaluate_retrieval``) with the default ``RetrievalSettings``
  (FTS5 + dense + late interaction + pseudo-relevance feedback, weighted RRF): hybrid, fts and
  dense Recall@1/5/8/15, MRR and nDCG@5;
- the chunk count, mean chunk length, index size on disk and ingest time.

Settings are the code defaults, not ``TRUTHBASE_*`` variables or truthbase.toml, so two runs on
one commit measure the same pipeline. By default only the golden set's PDFs are ingested (the
EPUB novel takes minutes per configuration); questions on documents left out are skipped by
``split_questions`` and counted in the JSON.

    python benchmarks/chunking_study.py --json docs/evals/chunking-study.json
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from truthbase.config import ChunkingSettings, EmbedderSettings, RetrievalSettings
from truthbase.embed import Embedder, load_embedder
from truthbase.eval.golden import GoldenSet, default_corpus_root, load_golden
from truthbase.eval.metrics import RetrievedChunk, chunk_contains
from truthbase.eval.retrieval import (
    PreparedCorpus,
    evaluate_retrieval,
    prepare_corpus,
    split_questions,
)
from truthbase.store import SQLiteStore

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_GOLDEN = ROOT.parent / "shared" / "golden" / "dev.json"
MODES = ("hybrid", "fts", "dense")
KEPT_METRICS = ("recall@1", "recall@5", "recall@8", "recall@15", "mrr", "ndcg@5")

METHOD = (
    "Each configuration is a fresh SQLite index of the golden set's {scope} built by the real "
    "ingest path (ingest_file) with ChunkingSettings(max_chars, overlap) and every other "
    "setting at its code default (sentence windows, title context, token signs). quote_share "
    "is the share of the evidence quotes of the answerable questions on ingested documents "
    "that lie whole inside at least one stored chunk of their page, by the retrieval hit rule "
    "(eval.metrics.chunk_contains). The hybrid/fts/dense metrics are evaluate_retrieval with "
    "the default RetrievalSettings (the final pipeline: FTS5 + dense with window vectors + "
    "late interaction + pseudo-relevance feedback, weighted RRF; see settings). At 800/0.15 "
    "this is the retrieval baseline's pipeline, but its by_kind pdf row can differ a little: "
    "there the EPUBs are indexed too, which changes BM25 statistics and the competing chunks. "
    "ingest_s is the "
    "wall time of ingesting all documents (extract, chunk, embed, store) on a shared machine: "
    "compare it between rows of one run only."
)


def _floats(text: str) -> list[float]:
    return [float(part) for part in text.split(",") if part.strip()]


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def _git(*args: str) -> str | None:
    try:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def stored_chunks(store: SQLiteStore, names: dict[str, str]) -> list[RetrievedChunk]:
    """Every stored chunk as the hit rule sees it (the store has no "all chunks" call: the ids
    come from the SQLite file itself, the chunks from the store like eval's ChunkCache)."""
    with closing(sqlite3.connect(f"file:{store.path}?mode=ro", uri=True)) as db:
        ids = [int(row[0]) for row in db.execute("SELECT id FROM chunks ORDER BY id")]
    return [
        RetrievedChunk(doc=names.get(c.doc_id, c.doc_id), unit=c.unit, text=c.text, href=c.href)
        for c in store.chunks(ids)
    ]


def quote_coverage(
    golden: GoldenSet, prepared: PreparedCorpus, chunks: Sequence[RetrievedChunk]
) -> dict[str, Any]:
    """How many evidence quotes of the runnable questions lie whole inside one chunk."""
    questions, _ = split_questions(golden, prepared)
    total = 0
    inside = 0
    outside: list[dict[str, Any]] = []
    for question in questions:
        for evidence in question.evidence:
            total += 1
            if any(chunk_contains(evidence, chunk) for chunk in chunks):
                inside += 1
            else:
                outside.append(
                    {"id": question.id, "doc": evidence.doc, "page": evidence.page}
                    | ({"section": evidence.section} if evidence.section else {})
                )
    return {
        "quotes_in_one_chunk": inside,
        "quotes": total,
        "quote_share": round(inside / total, 4) if total else None,
        "quotes_split": outside,
    }


def _index_bytes(path: Path) -> int:
    """The SQLite file with its WAL and shared-memory files, if any are left."""
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())


def run_configuration(
    golden: GoldenSet,
    corpus_root: Path,
    embedder: Embedder,
    retrieval: RetrievalSettings,
    db_path: Path,
    max_chars: int,
    overlap: float,
    *,
    pdf_only: bool,
) -> dict[str, Any]:
    for old in db_path.parent.glob(db_path.name + "*"):  # always a fresh index
        old.unlink()
    chunking = ChunkingSettings(max_chars=max_chars, overlap=overlap)
    store = SQLiteStore(db_path)
    try:
        started = time.perf_counter()
        prepared = prepare_corpus(
            golden,
            corpus_root,
            store,
            embedder,
            chunking,
            only_suffixes={".pdf"} if pdf_only else None,
        )
        ingest_s = time.perf_counter() - started
        chunks = stored_chunks(store, prepared.names)
        coverage = quote_coverage(golden, prepared, chunks)
        started = time.perf_counter()
        report = evaluate_retrieval(golden, prepared, store, embedder, retrieval)
        eval_s = time.perf_counter() - started
    finally:
        store.close()
    row: dict[str, Any] = {
        "max_chars": max_chars,
        "overlap": overlap,
        "documents": len(prepared.doc_ids),
        "chunks": len(chunks),
        "mean_chunk_chars": round(statistics.fmean(len(c.text) for c in chunks), 1)
        if chunks
        else 0.0,
        "index_bytes": _index_bytes(db_path),
        "ingest_s": round(ingest_s, 1),
        "eval_s": round(eval_s, 1),
        "questions": report["questions"],
        "skipped_questions": len(report["skipped"]),
        **coverage,
    }
    for mode in MODES:
        row[mode] = {name: round(report["modes"][mode][name], 4) for name in KEPT_METRICS}
    row["hybrid_misses_at_8"] = [miss["id"] for miss in report["misses"]]
    return row


HEADER = (
    f"{'size':>5} {'ovl':>5} {'quotes':>7} {'share':>6} {'hyb@8':>6} {'MRR':>6} {'nDCG5':>6} "
    f"{'fts@8':>6} {'den@8':>6} {'chunks':>6} {'chars':>6} {'MB':>6} {'ingest':>7}"
)


def format_row(row: dict[str, Any]) -> str:
    hybrid = row["hybrid"]
    return (
        f"{row['max_chars']:>5} {row['overlap']:>5.2f} "
        f"{row['quotes_in_one_chunk']:>3}/{row['quotes']:<3} {row['quote_share']:>6.3f} "
        f"{hybrid['recall@8']:>6.3f} {hybrid['mrr']:>6.3f} {hybrid['ndcg@5']:>6.3f} "
        f"{row['fts']['recall@8']:>6.3f} {row['dense']['recall@8']:>6.3f} "
        f"{row['chunks']:>6} {row['mean_chunk_chars']:>6.0f} "
        f"{row['index_bytes'] / 1e6:>6.1f} {row['ingest_s']:>6.0f}s"
    )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes",
        type=_ints,
        default=[400, 600, 800, 1000],
        help="chunk sizes (max_chars), comma-separated [default: 400,600,800,1000]",
    )
    parser.add_argument(
        "--overlaps",
        type=_floats,
        default=[0.15, 0.3],
        help="overlaps (share of a chunk repeated in the next), comma-separated "
        "[default: 0.15,0.3]",
    )
    parser.add_argument(
        "--golden",
        type=Path,
        default=DEFAULT_GOLDEN,
        help="golden set [default: ../shared/golden/dev.json]",
    )
    parser.add_argument(
        "--corpus-root",
        type=Path,
        default=None,
        help="folder the golden document paths are relative to [default: the golden file's "
        "folder's parent]",
    )
    parser.add_argument(
        "--pdf-only",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="ingest only the golden set's PDFs; questions on other documents are skipped "
        "[default: on; --no-pdf-only adds the EPUBs, minutes per configuration]",
    )
    parser.add_argument("--json", type=Path, default=None, help="write the study's JSON here")
    parser.add_argument(
        "--db-dir",
        type=Path,
        default=None,
        help="keep each configuration's index here as chunks-SIZE-OVERLAP.sqlite (replaced "
        "if present) [default: a temporary folder, removed at the end]",
    )
    args = parser.parse_args(argv)
    if not args.sizes or not args.overlaps:
        parser.error("--sizes and --overlaps need at least one value each")
    for size in args.sizes:
        for overlap in args.overlaps:
            try:
                ChunkingSettings(max_chars=size, overlap=overlap)
            except ValueError as exc:
                parser.error(f"max_chars={size}, overlap={overlap}: {exc}")
    if not args.golden.is_file():
        parser.error(f"no golden file at {args.golden}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    golden = load_golden(args.golden)
    corpus_root = args.corpus_root or default_corpus_root(args.golden)
    retrieval = RetrievalSettings()
    embedder = load_embedder(EmbedderSettings())
    embedder.embed(["warm up the session"])  # model load is not ingest time
    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    temporary = tempfile.TemporaryDirectory(prefix="chunking-study-")
    db_dir = args.db_dir or Path(temporary.name)
    db_dir.mkdir(parents=True, exist_ok=True)
    try:
        print(HEADER, flush=True)
        for size in args.sizes:
            for overlap in args.overlaps:
                row = run_configuration(
                    golden,
                    corpus_root,
                    embedder,
                    retrieval,
                    db_dir / f"chunks-{size}-{overlap:g}.sqlite",
                    size,
                    overlap,
                    pdf_only=args.pdf_only,
                )
                rows.append(row)
                print(format_row(row), flush=True)
    finally:
        temporary.cleanup()
    total_s = time.perf_counter() - started
    print(f"{len(rows)} configurations in {total_s / 60:.1f} min", flush=True)
    if args.json is not None:
        golden_name = args.golden.resolve()
        study = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "commit": _git("rev-parse", "HEAD"),
            # others commit often: say whether the measured src/ differed from that commit
            "src_modified": (_git("status", "--porcelain", "--", "src") or "").splitlines(),
            "golden": golden_name.relative_to(corpus_root.resolve()).as_posix()
            if golden_name.is_relative_to(corpus_root.resolve())
            else str(args.golden),
            "questions": rows[0]["questions"] if rows else 0,
            "skipped_questions": rows[0]["skipped_questions"] if rows else 0,
            "documents": "PDFs only (--pdf-only)" if args.pdf_only else "all",
            "method": METHOD.format(scope="PDFs" if args.pdf_only else "documents"),
            "conclusion": "TO BE WRITTEN",
            "run_minutes": round(total_s / 60, 1),
            "settings": {
                "retrieval": retrieval.model_dump(),
                "chunking_defaults": ChunkingSettings().model_dump(),
                "embedder": EmbedderSettings().model_dump(),
            },
            "configurations": rows,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(study, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    sys.exit(main())
