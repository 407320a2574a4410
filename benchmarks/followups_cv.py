"""The follow-up answer settings chosen by cross-validation over conversations
(docs/evals/conversations.md, docs/evals/followups-cv.json).

Two settings of the extractive answerer act on follow-ups only: ``follow_up_context_weight``
(how much the words the earlier turns lend a follow-up count in choosing its sentences) and
``follow_up_new_support`` (the share of the words a follow-up adds that its cited passages
must hold). Each weight is one full run of the conversation evaluation
(extractive, no model, with the new-words rule off); each new-words threshold is applied to
that run's answers afterwards (a turn refused by it: its answer's ``new_words_held`` below the
threshold; the later turns of its conversation keep the history of the run, so a third turn
after such a refusal is scored with the answer the second turn had). The best setting on the
folds in is measured on the fold left out (k folds of conversations, several seeds), and the
best on all conversations is the fitted one.

    python benchmarks/followups_cv.py INDEX.sqlite [--golden FILE] [--folds 5] [--seeds 5]
        [--weights 0,0.25,0.5] [--runs DIR] [--json OUT]

``--runs DIR`` keeps each run's per-turn records (``DIR/w{weight}.json``) and reuses
them when they are there (and the vectors of the texts embedded, ``DIR/vectors.npz``): the
cross-validation can be repeated without asking again.

INDEX: an SQLite index holding the set's documents (``truthbase eval conversations`` builds
one; the test cache's golden index does).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

import truthbase.eval.conversations as conversations_eval
from truthbase.answer import ExtractiveAnswerer
from truthbase.blas import limit_blas_threads
from truthbase.config import ChunkingSettings, ExtractiveSettings, RetrievalSettings
from truthbase.embed import Embedder, QueryEmbedder, default_embedder
from truthbase.eval.golden import default_corpus_root
from truthbase.eval.retrieval import prepare_corpus
from truthbase.store import SQLiteStore
from truthbase.turns import Resolution

WEIGHTS = (0.0, 0.25, 0.5)
NEW_SUPPORT = (0.0, 0.25, 0.5, 0.75, 1.0)
GOLDEN = Path(__file__).resolve().parents[1].parent / "shared" / "golden" / "followups-dev.json"


class _Remembering:
    """The embedder, remembering each text's vector: the runs ask the same questions and score
    the same sentences again. A vector does not depend on the texts batched with it (see
    :meth:`truthbase.answer.ExtractiveAnswerer.contenders`), so the numbers are the same."""

    def __init__(self, embedder: Embedder, kept: Path | None = None) -> None:
        self._embedder = embedder
        self._kept = kept
        self._vectors: dict[str, Any] = {}
        if kept is not None and kept.exists():
            with np.load(kept) as data:
                self._vectors = dict(zip(data["texts"].tolist(), data["vectors"], strict=True))
        self.model_id, self.dim = embedder.model_id, embedder.dim

    def __getattr__(self, name: str) -> Any:  # token vectors, for retrieval and alignment
        return getattr(self._embedder, name)

    def keep(self) -> None:
        """Write the vectors to ``kept`` (if given), for the next invocation."""
        if self._kept is not None and self._vectors:
            texts = list(self._vectors)
            vectors = np.stack([self._vectors[t] for t in texts])
            np.savez(self._kept, texts=np.array(texts, dtype=str), vectors=vectors)

    def embed(self, texts: Sequence[str]) -> Any:
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            for text, vector in zip(missing, self._embedder.embed(missing), strict=True):
                self._vectors[text] = vector
        return np.stack([self._vectors[t] for t in texts]) if texts else np.zeros((0, self.dim))


class _SameAnswers:
    """``ask``, remembering the answers that no follow-up setting can change: a first turn's
    and a new topic's (no earlier turn is read, no word lent, nothing demoted or checked), so
    the runs after the first ask only the resolved follow-ups again."""

    def __init__(self, ask: Any) -> None:
        self._ask = ask
        self._answers: dict[tuple[str, str], Any] = {}

    def __call__(self, *args: Any, follow_up: Resolution | None = None, **kwargs: Any) -> Any:
        if follow_up is None or follow_up.kind not in ("first", "standalone"):
            return self._ask(*args, follow_up=follow_up, **kwargs)
        key = (follow_up.question, follow_up.searched_for)
        if key not in self._answers:
            self._answers[key] = self._ask(*args, follow_up=follow_up, **kwargs)
        return self._answers[key]


def _run(index: Path, golden_path: Path, weight: float, embedder: Embedder) -> list[dict[str, Any]]:
    """One full conversation evaluation: its per-turn records, each with its conversation."""
    conversations, golden = conversations_eval.load_conversations(golden_path)
    settings = ExtractiveSettings(follow_up_context_weight=weight, follow_up_new_support=0.0)
    store = SQLiteStore(index)
    try:
        prepared = prepare_corpus(
            golden, default_corpus_root(golden_path), store, embedder, ChunkingSettings()
        )
        report = conversations_eval.evaluate_conversations(
            conversations,
            golden,
            prepared,
            store,
            embedder,
            RetrievalSettings(),
            answerer=ExtractiveAnswerer(embedder, settings),
        )
    finally:
        store.close()
    records = list(report["per_turn"])
    for r in records:
        r["conversation"] = r["id"].split("#")[0]
    return records


def _counts(records: Sequence[dict[str, Any]], new_support: float) -> dict[str, int]:
    """Follow-ups answered with a correct citation, unanswerable follow-ups refused, with the
    new-words threshold applied."""
    out = {"answerable": 0, "correct": 0, "unanswerable": 0, "refused": 0}
    for r in records:
        if r["kind_tag"] is None:
            continue
        held = r.get("new_words_held")
        refused = r["refused"] or (held is not None and held < new_support)
        if r["answerable"]:
            out["answerable"] += 1
            out["correct"] += (not refused) and r["correct"]
        else:
            out["unanswerable"] += 1
            out["refused"] += refused
    return out


#: Issue 26's goal for unanswerable follow-ups: a setting that refuses fewer on the folds in is
#: chosen only when none refuses as many.
REFUSED_GOAL = 0.8


def _score(counts: dict[str, int]) -> tuple[bool, float]:
    """Whether the unanswerable follow-ups' refusals meet the goal, then (balanced) the share
    of answerable follow-ups with a correct citation plus the share of unanswerable ones
    refused."""
    correct = counts["correct"] / counts["answerable"] if counts["answerable"] else 0.0
    refused = counts["refused"] / counts["unanswerable"] if counts["unanswerable"] else 0.0
    return refused >= REFUSED_GOAL, correct + refused


Setting = tuple[float, float]  # (context weight, new-words threshold)


def _best(
    runs: dict[float, list[dict[str, Any]]], ids: set[str], thresholds: Sequence[float]
) -> Setting:
    """The setting with the best score (:func:`_score`) on conversations ``ids``; ties: the
    smaller weight, then the smaller threshold (the closest to answering as before)."""
    scored = []
    for weight, records in runs.items():
        chosen = [r for r in records if r["conversation"] in ids]
        for new_support in thresholds:
            meets, score = _score(_counts(chosen, new_support))
            scored.append((not meets, -score, weight, new_support))
    *_, weight, new_support = min(scored)
    return weight, new_support


def cross_validate(
    runs: dict[float, list[dict[str, Any]]],
    folds: int,
    seeds: int,
    thresholds: Sequence[float] = NEW_SUPPORT,
) -> dict[str, Any]:
    ids = sorted({r["conversation"] for records in runs.values() for r in records})
    fitted = _best(runs, set(ids), thresholds)
    fitted_counts = _counts(runs[fitted[0]], fitted[1])
    per_seed = []
    chosen: dict[str, int] = {}
    for seed in range(seeds):
        order = list(ids)
        random.Random(seed).shuffle(order)
        total = {"answerable": 0, "correct": 0, "unanswerable": 0, "refused": 0}
        for fold in range(folds):
            held = {i for n, i in enumerate(order) if n % folds == fold}
            setting = _best(runs, set(ids) - held, thresholds)
            chosen[str(setting)] = chosen.get(str(setting), 0) + 1
            test = [r for r in runs[setting[0]] if r["conversation"] in held]
            for key, value in _counts(test, setting[1]).items():
                total[key] += value
        per_seed.append(total)

    def shares(counts: dict[str, int]) -> dict[str, float]:
        return {
            "answered_with_correct_citation": counts["correct"] / counts["answerable"],
            "unanswerable_refused": counts["refused"] / counts["unanswerable"],
        }

    left_out = [shares(c) for c in per_seed]
    return {
        "folds": folds,
        "seeds": seeds,
        "fitted": {
            "follow_up_context_weight": fitted[0],
            "follow_up_new_support": fitted[1],
            **shares(fitted_counts),
        },
        "left_out": {
            key: sum(s[key] for s in left_out) / len(left_out)
            for key in ("answered_with_correct_citation", "unanswerable_refused")
        },
        "left_out_per_seed": left_out,
        "settings_chosen_in_folds": chosen,
    }


def _floats(text: str) -> tuple[float, ...]:
    return tuple(float(x) for x in text.split(","))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("index", type=Path)
    parser.add_argument("--golden", type=Path, default=GOLDEN)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--weights", type=_floats, default=WEIGHTS)
    parser.add_argument("--runs", type=Path, help="keep and reuse each run's per-turn records")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    limit_blas_threads()
    base = default_embedder()
    kept_vectors = args.runs / "vectors.npz" if args.runs is not None else None
    remembering = None if isinstance(base, QueryEmbedder) else _Remembering(base, kept_vectors)
    embedder: Embedder = remembering if remembering is not None else base
    conversations_eval.ask = _SameAnswers(conversations_eval.ask)  # type: ignore[assignment]
    runs: dict[float, list[dict[str, Any]]] = {}
    grid: dict[str, Any] = {}
    for weight in args.weights:
        started = time.perf_counter()
        kept = args.runs / f"w{weight}.json" if args.runs is not None else None
        if kept is not None and kept.exists():
            records = json.loads(kept.read_text(encoding="utf-8"))
        else:
            records = _run(args.index, args.golden, weight, embedder)
            if kept is not None:
                kept.parent.mkdir(parents=True, exist_ok=True)
                kept.write_text(json.dumps(records), encoding="utf-8")
            if remembering is not None:
                remembering.keep()
        runs[weight] = records
        grid[f"weight={weight}"] = {f"new_support={t}": _counts(records, t) for t in NEW_SUPPORT}
        print(
            f"weight {weight}: {time.perf_counter() - started:.0f} s",
            {t: _counts(records, t) for t in NEW_SUPPORT},
            file=sys.stderr,
            flush=True,
        )
    report = {
        "grid": grid,
        "cross_validation": cross_validate(runs, args.folds, args.seeds),
        # Rule 4 kept on (a threshold above 0): the choice among its thresholds only.
        "cross_validation_rule_4_on": cross_validate(
            runs, args.folds, args.seeds, [t for t in NEW_SUPPORT if t > 0]
        ),
    }
    text = json.dumps(report, indent=2)
    if args.json is not None:
        args.json.write_text(text + "\n", encoding="utf-8")
    print(json.dumps(report["cross_validation"], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
