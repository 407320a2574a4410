"""The realistic claim benchmark: hand-written claims about quoted passages (``claims-dev.json``,
format of ``shared/golden/CLAIMS.md``), each labelled supported or not with its kind.

Unlike the perturbation benchmark of :mod:`.claims`, the claims here were written by people who
never saw the checker: faithful paraphrases, partial restatements and light inferences to keep;
entity swaps, changed numbers, reversed polarity, widened scope, added facts and swapped
relations to catch. :func:`evaluate_claim_set` checks every claim as the product does (the quote
located on its page with the one matcher, the context the sentences around it) and reports the
share kept and caught, overall and per kind, with per-claim records.

Thresholds are fitted on the set and reported cross-validated beside the fitted value
(:func:`cross_validate_threshold`): k folds by item, several seeds, the threshold fitted on the
other folds and applied to the held-out one.
"""

from __future__ import annotations

import itertools
import json
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..cite.judge import Judge
from ..cite.support import SupportCheck, check_support, context_around, document_names
from ..embed import Embedder
from ..errors import InvalidInput
from ..store.base import Documents
from ..text.matching import find_quote

__all__ = [
    "SUPPORTED_KINDS",
    "UNSUPPORTED_KINDS",
    "ClaimItem",
    "LocatedItem",
    "cross_validate_threshold",
    "evaluate_claim_set",
    "fit_threshold",
    "load_claim_set",
    "locate_items",
    "store_pages",
    "stratified_subset",
    "summarize_claim_set",
]

SUPPORTED_KINDS = ("paraphrase", "partial", "inference-light")
UNSUPPORTED_KINDS = ("entity-swap", "number", "polarity", "scope", "added-fact", "relation")
#: Cross-validation of a threshold: folds by item, and the seeds of the fold shuffles.
CV_FOLDS = 5
CV_SEEDS = (0, 1, 2, 3, 4)


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimItem:
    """One quoted passage and the claims written about it."""

    id: str
    doc: str
    page: int  # 1-based
    quote: str
    claims: tuple[tuple[str, bool, str], ...]  # (claim, supported, kind)


@dataclass(frozen=True, slots=True, kw_only=True)
class LocatedItem:
    """An item whose quote was found on its page: the text the checks see."""

    item: ClaimItem
    quote: str
    context: str
    document: str = ""  # text that names the cited document (:func:`document_names`)


def load_claim_set(path: Path) -> tuple[dict[str, str], list[ClaimItem]]:
    """The documents (name -> path relative to shared/) and items of a claim-set file;
    InvalidInput, naming what is wrong, for a file that is not one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"{path}: cannot read the claim set: {exc}") from exc
    except RecursionError:
        raise InvalidInput(f"{path}: not a claim set (JSON nested too deeply)") from None
    try:
        return _claim_set(path, data)
    except InvalidInput:
        raise
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        what = f"no {exc}" if isinstance(exc, KeyError) else str(exc)
        raise InvalidInput(f"{path}: not a claim set of version 1 ({what})") from None


def _claim_set(path: Path, data: Any) -> tuple[dict[str, str], list[ClaimItem]]:
    if not isinstance(data, dict):
        raise InvalidInput(f"{path}: a claim set is a JSON object")
    if data.get("version") != 1:
        raise InvalidInput(f"{path}: claim-set version {data.get('version')!r} (1 is read)")
    documents = {name: str(doc["path"]) for name, doc in data["documents"].items()}
    items: list[ClaimItem] = []
    for raw in data["items"]:
        if raw["doc"] not in documents:
            raise InvalidInput(f"{path}: item {raw['id']} cites unknown document {raw['doc']!r}")
        claims = tuple(
            (str(c["claim"]), bool(c["supported"]), str(c["kind"])) for c in raw["claims"]
        )
        items.append(
            ClaimItem(
                id=str(raw["id"]),
                doc=str(raw["doc"]),
                page=int(raw["page"]),
                quote=str(raw["quote"]),
                claims=claims,
            )
        )
    return documents, items


def locate_items(
    items: Sequence[ClaimItem],
    page_text: Callable[[str, int], str | None],
    names: Mapping[str, str] | None = None,
) -> tuple[list[LocatedItem], list[str]]:
    """The items whose quote is on its page (``page_text(doc, page)``: the stored unit text),
    and the ids of those whose quote is not; ``names``: each document's naming text."""
    located: list[LocatedItem] = []
    missing: list[str] = []
    for item in items:
        text = page_text(item.doc, item.page)
        found = find_quote(item.quote, text) if text is not None else None
        if text is None or found is None:
            missing.append(item.id)
            continue
        start, end = found[0][0], found[-1][1]
        quote = text[start:end] if len(found) == 1 else item.quote
        located.append(
            LocatedItem(
                item=item,
                quote=quote,
                context=context_around(text, start, end),
                document=(names or {}).get(item.doc, ""),
            )
        )
    return located, missing


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 1.0


def summarize_claim_set(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Kept (supported claims judged supported) and caught (unsupported ones judged not),
    overall and per kind."""
    good = [r for r in records if r["label"]]
    bad = [r for r in records if not r["label"]]
    by_kind: dict[str, dict[str, Any]] = {}
    for kind in SUPPORTED_KINDS + UNSUPPORTED_KINDS:
        rows = [r for r in records if r["kind"] == kind]
        right = sum(r["supported"] == r["label"] for r in rows)
        name = "kept" if kind in SUPPORTED_KINDS else "caught"
        by_kind[kind] = {"n": len(rows), name: _share(right, len(rows))}
    return {
        "kept": _share(sum(r["supported"] for r in good), len(good)),
        "caught": _share(sum(not r["supported"] for r in bad), len(bad)),
        "supported_claims": len(good),
        "unsupported_claims": len(bad),
        "by_kind": by_kind,
    }


def store_pages(
    stores: Sequence[Documents], files: Mapping[str, str]
) -> tuple[Callable[[str, int], str | None], dict[str, str]]:
    """``page_text`` over the documents of ``stores`` whose file name is a claim set's document
    path's (``files``: name -> path), and each found document's naming text."""
    where: dict[str, tuple[Documents, str]] = {}
    names: dict[str, str] = {}
    for store in stores:
        for info in store.list_documents():
            for name, path in files.items():
                if name not in where and Path(info.path).name == Path(path).name:
                    where[name] = (store, info.id)
                    first = store.unit(info.id, 0)
                    names[name] = document_names(info.title, first.text if first else "")

    def page_text(doc: str, page: int) -> str | None:
        if doc not in where:
            return None
        store, doc_id = where[doc]
        unit = store.unit(doc_id, page - 1)
        return unit.text if unit is not None else None

    return page_text, names


# -- thresholds ------------------------------------------------------------------------------


def _objective(records: Sequence[Mapping[str, Any]], threshold: float) -> float:
    """Balanced accuracy with the score threshold (``MIN_SCORE``) deciding the claims no veto
    decided (the coverage floor and the cosine backstop count as vetoes here: they are not
    fitted); kept and caught weigh
    the same, as the goals ask for both."""
    good = [r for r in records if r["label"]]
    bad = [r for r in records if not r["label"]]
    kept = sum(not r["vetoed"] and r["score"] >= threshold for r in good)
    caught = sum(r["vetoed"] or r["score"] < threshold for r in bad)
    return 0.5 * _share(kept, len(good)) + 0.5 * _share(caught, len(bad))


def fit_threshold(records: Sequence[Mapping[str, Any]]) -> float:
    """The score threshold that maximizes :func:`_objective` over ``records`` (the middle of the
    best run of candidate thresholds, so ties sit between the scores, not on one)."""
    scores = sorted({round(float(r["score"]), 4) for r in records} | {0.0, 1.0})
    return _best_cut(scores, lambda t: _objective(records, t))


def cross_validate_threshold(
    records: Sequence[Mapping[str, Any]],
    *,
    folds: int = CV_FOLDS,
    seeds: Sequence[int] = CV_SEEDS,
) -> dict[str, Any]:
    """The score threshold fitted on all records, and the kept/caught shares when each fold of
    items is judged with the threshold fitted on the others (averaged over seeds)."""
    return _cross_validate(
        records,
        fit_threshold,
        lambda r, t: not r["vetoed"] and r["score"] >= t,
        folds=folds,
        seeds=seeds,
    )


def judge_says(record: Mapping[str, Any], min_p: float) -> bool:
    """The verdict on a record of a run with the judge, had ``support.judge_min_p`` been
    ``min_p``: the judge's probability against it where the judge answered with one, its
    written word where it answered without, the check's verdict where it was not asked (a veto,
    a verbatim claim) or failed."""
    judgement = record.get("judge")
    if judgement is None or judgement["failure"] is not None:
        return bool(record["supported"])
    p = judgement.get("p_entailed")
    return bool(judgement["entailed"]) if p is None else p >= min_p


def _judge_objective(records: Sequence[Mapping[str, Any]], min_p: float) -> float:
    good = [r for r in records if r["label"]]
    bad = [r for r in records if not r["label"]]
    kept = sum(judge_says(r, min_p) for r in good)
    caught = sum(not judge_says(r, min_p) for r in bad)
    return 0.5 * _share(kept, len(good)) + 0.5 * _share(caught, len(bad))


def fit_min_p(records: Sequence[Mapping[str, Any]]) -> float:
    """The ``judge_min_p`` that maximizes balanced accuracy over ``records`` (as
    :func:`fit_threshold`: the middle of the best run of candidates)."""
    ps = {round(float(r["judge"]["p_entailed"]), 4) for r in records if _has_p(r)}
    return _best_cut(sorted(ps | {0.0, 1.0}), lambda t: _judge_objective(records, t))


def _has_p(record: Mapping[str, Any]) -> bool:
    judgement = record.get("judge")
    return judgement is not None and judgement.get("p_entailed") is not None


def cross_validate_min_p(
    records: Sequence[Mapping[str, Any]],
    *,
    folds: int = CV_FOLDS,
    seeds: Sequence[int] = CV_SEEDS,
) -> dict[str, Any] | None:
    """As :func:`cross_validate_threshold`, for the judge's ``judge_min_p`` on a run with the
    judge; None when no judgement had a probability (the server gave none)."""
    if not any(_has_p(r) for r in records):
        return None
    return _cross_validate(records, fit_min_p, judge_says, folds=folds, seeds=seeds)


def _best_cut(values: Sequence[float], objective: Callable[[float], float]) -> float:
    candidates = [(a + b) / 2 for a, b in itertools.pairwise(values)] or [0.5]
    scores = [objective(t) for t in candidates]
    best = max(scores)
    winners = [t for t, v in zip(candidates, scores, strict=True) if v >= best - 1e-12]
    return round(winners[len(winners) // 2], 4)


def _cross_validate(
    records: Sequence[Mapping[str, Any]],
    fit: Callable[[Sequence[Mapping[str, Any]]], float],
    decide: Callable[[Mapping[str, Any], float], bool],
    *,
    folds: int,
    seeds: Sequence[int],
) -> dict[str, Any]:
    """``fit`` on all records, and the shares when each fold of items is decided by ``decide``
    with the value fitted on the other folds, averaged over seeds."""
    fitted = fit(records)
    items = sorted({str(r["item"]) for r in records})
    runs: list[dict[str, Any]] = []
    values: list[float] = []
    for seed in seeds:
        order = list(items)
        random.Random(seed).shuffle(order)
        fold_of = {item: k % folds for k, item in enumerate(order)}
        judged: list[dict[str, Any]] = []
        for fold in range(folds):
            train = [r for r in records if fold_of[str(r["item"])] != fold]
            test = [r for r in records if fold_of[str(r["item"])] == fold]
            value = fit(train)
            values.append(value)
            judged += [{**r, "supported": decide(r, value)} for r in test]
        runs.append(summarize_claim_set(judged))
    by_kind = {
        kind: {
            key: sum(run["by_kind"][kind][key] for run in runs) / len(runs)
            for key in runs[0]["by_kind"][kind]
        }
        for kind in runs[0]["by_kind"]
    }
    return {
        "fitted": fitted,
        "folds": folds,
        "seeds": list(seeds),
        "cv_thresholds": [min(values), max(values)],
        "cv_kept": sum(run["kept"] for run in runs) / len(runs),
        "cv_caught": sum(run["caught"] for run in runs) / len(runs),
        "cv_by_kind": by_kind,
    }


# -- the report ------------------------------------------------------------------------------


def _record(
    located: LocatedItem, claim: str, label: bool, kind: str, check: SupportCheck
) -> dict[str, Any]:
    record = {
        "item": located.item.id,
        "doc": located.item.doc,
        "page": located.item.page,
        "kind": kind,
        "label": label,
        "claim": claim,
        "state": "supported" if check.supported else "quote_only",
        "supported": check.supported,
        "score": round(check.score, 4),
        "coverage": round(check.coverage, 4),
        "vetoed": check.vetoed
        or any(r.code in ("low_coverage", "low_similarity") for r in check.reasons),
        "reasons": [r.to_json() for r in check.reasons],
    }
    if check.judgement is not None:
        record["judge"] = check.judgement.to_json()
    return record


def stratified_subset(located: Sequence[LocatedItem], per_kind: int) -> set[tuple[str, int]]:
    """``per_kind`` claims of each kind as (item id, claim index), spread evenly over the file
    (not its first items only: the German items come last)."""
    by_kind: dict[str, list[tuple[str, int]]] = {}
    for entry in located:
        for index, (_, _, kind) in enumerate(entry.item.claims):
            by_kind.setdefault(kind, []).append((entry.item.id, index))
    chosen: set[tuple[str, int]] = set()
    for claims in by_kind.values():
        step = len(claims) / min(per_kind, len(claims))
        chosen.update(claims[int(k * step)] for k in range(min(per_kind, len(claims))))
    return chosen


def _judge_report(
    judge: Judge, records: Sequence[Mapping[str, Any]], without: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """What the judge did: its name, the same claims without it, how often it was asked and
    failed, the seconds it added per claim."""
    asked = [r["judge"] for r in records if "judge" in r]
    return {
        "name": judge.name,
        "asked": len(asked),
        "failed": sum(j["failure"] is not None for j in asked),
        "seconds_per_claim": sum(r["judge_seconds"] for r in records) / max(len(records), 1),
        "without_judge": summarize_claim_set(without),
        "min_p": cross_validate_min_p(records),
    }


def evaluate_claim_set(
    located: Sequence[LocatedItem],
    embedder: Embedder | None,
    *,
    judge: Judge | None = None,
    per_kind: int | None = None,
    on_item: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The realistic claim report: shares overall and per kind, the score threshold fitted and
    cross-validated, per-claim records. With ``judge``, each claim is checked with it and
    without it (``judge.without_judge``: the deterministic verdicts of the same claims);
    ``per_kind`` keeps a stratified subset (:func:`stratified_subset`)."""
    chosen = stratified_subset(located, per_kind) if per_kind is not None else None
    records: list[dict[str, Any]] = []
    without: list[dict[str, Any]] = []
    for entry in located:
        if on_item is not None:
            on_item(entry.item.id)
        for index, (claim, label, kind) in enumerate(entry.item.claims):
            if chosen is not None and (entry.item.id, index) not in chosen:
                continue
            check = check_support(
                claim,
                entry.quote,
                context=entry.context,
                embedder=embedder,
                document=entry.document,
            )
            records.append(_record(entry, claim, label, kind, check))
            if judge is None:
                continue
            started = time.perf_counter()
            judged = check_support(
                claim,
                entry.quote,
                context=entry.context,
                embedder=embedder,
                document=entry.document,
                judge=judge,
            )
            without.append(records.pop())
            records.append(_record(entry, claim, label, kind, judged))
            records[-1]["judge_seconds"] = round(time.perf_counter() - started, 3)
            records[-1]["supported_without_judge"] = check.supported
    report = {
        **summarize_claim_set(records),
        "items": len(located),
        "subset_per_kind": per_kind,
        # The score threshold is the deterministic checks' (the judge's own, judge_min_p, is
        # cross-validated in the judge's part): fitted on the verdicts without the judge.
        "threshold": cross_validate_threshold(without if judge is not None else records),
        "per_claim": records,
    }
    if judge is not None:
        report["judge"] = _judge_report(judge, records, without)
    return report
