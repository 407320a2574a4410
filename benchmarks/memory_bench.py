"""`make bench`, memory section: where an ingest process's peak RSS comes from.

Each figure is taken in a fresh process (peak RSS is per process):

- ingest: ``ingest_paths`` over the files (the seed corpus; an EPUB book alone; the library's
  longest document alone, whose peak must not grow with its pages: issue 28 item 3), its peak
  RSS (VmHWM: after exec ``ru_maxrss`` starts at the forking bench process's peak) and the
  highest RSS seen in each stage (sampled every 10 ms): imports, the embedding session loaded,
  extraction, chunking (the language model is loaded there), the chunks' and the windows'
  embedding, the store (a long document's batches are embedded inside it);
- one onnxruntime call: the RSS a call of ``rows x length`` tokens adds, run twice (the second
  call of a shape is the one memory patterns double), with and without memory patterns;
- throughput: ingest's embedding (chunks with token vectors, then the windows) of one document
  under each cap on padded tokens per call, the configurations interleaved round by round in one
  process so that a shared machine's load falls on all of them alike.

Run alone: ``python benchmarks/memory_bench.py [--book EPUB] [--largest PDF | --no-largest]
[PDF ...]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT.parent / "shared" / "corpus" / "seed"
BOOK = ROOT.parent / "shared" / "corpus" / "epub" / "pride-and-prejudice-pg1342.epub"
LIBRARY = ROOT.parent / "shared" / "corpus" / "library"
#: Issue 28 item 3: the library's longest document (lwarp.pdf, 1,370 pages) ingests within this.
LARGEST_GOAL_MB = 450

_INGEST_CHILD = r"""
import json, resource, sys, tempfile, threading, time
from pathlib import Path
import psutil
process = psutil.Process()
stage = ["imports"]
peaks = {}
done = threading.Event()
def sample():
    while not done.is_set():
        rss = process.memory_info().rss / 2**20
        peaks[stage[0]] = max(peaks.get(stage[0], 0.0), rss)
        time.sleep(0.01)
threading.Thread(target=sample, daemon=True).start()
from truthbase import ingest
from truthbase.ingest import embedding, preparation
from truthbase.config import Settings
from truthbase.embed import load_embedder
from truthbase.store import SQLiteStore
def staged(name, function):
    def run(*args, **kwargs):
        before, stage[0] = stage[0], name
        try:
            return function(*args, **kwargs)
        finally:
            stage[0] = before
    return run
from truthbase.heap import fix_mmap_threshold
settings = Settings()
stage[0] = "session"
fix_mmap_threshold()  # as `truthbase ingest` does
embedder = load_embedder(settings.embedder)
embedder.embed(["warm up"])
stage[0] = "between"
preparation.extract_path = staged("extract", preparation.extract_path)
embedding.assign_languages = staged("languages", embedding.assign_languages)
embedding.chunk_units = staged("chunk", embedding.chunk_units)
embedding._embed_chunks = staged("embed_chunks", embedding._embed_chunks)
embedding._embed_distinct = staged("embed_windows", embedding._embed_distinct)
with tempfile.TemporaryDirectory() as tmp:
    store = SQLiteStore(Path(tmp) / "m.sqlite")
    store.add_document = staged("store", store.add_document)
    started = time.perf_counter()
    summary = ingest.ingest_paths([Path(p) for p in sys.argv[1:]], store, embedder,
                                  ingest.IngestOptions.from_settings(settings))
    seconds = time.perf_counter() - started
    store.close()
done.set()
print(json.dumps({
    "files": [p.split("/")[-1] for p in sys.argv[1:]],
    "seconds": seconds,
    "pages": sum(o.pages for o in summary.outcomes),
    "chunks": sum(o.chunks for o in summary.outcomes),
    "failed": [o.path.name for o in summary.failed],
    # VmHWM, this process's own peak: ru_maxrss after exec starts at the forking parent's
    "peak_rss_mib": float(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) / 1024,
    "stage_peak_rss_mib": {k: round(v, 1) for k, v in peaks.items()},
}))
"""

_CALL_CHILD = r"""
import json, resource, sys
import numpy as np, onnxruntime as ort, psutil
from truthbase.embed._onnx import bundled_model_files
process = psutil.Process()
rows, length, pattern = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
options = ort.SessionOptions()
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
options.enable_mem_pattern = pattern
options.log_severity_level = 3
session = ort.InferenceSession(str(bundled_model_files()[0]), sess_options=options,
                               providers=["CPUExecutionProvider"])
before = process.memory_info().rss / 2**20
ids = np.ones((rows, length), dtype=np.int64)
feeds = {"input_ids": ids, "attention_mask": ids, "token_type_ids": 0 * ids}
after = []
for _ in range(2):
    session.run(["last_hidden_state"], feeds)
    after.append(process.memory_info().rss / 2**20 - before)
status = open("/proc/self/status").read()  # VmHWM: ru_maxrss would start at the parent's peak
peak = float(status.split("VmHWM:")[1].split()[0]) / 1024
print(json.dumps({"rows": rows, "length": length, "mem_pattern": pattern,
                  "session_mib": round(before, 1),
                  "added_mib": [round(a, 1) for a in after],
                  "peak_added_mib": round(peak - before, 1)}))
"""

_THROUGHPUT_CHILD = r"""
import json, sys, time
from pathlib import Path
import numpy as np
from truthbase.ingest import embedding as ingest
from truthbase.chunking import chunk_units
from truthbase.config import Settings
from truthbase.embed._onnx import default_embedder
import truthbase.embed._onnx as onnx
from truthbase.extract import extract_path
from truthbase.text.language import assign_languages
from truthbase.ingest.windows import chunk_windows, context_text, with_context
chunking = Settings().chunking
document = extract_path(Path(sys.argv[1]))
assign_languages(document)
drafts = chunk_units(document.units, max_chars=chunking.max_chars, overlap=chunking.overlap)
texts = {u.index: u.text for u in document.units}
windows = chunk_windows([(d.start, d.end) for d in drafts], [texts[d.unit] for d in drafts],
                        window_chars=chunking.window_chars, overlap=chunking.window_overlap)
title = document.title if chunking.title_context else ""
chunk_inputs = [context_text(title, with_context(d.context, d.text)) for d in drafts]
window_inputs = [context_text(title, with_context(drafts[w.chunk].context,
                 texts[drafts[w.chunk].unit][w.start:w.end])) for w in windows]
embedder = default_embedder()
tokens = sum(len(e.ids) for e in embedder._tokenizer.encode_batch(
    chunk_inputs + list(dict.fromkeys(window_inputs))))
caps = [int(c) for c in sys.argv[3].split(",")]
rates = {c: [] for c in caps}
digests = {}
original = onnx.length_batches
for _ in range(int(sys.argv[2])):
    for cap in caps:
        onnx.length_batches = (lambda lengths, rows, min_fill=onnx.MIN_BATCH_FILL,
                               max_tokens=cap: original(lengths, rows, min_fill, max_tokens))
        started = time.perf_counter()
        vectors, signs = ingest._embed_chunks(embedder, chunk_inputs)
        window_vectors = ingest._embed_distinct(embedder, window_inputs)
        rates[cap].append(tokens / (time.perf_counter() - started))
        digests[cap] = hash((vectors.tobytes(), window_vectors.tobytes(), tuple(signs or ())))
print(json.dumps({"file": Path(sys.argv[1]).name, "tokens": tokens,
                  "tokens_per_s": {str(c): [round(r) for r in rates[c]] for c in caps},
                  "median_tokens_per_s": {str(c): round(sorted(rates[c])[len(rates[c]) // 2])
                                          for c in caps},
                  "identical_vectors": len(set(digests.values())) == 1}))
"""


#: Each child is a program's edge: it sets the BLAS threads itself (see truthbase.blas).
_EDGE = "from truthbase.blas import limit_blas_threads\nlimit_blas_threads()\n"


def _child(script: str, *args: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", _EDGE + script, *args], check=True, capture_output=True, text=True
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def bench_ingest_memory(paths: list[Path]) -> dict[str, Any]:
    """Peak RSS of a fresh process ingesting ``paths``, overall and by stage."""
    return _child(_INGEST_CHILD, *map(str, paths))


def bench_call_memory(shapes: list[tuple[int, int]]) -> list[dict[str, Any]]:
    """RSS added by onnxruntime calls of each ``(rows, length)``, with and without patterns."""
    return [
        _child(_CALL_CHILD, str(rows), str(length), pattern)
        for rows, length in shapes
        for pattern in ("1", "0")
    ]


def bench_throughput(path: Path, caps: list[int], rounds: int = 3) -> dict[str, Any]:
    """Ingest's embedding tokens/s of ``path`` under each cap on padded tokens per call."""
    return _child(_THROUGHPUT_CHILD, str(path), str(rounds), ",".join(map(str, caps)))


def largest_document(folder: Path) -> Path | None:
    """The PDF of the most pages under ``folder`` (None: no PDF there)."""
    import pypdfium2 as pdfium

    best: tuple[int, str] | None = None
    for path in sorted(folder.rglob("*.pdf")):
        try:
            document = pdfium.PdfDocument(path)
        except pdfium.PdfiumError:
            continue
        try:
            pages = len(document)
        finally:
            document.close()
        if best is None or pages > best[0]:
            best = (pages, str(path))
    return None if best is None else Path(best[1])


def bench_memory(
    seed: list[Path], book: Path | None, largest: Path | None = None
) -> dict[str, Any]:
    """The seed's peak, a book's and the longest document's, each in its own process, in one
    run (so that the long document's peak is read against the seed's on the same machine)."""
    report: dict[str, Any] = {"ingest_seed": bench_ingest_memory(seed)}
    if book is not None and book.is_file():
        report["ingest_book"] = bench_ingest_memory([book])
    if largest is not None and largest.is_file():
        report["ingest_largest"] = bench_ingest_memory([largest])
    report["calls"] = bench_call_memory([(16, 256), (4, 256), (8, 64)])
    report["throughput"] = bench_throughput(seed[0], [4096, 512, 256])
    return report


def print_memory(report: dict[str, Any]) -> None:
    print("\nMemory (each in a fresh process)")
    for key in ("ingest_seed", "ingest_book", "ingest_largest"):
        if key in report:
            r = report[key]
            stages = ", ".join(f"{k} {v:.0f}" for k, v in r["stage_peak_rss_mib"].items())
            print(
                f"ingest {', '.join(r['files'])}: {r['pages']} pages, {r['chunks']} chunks in "
                f"{r['seconds']:.1f} s, peak RSS {r['peak_rss_mib']:.0f} MiB ({stages})"
            )
    if "ingest_largest" in report:
        largest, seed = report["ingest_largest"], report["ingest_seed"]
        peak_mb = largest["peak_rss_mib"] * 2**20 / 1e6
        print(
            f"longest document {largest['files'][0]} ({largest['pages']} pages): peak "
            f"{peak_mb:.0f} MB against the seed's {seed['peak_rss_mib'] * 2**20 / 1e6:.0f} MB "
            f"(goal <= {LARGEST_GOAL_MB} MB: {'met' if peak_mb <= LARGEST_GOAL_MB else 'NOT met'})"
        )
    for c in report["calls"]:
        print(
            f"onnxruntime call {c['rows']}x{c['length']} tokens, memory patterns "
            f"{'on' if c['mem_pattern'] else 'off'}: +{c['added_mib'][0]:.0f} MiB, "
            f"+{c['added_mib'][1]:.0f} MiB after a second call (session {c['session_mib']:.0f})"
        )
    t = report["throughput"]
    print(
        f"embedding {t['file']} ({t['tokens']} tokens) by padded tokens per call: "
        + ", ".join(f"{k}: {v} tokens/s" for k, v in t["median_tokens_per_s"].items())
        + f"; identical vectors: {t['identical_vectors']}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("paths", type=Path, nargs="*", help="PDFs (default: the seed corpus)")
    parser.add_argument("--book", type=Path, default=BOOK, help="an EPUB to ingest alone")
    parser.add_argument(
        "--largest",
        type=Path,
        default=None,
        help="a long document to ingest alone (default: the library's longest PDF)",
    )
    parser.add_argument("--no-largest", action="store_true", help="skip the long document")
    parser.add_argument("--json", type=Path, default=None, help="also write the report here")
    args = parser.parse_args()
    seed = args.paths or sorted(SEED.glob("*.pdf"))
    largest = None if args.no_largest else (args.largest or largest_document(LIBRARY))
    report = bench_memory(seed, args.book, largest)
    print_memory(report)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    sys.exit(main())
