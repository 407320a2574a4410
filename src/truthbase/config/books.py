"""Settings of the book tools: the segment index (``segments``) and the agent mode (``agent``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from .base import Section as _Section

#: Who writes a segment's summary: its central sentences (no model) or the configured chat model.
SummarizerKind = Literal["extractive", "llm"]
#: What ``segments.summarizer`` and ``segments build --summarizer`` accept (``auto``: llm when
#: an LLM is configured, else extractive).
SummarizerChoice = Literal["auto", "extractive", "llm"]
SUMMARIZER_CHOICES: tuple[SummarizerChoice, ...] = ("auto", "extractive", "llm")

__all__ = [
    "SUMMARIZER_CHOICES",
    "AgentSettings",
    "SegmentSettings",
    "SummarizerChoice",
    "SummarizerKind",
]


class SegmentSettings(_Section):
    """The segment index (segments/*): how documents are cut, summarized and shown to tools."""

    alone_chars: int = Field(
        default=20_000,
        ge=1_000,
        description="A table-of-contents node up to this many characters is a segment alone.",
    )
    batch_min_chars: int = Field(
        default=15_000,
        ge=0,
        description="Small sibling nodes are batched into one segment until it has this many.",
    )
    batch_max_chars: int = Field(
        default=20_000, ge=1_000, description="Largest batch of small sibling nodes, in characters."
    )
    split_chars: int = Field(
        default=40_000,
        ge=2_000,
        description="A node without sub-entries larger than this is split at sentence boundaries.",
    )
    range_min_chars: int = Field(
        default=30_000,
        ge=1_000,
        description="Without a usable table of contents: smallest range (pages or sentences).",
    )
    range_max_chars: int = Field(
        default=40_000,
        ge=2_000,
        description="Without a usable table of contents: largest range (pages or sentences).",
    )
    summarizer: SummarizerChoice = Field(
        default="auto",
        description="'extractive' (central sentences), 'llm' (the configured chat model), "
        "or 'auto' (llm when llm.base_url is set, else extractive).",
    )
    summary_sentences: int = Field(
        default=6, ge=1, le=50, description="Most sentences of an extractive summary."
    )
    related_segments: int = Field(
        default=3,
        ge=1,
        le=25,
        description="Segments the related-segments tool picks without an LLM (hybrid search).",
    )
    tool_max_chars: int = Field(
        default=30_000,
        ge=1_000,
        description="Most source text one tool call returns; past it, the passages that match "
        "the question best.",
    )
    passage_chars: int = Field(
        default=500,
        ge=50,
        description="Tool output carries one position tag per passage of whole sentences up to "
        "this size.",
    )
    select_batch_tokens: int = Field(
        default=30_000,
        ge=1_000,
        description="Largest batch of segment summaries the LLM picks from (about 4 chars a "
        "token); at most 5 batches.",
    )

    @model_validator(mode="after")
    def _sizes_ordered(self) -> SegmentSettings:
        if self.batch_min_chars > self.batch_max_chars:
            raise ValueError("segments.batch_min_chars must not exceed segments.batch_max_chars")
        if self.range_min_chars > self.range_max_chars:
            raise ValueError("segments.range_min_chars must not exceed segments.range_max_chars")
        return self


class AgentSettings(_Section):
    """The agent mode (`ask --mode agent`): the tool loop that reads the book first."""

    max_steps: int = Field(
        default=6,
        ge=2,
        le=50,
        description="Most model calls of one answer; the last is asked for text only.",
    )
    timeout_s: float = Field(default=60.0, gt=0, description="Timeout of one model call.")
    total_timeout_s: float = Field(
        default=180.0,
        gt=0,
        description="Time for the whole loop; past it the extractive agent answers.",
    )
    max_tool_calls: int = Field(
        default=4, ge=1, le=32, description="Tool calls run per model step; more get an error."
    )
    overview_sentences: int = Field(
        default=5,
        ge=1,
        le=20,
        description="Passages of the extractive agent's answer to an overview question.",
    )
    detail_sources: int = Field(
        default=8,
        ge=1,
        le=50,
        description="Best passages the extractive agent answers a detail question from (the "
        "extractive answerer was calibrated on 8 sources).",
    )
    tool_result_share: float = Field(
        default=0.3,
        gt=0,
        le=1,
        description="Most of the model's context window one tool result may take (estimated "
        "at 3 characters a token; segments.tool_max_chars caps it too). A small model at a "
        "4,096-token window answers from a few best-matching passages and says NO_ANSWER "
        "when they fill its window; a large window is capped by tool_max_chars anyway.",
    )
    tool_results_as: Literal["tool", "user"] = Field(
        default="tool",
        description="The role tool results are sent back in: 'tool' (OpenAI's protocol; vLLM, "
        "Ollama, llama.cpp's own server) or 'user' for servers whose chat template drops "
        "role:tool messages (llama-cpp-python's chatml-function-calling shows the model none "
        "of them). Either way the results are delimited as data.",
    )
