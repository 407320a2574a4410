"""Exports and their re-check, with who may export what.

An answer is exported (:mod:`truthbase.export`) for a viewer who sees everything, or for the
user who asked it (:func:`truthbase.access.owns_answer`) while they may still see every document
it cites; anything else is NotFound, exactly as a missing answer. A report is re-checked against
the whole index, by those who see all of it (the CLI's operator, admins).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Literal

from ..access import may_see, owns_answer, sees_everything
from ..errors import InvalidInput, NotFound
from ..export import (
    ReportCheck,
    collect_answers,
    html_report,
    markdown_report,
    read_evidence,
    recheck_report,
)
from ..people import Viewer
from ..records import StoredAnswer
from ..store import Store
from ..text.valid import quoted
from .errors import Forbidden
from .passages import viewer_url

__all__ = [
    "EXPORT_FORMATS",
    "MAX_REPORT_BYTES",
    "REPORT_MEDIA_TYPES",
    "ExportFile",
    "ExportFormat",
    "export_answers",
    "verify_report",
]

ExportFormat = Literal["md", "html"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("md", "html")

_MEDIA_TYPES = {"md": "text/markdown; charset=utf-8", "html": "text/html; charset=utf-8"}

#: The largest report a door hands to :func:`verify_report` (UTF-8 bytes): an HTML report
#: carries a PNG per citation, some 100 KB each, so this holds a long thread's with room.
MAX_REPORT_BYTES = 32 * 1024 * 1024
#: The media types a report is sent as (what the export routes serve, and plain text).
REPORT_MEDIA_TYPES = ("text/html", "text/markdown", "text/plain")


@dataclass(frozen=True, slots=True)
class ExportFile:
    """An export: its text, its media type and a file name for it."""

    content: str
    media_type: str
    filename: str


def _readable(store: Store, viewer: Viewer, answer_id: int) -> StoredAnswer:
    """Stored answer ``answer_id`` when the viewer may export it (module doc); NotFound
    otherwise, with the same message as for a missing one."""
    stored = store.answer(answer_id)
    missing = NotFound(f"no answer {answer_id}")
    if stored is None:
        raise missing
    if sees_everything(viewer):
        return stored
    if not owns_answer(viewer, stored.asked_by):
        raise missing
    citations = stored.answer.get("citations")
    cited = {c.get("doc_id") for c in citations if isinstance(c, dict)} if citations else set()
    if not cited:
        raise missing
    for doc_id in cited:
        info = store.document(doc_id) if isinstance(doc_id, str) else None
        if info is None or not may_see(viewer, info):
            raise missing
    return stored


def export_answers(
    store: Store,
    viewer: Viewer,
    answer_ids: Sequence[int],
    fmt: str,
    base_url: str | None,
) -> ExportFile:
    """Answers ``answer_ids`` (one, or a thread's in order) as Markdown (``md``) or one HTML
    evidence report (``html``); each citation links to the web app under ``base_url`` (None:
    no links)."""
    if fmt not in EXPORT_FORMATS:
        raise InvalidInput(f"format {quoted(fmt)}: choose md or html")
    if not answer_ids:
        raise InvalidInput("name at least one answer to export")
    answers = [_readable(store, viewer, i) for i in answer_ids]
    link = partial(viewer_url, base_url) if base_url else None
    exported = collect_answers(store, answers, link)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    write = markdown_report if fmt == "md" else html_report
    name = "-".join(str(i) for i in answer_ids[:3]) + ("-etc" if len(answer_ids) > 3 else "")
    return ExportFile(write(exported, now), _MEDIA_TYPES[fmt], f"truthbase-answer-{name}.{fmt}")


def verify_report(store: Store, viewer: Viewer, report: str) -> ReportCheck:
    """Re-check an exported report (HTML, or a Markdown export: both carry the evidence)
    against the index, for every door (``verify --report``, ``POST /api/reports/verify``, MCP's
    ``verify_report``): each citation it shows on its page
    must still be there (:func:`truthbase.export.recheck_report`). InvalidInput for a file that
    is not a report; Forbidden for a viewer who does not see every document (the answer would
    tell which documents the index holds)."""
    if not sees_everything(viewer):
        raise Forbidden("re-checking a report is for those who see every document")
    if len(report.encode("utf-8", "surrogatepass")) > MAX_REPORT_BYTES:
        raise InvalidInput(f"the report is larger than {MAX_REPORT_BYTES} bytes")
    evidence = read_evidence(report)
    known = {d.id for d in store.list_documents()}
    return recheck_report(evidence, store, known)
