"""The MCP tools over what a user keeps of answers: their saved threads (listed, searched,
opened with every citation checked again), a thread's read-only link (made, revoked), feedback
on an answer or one of its citations, and the re-check of an exported evidence report.

Each is one call of the application service (:class:`truthbase.app.Service`), whose rules are
the HTTP API's (:mod:`truthbase.app.threads`, :mod:`~truthbase.app.shares`,
:mod:`~truthbase.app.feedback`, :mod:`~truthbase.app.exports`): a thread is its owner's alone
(anyone else's is NotFound); a link is made by a signed-in user only (over stdio the caller is
the operator, whose threads are the local user's: Forbidden); a report is re-checked by those
who see every document. These handlers only translate.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..app.exports import MAX_REPORT_BYTES
from ..app.feedback import COMMENT_MAX_CHARS
from ..people import FeedbackKind
from .base import Arguments, Call, Tool

__all__ = [
    "KEPT_TOOLS",
    "FeedbackArguments",
    "ReportArguments",
    "ThreadArguments",
    "ThreadListArguments",
    "without_rects",
]

_THREAD_ID = r"^[0-9a-f]{32}$"

_LIST_THREADS = (
    "List your saved threads (conversations kept with their evidence; ask with new_thread "
    "starts one), newest first: id, title, number of turns, last update. With search, only "
    "those whose questions or answers hold, for every one of its words, a word that begins with "
    "it (any case)."
)

_OPEN_THREAD = (
    "Open one of your saved threads: every question, its answer and each citation, checked "
    "again against the index now. Each citation's recheck.state is 'current' (still on its "
    "page at its span), 'changed' (the document's text differs there now), 'deleted', "
    "'hidden' (no longer visible to you; its quote is withheld) or 'unchecked' (it was shown "
    "as unverified), with recheck.reason. Only 'current' citations still hold."
)

_SHARE_THREAD = (
    "Make a read-only link to one of your saved threads (the one it has, if it has one): it "
    "opens in the web app for signed-in users who may see every document the thread cites. "
    "Returns the token and the link's path (url, absolute when the server's base URL is set)."
)

_UNSHARE_THREAD = (
    "Revoke the read-only links of one of your saved threads, for good (none open is no error)."
)

_GIVE_FEEDBACK = (
    "Report on an answer you were given (ask's answer_id): kind 'up' or 'down' on the answer "
    "as a whole (citation 0), 'wrong_passage' on its citation n, 'passage_missing' on a "
    "citation n or on the answer (0: the supporting passage is not cited at all); an optional "
    "comment. A later report of the same group (up/down; wrong/missing) on the same answer and "
    "citation replaces the earlier. Reports feed the evaluation's draft golden set."
)

_VERIFY_REPORT = (
    "Re-check an exported evidence report (the whole text of the HTML file that export wrote) "
    "against the index: each citation it shows on its page must still be in the page text at "
    "its span, and each cited document (by sha256) still in the index. Returns ok, the counts, "
    "and in problems each citation that no longer holds (answer id, n, document, page, why). "
    "For users who see every document."
)


class ThreadListArguments(Arguments):
    search: str | None = Field(
        default=None,
        min_length=1,
        max_length=1000,
        description="Words the thread's questions or answers must all hold.",
    )


class ThreadArguments(Arguments):
    thread: str = Field(
        pattern=_THREAD_ID, description="A saved thread's id (list_threads, or ask's thread)."
    )


class FeedbackArguments(Arguments):
    answer_id: int = Field(ge=1, description="The answer's id (ask's answer_id).")
    kind: FeedbackKind = Field(description="'up', 'down', 'wrong_passage' or 'passage_missing'.")
    citation: int = Field(
        default=0, ge=0, description="The citation n it is about; 0: the answer as a whole."
    )
    comment: str = Field(
        default="", max_length=COMMENT_MAX_CHARS, description="What is wrong, for a person."
    )


class ReportArguments(Arguments):
    report: str = Field(
        min_length=1,
        max_length=MAX_REPORT_BYTES,
        description="The exported HTML evidence report's whole text.",
    )


def without_rects(citation: dict[str, Any]) -> dict[str, Any]:
    """A citation record without its boxes (its own and its conflict's): page geometry is of
    no use to a model."""
    row = {k: v for k, v in citation.items() if k != "rects"}
    if isinstance(row.get("conflict"), dict):
        row["conflict"] = {k: v for k, v in row["conflict"].items() if k != "rects"}
    return row


def _model_answer(answer: dict[str, Any]) -> dict[str, Any]:
    """A stored answer as a model reads it: no page geometry, no internal chunk ids."""
    citations = answer.get("citations")
    sources = answer.get("sources")
    return {
        **answer,
        "citations": [
            without_rects(c) if isinstance(c, dict) else c
            for c in (citations if isinstance(citations, list) else [])
        ],
        "sources": [
            {k: v for k, v in s.items() if k not in ("rects", "chunk_id")}
            if isinstance(s, dict)
            else s
            for s in (sources if isinstance(sources, list) else [])
        ],
    }


def _list_threads(call: Call, args: ThreadListArguments) -> dict[str, Any]:
    return {"threads": [t.to_json() for t in call.service.threads(args.search)]}


def _open_thread(call: Call, args: ThreadArguments) -> dict[str, Any]:
    opened = call.service.thread(args.thread).to_json()
    for turn in opened["turns"]:
        turn["answer"] = _model_answer(turn["answer"])
    return opened


def _share_thread(call: Call, args: ThreadArguments) -> dict[str, Any]:
    share = call.service.share_thread(args.thread)
    row = share.to_json()
    base = call.service.settings.server.base_url
    if base:
        row["url"] = base.rstrip("/") + share.path
    return {"thread": args.thread, **row}


def _unshare_thread(call: Call, args: ThreadArguments) -> dict[str, Any]:
    call.service.revoke_share(args.thread)
    return {"thread": args.thread, "revoked": True}


def _give_feedback(call: Call, args: FeedbackArguments) -> dict[str, Any]:
    record = call.service.give_feedback(
        args.answer_id, args.kind, citation=args.citation, comment=args.comment
    )
    return record.to_json()


def _verify_report(call: Call, args: ReportArguments) -> dict[str, Any]:
    return call.service.verify_report(args.report).to_json()


#: The tools over what a user keeps, in the order a model lists them.
KEPT_TOOLS = (
    Tool("list_threads", _LIST_THREADS, ThreadListArguments, _list_threads),
    Tool("open_thread", _OPEN_THREAD, ThreadArguments, _open_thread),
    Tool("share_thread", _SHARE_THREAD, ThreadArguments, _share_thread, read_only=False),
    Tool("unshare_thread", _UNSHARE_THREAD, ThreadArguments, _unshare_thread, read_only=False),
    Tool("give_feedback", _GIVE_FEEDBACK, FeedbackArguments, _give_feedback, read_only=False),
    Tool("verify_report", _VERIFY_REPORT, ReportArguments, _verify_report),
)
