"""The support checks on every claim set written blind (issue 24): kept and caught per set, the
pool, and what changed against a stored round.

The sets (`docs/evals/claims-heldout*-s3*.json`, format of shared/golden/CLAIMS.md) were written
by helper sessions that never saw the checker; `docs/evals/claims-realistic.md` says how. Their
documents (seed PDFs, GeoTopo, three robustness PDFs, six library manuals) are ingested into
``--db`` first, once: a later run finds them there. With ``--against FILE`` (a results file such
as `docs/evals/claims-heldout-s34-results.json`) each claim whose verdict differs from the stored
round is printed, the way a new rule is checked before it ships: on every set, not the one it
came from.

    python benchmarks/claim_sets.py --db var/claims.sqlite
    python benchmarks/claim_sets.py --db var/claims.sqlite --against \\
        docs/evals/claims-heldout-s34-results.json --round round6
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from truthbase.blas import limit_blas_threads
from truthbase.config import Settings
from truthbase.embed import load_embedder
from truthbase.eval.claim_set import (
    evaluate_claim_set,
    load_claim_set,
    locate_items,
    store_pages,
)
from truthbase.ingest import IngestOptions, ingest_file
from truthbase.store import open_store

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SETS = sorted(
    (
        p
        for p in (REPO / "docs" / "evals").glob("claims-heldout*-s3*.json")
        if "results" not in p.name
    ),
    key=lambda p: int(re.sub(r"\D", "", p.stem.split("-")[1]) or 1),  # set 1, 2, ..., 12
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True, help="SQLite index for the documents")
    parser.add_argument("--against", type=Path, help="a results file to compare verdicts with")
    parser.add_argument("--round", default="round6", help="the round of --against [round6]")
    parser.add_argument("--json", type=Path, help="write each set's report here")
    args = parser.parse_args()
    limit_blas_threads()
    settings = Settings()
    embedder = load_embedder(settings.embedder)
    stored = json.loads(args.against.read_text("utf-8"))["sets"] if args.against else {}
    reports: dict[str, Any] = {}
    totals = {"kept": [0, 0], "caught": [0, 0]}
    store = open_store(args.db)
    try:
        for path in SETS:
            documents, items = load_claim_set(path)
            for relative in documents.values():
                outcome = ingest_file(
                    SHARED / relative, store, embedder, IngestOptions.from_settings(settings)
                )
                if outcome.doc_id is None:
                    print(f"{path.name}: {relative}: {outcome.message}", file=sys.stderr)
            page_text, names = store_pages([store], documents)
            located, missing = locate_items(items, page_text, names)
            report = evaluate_claim_set(located, embedder)
            reports[path.name] = report
            good = [r for r in report["per_claim"] if r["label"]]
            bad = [r for r in report["per_claim"] if not r["label"]]
            totals["kept"][0] += sum(r["supported"] for r in good)
            totals["kept"][1] += len(good)
            totals["caught"][0] += sum(not r["supported"] for r in bad)
            totals["caught"][1] += len(bad)
            print(
                f"{path.name:28s} kept {report['kept']:.3f}  caught {report['caught']:.3f}"
                + (f"  ({len(missing)} quotes not found)" if missing else "")
            )
            before = stored.get(path.name, {}).get(args.round)
            if before is not None:
                _changes(before["per_claim"], report["per_claim"])
    finally:
        store.close()
    kept, caught = (totals[k][0] / max(1, totals[k][1]) for k in ("kept", "caught"))
    print(f"{'pooled':28s} kept {kept:.3f}  caught {caught:.3f}")
    if args.json is not None:
        args.json.write_text(json.dumps(reports, indent=1) + "\n", "utf-8")
    return 0


def _changes(before: list[dict[str, Any]], now: list[dict[str, Any]]) -> None:
    """The claims whose verdict differs from the stored round's (same order, same claims)."""
    for old, new in zip(before, now, strict=True):
        if old["supported"] != new["supported"]:
            right = new["supported"] == new["label"]
            verdict = "supported" if new["supported"] else "refused"
            reasons = "; ".join(_text(r) for r in new["reasons"] or old["reasons"])[:160]
            print(
                f"  {'+' if right else '-'} {new['item']} {new['kind']}: now {verdict} ({reasons})"
            )


def _text(reason: Any) -> str:
    """A stored reason as text (records keep them as JSON objects)."""
    return reason if isinstance(reason, str) else f"{reason['code']}: {reason['message']}"


if __name__ == "__main__":
    raise SystemExit(main())
