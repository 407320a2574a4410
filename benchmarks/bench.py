"""`make bench`: ingestion speed per stage on the seed PDFs, search latency, OCR seconds per page,
upload-to-searchable time of a 32-page PDF through the server.

Ratios are measured in one run (this machine is shared and noisy): extract+chunk against bare
pypdfium2 text extraction of the same pages.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

# Sibling benchmark modules (this script runs as `python benchmarks/bench.py`).
from agent_bench import bench_agent, print_agent
from answer_latency import bench_answer_gap, print_answer_gap
from embed_bench import bench_embedding, bench_ingest_process, print_embedding
from frontend_bench import bench_viewer, print_viewer
from ingest_workers_bench import bench_workers, print_workers
from lighthouse_bench import bench_lighthouse, print_lighthouse
from limits_bench import bare_text_seconds, bench_limits, extract_ratio, print_limits
from memory_bench import BOOK, LIBRARY, bench_memory, largest_document, print_memory
from ocr_bench import bench_ocr, print_ocr
from scale_bench import DEFAULT_DOCS, bench_scale, print_scale
from search_bench import bench_server, print_server
from segments_bench import bench_segments, print_segments
from upload_latency import bench_upload_latency, print_upload_latency

from truthbase.config import Settings
from truthbase.embed import DEFAULT_MODEL_ID as MODEL_ID
from truthbase.embed import load_embedder
from truthbase.eval.golden import load_golden
from truthbase.extract import extract_path
from truthbase.ingest import IngestOptions, StageTimes, index_document, write_document
from truthbase.model import ChunkDraft, ExtractedDocument, Unit
from truthbase.records import IndexedDocument, IndexEmbedder
from truthbase.retrieve.hybrid import search
from truthbase.store import SQLiteStore

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT.parent / "shared" / "corpus" / "seed"
GOLDEN = ROOT.parent / "shared" / "golden" / "dev.json"


def bench_ingest(paths: list[Path], store: SQLiteStore, settings: Settings) -> dict[str, Any]:
    embedder = load_embedder(settings.embedder)
    embedder.embed(["warm up the session"])
    rows: list[dict[str, Any]] = []
    for path in paths:
        bare = min(bare_text_seconds(path) for _ in range(3))
        times = StageTimes()
        started = time.perf_counter()
        document = extract_path(path)
        times.extract = time.perf_counter() - started
        options = IngestOptions.from_settings(settings)
        indexed = index_document(document, embedder, options, screen=None, times=times)
        store_started = time.perf_counter()
        write_document(store, indexed)
        times.store = time.perf_counter() - store_started
        drafts = indexed.chunks
        rows.append(
            {
                "file": path.name,
                "pages": len(document.units),
                "chunks": len(drafts),
                "extract_s": times.extract,
                "chunk_s": times.chunk,
                "embed_s": times.embed,
                "store_s": times.store,
                "bare_pdfium_s": bare,
            }
        )
    pages = sum(r["pages"] for r in rows)
    totals = {
        key: sum(r[key] for r in rows)
        for key in ("extract_s", "chunk_s", "embed_s", "store_s", "bare_pdfium_s")
    }
    return {
        "files": rows,
        "pages": pages,
        "chunks": sum(r["chunks"] for r in rows),
        "pages_per_s": {
            stage: pages / totals[f"{stage}_s"] if totals[f"{stage}_s"] else None
            for stage in ("extract", "chunk", "embed", "store", "bare_pdfium")
        },
        "ratio_extract_chunk_to_bare_pdfium": (totals["extract_s"] + totals["chunk_s"])
        / totals["bare_pdfium_s"],
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench_latency(
    store: SQLiteStore, queries: list[str], settings: Settings, repeats: int = 3
) -> dict[str, Any]:
    """Hybrid query latency, and the share of each stage of the total.

    fts: the full-text arm; dense: embedding the query (and its token vectors) plus exact
    cosine; late: loading the candidates' token signs and MaxSim; feedback: the
    pseudo-relevance feedback query; fusion: RRF and loading the result chunks. The shares are of
    the wall time around search(), so what they leave is the glue between stages.
    """
    embedder = load_embedder(settings.embedder)
    search(store, embedder, queries[0], settings.retrieval)  # loads the vector matrix
    totals: list[float] = []
    stage = {"fts": 0.0, "dense": 0.0, "late": 0.0, "feedback": 0.0, "fusion": 0.0}
    for _ in range(repeats):
        for query in queries:
            started = time.perf_counter()
            result = search(store, embedder, query, settings.retrieval)
            totals.append(time.perf_counter() - started)
            stage["fts"] += result.timings.fts
            stage["dense"] += result.timings.embed + result.timings.dense
            stage["late"] += result.timings.late
            stage["feedback"] += result.timings.feedback
            stage["fusion"] += result.timings.fuse
    whole = sum(totals)
    return {
        "queries": len(totals),
        "p50_ms": 1000 * _percentile(totals, 0.5),
        "p95_ms": 1000 * _percentile(totals, 0.95),
        "share": {name: value / whole for name, value in stage.items()},
    }


def bench_answer_latency(
    store: SQLiteStore, questions: list[str], settings: Settings
) -> dict[str, Any]:
    """Time to the `sources` event and to the first token, extractive answerer."""
    from truthbase.answer import answer_question
    from truthbase.answer.model import SourcesEvent, TokenEvent

    embedder = load_embedder(settings.embedder)
    to_sources: list[float] = []
    to_token: list[float] = []
    for question in questions:
        started = time.perf_counter()
        seen_sources = seen_token = False
        for event in answer_question(store, embedder, question, settings.retrieval):
            if isinstance(event, SourcesEvent) and not seen_sources:
                to_sources.append(time.perf_counter() - started)
                seen_sources = True
            if isinstance(event, TokenEvent) and not seen_token:
                to_token.append(time.perf_counter() - started)
                seen_token = True
    return {
        "questions": len(questions),
        "sources_p50_ms": 1000 * _percentile(to_sources, 0.5),
        "first_token_p50_ms": 1000 * _percentile(to_token, 0.5) if to_token else None,
        "answers_with_tokens": len(to_token),
    }


def synthetic_store(path: Path, chunks: int, dim: int, seed: int = 7) -> SQLiteStore:
    """An index of generated text, random unit vectors and random token signs (140 tokens a
    chunk, about an 800-character chunk's): enough to time the arms at scale."""
    rng = np.random.default_rng(seed)
    vocabulary = [f"w{i}" for i in range(20_000)]
    weights = 1.0 / np.arange(1, len(vocabulary) + 1)  # Zipf-like term frequencies
    weights /= weights.sum()
    store = SQLiteStore(path)
    per_doc = 1_000
    for d in range(chunks // per_doc):
        words = rng.choice(len(vocabulary), size=(per_doc, 120), p=weights)
        texts = [" ".join(vocabulary[w] for w in row) for row in words]
        unit = Unit(index=0, text="synthetic", boxes=[None] * 9)
        document = ExtractedDocument(
            sha256=f"synthetic-{d}",
            title=f"synthetic {d}",
            path=f"synthetic-{d}",
            kind="pdf",
            units=[unit],
            extractor_version="synthetic",
        )
        drafts = [ChunkDraft(unit=0, start=0, end=9, text=t, rects=()) for t in texts]
        vectors = rng.standard_normal((per_doc, dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        signs = [rng.bytes(140 * ((dim + 7) // 8)) for _ in range(per_doc)]
        store.add_document(
            IndexedDocument(
                document=document,
                chunks=drafts,
                vectors=vectors,
                embedder=IndexEmbedder(model_id=MODEL_ID, dim=dim),
                token_signs=signs,
            )
        )
    return store


def print_ingest(report: dict[str, Any]) -> None:
    print(
        f"\nIngestion of {len(report['files'])} seed PDFs, {report['pages']} pages, "
        f"{report['chunks']} chunks"
    )
    print(
        f"{'file':28} {'pages':>5} {'extract s':>10} {'chunk s':>8} {'embed s':>8} "
        f"{'store s':>8} {'bare s':>7}"
    )
    for r in report["files"]:
        print(
            f"{r['file']:28} {r['pages']:5d} {r['extract_s']:10.2f} {r['chunk_s']:8.3f} "
            f"{r['embed_s']:8.2f} {r['store_s']:8.3f} {r['bare_pdfium_s']:7.3f}"
        )
    print(
        "pages/s: "
        + ", ".join(
            f"{stage} {value:.1f}" for stage, value in report["pages_per_s"].items() if value
        )
    )
    print(
        f"extract+chunk / bare pypdfium2 text extraction: "
        f"{report['ratio_extract_chunk_to_bare_pdfium']:.1f}x"
    )
    print(f"peak RSS: {report['peak_rss_mib']:.0f} MiB")


def print_latency(title: str, report: dict[str, Any]) -> None:
    share = ", ".join(f"{k} {100 * v:.0f}%" for k, v in report["share"].items())
    print(
        f"{title}: p50 {report['p50_ms']:.1f} ms, p95 {report['p95_ms']:.1f} ms "
        f"over {report['queries']} queries; share of total: {share}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=SEED, help="folder of PDFs")
    parser.add_argument("--golden", type=Path, default=GOLDEN, help="questions to time")
    parser.add_argument("--synthetic", type=int, default=100_000, help="chunks, 0 to skip")
    parser.add_argument(
        "--no-books",
        dest="books",
        action="store_false",
        help="skip the segment index and agent-mode timings (they ingest an EPUB book)",
    )
    parser.add_argument("--json", type=Path, default=ROOT / "var" / "bench.json", help="output")
    parser.add_argument(
        "--scale-docs",
        type=int,
        nargs="*",
        default=list(DEFAULT_DOCS),
        help="documents at each point of the scale curve (none: skip; 1000 takes long)",
    )
    parser.add_argument(
        "--workers", type=int, nargs="*", default=[1, 2, 4], help="ingest workers to time"
    )
    parser.add_argument(
        "--no-largest",
        dest="largest",
        action="store_false",
        help="skip the memory of the library's longest document (lwarp.pdf: ~15 min loaded)",
    )
    args = parser.parse_args()
    paths = sorted(args.corpus.glob("*.pdf"))
    if not paths:
        print(f"no PDFs under {args.corpus}", file=sys.stderr)
        return 2
    settings = Settings()
    report: dict[str, Any] = {}
    queries = [q.question for q in load_golden(args.golden).questions]
    report["embedding"] = bench_embedding(paths[:1], settings)  # the limit, in the same run
    print_embedding(report["embedding"])
    report["ingest_process"] = {"seed": bench_ingest_process(paths)}
    print(f"ingest of the seed PDFs in its own process: {report['ingest_process']['seed']}")
    largest = largest_document(LIBRARY) if args.largest and LIBRARY.is_dir() else None
    # peak RSS by stage: the seed, a book, and the library's longest document in the same run
    report["memory"] = bench_memory(paths, BOOK if args.books else None, largest)
    print_memory(report["memory"])
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "bench.sqlite")
        report["ingest"] = bench_ingest(paths, store, settings)
        print_ingest(report["ingest"])
        # The limits of item "measured against the bare libraries", and ingest's extraction as
        # a multiple of the char-box limit.
        report["limits"] = bench_limits(paths)
        print_limits(report["limits"])
        ingest = report["ingest"]
        ingest["extract_ratio_to_charbox_limit"] = extract_ratio(
            sum(r["extract_s"] for r in ingest["files"]), ingest["pages"], report["limits"]
        )
        print(
            "ingest's extraction / the char-box limit: "
            f"{ingest['extract_ratio_to_charbox_limit']:.2f}x"
        )
        report["latency_seed"] = bench_latency(store, queries, settings)
        print_latency(
            f"\nhybrid search, seed corpus ({store.counts()['chunks']} chunks)",
            report["latency_seed"],
        )
        report["answer_latency"] = bench_answer_latency(store, queries[:20], settings)
        answer = report["answer_latency"]
        print(
            f"answers (extractive), {answer['questions']} questions: time to sources p50 "
            f"{answer['sources_p50_ms']:.0f} ms, to first token p50 "
            f"{answer['first_token_p50_ms'] or float('nan'):.0f} ms"
        )
        report["answer_gap"] = bench_answer_gap(store, queries[:20], settings)
        print_answer_gap(report["answer_gap"])
        spans = []
        for query in queries[:21]:
            hits = search(store, load_embedder(settings.embedder), query, settings.retrieval, k=1)
            for hit in hits.hits:
                c = hit.chunk
                spans.append({"doc": c.doc_id, "page": c.unit + 1, "start": c.start, "end": c.end})
        store.close()
        # The chat page in Chromium: citations opened until highlighted, and Lighthouse.
        report["viewer"] = bench_viewer(Path(tmp) / "bench.sqlite", queries[:11], spans)
        print_viewer(report["viewer"])
        report["lighthouse"] = bench_lighthouse(Path(tmp) / "bench.sqlite")
        print_lighthouse(report["lighthouse"])
        report["ocr"] = bench_ocr(settings)
        print_ocr(report["ocr"])
        report["upload_latency"] = bench_upload_latency(args.corpus / "nist-csf-2.0.pdf")
        print_upload_latency(report["upload_latency"])
        if args.books:
            # The segment index over the seed PDFs plus Pride and Prejudice (ingested here), then
            # agent-mode latency with the extractive agent on that book.
            store = SQLiteStore(Path(tmp) / "bench.sqlite")
            report["segments"] = bench_segments(store, settings)
            print_segments(report["segments"])
            report["agent"] = bench_agent(store, settings)
            print_agent(report["agent"])
            store.close()
        if args.synthetic:
            started = time.perf_counter()
            synthetic = synthetic_store(Path(tmp) / "synthetic.sqlite", args.synthetic, 384)
            built = time.perf_counter() - started
            rng = np.random.default_rng(3)
            words = [" ".join(f"w{w}" for w in rng.integers(0, 5_000, 6)) for _ in range(40)]
            report["latency_synthetic"] = {
                "chunks": args.synthetic,
                "build_s": built,
                **bench_latency(synthetic, words, settings, repeats=1),
            }
            print_latency(
                f"hybrid search, synthetic index ({args.synthetic} chunks, built in {built:.0f} s)",
                report["latency_synthetic"],
            )
            synthetic.close()
            report["server_synthetic"] = bench_server(Path(tmp) / "synthetic.sqlite")
            print_server(args.synthetic, report["server_synthetic"])
    if args.workers:
        report["workers"] = bench_workers(args.workers, args.corpus)
        print_workers(report["workers"])
    if args.scale_docs:
        report["scale"] = bench_scale(args.scale_docs, corpus=args.corpus)
        print_scale(report["scale"])
    report["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of the whole run: {report['peak_rss_mib']:.0f} MiB")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2))
    print(f"\nwritten: {args.json}")
    return 0


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    sys.exit(main())
