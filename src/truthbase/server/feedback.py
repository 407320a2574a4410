"""Feedback on shown answers over HTTP: a report on an answer or one of its citations, and the
latest reports (everyone's for admins, else one's own). Who may report on which answer is
:mod:`truthbase.app.feedback`'s."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from ..app.feedback import COMMENT_MAX_CHARS, LATEST
from ..records import MAX_INDEX
from .deps import CurrentService
from .schemas import AnswerId

__all__ = ["router"]

router = APIRouter()


class FeedbackIn(BaseModel):
    """A report: ``citation`` 0 (the answer as a whole) for up and down, else the [n]."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["up", "down", "wrong_passage", "passage_missing"]
    citation: int = Field(default=0, ge=0, le=MAX_INDEX)
    comment: str = Field(default="", max_length=COMMENT_MAX_CHARS)


@router.post("/api/answers/{answer_id}/feedback", tags=["feedback"])
async def give_feedback(
    answer_id: AnswerId, body: FeedbackIn, service: CurrentService
) -> dict[str, Any]:
    """Report on an answer you were shown (404 for one you may not see); a later report of the
    same group (up/down; wrong/missing) on the same answer and citation replaces yours."""
    report = await run_in_threadpool(
        service.give_feedback,
        answer_id,
        body.kind,
        citation=body.citation,
        comment=body.comment,
    )
    return report.to_json()


@router.get("/api/answers/{answer_id}/feedback", tags=["feedback"])
async def own_feedback(answer_id: AnswerId, service: CurrentService) -> dict[str, Any]:
    """Your own reports on an answer you were shown, newest first (404 for one you may not
    see): a reopened answer's buttons show them as given."""
    reports = await run_in_threadpool(service.own_feedback, answer_id)
    return {"reports": [r.to_json() for r in reports]}


@router.get("/api/feedback", tags=["feedback"])
async def latest_feedback(service: CurrentService, limit: int = LATEST) -> dict[str, Any]:
    """The latest reports, newest first: everyone's for admins, else your own."""
    reports = await run_in_threadpool(service.feedback_reports, max(1, min(limit, 500)))
    return {"reports": [r.to_json() for r in reports]}
