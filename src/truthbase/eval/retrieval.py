"""Retrieval evaluation on a golden set: fts-only, dense-only and hybrid, per tag, with misses.

Each question's arms are run once; fusion (cheap) is then applied per mode, and per
configuration when tuning, so a 60-configuration grid costs one pass of searches. The
pseudo-relevance feedback list depends on the first pass's fusion, so tuning rebuilds it once per
(k, weights) pair: one more full-text query per question and pair.

A document the index could not take (ingest failed: a scan without OCR, say) is *missing*: its
questions are still asked and count as misses, since a user would have asked them too. Documents
that were never tried (left out, a kind that cannot be ingested, a missing file) keep their
questions out of the metrics, listed as skipped. On a set that uses the README's
"Capabilities" section the report adds ``by_capability``: each tag's metrics per mode.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import ChunkingSettings, RetrievalSettings
from ..embed import Embedder
from ..errors import InvalidInput
from ..ingest import SUPPORTED_SUFFIXES, FileOutcome, IngestOptions, ingest_file
from ..retrieve.hybrid import (
    MODES,
    ArmRankings,
    Mode,
    add_feedback,
    fuse,
    fusion_depth,
    navigation_last,
    points_elsewhere,
    rank_arms,
)
from ..store import DocumentReader, Documents, Searchable
from .golden import (
    CAPABILITY_TAGS,
    GoldenError,
    GoldenQuestion,
    GoldenSet,
    resolve_document_paths,
)
from .metrics import (
    MAX_K,
    QuestionResult,
    RetrievedChunk,
    score_question,
    summarize_by_tag,
    summarize_results,
)


@dataclass(slots=True, kw_only=True)
class PreparedCorpus:
    """The golden documents as they sit in the index."""

    doc_ids: dict[str, str] = field(default_factory=dict)  # golden name -> stored document id
    skipped_documents: dict[str, str] = field(default_factory=dict)  # golden name -> why
    #: The skipped documents whose ingest was tried and failed: their questions are misses.
    failed_documents: set[str] = field(default_factory=set)

    @property
    def names(self) -> dict[str, str]:
        return {doc_id: name for name, doc_id in self.doc_ids.items()}


def prepare_corpus(
    golden: GoldenSet,
    corpus_root: Path,
    store: Documents,
    embedder: Embedder,
    chunking: ChunkingSettings,
    on_document: Callable[[str], None] | None = None,
    only_suffixes: Collection[str] | None = None,
    on_outcome: Callable[[str, FileOutcome], None] | None = None,
) -> PreparedCorpus:
    """Ingest the golden set's documents (a no-op for those already in the index).

    ``on_document(name)`` hears each document as its turn comes, ``on_outcome(name, outcome)``
    what its ingest did (stored, already in the index, or failed and why).
    ``only_suffixes`` (".pdf", ...): documents of other kinds are left out, counted as skipped
    (the chunking study ingests the PDFs only: a novel takes minutes per configuration)."""
    prepared = PreparedCorpus()
    for name, path in resolve_document_paths(golden, corpus_root).items():
        if on_document is not None:
            on_document(name)
        if only_suffixes is not None and path.suffix.lower() not in only_suffixes:
            prepared.skipped_documents[name] = f"left out (only {', '.join(sorted(only_suffixes))})"
            continue
        if path.suffix.lower() not in SUPPORTED_SUFFIXES:
            prepared.skipped_documents[name] = _not_ingestible(path)
            continue
        if not path.is_file():
            prepared.skipped_documents[name] = f"missing file {path}"
            continue
        outcome = ingest_file(path, store, embedder, IngestOptions(chunking=chunking))
        if on_outcome is not None:
            on_outcome(name, outcome)
        if outcome.status == "failed" or outcome.doc_id is None:
            prepared.skipped_documents[name] = f"{outcome.reason}: {outcome.message}"
            prepared.failed_documents.add(name)
            continue
        prepared.doc_ids[name] = outcome.doc_id
    return prepared


def _not_ingestible(path: Path) -> str:
    """Why the file at ``path`` is no document this index can take, in one sentence."""
    kinds = ", ".join(sorted(SUPPORTED_SUFFIXES))
    if not path.suffix:
        return f"{path.name} has no file extension: only {kinds} files are ingested"
    return f"{path.name} is a {path.suffix} file: only {kinds} files are ingested"


@dataclass(slots=True, kw_only=True)
class QuestionArms:
    question: GoldenQuestion
    arms: ArmRankings


class ChunkCache:
    """Stored chunks as the hit rule sees them, loaded once per id."""

    def __init__(self, store: DocumentReader, names: Mapping[str, str]) -> None:
        self._store = store
        self._names = names
        self._cache: dict[int, RetrievedChunk] = {}
        self.pointing: set[int] = set()  # contents and index pages (hybrid.points_elsewhere)

    def get(self, chunk_ids: Sequence[int]) -> list[RetrievedChunk]:
        missing = [i for i in chunk_ids if i not in self._cache]
        for chunk in self._store.chunks(missing):
            if points_elsewhere(chunk):
                self.pointing.add(chunk.id)
            self._cache[chunk.id] = RetrievedChunk(
                doc=self._names.get(chunk.doc_id, chunk.doc_id),
                unit=chunk.unit,
                text=chunk.text,
                href=chunk.href,  # EPUB evidence is matched by spine href, not by unit index
            )
        return [self._cache[i] for i in chunk_ids if i in self._cache]


def split_questions(
    golden: GoldenSet, prepared: PreparedCorpus
) -> tuple[list[GoldenQuestion], list[dict[str, Any]]]:
    """Answerable questions to evaluate (their documents indexed, or failed to ingest: those
    can only miss), and the skipped ones with why."""
    runnable: list[GoldenQuestion] = []
    skipped: list[dict[str, Any]] = []
    usable = set(prepared.doc_ids) | prepared.failed_documents
    for question in golden.answerable:
        blocked = sorted({e.doc for e in question.evidence if e.doc not in usable})
        if blocked:
            skipped.append(
                {
                    "id": question.id,
                    "documents": blocked,
                    "reason": "; ".join(
                        f"{d}: {prepared.skipped_documents.get(d, 'not indexed')}" for d in blocked
                    ),
                }
            )
        else:
            runnable.append(question)
    return runnable, skipped


def missing_documents(golden: GoldenSet, prepared: PreparedCorpus) -> dict[str, str]:
    """The set's documents that failed to ingest, with why, in the set's order."""
    return {
        name: prepared.skipped_documents.get(name, "failed to ingest")
        for name in golden.documents
        if name in prepared.failed_documents
    }


def by_capability(by_tag: Mapping[str, Mapping[str, Mapping[str, float]]]) -> dict[str, Any]:
    """Per capability tag present (ocr, german, table, cjk), ``n`` and each mode's metrics,
    from the per-mode, per-tag summaries."""
    report: dict[str, Any] = {}
    for tag in CAPABILITY_TAGS:
        rows = {mode: tags[tag] for mode, tags in by_tag.items() if tag in tags}
        if rows:
            n = next(iter(rows.values()))["n"]
            report[tag] = {
                "n": n,
                **{m: {k: v for k, v in r.items() if k != "n"} for m, r in rows.items()},
            }
    return report


def collect_arms(
    questions: Iterable[GoldenQuestion],
    store: Searchable,
    embedder: Embedder,
    settings: RetrievalSettings,
) -> list[QuestionArms]:
    return [
        QuestionArms(question=q, arms=rank_arms(store, embedder, q.question, settings, "hybrid"))
        for q in questions
    ]


def score_mode(
    collected: Sequence[QuestionArms],
    chunks: ChunkCache,
    settings: RetrievalSettings,
    mode: Mode,
) -> list[tuple[QuestionResult, list[RetrievedChunk]]]:
    scored: list[tuple[QuestionResult, list[RetrievedChunk]]] = []
    for item in collected:
        fused = fuse(item.arms, settings, fusion_depth(settings, MAX_K), mode)
        if settings.demote_navigation:  # as search ranks them
            chunks.get([chunk_id for chunk_id, _, _ in fused])
            fused = navigation_last(fused, chunks.pointing, MAX_K)
        ranked = chunks.get([chunk_id for chunk_id, _, _ in fused])
        scored.append((score_question(item.question, ranked, MAX_K), ranked))
    return scored


def _describe(chunk: RetrievedChunk | None) -> dict[str, Any] | None:
    if chunk is None:
        return None
    return {"doc": chunk.doc, "page": chunk.unit + 1, "text": " ".join(chunk.text.split())[:160]}


def _missing_of(question: GoldenQuestion, missing: Mapping[str, str]) -> dict[str, Any]:
    """``{"missing_documents": [...]}`` for a question on a document that failed to ingest."""
    names = sorted({e.doc for e in question.evidence} & set(missing))
    return {"missing_documents": names} if names else {}


def _summarize_by_kind(
    results: Sequence[QuestionResult], kinds: Mapping[str, str]
) -> dict[str, dict[str, float]]:
    """Per document kind of the evidence (pdf, epub), the metrics and ``"n"``."""
    groups: dict[str, list[QuestionResult]] = {}
    for result in results:
        groups.setdefault(kinds[result.id], []).append(result)
    return {
        kind: {"n": float(len(group)), **summarize_results(group)}
        for kind, group in sorted(groups.items())
    }


def evaluate_retrieval(
    golden: GoldenSet,
    prepared: PreparedCorpus,
    store: Searchable,
    embedder: Embedder,
    settings: RetrievalSettings,
) -> dict[str, Any]:
    """The retrieval report: metrics per mode and tag, misses, skipped and per-question ranks."""
    questions, skipped = split_questions(golden, prepared)
    if not questions:
        raise GoldenError("no answerable question has all its documents indexed")
    missing = missing_documents(golden, prepared)
    collected = collect_arms(questions, store, embedder, settings)
    chunks = ChunkCache(store, prepared.names)
    modes: dict[str, Any] = {}
    by_tag: dict[str, Any] = {}
    by_kind: dict[str, Any] = {}
    kinds = {item.question.id: item.question.kind for item in collected}
    per_mode: dict[str, list[tuple[QuestionResult, list[RetrievedChunk]]]] = {}
    for mode in MODES:
        per_mode[mode] = score_mode(collected, chunks, settings, mode)
        results = [result for result, _ in per_mode[mode]]
        modes[mode] = summarize_results(results)
        by_tag[mode] = summarize_by_tag(results)
        by_kind[mode] = _summarize_by_kind(results, kinds)
    misses = [
        {
            "id": result.id,
            "question": item.question.question,
            "expected": [
                {"doc": e.doc, "page": e.page, "section": e.section} for e in item.question.evidence
            ],
            "rank": result.rank,
            "first": _describe(ranked[0] if ranked else None),
            **_missing_of(item.question, missing),
        }
        for item, (result, ranked) in zip(collected, per_mode["hybrid"], strict=True)
        if result.rank is None or result.rank > 8
    ]
    per_question = [
        {
            "id": item.question.id,
            "tags": list(item.question.tags),
            **{f"{mode}_rank": per_mode[mode][i][0].rank for mode in MODES},
            **_missing_of(item.question, missing),
        }
        for i, item in enumerate(collected)
    ]
    # Keys a plain set (dev.json) has no use for are left out, so its report stays as it was.
    extra: dict[str, Any] = {}
    if golden.uses_capabilities:
        extra["by_capability"] = by_capability(by_tag)
    if missing:
        extra["missing_documents"] = missing
    return {
        "modes": modes,
        "by_tag": by_tag,
        "by_kind": by_kind,
        **extra,
        "questions": len(questions),
        "settings": settings.model_dump(),
        "misses": misses,
        "skipped": skipped,
        "per_question": per_question,
    }


# -- tuning ---------------------------------------------------------------------------------

RRF_KS: tuple[float, ...] = (1, 5, 10, 20, 40, 60, 100)
DENSE_TO_FTS: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0)
PRF_WEIGHTS: tuple[float, ...] = (0.0, 0.5, 1.0)
LATE_WEIGHTS: tuple[float, ...] = (0.0, 0.5, 0.75, 1.0, 1.5)


def _score_grid(
    collected: Sequence[QuestionArms],
    store: Searchable,
    chunks: ChunkCache,
    configs: Sequence[RetrievalSettings],
) -> list[dict[str, QuestionResult]]:
    """Each configuration's result per question id, scored from the lists collected once. The
    feedback list is added per fusion of the other lists (configurations that differ only in
    the feedback weight share it), its chunk texts read once for all."""
    texts: dict[int, str] = {}
    with_feedback: dict[tuple[float, ...], list[QuestionArms]] = {}
    results: list[dict[str, QuestionResult]] = []
    for config in configs:
        items = collected
        if config.prf_weight > 0:
            # the feedback chunks come from the fusion of the other lists under this config
            # (the document prior moves the first pass's top chunks too)
            pair = (
                config.rrf_k,
                config.fts_weight,
                config.dense_weight,
                config.late_weight,
                config.document_prior_weight,
            )
            if pair not in with_feedback:
                with_feedback[pair] = [
                    QuestionArms(
                        question=item.question,
                        arms=add_feedback(store, item.question.question, item.arms, config, texts),
                    )
                    for item in collected
                ]
            items = with_feedback[pair]
        scored = score_mode(items, chunks, config, "hybrid")
        results.append({r.id: r for r, _ in scored})
    return results


def _best_config(
    results: Sequence[Mapping[str, QuestionResult]],
    configs: Sequence[RetrievalSettings],
    base: RetrievalSettings,
    ids: Collection[str],
) -> int:
    """The index of the configuration that scores best on the questions ``ids``
    (:func:`_objective`); among equals, the one nearest the current defaults ``base``."""
    return max(
        range(len(configs)),
        key=lambda c: (
            _objective(summarize_results([results[c][i] for i in sorted(ids)])),
            # prefer the current defaults when tied
            -abs(configs[c].rrf_k - base.rrf_k),
            -abs(configs[c].prf_weight - base.prf_weight),
            -abs(configs[c].document_prior_weight - base.document_prior_weight),
            -abs(configs[c].late_weight - base.late_weight),
            -abs(configs[c].dense_weight - base.dense_weight),
        ),
    )


def _objective(summary: Mapping[str, float]) -> tuple[float, float, float]:
    """Recall@8 first (the passage must be among the sources), then MRR, then Recall@5."""
    return (summary["recall@8"], summary["mrr"], summary["recall@5"])


def grid(base: RetrievalSettings) -> list[RetrievalSettings]:
    """The tuning grid: RRF k by the dense arm's weight relative to the full-text arm's by the
    late-interaction list's weight by the feedback list's weight (0: that list is off)."""
    return [
        base.model_copy(
            update={
                "rrf_k": k,
                "fts_weight": 1.0,
                "dense_weight": ratio,
                "late_weight": late,
                "prf_weight": prf,
            }
        )
        for k in RRF_KS
        for ratio in DENSE_TO_FTS
        for late in LATE_WEIGHTS
        for prf in PRF_WEIGHTS
    ]


def _config(config: RetrievalSettings) -> dict[str, float]:
    return {
        "rrf_k": config.rrf_k,
        "fts_weight": config.fts_weight,
        "dense_weight": config.dense_weight,
        "late_weight": config.late_weight,
        "prf_weight": config.prf_weight,
        "document_prior_weight": config.document_prior_weight,
    }


def _folds(ids: Sequence[str], k: int, seed: int) -> list[set[str]]:
    shuffled = sorted(ids)
    random.Random(seed).shuffle(shuffled)
    return [set(shuffled[i::k]) for i in range(k)]


@dataclass(slots=True, kw_only=True)
class GridScores:
    """Every tuning configuration's result on every runnable question of one set, from one
    pass of searches: ``results[c][id]`` is configuration ``configs[c]``'s result on ``id``."""

    questions: list[GoldenQuestion]
    skipped: list[dict[str, Any]]
    configs: list[RetrievalSettings]
    results: list[dict[str, QuestionResult]]


def score_grid(
    golden: GoldenSet,
    prepared: PreparedCorpus,
    store: Searchable,
    embedder: Embedder,
    base: RetrievalSettings,
    configs: Sequence[RetrievalSettings] | None = None,
) -> GridScores:
    """The tuning grid (``configs``, by default :func:`grid`) scored on the set's runnable
    questions."""
    questions, skipped = split_questions(golden, prepared)
    if not questions:
        raise GoldenError("no answerable question has all its documents indexed")
    # every list is collected once (late weight > 0 computes it); each config weighs them
    collected = collect_arms(
        questions, store, embedder, base.model_copy(update={"prf_weight": 0, "late_weight": 1.0})
    )
    chunks = ChunkCache(store, prepared.names)
    configs = list(configs) if configs is not None else grid(base)
    return GridScores(
        questions=questions,
        skipped=skipped,
        configs=configs,
        results=_score_grid(collected, store, chunks, configs),
    )


def best_config(
    results: Sequence[Mapping[str, QuestionResult]],
    configs: Sequence[RetrievalSettings],
    base: RetrievalSettings,
    ids: Collection[str],
) -> int:
    """The index of the configuration that scores best on the questions ``ids``: Recall@8
    first, then MRR, then Recall@5; among equals, the one nearest the current defaults."""
    return _best_config(results, configs, base, ids)


def config_values(config: RetrievalSettings) -> dict[str, float]:
    """The tuned values of ``config`` (RRF k and the list weights)."""
    return _config(config)


def tune_retrieval(
    golden: GoldenSet,
    prepared: PreparedCorpus,
    store: Searchable,
    embedder: Embedder,
    base: RetrievalSettings,
    *,
    folds: int = 5,
    seed: int = 13,
) -> dict[str, Any]:
    """Grid over RRF k and arm weights with k-fold cross-validation on the golden set."""
    questions, _ = split_questions(golden, prepared)
    if questions and len(questions) < folds:
        raise InvalidInput(
            f"{folds} folds need at least {folds} answerable questions whose documents are "
            f"indexed; there are {len(questions)}"
        )
    scores = score_grid(golden, prepared, store, embedder, base)
    configs, results = scores.configs, scores.results

    all_ids = {q.id for q in scores.questions}
    held_out: list[QuestionResult] = []
    fold_reports = []
    for fold in _folds(sorted(all_ids), folds, seed):
        chosen = _best_config(results, configs, base, all_ids - fold)
        held_out.extend(results[chosen][i] for i in sorted(fold))
        fold_reports.append(
            {
                "test_questions": len(fold),
                "chosen": _config(configs[chosen]),
                "test": summarize_results([results[chosen][i] for i in sorted(fold)]),
            }
        )
    chosen = _best_config(results, configs, base, all_ids)
    table = [
        {
            **_config(config),
            **summarize_results(list(results[c].values())),
        }
        for c, config in enumerate(configs)
    ]
    return {
        "questions": len(scores.questions),
        "skipped": scores.skipped,
        "configurations": len(configs),
        "folds": folds,
        "seed": seed,
        "cross_validated": summarize_results(held_out),
        "fold_choices": fold_reports,
        "chosen": {
            **_config(configs[chosen]),
            "full_set": summarize_results(list(results[chosen].values())),
        },
        "grid": table,
    }


__all__ = [
    "GridScores",
    "PreparedCorpus",
    "best_config",
    "by_capability",
    "config_values",
    "evaluate_retrieval",
    "missing_documents",
    "prepare_corpus",
    "score_grid",
    "tune_retrieval",
]
