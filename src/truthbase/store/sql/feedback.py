"""Feedback on shown answers, written once for both backends: the ``feedback`` table.

Who may report on which answer, and who may list whose reports, is the application's
(:mod:`truthbase.app.feedback`); these methods write and read what they are asked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from ...people import FEEDBACK_GROUPS, FeedbackKind, FeedbackRecord, NewFeedback
from ..codec import now_iso
from .dialect import Dialect

__all__ = ["FeedbackRows"]

_COLUMNS = (
    "f.id, f.answer_id, f.citation, f.kind, f.comment, f.user_id, u.name, a.question, f.created_at"
)
_FROM = "FROM feedback f JOIN answers a ON a.id = f.answer_id LEFT JOIN users u ON u.id = f.user_id"


def _record(row: Sequence[Any]) -> FeedbackRecord:
    return FeedbackRecord(
        id=int(row[0]),
        answer_id=int(row[1]),
        citation=int(row[2]),
        kind=cast(FeedbackKind, row[3]),
        comment=str(row[4]),
        user_id=row[5],
        user=row[6],
        question=str(row[7]),
        created_at=str(row[8]),
    )


def _group(kind: FeedbackKind) -> tuple[FeedbackKind, ...]:
    return next(g for g in FEEDBACK_GROUPS if kind in g)


class FeedbackRows:
    """:class:`~truthbase.store.base.FeedbackLog` over :attr:`_sql`."""

    _sql: Dialect

    def put_feedback(self, report: NewFeedback) -> int:
        """Keep ``report``, replacing its user's earlier one of the same group on the same
        answer and citation, in one transaction; returns its id."""
        group = _group(report.kind)
        marks = ", ".join("?" for _ in group)
        # "user_id = NULL" matches nothing: the operator's and local user's reports by IS NULL.
        same_user = "user_id IS NULL" if report.user_id is None else "user_id = ?"
        user_args = () if report.user_id is None else (report.user_id,)
        with self._sql.write() as conn:
            conn.execute(
                f"DELETE FROM feedback WHERE answer_id = ? AND citation = ? "
                f"AND kind IN ({marks}) AND {same_user}",
                (report.answer_id, report.citation, *group, *user_args),
            )
            row = conn.execute(
                "INSERT INTO feedback(answer_id, citation, kind, comment, user_id, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                (
                    report.answer_id,
                    report.citation,
                    report.kind,
                    report.comment,
                    report.user_id,
                    now_iso(),
                ),
            ).fetchone()
        return int(row[0])

    def feedback(
        self,
        *,
        user_id: str | None = None,
        everyone: bool = False,
        limit: int | None = None,
        answer_id: int | None = None,
    ) -> list[FeedbackRecord]:
        """Reports, newest first: ``everyone``'s, or those of ``user_id`` (None: the operator's
        and the local user's), on answer ``answer_id`` only when given; at most ``limit``."""
        conditions: list[str] = []
        args: list[Any] = []
        if not everyone:
            conditions.append("f.user_id IS NULL" if user_id is None else "f.user_id = ?")
            args.extend(() if user_id is None else (user_id,))
        if answer_id is not None:
            conditions.append("f.answer_id = ?")
            args.append(answer_id)
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        tail = "" if limit is None else " LIMIT ?"
        with self._sql.read() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} {_FROM}{where} ORDER BY f.created_at DESC, f.id DESC{tail}",
                (*args, *(() if limit is None else (limit,))),
            ).fetchall()
        return [_record(r) for r in rows]
