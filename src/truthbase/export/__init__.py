"""Exports that can be re-verified: stored answers (one, or a thread's in order) as Markdown
with a footnote per citation, or as one self-contained HTML evidence report whose embedded
evidence ``truthbase verify --report`` re-checks against an index.

Pure writers (:mod:`.markdown`, :mod:`.html`) over the records of :mod:`.evidence`; the I/O
shell that gathers them from an index and renders the cited regions (:mod:`.collect`,
:mod:`.render`); the re-check (:mod:`.recheck`) over the audit of :mod:`truthbase.cite`.
"""

from __future__ import annotations

from .collect import LinkMaker, collect_answers
from .evidence import CitedEvidence, ExportedAnswer, PassageContext, evidence_json
from .html import html_report, read_evidence
from .markdown import markdown_report
from .recheck import NOT_IN_INDEX, ReportCheck, ReportProblem, recheck_report

__all__ = [
    "NOT_IN_INDEX",
    "CitedEvidence",
    "ExportedAnswer",
    "LinkMaker",
    "PassageContext",
    "ReportCheck",
    "ReportProblem",
    "collect_answers",
    "evidence_json",
    "html_report",
    "markdown_report",
    "read_evidence",
    "recheck_report",
]
