"""The prompt-injection screen's hits on the whole shared corpus (false positives: the corpus
has no injected text) and on the canary set of tests/helpers/canaries.py.

Run: ``PYTHONPATH=src:. python benchmarks/screen_corpus.py [--json OUT]``. Every PDF and EPUB
under ../shared/corpus is extracted as ingest extracts it (a file that cannot be extracted is
listed with its reason), every canary and honest page is written as a one-page PDF and extracted
the same way.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.helpers.canaries import CANARIES, HONEST, make_pdf
from tests.helpers.corpus import CORPUS

from truthbase.extract import ExtractionError, extract_path
from truthbase.ingest.screen import screen_texts


def _screen(path: Path) -> dict[str, Any]:
    try:
        document = extract_path(path)
    except ExtractionError as exc:
        return {"file": str(path), "skipped": exc.reason}
    result = screen_texts([u.text for u in document.units])
    return {
        "file": str(path),
        "units": len(document.units),
        "flagged": result.flagged,
        "counts": result.counts,
        "hits": [h.to_json() for h in result.hits[:5]],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    started = time.perf_counter()
    files = sorted(p for p in CORPUS.rglob("*") if p.suffix.lower() in (".pdf", ".epub"))
    corpus = [_screen(p) for p in files]
    for row in corpus:
        row["file"] = str(Path(row["file"]).relative_to(CORPUS))
    with tempfile.TemporaryDirectory() as tmp:
        canaries = []
        for name, (rule, text) in CANARIES.items():
            path = Path(tmp) / f"{name}.pdf"
            path.write_bytes(make_pdf([["A short maintenance note.", *text.split("\n")]]))
            row = _screen(path)
            canaries.append({"name": name, "rule": rule, "caught": rule in row.get("counts", {})})
        honest = []
        for name, text in HONEST.items():
            path = Path(tmp) / f"honest-{name}.pdf"
            path.write_bytes(make_pdf([[text]]))
            honest.append({"name": name, "flagged": _screen(path).get("flagged", False)})
    screened = [r for r in corpus if "skipped" not in r]
    summary = {
        "corpus_files": len(corpus),
        "corpus_screened": len(screened),
        "corpus_units": sum(r["units"] for r in screened),
        "corpus_flagged": [r["file"] for r in screened if r["flagged"]],
        "canaries_caught": sum(c["caught"] for c in canaries),
        "canaries": len(canaries),
        "honest_flagged": sum(h["flagged"] for h in honest),
        "honest": len(honest),
        "seconds": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(summary, indent=2))
    if args.json:
        out = {"summary": summary, "corpus": corpus, "canaries": canaries, "honest": honest}
        args.json.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    main()
