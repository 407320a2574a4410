"""Dump everything extraction produces for some PDFs (text, every box, geometry, tables, report,
outline) as exact JSON, or compare it with an earlier dump byte for byte.

A change that must not alter the canonical text or boxes (a faster extractor) is proven by a
dump before and after being identical:

    PYTHONPATH=src .venv/bin/python scripts/extract_dump.py --out var/before.json   # old code
    PYTHONPATH=src .venv/bin/python scripts/extract_dump.py --compare var/before.json

Floats are written with ``repr`` (round-trip exact), so any change of a box shows.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from truthbase.extract import extract_path

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT.parent / "shared" / "corpus" / "seed"


def dump(paths: list[Path]) -> str:
    documents: list[dict[str, Any]] = []
    for path in paths:
        document = extract_path(path)
        record = dataclasses.asdict(document)
        record["path"] = path.name  # the dump compares extraction, not where the file lies
        documents.append(record)
    return json.dumps(documents, indent=1, sort_keys=True, ensure_ascii=True)


def _first_difference(a: str, b: str) -> str:
    for line, (x, y) in enumerate(zip(a.splitlines(), b.splitlines(), strict=False), start=1):
        if x != y:
            return f"line {line}:\n- {x[:200]}\n+ {y[:200]}"
    return f"one dump is a prefix of the other ({len(a)} vs {len(b)} characters)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("paths", nargs="*", type=Path, help="PDFs (default: the seed corpus)")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--out", type=Path, help="write the dump here")
    group.add_argument("--compare", type=Path, help="compare with this earlier dump")
    args = parser.parse_args()
    paths = args.paths or sorted(SEED.glob("*.pdf"))
    text = dump(paths)
    digest = hashlib.sha256(text.encode()).hexdigest()
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        print(f"{len(paths)} files, {len(text)} characters, sha256 {digest}: {args.out}")
        return 0
    before = args.compare.read_text()
    if before == text:
        print(f"identical: {len(paths)} files, {len(text)} characters, sha256 {digest}")
        return 0
    print(f"DIFFERENT from {args.compare}: {_first_difference(before, text)}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    sys.exit(main())
