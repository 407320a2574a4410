"""Records of the segment index and of the book tools (the contract between the segment index,
its tools and the agent loop)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ..cite.records import Source


@dataclass(frozen=True, slots=True)
class SegmentPart:
    """A run of one unit's canonical text: [start, end) of unit ``unit``."""

    unit: int
    start: int
    end: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Segment:
    """One section of a document, in reading order (``index`` is 0-based within the document).

    A segment may cover parts of several units (small TOC siblings batched together).
    ``summary`` carries inline position tags ``[f{unit}-{start}-{end}]`` of the passages it
    summarizes; ``summarizer`` says who wrote it (cache key).
    """

    doc_id: str
    index: int
    title: str
    parts: tuple[SegmentPart, ...]
    summary: str = ""
    summarizer: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolOutput:
    """What one tool call returns: ``content`` goes to the model as the ``role: tool`` message;
    ``sources`` are the spans that content shows (with their tags), the only spans a position
    tag in the final answer may resolve to. ``n`` of each source is unique within one turn."""

    content: str
    sources: list[Source] = field(default_factory=list)
    segment_ids: list[str] = field(default_factory=list)  # "{doc_id}:{index}" of segments shown


class ToolError(ValueError):
    """A tool call that cannot run: unknown tool name or bad arguments (told to the model)."""


class Toolbox(Protocol):
    """The tools an agent may call, in the OpenAI function-calling schema."""

    def schemas(self) -> list[dict[str, Any]]: ...

    def call(self, name: str, arguments: dict[str, Any], first_n: int = 1) -> ToolOutput:
        """Run tool ``name``; number the returned sources from ``first_n`` on."""
        ...
