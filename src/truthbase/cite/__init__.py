"""Citations: parse [n] markers and position tags, resolve them to spans, verify each span.

Why a citation is verified (or supported): :mod:`.resolve`. The tag format: :mod:`.tags`. What
counts as a refusal in the text: :mod:`.refusal`.
"""

from __future__ import annotations

from .audit import (
    DOCUMENT_DELETED,
    AuditFailure,
    AuditReport,
    DeletedCitation,
    check_citation,
    verify_answers,
)
from .parse import Claim, ParsedAnswer, Tag, defuse_markers, parse_answer, strip_markers
from .refusal import is_refusal
from .resolve import (
    Resolution,
    Support,
    UnitCache,
    UnitReader,
    align_claim,
    citation_state,
    claim_support,
    make_citation,
    resolve_citations,
    span_verified,
)

__all__ = [
    "DOCUMENT_DELETED",
    "AuditFailure",
    "AuditReport",
    "Claim",
    "DeletedCitation",
    "ParsedAnswer",
    "Resolution",
    "Support",
    "Tag",
    "UnitCache",
    "UnitReader",
    "align_claim",
    "check_citation",
    "citation_state",
    "claim_support",
    "defuse_markers",
    "is_refusal",
    "make_citation",
    "parse_answer",
    "resolve_citations",
    "span_verified",
    "strip_markers",
    "verify_answers",
]
