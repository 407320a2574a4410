"""Word pieces ingest sends to the embedder, by way of embedding (issue 28 item 2).

The embedder's time is close to proportional to the pieces it is given (docs/evals/
embed-memory-search.md: ingest's embed stage runs at 99% of the ONNX session's limit), so the
pieces counted here bound what each way can save before any index is built:

- ``chunk pass + windows`` (``chunking.chunk_pass`` on): every chunk whole, then each of its
  distinct sentence windows;
- ``windows only`` (off): the windows, and the chunks that have none;
- the same with windows of 300 and 400 characters, and without the title before each window.

    python benchmarks/embed_tokens_study.py ../shared/corpus/seed --json docs/evals/x.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from truthbase.blas import limit_blas_threads
from truthbase.chunking import chunk_units
from truthbase.config import Settings
from truthbase.embed import load_embedder
from truthbase.embed._onnx import OnnxEmbedder
from truthbase.extract import extract_path
from truthbase.ingest.windows import chunk_windows, embedded_text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    limit_blas_threads()
    settings = Settings()
    embedder = load_embedder(settings.embedder)
    if not isinstance(embedder, OnnxEmbedder):
        raise SystemExit("the study counts the bundled ONNX embedder's word pieces")
    tokenizer = embedder._tokenizer
    chunking = settings.chunking

    def pieces(texts: list[str]) -> int:
        return sum(len(e.ids) for e in tokenizer.encode_batch(texts))

    totals: dict[str, int] = {}
    files = sorted(p for p in args.folder.rglob("*") if p.suffix.lower() in (".pdf", ".epub"))
    for path in files:
        document = extract_path(path)
        drafts = chunk_units(document.units, max_chars=chunking.max_chars, overlap=chunking.overlap)
        texts = {unit.index: unit.text for unit in document.units}
        title = document.title if chunking.title_context else ""
        chunks = [embedded_text(title, d.section, d.context, d.text) for d in drafts]
        for window_chars in (chunking.window_chars, 300, 400):
            windows = chunk_windows(
                [(d.start, d.end) for d in drafts],
                [texts[d.unit] for d in drafts],
                window_chars=window_chars,
                overlap=chunking.window_overlap,
            )
            with_windows = {w.chunk for w in windows}
            alone = [text for i, text in enumerate(chunks) if i not in with_windows]
            for name, window_title in (("", title), (", no title before windows", "")):
                inputs = {
                    embedded_text(
                        window_title,
                        drafts[w.chunk].section,
                        drafts[w.chunk].context,
                        texts[drafts[w.chunk].unit][w.start : w.end],
                    )
                    for w in windows
                }
                suffix = f"{name}, windows of {window_chars}"
                for key, count in (
                    (f"chunk pass + windows{suffix}", pieces(chunks) + pieces(sorted(inputs))),
                    (f"windows only{suffix}", pieces(alone) + pieces(sorted(inputs))),
                ):
                    totals[key] = totals.get(key, 0) + count
        print(f"{path.name}: {len(document.units)} units, {len(drafts)} chunks", flush=True)
    today = totals[f"chunk pass + windows, windows of {chunking.window_chars}"]
    report = {
        "folder": str(args.folder),
        "files": [p.name for p in files],
        "pieces": totals,
        "share_of_today": {key: count / today for key, count in totals.items()},
    }
    for key, count in sorted(totals.items(), key=lambda item: item[1]):
        print(f"{count:>9,} pieces  {count / today:5.2f}  {key}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
