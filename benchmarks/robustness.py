"""Issue 14, item 5: every file of the robustness corpus through ingest, one by one, into one
SQLite index; a table per file of pages, text source, language, chunks and seconds, or the
reason it failed.

    python benchmarks/robustness.py [--corpus DIR] [--db PATH] [--out docs/evals/robustness.md]

The default embedder (what `truthbase ingest` uses) embeds, so seconds are ingest's own; the
language column shows each unit's ``language`` where the extractor records one (language
detection, issue 14 item 3), else "-".
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from truthbase.config import Settings
from truthbase.embed import load_embedder
from truthbase.ingest import IngestOptions, ingest_file
from truthbase.store import SQLiteStore

ROOT = Path(__file__).resolve().parents[1]
ROBUSTNESS = ROOT.parent / "shared" / "corpus" / "robustness"


def run(corpus: Path, db: Path, settings: Settings) -> list[dict[str, Any]]:
    embedder = load_embedder(settings.embedder)
    embedder.embed(["warm up the session"])
    rows: list[dict[str, Any]] = []
    store = SQLiteStore(db)
    try:
        for path in sorted(corpus.glob("*.pdf")):
            started = time.perf_counter()
            outcome = ingest_file(path, store, embedder, IngestOptions.from_settings(settings))
            seconds = time.perf_counter() - started
            row: dict[str, Any] = {
                "file": path.name,
                "status": outcome.status,
                "seconds": round(seconds, 2),
                "reason": outcome.reason,
            }
            if outcome.status != "failed" and outcome.doc_id is not None:
                info = store.document(outcome.doc_id)
                pages = info.unit_count if info else 0
                units = [store.unit(outcome.doc_id, i) for i in range(pages)]
                sources = Counter(u.text_source for u in units if u is not None)
                languages = Counter(
                    str(lang)
                    for u in units
                    if u is not None and (lang := getattr(u, "language", None))
                )
                confidences = [u.ocr.mean_confidence for u in units if u and u.ocr]
                row.update(
                    pages=pages,
                    chunks=info.chunk_count if info else 0,
                    text_source=", ".join(f"{k} {v}" for k, v in sorted(sources.items())),
                    language=", ".join(f"{k} {v}" for k, v in languages.most_common()) or "-",
                    ocr_confidence=(
                        round(sum(confidences) / len(confidences), 1) if confidences else None
                    ),
                    warnings=len(outcome.warnings),
                )
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        store.close()
    return rows


def markdown(rows: list[dict[str, Any]], settings: Settings) -> str:
    lines = [
        "# Robustness corpus through ingest",
        "",
        "Every file of `../shared/corpus/robustness`, ingested one by one into one SQLite index "
        "by `python benchmarks/robustness.py` (default settings: OCR on, "
        f"`{settings.ocr.languages}` at {settings.ocr.dpi} dpi, embedder "
        f"`{settings.embedder.name}`). Text source counts pages by how their text was made "
        "(`pdf`: the text layer, `ocr`: "
        "Tesseract); OCR conf is the mean word confidence of the OCR'd pages; seconds are the "
        "whole ingest of the file (extract, OCR, chunk, embed, store) on a shared 2-core machine.",
        "",
        "| file | result | pages | text source | language | OCR conf | chunks | seconds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r["status"] == "failed":
            lines.append(
                f"| `{r['file']}` | failed: `{r['reason']}` | | | | | | {r['seconds']:.2f} |"
            )
            continue
        conf = f"{r['ocr_confidence']:.1f}" if r.get("ocr_confidence") is not None else ""
        lines.append(
            f"| `{r['file']}` | {r['status']} | {r['pages']} | {r['text_source']} | "
            f"{r['language']} | {conf} | {r['chunks']} | {r['seconds']:.2f} |"
        )
    failed = Counter(r["reason"] for r in rows if r["status"] == "failed")
    lines += [
        "",
        f"{sum(r['status'] == 'ingested' for r in rows)} of {len(rows)} files ingested; failed: "
        + (", ".join(f"{k} {v}" for k, v in sorted(failed.items())) or "none")
        + ". The encrypted files open with their passwords (MANIFEST.md), which `truthbase "
        "ingest` does not take.",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=ROBUSTNESS)
    parser.add_argument("--db", type=Path, default=None, help="index file (default: a temp one)")
    parser.add_argument("--out", type=Path, default=None, help="write the Markdown table here")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"no corpus at {args.corpus}", file=sys.stderr)
        return 2
    settings = Settings()
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or Path(tmp) / "robustness.sqlite"
        rows = run(args.corpus, db, settings)
    text = markdown(rows, settings)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, "utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    sys.exit(main())
