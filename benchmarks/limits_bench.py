"""The extraction limits, measured in the same run as the extractor (``make bench``'s `limits`
section; also runnable alone: ``python benchmarks/limits_bench.py``).

- bare text: pypdfium2's text of each page (``get_text_range``), no boxes: what bench.py has
  always compared extract+chunk with.
- the char-box limit: every page loaded, its text page built, and for every character its code
  point (FPDFText_GetUnicode) and loose box (FPDFText_GetLooseCharBox) read into Python, in the
  tightest loop pypdfium2.raw allows (untyped calls at the bindings' addresses, one reused
  FS_RECTF: ``truthbase.extract.charread``). Nothing with boxes per character can be faster
  from Python over pdfium.
- the peers a user would pick: pdfminer.six (``extract_pages``: layout analysis with a box per
  character) and pdfplumber (``extract_text`` of each page, which builds its char objects).
- TruthBase's extractor (``extract_pdf``: flags, ligatures, hyphens, NFC, ruled tables, the OCR
  check) on the same pages, as pages/s and as a ratio to the char-box limit.

Each pdfium figure is the best of ``repeats`` runs, interleaved (the machine is shared and noisy),
the peers one run each (they are 10-100x slower).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from truthbase.extract import extract_pdf
from truthbase.extract.charread import handle, raw_calls

_T = TypeVar("_T")
ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT.parent / "shared" / "corpus" / "seed"


def bare_text_seconds(path: Path) -> float:
    started = time.perf_counter()
    document = pdfium.PdfDocument(path)
    for page in document:
        textpage = page.get_textpage()
        textpage.get_text_range()
        textpage.close()
        page.close()
    document.close()
    return time.perf_counter() - started


def charbox_limit_seconds(path: Path) -> tuple[float, int]:
    """Seconds to read every character's code and loose box; and how many characters."""
    calls = raw_calls()
    unicode, loose = calls.get_unicode, calls.loose_box
    started = time.perf_counter()
    document = pdfium.PdfDocument(path)
    total = 0
    rect = pdfium_c.FS_RECTF()
    ref = ctypes.byref(rect)
    for page in document:
        textpage = page.get_textpage()
        h = handle(textpage)
        chars: list[tuple[int, float, float, float, float]] = []
        append = chars.append
        for i in range(int(pdfium_c.FPDFText_CountChars(textpage))):
            code = unicode(h, i)
            loose(h, i, ref)
            append((code, rect.left, rect.bottom, rect.right, rect.top))
        total += len(chars)
        textpage.close()
        page.close()
    document.close()
    return time.perf_counter() - started, total


def extractor_seconds(path: Path) -> float:
    started = time.perf_counter()
    extract_pdf(path)
    return time.perf_counter() - started


# Times extract_pdf of another source tree (``--before``) in a process of its own: a second
# ``truthbase`` cannot be imported beside this one. The import is not timed.
_OTHER_TREE = """
import sys, time
from pathlib import Path
from truthbase.blas import limit_blas_threads
from truthbase.extract import extract_pdf
limit_blas_threads()  # as `truthbase ingest` does
path = Path(sys.argv[1])
extract_pdf(path)  # warm: imports, first pages
cpu, started = time.process_time(), time.perf_counter()
extract_pdf(path)
print(time.perf_counter() - started, time.process_time() - cpu)
"""


def other_tree_seconds(src: Path, path: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one ``extract_pdf(path)`` with the package under ``src`` (after
    a warm-up)."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-c", _OTHER_TREE, str(path)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    wall, cpu = done.stdout.split()[-2:]
    return float(wall), float(cpu)


def _cpu(run: Callable[[Path], _T], path: Path) -> tuple[_T, float]:
    """``run(path)`` and the CPU seconds it took (this process; the timers measure wall time)."""
    started = time.process_time()
    result = run(path)
    return result, time.process_time() - started


def pdfminer_seconds(path: Path) -> float:
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LTChar, LTContainer

    def walk(item: Any) -> int:
        if isinstance(item, LTChar):
            _ = item.bbox
            return 1
        if isinstance(item, LTContainer):
            return sum(walk(child) for child in item)
        return 0

    started = time.perf_counter()
    for page in extract_pages(path):
        walk(page)
    return time.perf_counter() - started


def pdfplumber_seconds(path: Path) -> float:
    import pdfplumber

    started = time.perf_counter()
    with pdfplumber.open(path) as pdf:
        for page in pdf.pages:
            page.extract_text()
            page.close()
    return time.perf_counter() - started


def _pages(paths: list[Path]) -> int:
    total = 0
    for path in paths:
        document = pdfium.PdfDocument(path)
        total += len(document)
        document.close()
    return total


def bench_limits(
    paths: list[Path], repeats: int = 3, peers: bool = True, before: Path | None = None
) -> dict[str, Any]:
    """The limits and the extractor on ``paths``, interleaved file by file; with ``before``
    (the ``src`` folder of another tree), that tree's extractor in the same rounds."""
    pages = _pages(paths)
    best: dict[str, float] = {"bare_text": 0.0, "charbox_limit": 0.0, "extractor": 0.0}
    if before is not None:
        best["extractor_before"] = 0.0
    # CPU seconds beside wall seconds: on a machine shared with other work the wall time
    # includes waiting for a core, the CPU time much less so.
    best_cpu: dict[str, float] = dict.fromkeys(best, 0.0)
    chars = 0
    for path in paths:
        runs: dict[str, list[float]] = {name: [] for name in best}
        cpu_runs: dict[str, list[float]] = {name: [] for name in best}
        for _ in range(repeats):
            wall, cpu = _cpu(bare_text_seconds, path)
            runs["bare_text"].append(wall)
            cpu_runs["bare_text"].append(cpu)
            (seconds, count), cpu = _cpu(charbox_limit_seconds, path)
            runs["charbox_limit"].append(seconds)
            cpu_runs["charbox_limit"].append(cpu)
            wall, cpu = _cpu(extractor_seconds, path)
            runs["extractor"].append(wall)
            cpu_runs["extractor"].append(cpu)
            if before is not None:
                wall, cpu = other_tree_seconds(before, path)
                runs["extractor_before"].append(wall)
                cpu_runs["extractor_before"].append(cpu)
        chars += count
        for name, values in runs.items():
            best[name] += min(values)
            best_cpu[name] += min(cpu_runs[name])
    measured: dict[str, float] = dict(best)
    if peers:
        timers: dict[str, Callable[[Path], float]] = {
            "pdfminer_six": pdfminer_seconds,
            "pdfplumber": pdfplumber_seconds,
        }
        for name, timer in timers.items():
            measured[name] = sum(timer(path) for path in paths)
    limit = measured["charbox_limit"]
    return {
        "files": [path.name for path in paths],
        "pages": pages,
        "chars": chars,
        "repeats": repeats,
        "seconds": measured,
        "pages_per_s": {name: pages / s for name, s in measured.items() if s},
        "ratio_to_charbox_limit": {name: s / limit for name, s in measured.items()},
        "cpu_seconds": best_cpu,
        "cpu_pages_per_s": {name: pages / s for name, s in best_cpu.items() if s},
        "cpu_ratio_to_charbox_limit": {
            name: s / best_cpu["charbox_limit"] for name, s in best_cpu.items()
        },
    }


def extract_ratio(ingest_extract_s: float, ingest_pages: int, limits: dict[str, Any]) -> float:
    """An ingest run's extraction time as a multiple of the char-box limit for as many pages
    (the ingest may have read other files than the limits)."""
    per_page = limits["seconds"]["charbox_limit"] / limits["pages"]
    return ingest_extract_s / (per_page * ingest_pages)


def print_limits(report: dict[str, Any]) -> None:
    print(
        f"\nExtraction limits on {len(report['files'])} PDFs, {report['pages']} pages, "
        f"{report['chars']} characters (best of {report['repeats']} for pdfium)"
    )
    print(f"{'':34} {'pages/s':>8} {'x char-box limit':>17} {'CPU pages/s':>12} {'x limit':>8}")
    names = {
        "bare_text": "pypdfium2 text only (no boxes)",
        "charbox_limit": "char-box limit (raw API)",
        "extractor": "TruthBase extract_pdf",
        "extractor_before": "TruthBase extract_pdf (--before)",
        "pdfminer_six": "pdfminer.six extract_pages",
        "pdfplumber": "pdfplumber extract_text",
    }
    cpu = report.get("cpu_pages_per_s", {})
    cpu_ratio = report.get("cpu_ratio_to_charbox_limit", {})
    for key, label in names.items():
        if key in report["pages_per_s"]:
            line = (
                f"{label:34} {report['pages_per_s'][key]:8.1f} "
                f"{report['ratio_to_charbox_limit'][key]:17.2f}"
            )
            if key in cpu:
                line += f" {cpu[key]:12.1f} {cpu_ratio[key]:8.2f}"
            print(line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=SEED, help="folder of PDFs")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-peers", dest="peers", action="store_false")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--before", type=Path, help="the src folder of another tree: its extract_pdf too"
    )
    args = parser.parse_args()
    paths = sorted(args.corpus.glob("*.pdf"))
    if not paths:
        print(f"no PDFs under {args.corpus}", file=sys.stderr)
        return 2
    report = bench_limits(paths, args.repeats, args.peers, args.before)
    print_limits(report)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    sys.exit(main())
