"""The answer shell: what every mode does after its answerer has written a text.

The answerers (extractive, LLM, the agent's loop and the extractive agent) only produce sources
and text. :func:`settle` screens the text's position tags (agent mode: only tags of spans the
tools produced), parses the markers and tags, resolves and verifies every citation
(:func:`truthbase.cite.resolve_citations`: the quote check and the support check, for markers
and tags alike) and decides ``refused`` (:mod:`.policy`). :func:`finish` emits the ``citations``
and ``done`` events. :func:`truthbase.answer.pipeline.answer_question` and
:func:`truthbase.answer.agent.agent_events` both end through here; agent mode asks
:func:`.policy.model_answer_stands` whether the model's settled answer stands or the extractive
agent answers instead (and settles that one here too).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..cite import parse_answer, resolve_citations
from ..cite.judge import Judge
from ..cite.resolve import UnitReader
from ..cite.tags import TAG, TAG_LIKE, format_tag
from ..embed import Embedder
from ..records import NO_ANSWER, Citation, Source
from ..telemetry import span
from .model import Answer, CitationsEvent, DoneEvent, Event
from .policy import answer_outcome, answer_refused

__all__ = ["Settled", "finish", "screen_tags", "settle", "source_tags"]

# A tag-like string with the spaces before it (removed with it).
_SCREENED = re.compile(rf"[ \t]*{TAG_LIKE.pattern}")


@dataclass(slots=True, kw_only=True)
class Settled:
    """An answer text after the shell: its citations resolved, its refusal decided."""

    text: str  # screened: dropped tags removed
    final: str  # rendered: [n] markers only, dropped ones removed, or NO_ANSWER
    refused: bool
    citations: list[Citation] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def source_tags(sources: Iterable[Source]) -> set[str]:
    """The tags of the sources' exact spans: the spans a tool produced."""
    return {format_tag(s.unit, s.start, s.end) for s in sources}


def screen_tags(
    text: str, shown: set[str], sources: Iterable[Source] = ()
) -> tuple[str, list[str]]:
    """``text`` without the tags that may not be resolved, and why each was dropped.

    Allowed: the tags in ``shown`` and those of the ``sources``' exact spans. Dropped: malformed
    tags (two parts, four parts, spaces inside) and well-formed tags not allowed (the model
    copies tags; it does not compute them, and a tag that stood in a document's own text was
    never a tool's). Tags outside every source are left for
    :func:`truthbase.cite.resolve_citations`, which drops and reports them.
    """
    allowed = shown | source_tags(sources)
    problems: list[str] = []

    def check(match: re.Match[str]) -> str:
        raw = match.group().strip()
        if not TAG.fullmatch(raw):
            problems.append(
                f"malformed tag {raw} (tags are [f{{unit}}-{{start}}-{{end}}]); dropped"
            )
            return ""
        if raw not in allowed:
            problems.append(f"tag {raw} is not in this turn's tool results; dropped")
            return ""
        return match.group()

    return _SCREENED.sub(check, text), problems


def settle(
    text: str,
    sources: Sequence[Source],
    reader: UnitReader,
    embedder: Embedder | None,
    *,
    shown: set[str] | None = None,
    judge: Judge | None = None,
) -> Settled:
    """Screen (when ``shown`` is given: the tags the tools produced), resolve, verify (with the
    model ``judge`` when given, :mod:`truthbase.cite.judge`), decide."""
    problems: list[str] = []
    if shown is not None:
        text, problems = screen_tags(text, shown, sources)
    parsed = parse_answer(text)
    with span("resolve", claims=len(parsed.claims)):
        resolution = resolve_citations(parsed, sources, reader, embedder, judge)
    final = NO_ANSWER if parsed.refused else resolution.text.strip()
    refused = answer_refused(parsed.refused, final)
    return Settled(
        text=text,
        # A refusal reads NO_ANSWER, also when nothing was left once dropped markers went.
        final=NO_ANSWER if refused else final,
        refused=refused,
        citations=resolution.citations,
        problems=[*problems, *resolution.problems],
    )


def finish(
    question: str,
    settled: Settled,
    sources: Sequence[Source],
    *,
    answerer: str,
    timings: dict[str, float],
    info: dict[str, Any],
    began: float,
) -> Iterator[Event]:
    """The ``citations`` event, then ``done`` with the final answer (``timings["total"]``
    measured from ``began``)."""
    yield CitationsEvent(tuple(settled.citations), tuple(settled.problems))
    timings["total"] = time.perf_counter() - began
    yield DoneEvent(
        Answer(
            question=question,
            text=settled.final,
            sources=list(sources),
            citations=settled.citations,
            refused=settled.refused,
            answerer=answerer,
            timings=timings,
            problems=settled.problems,
            info=info,
            outcome=answer_outcome(settled.refused, info),
        )
    )
