"""Retrieval: the full-text query, the fusion of arms, and hybrid search over a store."""

from __future__ import annotations

from .fts_query import build_fts_query
from .fusion import weighted_rrf

__all__ = ["build_fts_query", "weighted_rrf"]
