"""Citations: parse [n] markers and position tags, resolve them to spans, verify each span."""

from __future__ import annotations

from .audit import AuditFailure, AuditReport, check_citation, verify_answers
from .parse import Claim, ParsedAnswer, Tag, is_refusal, parse_answer, strip_markers
from .resolve import (
    MIN_SUPPORT,
    Resolution,
    UnitCache,
    UnitReader,
    align_claim,
    make_citation,
    resolve_citations,
    span_verified,
)

__all__ = [
    "MIN_SUPPORT",
    "AuditFailure",
    "AuditReport",
    "Claim",
    "ParsedAnswer",
    "Resolution",
    "Tag",
    "UnitCache",
    "UnitReader",
    "align_claim",
    "check_citation",
    "is_refusal",
    "make_citation",
    "parse_answer",
    "resolve_citations",
    "span_verified",
    "strip_markers",
    "verify_answers",
]
