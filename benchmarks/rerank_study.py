"""A learned reranker over what the arms already say, left one set out: measured, not shipped
(docs/evals/learned-rerank.md).

For each answerable question of each set (its own index, default retrieval settings) the
shipped hybrid ranking's first ``--depth`` chunks are the candidates, each described by what
search already knows of it: its fused position, each list's rank and score (full text, dense,
late interaction, feedback), its document's share of the document prior, its length and kind,
whether it is a contents or index page, and the share of the question's idf mass (idf over the
candidates) in its text and in its title, section path and context. A pairwise logistic model
(every chunk holding an evidence quote against every one that does not, each question weighed
once, features standardized on the training sets, L2) is fitted on all sets but one and reranks
the candidates of the one left out; Recall@1, Recall@8 and MRR (the golden hit rule, first 15)
are reported per set, left out, beside the shipped ranking, and pooled.

    .venv/bin/python benchmarks/rerank_study.py --json OUT.json --corpus-root ../shared \\
        dev=../shared/golden/dev.json:DEV.sqlite \\
        caps=../shared/golden/capabilities-dev.json:CAPS.sqlite \\
        library=../shared/golden/library-dev.json:LIBRARY.sqlite [more sets]
    # --features inv_pos,log_pos,late_raw,late_rel,lex_all,doc_share   a subset of the features
"""

from __future__ import annotations

import argparse
import json
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from truthbase.config import ChunkingSettings, RetrievalSettings
from truthbase.embed import default_embedder
from truthbase.eval.golden import load_golden
from truthbase.eval.metrics import MAX_K, RetrievedChunk, chunk_contains
from truthbase.eval.retrieval import collect_arms, prepare_corpus, split_questions
from truthbase.retrieve import hybrid
from truthbase.retrieve.documents import document_scores
from truthbase.store import SQLiteStore
from truthbase.text.vocabulary import terms

ARMS = ("fts", "dense", hybrid.LATE_ARM, hybrid.PRF_ARM)


@dataclass
class Question:
    set: str
    id: str
    features: list[dict[str, float]]  # one per candidate, in the shipped order
    holds: np.ndarray  # candidate x evidence record: the chunk holds the record's quote


def _features(
    arms: hybrid.ArmRankings,
    fused: list[Any],
    chunks: dict[int, Any],
    pointing: set[int],
    titles: dict[str, str],
    question: str,
    settings: RetrievalSettings,
) -> list[dict[str, float]]:
    used, weights = hybrid._weighted_lists(arms, settings, "hybrid")
    docs = document_scores(used, weights, arms.owners)
    top_doc = max(docs.values(), default=1.0) or 1.0
    asked = list(dict.fromkeys(terms(question)))
    words = []
    for chunk_id, _, _ in fused:
        c = chunks[chunk_id]
        around = f"{c.section} {titles.get(c.doc_id, '')} {c.context}"
        words.append((set(terms(c.text)), set(terms(around))))
    df = Counter(t for text, around in words for t in text | around)
    idf = {t: math.log((len(words) + 1) / (df.get(t, 0) + 0.5)) for t in asked}
    mass = sum(idf.values()) or 1.0
    # Each list's ranks and best score, once per question (not once per candidate).
    ranks = {arm: {c: r for r, c in enumerate(arms.ranked.get(arm, []), start=1)} for arm in ARMS}
    tops = {arm: max(arms.scores.get(arm, {}).values(), default=0.0) for arm in ARMS}
    out = []
    for position, ((chunk_id, _, _), (text, around)) in enumerate(
        zip(fused, words, strict=True), start=1
    ):
        c = chunks[chunk_id]
        v = {"inv_pos": 1.0 / position, "log_pos": math.log(position)}
        for arm in ARMS:
            scores, top = arms.scores.get(arm, {}), tops[arm]
            rank = ranks[arm].get(chunk_id, 0) if chunk_id in scores else 0
            v[f"{arm}_rrf"] = 1.0 / (1 + rank) if rank else 0.0
            v[f"{arm}_in"] = 1.0 if rank else 0.0
            v[f"{arm}_rel"] = scores[chunk_id] / top if rank and top else 0.0
        v["dense_cos"] = arms.scores.get("dense", {}).get(chunk_id, 0.0)
        v["late_raw"] = arms.scores.get(hybrid.LATE_ARM, {}).get(chunk_id, 0.0)
        owner = arms.owners.get(chunk_id)
        v["doc_share"] = docs.get(owner, 0.0) / top_doc if owner else 0.0
        v["nav"] = 1.0 if chunk_id in pointing else 0.0
        v["table"] = 1.0 if c.kind == "table" else 0.0
        v["log_len"] = math.log(1 + len(c.text))
        v["lex_text"] = sum(idf[t] for t in text if t in idf) / mass
        v["lex_ctx"] = sum(idf[t] for t in around if t in idf) / mass
        v["lex_all"] = sum(idf[t] for t in text | around if t in idf) / mass
        out.append(v)
    return out


def collect(name: str, golden_path: Path, index: Path, root: Path, depth: int) -> list[Question]:
    settings = RetrievalSettings()
    embedder = default_embedder()
    golden = load_golden(golden_path)
    store = SQLiteStore(index)
    try:
        prepared = prepare_corpus(golden, root, store, embedder, ChunkingSettings())
        names = prepared.names
        questions, _ = split_questions(golden, prepared)
        out = []
        for item in collect_arms(questions, store, embedder, settings):
            fused = hybrid.fuse(item.arms, settings, 2 * depth)
            chunks = {c.id: c for c in store.chunks([i for i, _, _ in fused])}
            pointing = {i for i, c in chunks.items() if hybrid.points_elsewhere(c)}
            fused = [f for f in hybrid.navigation_last(fused, pointing, depth) if f[0] in chunks]
            titles = store.document_titles({c.doc_id for c in chunks.values()})
            holds = np.array(
                [
                    [
                        chunk_contains(
                            e,
                            RetrievedChunk(
                                doc=names.get(c.doc_id, c.doc_id),
                                unit=c.unit,
                                text=c.text,
                                href=c.href,
                            ),
                        )
                        for e in item.question.evidence
                    ]
                    for c in (chunks[i] for i, _, _ in fused)
                ],
                dtype=bool,
            ).reshape(len(fused), len(item.question.evidence))
            features = _features(
                item.arms, fused, chunks, pointing, titles, item.question.question, settings
            )
            out.append(Question(name, item.question.id, features, holds))
        return out
    finally:
        store.close()


def matrix(q: Question, names: list[str]) -> np.ndarray:
    return np.array([[f[n] for n in names] for f in q.features]).reshape(
        len(q.features), len(names)
    )


def fit(questions: list[Question], names: list[str], l2: float = 1e-3, steps: int = 600):
    """Pairwise logistic weights (Adam), with the training sets' feature means and spreads."""
    stacked = np.vstack([matrix(q, names) for q in questions])
    mean, spread = stacked.mean(0), stacked.std(0) + 1e-9
    diffs, weights = [], []
    for q in questions:
        z = (matrix(q, names) - mean) / spread
        good = q.holds.any(1)
        if good.any() and (~good).any():
            d = (z[good][:, None, :] - z[~good][None, :, :]).reshape(-1, len(names))
            diffs.append(d)
            weights.append(np.full(len(d), 1.0 / len(d)))
    pairs, weight = np.vstack(diffs), np.concatenate(weights)
    weight /= weight.sum()
    w = np.zeros(len(names))
    m, v = np.zeros_like(w), np.zeros_like(w)
    for step in range(1, steps + 1):
        p = 1 / (1 + np.exp(np.clip(pairs @ w, -30, 30)))
        g = -(pairs * (weight * p)[:, None]).sum(0) + l2 * w
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
        w -= 0.1 * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return w, mean, spread


def first_hit(order: list[int], holds: np.ndarray) -> int | None:
    """The golden hit rule's rank: every evidence record held within the first MAX_K."""
    ranks = []
    for record in range(holds.shape[1]):
        hit = next((r for r, i in enumerate(order[:MAX_K], start=1) if holds[i, record]), None)
        if hit is None:
            return None
        ranks.append(hit)
    return max(ranks) if ranks else None


def summary(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    return {
        "recall@1": sum(r == 1 for r in ranks) / n,
        "recall@8": sum(1 for r in ranks if r and r <= 8) / n,
        "mrr": sum(1 / r for r in ranks if r) / n,
        "n": len(ranks),
    }


def leave_one_set_out(questions: list[Question], names: list[str]) -> dict[str, Any]:
    report: dict[str, Any] = {}
    pooled: dict[str, list[int | None]] = {"shipped": [], "left_out": []}
    for held in dict.fromkeys(q.set for q in questions):
        w, mean, spread = fit([q for q in questions if q.set != held], names)
        shipped, left_out = [], []
        for q in (q for q in questions if q.set == held):
            score = ((matrix(q, names) - mean) / spread) @ w
            shipped.append(first_hit(list(range(len(q.features))), q.holds))
            left_out.append(first_hit(list(np.argsort(-score, kind="stable")), q.holds))
        report[held] = {"shipped": summary(shipped), "left_out": summary(left_out)}
        pooled["shipped"] += shipped
        pooled["left_out"] += left_out
    report["pool"] = {k: summary(v) for k, v in pooled.items()}
    w, _, _ = fit(questions, names)
    report["weights_all_sets"] = {n: round(float(x), 3) for n, x in zip(names, w, strict=True)}
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sets", nargs="+", help="NAME=GOLDEN:INDEX")
    parser.add_argument("--corpus-root", type=Path, default=Path("../shared"))
    parser.add_argument("--depth", type=int, default=40, help="candidates reranked")
    parser.add_argument("--features", default="", help="comma-separated subset")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    questions: list[Question] = []
    for spec in args.sets:
        name, _, paths = spec.partition("=")
        golden, _, index = paths.partition(":")
        questions += collect(name, Path(golden), Path(index), args.corpus_root, args.depth)
    names = args.features.split(",") if args.features else list(questions[0].features[0])
    report = {"depth": args.depth, "features": names, **leave_one_set_out(questions, names)}
    for name, row in report.items():
        if isinstance(row, dict) and "shipped" in row:
            a, b = row["shipped"], row["left_out"]
            print(
                f"{name:10s} n={a['n']:3d}  shipped R@1 {a['recall@1']:.3f} R@8 "
                f"{a['recall@8']:.3f} MRR {a['mrr']:.3f}  left out R@1 {b['recall@1']:.3f} "
                f"R@8 {b['recall@8']:.3f} MRR {b['mrr']:.3f}"
            )
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()
    main()
