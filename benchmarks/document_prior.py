"""The document prior measured with and without, and its weight chosen by leaving one set out
(docs/evals/document-prior.md).

Each set is measured in its own index, ``INDEX_DIR/NAME.sqlite`` for ``NAME.json`` (as `eval
retrieval --index-dir` keeps them: a missing document is ingested first). The arms of every
question are run once; each weight of ``retrieval.document_prior_weight`` is then a fusion of
them (with its own feedback list, which the prior moves too), every other setting at its
default. The weight is chosen as `eval tune` chooses (Recall@8, then MRR, then Recall@5; among
equals the one nearest the current default): per set on the other sets (*left out*), and on all
of them (*fitted*).

    python benchmarks/document_prior.py --index-dir DIR --golden ../shared/golden/dev.json \\
        --golden ../shared/golden/capabilities-dev.json --json docs/evals/document-prior.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from truthbase.config import Settings
from truthbase.embed import load_embedder
from truthbase.eval.across_sets import ScoredSet, leave_one_set_out, set_names
from truthbase.eval.golden import default_corpus_root, load_golden
from truthbase.eval.metrics import summarize_results
from truthbase.eval.retrieval import prepare_corpus, score_grid
from truthbase.store import open_store

WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--golden", action="append", type=Path, required=True)
    parser.add_argument("--index-dir", type=Path, required=True)
    parser.add_argument("--corpus-root", type=Path, default=None)
    parser.add_argument("--weights", type=float, nargs="+", default=list(WEIGHTS))
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    settings = Settings()
    embedder = load_embedder(settings.embedder)
    base = settings.retrieval
    configs = [base.model_copy(update={"document_prior_weight": w}) for w in args.weights]
    names = set_names([path.stem for path in args.golden])
    scored: list[ScoredSet] = []
    per_weight: dict[str, dict[str, Any]] = {}
    for name, path in zip(names, args.golden, strict=True):
        started = time.perf_counter()
        golden = load_golden(path)
        root = args.corpus_root or default_corpus_root(path)
        store = open_store(args.index_dir / f"{name}.sqlite")
        try:
            prepared = prepare_corpus(golden, root, store, embedder, settings.chunking)
            grid = score_grid(golden, prepared, store, embedder, base, configs)
        finally:
            store.close()
        scored.append(ScoredSet(name, grid))
        per_weight[name] = {
            f"{w:g}": summarize_results(list(grid.results[c].values()))
            for c, w in enumerate(args.weights)
        }
        print(f"{name}: {len(grid.questions)} questions, {time.perf_counter() - started:.0f} s")
        for w, row in per_weight[name].items():
            print(f"  w={w:>5}  R@8 {row['recall@8']:.3f}  MRR {row['mrr']:.3f}")
    report: dict[str, Any] = {"weights": list(args.weights), "per_weight": per_weight}
    if len(scored) >= 2:
        report["leave_one_set_out"] = leave_one_set_out(scored, base)
        for held, row in report["leave_one_set_out"]["sets"].items():
            chosen = row["chosen_without_it"]["document_prior_weight"]
            print(
                f"{held}: chosen without it w={chosen:g}: left out R@8 "
                f"{row['left_out']['recall@8']:.3f} MRR {row['left_out']['mrr']:.3f}; fitted "
                f"R@8 {row['fitted']['recall@8']:.3f} MRR {row['fitted']['mrr']:.3f}"
            )
        print(f"fitted: w={report['leave_one_set_out']['chosen']['document_prior_weight']:g}")
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
