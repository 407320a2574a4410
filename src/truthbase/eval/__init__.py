"""Evaluation against golden sets: loading them, and retrieval metrics under the hit rule."""

from __future__ import annotations

from .golden import (
    GoldenError,
    GoldenEvidence,
    GoldenQuestion,
    GoldenSet,
    default_corpus_root,
    load_golden,
    resolve_document_paths,
)
from .metrics import (
    QuestionResult,
    RetrievedChunk,
    chunk_contains,
    first_hit_rank,
    ndcg_at,
    score_question,
    summarize,
    summarize_by_tag,
    summarize_results,
)

__all__ = [
    "GoldenError",
    "GoldenEvidence",
    "GoldenQuestion",
    "GoldenSet",
    "QuestionResult",
    "RetrievedChunk",
    "chunk_contains",
    "default_corpus_root",
    "first_hit_rank",
    "load_golden",
    "ndcg_at",
    "resolve_document_paths",
    "score_question",
    "summarize",
    "summarize_by_tag",
    "summarize_results",
]
