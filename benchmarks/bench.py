"""`make bench`: ingestion speed per stage on the seed PDFs, and search latency.

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

import pypdfium2 as pdfium

from truthbase.chunking import chunk_units
from truthbase.config import Settings
from truthbase.embed import load_embedder
from truthbase.extract import extract_path
from truthbase.ingest import sha256_file
from truthbase.store import IndexEmbedder, SQLiteStore

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT.parent / "shared" / "corpus" / "seed"


def bare_pdfium_seconds(path: Path) -> float:
    started = time.perf_counter()
    document = pdfium.PdfDocument(path)
    for page in document:
        textpage = page.get_textpage()
        textpage.get_text_range()
        textpage.close()
        page.close()
    document.close()
    return time.perf_counter() - started


def bench_ingest(paths: list[Path]) -> dict[str, Any]:
    settings = Settings()
    embedder = load_embedder(settings.embedder)
    embedder.embed(["warm up the session"])
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "bench.sqlite")
        for path in paths:
            bare = min(bare_pdfium_seconds(path) for _ in range(3))
            t0 = time.perf_counter()
            document = extract_path(path)
            t1 = time.perf_counter()
            drafts = chunk_units(
                document.units,
                max_chars=settings.chunking.max_chars,
                overlap=settings.chunking.overlap,
            )
            t2 = time.perf_counter()
            vectors = embedder.embed([d.text for d in drafts])
            t3 = time.perf_counter()
            store.add_document(
                document,
                drafts,
                vectors,
                IndexEmbedder(model_id=embedder.model_id, dim=embedder.dim),
            )
            t4 = time.perf_counter()
            pages = len(document.units)
            rows.append(
                {
                    "file": path.name,
                    "pages": pages,
                    "chunks": len(drafts),
                    "extract_s": t1 - t0,
                    "chunk_s": t2 - t1,
                    "embed_s": t3 - t2,
                    "store_s": t4 - t3,
                    "bare_pdfium_s": bare,
                    "sha256": sha256_file(path)[:12],
                }
            )
        store.close()
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=SEED, help="folder of PDFs")
    parser.add_argument("--json", type=Path, default=ROOT / "var" / "bench.json", help="output")
    args = parser.parse_args()
    paths = sorted(args.corpus.glob("*.pdf"))
    if not paths:
        print(f"no PDFs under {args.corpus}", file=sys.stderr)
        return 2
    report = {"ingest": bench_ingest(paths)}
    print_ingest(report["ingest"])
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2))
    print(f"\nwritten: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
