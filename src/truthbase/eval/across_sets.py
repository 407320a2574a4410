"""Several golden sets at once: each set's numbers, the pool, and the tuned values chosen by
leaving one set out.

A value tuned on the questions it is then measured on flatters itself, and k folds of one set
still share its documents, its writers and its phrasing: the folds of dev.json all ask about
the same four PDFs. A user's questions come from elsewhere. Leaving a whole set out (choose on
the other sets, measure on the one left out) is the closest a dev collection gets to that, so
it is the number reported beside the fitted one.

The pool weighs every question once: a metric that is a mean over questions (recall@k, MRR,
nDCG, the answer shares) pools as the mean over all the sets' questions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..config import RetrievalSettings
from ..errors import InvalidInput
from .metrics import QuestionResult, summarize_results
from .retrieval import GridScores, best_config, config_values

__all__ = ["ScoredSet", "leave_one_set_out", "pool_means", "set_names"]


@dataclass(frozen=True, slots=True)
class ScoredSet:
    """One golden set's grid scores under its name."""

    name: str
    scores: GridScores


def set_names(stems: Sequence[str]) -> list[str]:
    """The sets' names (their files' stems); two sets of one name would mix their reports,
    so that is an error."""
    seen: set[str] = set()
    for stem in stems:
        if stem in seen:
            raise InvalidInput(
                f"two golden sets are named {stem!r} (the file name without .json): "
                "copy one under another name"
            )
        seen.add(stem)
    return list(stems)


def pool_means(
    rows: Mapping[str, Mapping[str, float]], sizes: Mapping[str, int]
) -> dict[str, float]:
    """Each metric's mean over all the questions of the sets: the sets' values (``rows``, by
    set name) weighted by their question counts (``sizes``)."""
    total = sum(sizes[name] for name in rows)
    if total == 0:
        return {}
    metrics = next(iter(rows.values())).keys()
    return {
        metric: sum(rows[name][metric] * sizes[name] for name in rows) / total for metric in metrics
    }


def _key(set_name: str, question_id: str) -> str:
    # ids are unique within a set only; a tab cannot occur in a set's name (a file stem)
    return f"{set_name}\t{question_id}"


def leave_one_set_out(sets: Sequence[ScoredSet], base: RetrievalSettings) -> dict[str, Any]:
    """The tuning grid chosen by leave-one-set-out cross-validation.

    For each set, the configuration that scores best on the pooled questions of the other sets
    is measured on it (its *left-out* numbers); the configuration that scores best on all the
    sets (the *fitted* choice, what the defaults would become) is measured on each set beside
    it. The pooled left-out numbers are those a set nobody tuned on can expect."""
    if len(sets) < 2:
        raise InvalidInput("leaving one set out needs at least two golden sets")
    configs = sets[0].scores.configs
    if any(len(s.scores.configs) != len(configs) for s in sets):
        raise InvalidInput("the sets were scored on different grids")
    merged: list[dict[str, QuestionResult]] = [
        {_key(s.name, qid): r for s in sets for qid, r in s.scores.results[c].items()}
        for c in range(len(configs))
    ]
    ids = {s.name: [_key(s.name, q.id) for q in s.scores.questions] for s in sets}
    everything = {key for keys in ids.values() for key in keys}
    fitted = best_config(merged, configs, base, everything)
    per_set: dict[str, Any] = {}
    left_out_results: list[QuestionResult] = []
    for held in sets:
        chosen = best_config(merged, configs, base, everything - set(ids[held.name]))
        results = [merged[chosen][key] for key in ids[held.name]]
        left_out_results.extend(results)
        per_set[held.name] = {
            "questions": len(results),
            "chosen_without_it": config_values(configs[chosen]),
            "left_out": summarize_results(results),
            "fitted": summarize_results([merged[fitted][key] for key in ids[held.name]]),
        }
    return {
        "configurations": len(configs),
        "sets": per_set,
        "pool": {
            "questions": len(everything),
            "left_out": summarize_results(left_out_results),
            "fitted": summarize_results([merged[fitted][key] for key in sorted(everything)]),
        },
        "chosen": config_values(configs[fitted]),
    }
