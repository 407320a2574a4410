"""OCR speed: seconds per scanned page at the chosen resolution (and, run alone, at others).

For `make bench`: ``bench_ocr(settings)`` extracts the corpus scans (the three one-page scans and
the five image pages of ocrmypdf-multipage.pdf) with OCR under ``settings.ocr`` and reports per
file the pages read, seconds per page (render, orientation detection, recognition and mapping:
the whole extraction divided by the OCR'd pages), words and mean word confidence. One engine is
opened first and shared, as ``truthbase ingest`` does, so loading the models is not counted.
Run alone: ``python benchmarks/ocr_bench.py [--dpi 200 300 400]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from truthbase.config import OcrSettings, Settings
from truthbase.extract import OcrUnavailable, TesseractEngine, extract_pdf

ROOT = Path(__file__).resolve().parents[1]
ROBUSTNESS = ROOT.parent / "shared" / "corpus" / "robustness"
SCANS = (
    "ocrmypdf-c02-22.pdf",
    "ocrmypdf-linn.pdf",
    "ocrmypdf-rotated_skew.pdf",
    "ocrmypdf-multipage.pdf",
)


def bench_ocr(settings: Settings, corpus: Path = ROBUSTNESS) -> dict[str, Any] | None:
    """Seconds per OCR'd page at ``settings.ocr.dpi``; None without Tesseract or the scans."""
    paths = [corpus / name for name in SCANS if (corpus / name).is_file()]
    if not paths:
        return None
    ocr = settings.ocr
    try:
        engine = TesseractEngine(ocr.languages, ocr.tessdata)
    except OcrUnavailable as exc:
        return {"skipped": str(exc)}
    rows: list[dict[str, Any]] = []
    try:
        for path in paths:
            started = time.perf_counter()
            document = extract_pdf(path, ocr=ocr, engine=engine)
            seconds = time.perf_counter() - started
            read = [u.ocr for u in document.units if u.ocr is not None]
            words = sum(info.words for info in read)
            rows.append(
                {
                    "file": path.name,
                    "pages": len(document.units),
                    "ocr_pages": len(read),
                    "seconds": seconds,
                    "s_per_page": seconds / len(read) if read else None,
                    "words": words,
                    "mean_confidence": (
                        sum(i.mean_confidence * i.words for i in read) / words if words else None
                    ),
                }
            )
    finally:
        engine.close()
    pages = sum(r["ocr_pages"] for r in rows)
    total = sum(r["seconds"] for r in rows)
    return {
        "engine": engine.name,
        "languages": ocr.languages,
        "dpi": ocr.dpi,
        "files": rows,
        "ocr_pages": pages,
        "s_per_page": total / pages if pages else None,
    }


def print_ocr(report: dict[str, Any] | None) -> None:
    if report is None:
        print("\nOCR: no scans found (../shared/corpus/robustness)")
        return
    if "skipped" in report:
        print(f"\nOCR: skipped ({report['skipped']})")
        return
    print(
        f"\nOCR ({report['engine']}, {report['languages']}, {report['dpi']} dpi): "
        f"{report['s_per_page']:.2f} s per page over {report['ocr_pages']} pages"
    )
    print(f"{'file':30} {'pages':>5} {'OCR':>4} {'s/page':>7} {'words':>6} {'conf':>5}")
    for r in report["files"]:
        per_page = f"{r['s_per_page']:.2f}" if r["s_per_page"] is not None else "-"
        conf = f"{r['mean_confidence']:.1f}" if r["mean_confidence"] is not None else "-"
        print(
            f"{r['file']:30} {r['pages']:5d} {r['ocr_pages']:4d} {per_page:>7} "
            f"{r['words']:6d} {conf:>5}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dpi", type=int, nargs="+", default=[OcrSettings().dpi])
    parser.add_argument("--json", type=Path, default=None, help="write the reports here")
    args = parser.parse_args()
    reports = []
    for dpi in args.dpi:
        settings = Settings(ocr=OcrSettings(dpi=dpi))
        report = bench_ocr(settings)
        print_ocr(report)
        reports.append(report)
    if args.json is not None:
        args.json.write_text(json.dumps(reports, indent=2))
    return 0


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    sys.exit(main())
