"""`make bench`, claim-support section: the cost of one support check per claim of
shared/golden/claims-dev.json (issue 24's goal: the deterministic checks at most 20 ms per claim,
p50).

Deterministic means without the embedder (numbers, negation, named terms, the vetoes and the
lexical alignment over WordNet); with ``--embedder`` the bundled MiniLM's cosine and token
vectors are timed too. Each quote is its own context unless ``--db INDEX`` holds the documents
(then the context is the sentences around the quote on its page, as the product checks it).
The lexicon is loaded before timing (a process loads it once). Prints JSON.

Run alone: ``python benchmarks/claims_bench.py [--db INDEX.sqlite] [--embedder]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CLAIMS = REPO.parent / "shared" / "golden" / "claims-dev.json"
#: The goal of issue 24 for one deterministic check, p50.
GOAL_P50_MS = 20.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--claims", type=Path, default=CLAIMS)
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument("--embedder", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "src"))
    from truthbase.cite.lexicon import load_lexicon
    from truthbase.cite.support import check_support
    from truthbase.eval.claim_set import LocatedItem, load_claim_set, locate_items, store_pages

    documents, items = load_claim_set(args.claims)
    located: list[LocatedItem]
    if args.db is not None:
        from truthbase.store import SQLiteStore

        store = SQLiteStore(args.db)
        page_text, names = store_pages([store], documents)
        located, _ = locate_items(items, page_text, names)
    else:
        located = [LocatedItem(item=i, quote=i.quote, context=i.quote) for i in items]
    embedder = None
    if args.embedder:
        from truthbase.embed._onnx import default_embedder

        embedder = default_embedder()
    load_lexicon()
    times: list[float] = []
    for round_ in range(args.rounds):
        for entry in located:
            for claim, _, _ in entry.item.claims:
                start = time.perf_counter()
                check_support(
                    claim,
                    entry.quote,
                    context=entry.context,
                    embedder=embedder,
                    document=entry.document,
                )
                if round_ > 0 or args.rounds == 1:
                    times.append((time.perf_counter() - start) * 1000)
    ordered = sorted(times)
    report: dict[str, Any] = {
        "claims": sum(len(entry.item.claims) for entry in located),
        "timed_checks": len(times),
        "embedder": args.embedder,
        "context": "page" if args.db is not None else "quote",
        "p50_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
        "first_round_excluded": args.rounds > 1,
        "goal_p50_ms": GOAL_P50_MS,
    }
    report["within_goal"] = report["p50_ms"] <= GOAL_P50_MS
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
