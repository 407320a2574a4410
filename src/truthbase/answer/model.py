"""The answer's records and the typed events of one answer's stream.

The stream of one answer is ``sources`` first, then ``token``s, then ``citations``, then ``done``
(or ``error`` at any point, which ends the stream). The server turns each event into one
server-sent event with :meth:`to_json`; the CLI prints them; :func:`truthbase.answer.ask` keeps
only the final :class:`Answer`.

Pages are 1-based (the n-th page of the file); ``unit`` is the 0-based unit index; ``start`` and
``end`` are offsets into that unit's canonical text. Rects are in PDF user space.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..records import NO_ANSWER, Citation, Source
from ..turns import CitedSpan, Resolution, Turn

__all__ = [
    "NO_ANSWER",
    "Answer",
    "Citation",
    "CitationsEvent",
    "DoneEvent",
    "ErrorEvent",
    "Event",
    "Source",
    "SourcesEvent",
    "TokenEvent",
]


@dataclass(slots=True, kw_only=True)
class Answer:
    """The final answer object (what ``ask --json`` prints and ``done`` carries)."""

    question: str
    text: str
    sources: list[Source]
    citations: list[Citation]
    refused: bool
    answerer: str
    timings: dict[str, float] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # dropped markers, unresolved tags
    info: dict[str, Any] = field(default_factory=dict)  # what the answerer reports
    id: int | None = None  # the stored answer's id (``truthbase verify`` names it)
    #: "weak": refused, but the closest passages are worth showing (answer.policy); a weak
    #: answer is refused too.
    outcome: Literal["answered", "weak", "refused"] = "answered"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "question": self.question,
            "text": self.text,
            "refused": self.refused,
            "outcome": self.outcome,
            "answerer": self.answerer,
            "sources": [s.to_json() for s in self.sources],
            "citations": [c.to_json() for c in self.citations],
            "problems": list(self.problems),
            "info": dict(self.info),
            "timings": {k: round(v, 4) for k, v in self.timings.items()},
        }

    def as_turn(self, question: str, searched_for: str | None = None) -> Turn:
        """This answer as an earlier turn of a thread (``question`` as the user asked it; the
        answer's own ``question`` is what was searched): a refusal keeps no text."""
        return Turn(
            question=question,
            answer="" if self.refused else self.text,
            citations=tuple(
                CitedSpan(doc_id=c.doc_id, unit=c.unit, start=c.start, end=c.end, quote=c.quote)
                for c in self.citations
            ),
            searched_for=searched_for,
        )


@dataclass(frozen=True, slots=True)
class SourcesEvent:
    sources: tuple[Source, ...]
    kind: Literal["sources"] = "sources"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.kind, "sources": [s.to_json() for s in self.sources]}


@dataclass(frozen=True, slots=True)
class TokenEvent:
    text: str
    kind: Literal["token"] = "token"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.kind, "text": self.text}


@dataclass(frozen=True, slots=True)
class CitationsEvent:
    citations: tuple[Citation, ...]
    problems: tuple[str, ...] = ()
    kind: Literal["citations"] = "citations"

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.kind,
            "citations": [c.to_json() for c in self.citations],
            "problems": list(self.problems),
        }


@dataclass(frozen=True, slots=True)
class DoneEvent:
    """The whole answer; for a question asked in a thread, also how it was resolved: the
    data's ``searched_for`` is what the user is shown as "searched for: ...", and ``thread``
    the saved thread it was kept in."""

    answer: Answer
    resolution: Resolution | None = None
    #: The saved thread the answer was appended to (None: not kept in a thread).
    thread: str | None = None
    kind: Literal["done"] = "done"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.kind, "answer": self.answer.to_json()}
        if self.resolution is not None:
            data["searched_for"] = self.resolution.searched_for
            data["resolution"] = self.resolution.to_json()
        if self.thread is not None:
            data["thread"] = self.thread
        return data


@dataclass(frozen=True, slots=True)
class ErrorEvent:
    message: str
    stage: str
    kind: Literal["error"] = "error"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.kind, "stage": self.stage, "message": self.message}


Event = SourcesEvent | TokenEvent | CitationsEvent | DoneEvent | ErrorEvent
