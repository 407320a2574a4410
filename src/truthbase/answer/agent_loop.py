"""The agent's tool loop: model -> tool calls -> ``role: tool`` results -> ... -> final text.

Pure over its two collaborators, a :class:`~truthbase.llm.client.ToolCallingModel` (or a chain
of them) and a :class:`~truthbase.records.Toolbox`; the clock is a parameter too, so the
scripted tests control time. The shell (:mod:`truthbase.answer.agent`) turns the outcome into the
answer's events.

Guarantees that do not depend on the model behaving:

- *Book first*: a final text is accepted only after at least one tool ran in this turn. When the
  model answers without calling a tool, the next step names ``get_related_segment_summaries`` as
  the ``tool_choice``, so the model itself calls it (and writes its own query); a model that
  still gives no call gets the call made for it, with the question itself (``forced``), sees
  the result and is asked again.
- Tool results go back as data (:func:`~truthbase.llm.prompts.tool_result_content`); a bad call
  (unknown tool, arguments that are not a JSON object, :class:`ToolError`) is told to the model
  as an error result, never raised.
- Every source a tool returns is numbered in this turn's sequence (1, 2, ... across all calls),
  so ``[n]`` markers and position tags of the final text resolve against all of them; a tag in
  the final text must name the exact span of a source a tool returned (:func:`shown_tags`;
  the shell, :func:`truthbase.answer.finish.screen_tags`, drops any other). A tag-like string
  inside a document's own text is never one: the tools show document text with such strings
  neutralized (:func:`truthbase.cite.tags.neutralize_tags`), and a tag counts by the sources
  a tool produced, not by what its output's text happens to contain.
- Each step but the last offers the tools with ``tool_choice`` "auto" (sent, not left to the
  server: llama.cpp's server with ``chatml-function-calling`` takes a missing one as "none").
- Limits (the ``agent`` settings section, :class:`~truthbase.config.AgentSettings`): at most
  ``max_steps`` model calls (the last one is asked for text only), at most ``max_tool_calls``
  tool calls per step, each model call bounded by ``timeout_s`` and the whole loop by
  ``total_timeout_s``. Running out of either raises :class:`AgentFailed`, as does a model
  error of any kind (HTTP 400 context length, 500, timeout, a malformed reply); the shell then
  lets the extractive agent answer, so a provider error never reads as the model's refusal.
- *Within the context window*: for a model that knows its window
  (:func:`~truthbase.llm.budget.window_of`), each tool call is given the room the conversation
  leaves (the reply's ``max_tokens`` kept free, shared among the step's calls) as
  ``max_chars``, at most ``tool_result_share`` of the window (a small model answers from a few
  best-matching passages; from a window full of them it says NO_ANSWER); an output still
  longer is cut at a line and keeps only the sources whose tags it still shows. When too
  little room is left for another result of that size, no more calls are offered: every later
  step asks for text only (``tool_choice`` "none"); a call that finds no room is not run and
  the model is told to answer from the results it has.
- A reply whose whole text names a tool ("functions.get_related_segment_summaries:", what
  llama-cpp-python's chatml-function-calling returns as the text of an "auto" step where the
  model wanted to write) is a call it could not make, never an answer: before any tool ran it
  counts as answering without reading; after, the next step asks for text only. So does an
  empty reply (:class:`~truthbase.llm.client.EmptyReply`) to an "auto" step after the tools
  ran, what the same server returns when the model wanted to write; any other model error,
  or an empty reply to a step that asked for text, fails the loop.
- Before the first text-only step after the tools ran, the question is repeated after their
  results (:func:`~truthbase.llm.prompts.answer_now_message`): a small model at a 4,096-token
  window otherwise loses it behind them and answers NO_ANSWER.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..cite.tags import format_tag
from ..config import AgentSettings
from ..errors import TruthBaseError
from ..llm.budget import CHARS_PER_TOKEN, message_tokens, room_chars, window_of
from ..llm.chain import AllModelsFailed, Failure, FallbackChatModel
from ..llm.client import (
    AssistantTurn,
    EmptyReply,
    LLMError,
    LLMTimeout,
    ToolCall,
    ToolCallingModel,
    ToolChoice,
    ToolMessage,
    named_tool,
)
from ..llm.prompts import answer_now_message, build_agent_messages, tool_result_content
from ..records import Source, Toolbox, ToolError
from ..segments.tools import RELATED_SEGMENTS

__all__ = [
    "AgentFailed",
    "AgentRun",
    "ToolRun",
    "run_agent",
    "run_tool",
    "shown_tags",
]

#: Below this many characters of room a tool call is not run (its output could hold no passage).
MIN_TOOL_CHARS = 600
#: The delimiters tool_result_content wraps around an output.
_RESULT_OVERHEAD = 80


@dataclass(slots=True, kw_only=True)
class ToolRun:
    """One tool call of the turn and what it returned."""

    name: str
    arguments: dict[str, Any]
    call_id: str
    step: int
    content: str = ""  # what the tool returned (before delimiting), "" on error
    sources: list[Source] = field(default_factory=list)
    segment_ids: list[str] = field(default_factory=list)
    sections: dict[str, list[str]] = field(default_factory=dict)  # section id -> its tags
    error: str | None = None
    forced: bool = False  # the loop called it (book first), not the model
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "arguments": self.arguments,
            "step": self.step,
            "forced": self.forced,
            "error": self.error,
            "sources": [s.n for s in self.sources],
            "segments": list(self.segment_ids),
            "seconds": round(self.seconds, 4),
        }


@dataclass(slots=True, kw_only=True)
class AgentRun:
    """The loop's outcome: the final text and everything the tools showed on the way."""

    text: str
    model: str  # the model that wrote the final text
    steps: int
    runs: list[ToolRun]
    failures: list[Failure] = field(default_factory=list)  # chain models that failed on the way

    @property
    def sources(self) -> list[Source]:
        return [s for r in self.runs for s in r.sources]

    @property
    def forced(self) -> bool:
        return any(r.forced for r in self.runs)


class AgentFailed(TruthBaseError):
    """The loop gave no final text: a model error, too many steps, or out of time."""

    def __init__(
        self,
        reason: str,
        *,
        steps: int,
        runs: Sequence[ToolRun] = (),
        failures: Sequence[Failure] = (),
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.steps = steps
        self.runs = list(runs)
        self.failures = list(failures)


def _renumbered(sources: Sequence[Source], first_n: int) -> list[Source]:
    """The sources numbered first_n, first_n + 1, ... (a toolbox that numbers them otherwise
    would make [n] ambiguous across the calls of one turn)."""
    return [
        s if s.n == first_n + i else dataclasses.replace(s, n=first_n + i)
        for i, s in enumerate(sources)
    ]


def _arguments(raw: str | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(raw, Mapping):
        return dict(raw)
    text = raw.strip() or "{}"
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ToolError(f"the arguments are not valid JSON: {text[:200]!r}") from exc
    if not isinstance(value, dict):
        raise ToolError(f"the arguments must be a JSON object, not {text[:200]!r}")
    return value


def run_tool(
    toolbox: Toolbox,
    call: ToolCall,
    *,
    step: int,
    first_n: int,
    forced: bool = False,
    clock: Callable[[], float] = time.perf_counter,
    max_chars: int | None = None,
) -> ToolRun:
    """Run one call; a bad call becomes a run with ``error`` set (the model is told).

    ``max_chars``: the room for the output; past it the output is cut (:func:`_fit_output`)."""
    started = clock()
    run = ToolRun(name=call.name, arguments={}, call_id=call.id, step=step, forced=forced)
    try:
        run.arguments = _arguments(call.arguments)
        if max_chars is None:
            output = toolbox.call(call.name, run.arguments, first_n=first_n)
        else:
            output = toolbox.call(call.name, run.arguments, first_n=first_n, max_chars=max_chars)
    except ToolError as exc:
        run.error = str(exc) or type(exc).__name__
    else:
        run.content = output.content
        run.sources = _renumbered(output.sources, first_n)
        run.segment_ids = list(output.segment_ids)
        run.sections = {key: list(tags) for key, tags in output.sections.items()}
        if max_chars is not None and len(run.content) > max_chars:
            run.content, run.sources = _fit_output(run.content, run.sources, max_chars, first_n)
    run.seconds = clock() - started
    return run


def _fit_output(
    content: str, sources: Sequence[Source], max_chars: int, first_n: int
) -> tuple[str, list[Source]]:
    """``content`` cut at the last line break within ``max_chars``, and the sources whose
    position tag it still shows (renumbered from ``first_n``)."""
    head = content[:max_chars]
    if "\n" in head:
        head = head.rsplit("\n", 1)[0]
    kept = [s for s in sources if f"[f{s.unit}-{s.start}-{s.end}]" in head]
    return head, _renumbered(kept, first_n)


def _tool_message(run: ToolRun, role: str = "tool") -> dict[str, Any]:
    """The result of ``run`` as the message that carries it back: ``role`` "tool" (with the
    call's id) or "user" (for a chat template that drops tool messages)."""
    if run.error is not None:
        content = tool_result_content(run.name, run.error, error=True)
    else:
        content = tool_result_content(run.name, run.content or "(nothing found)")
    if role == "user":
        return {"role": "user", "content": content}
    return {"role": "tool", "tool_call_id": run.call_id, "content": content}


def _refused_call(call: ToolCall, step: int, limit: int) -> ToolRun:
    why = f"at most {limit} tool calls per step; this one was not run"
    return ToolRun(name=call.name, arguments={}, call_id=call.id, step=step, error=why)


def _no_room_call(call: ToolCall, step: int) -> ToolRun:
    why = (
        "the model's context has no room for more tool results; this call was not run. "
        "Answer from the tool results above."
    )
    return ToolRun(name=call.name, arguments={}, call_id=call.id, step=step, error=why)


def _room(
    window: tuple[int, int] | None,
    messages: Sequence[ToolMessage],
    tools: Sequence[Mapping[str, Any]],
    calls: int,
    share: float = 1.0,
) -> int | None:
    """Characters each of the next ``calls`` tool outputs may take; None: unbudgeted.

    ``share``: the most of the window one output may take, whatever room is left."""
    if window is None:
        return None
    context, reply = window
    room = room_chars(context, reply, message_tokens(messages, tools))
    each = min(room // max(1, calls), int(context * share * CHARS_PER_TOKEN))
    return max(0, each - _RESULT_OVERHEAD)


def _ask(
    model: ToolCallingModel,
    messages: Sequence[ToolMessage],
    tools: Sequence[Mapping[str, Any]],
    timeout: float,
    tool_choice: ToolChoice,
) -> tuple[AssistantTurn, str, list[Failure]]:
    if isinstance(model, FallbackChatModel):
        reply = model.complete_tools_reply(messages, tools, timeout, tool_choice=tool_choice)
        return reply.turn, reply.model, reply.failures
    return model.complete_tools(messages, tools, timeout, tool_choice=tool_choice), model.name, []


@dataclass(slots=True, kw_only=True)
class _Conversation:
    """What the steps of one turn share: the messages so far, the tools and the window they
    are measured against, and the runs, whose sources are numbered across all the calls of
    the turn (``next_n``: the next one's number), so ``[n]`` resolves against every one."""

    toolbox: Toolbox
    limits: AgentSettings
    window: tuple[int, int] | None
    messages: list[ToolMessage]
    tools: Sequence[Mapping[str, Any]]
    runs: list[ToolRun] = field(default_factory=list)
    next_n: int = 1

    def add(self, run: ToolRun) -> None:
        """Record ``run`` and append its result to the messages."""
        self.runs.append(run)
        self.next_n += len(run.sources)
        self.messages.append(_tool_message(run, self.limits.tool_results_as))


def _window_full(
    window: tuple[int, int] | None,
    messages: Sequence[ToolMessage],
    tools: Sequence[Mapping[str, Any]],
    runs: Sequence[ToolRun],
    share: float,
) -> bool:
    """Whether the tools have filled the window: no room left for another result of the size
    the window allows one (a small model otherwise spends its step on a call that cannot run
    and gives up)."""
    room_left = _room(window, messages, tools, 1) if runs else None
    return room_left is not None and room_left < max(
        MIN_TOOL_CHARS, _room(window, [], [], 1, share) or 0
    )


def _ask_step(
    model: ToolCallingModel,
    messages: Sequence[ToolMessage],
    tools: Sequence[Mapping[str, Any]],
    timeout: float,
    choice: ToolChoice,
    *,
    step: int,
    runs: Sequence[ToolRun],
    failures: Sequence[Failure],
) -> tuple[AssistantTurn, str, list[Failure]]:
    """One model call of the loop. A model error raises :class:`AgentFailed`, except an empty
    reply to an "auto" step (what llama.cpp's server returns when the model wanted to write):
    that comes back as an empty turn, no call and no answer, for the loop to handle."""
    try:
        return _ask(model, messages, tools, timeout, choice)
    except LLMError as exc:
        if isinstance(exc, AllModelsFailed):
            failed = exc.failures
        else:
            timed_out, empty = isinstance(exc, LLMTimeout), isinstance(exc, EmptyReply)
            failed = [Failure(model.name, str(exc), timed_out=timed_out, empty=empty)]
        if not (choice == "auto" and failed and all(f.empty for f in failed)):
            raise AgentFailed(
                f"model error: {exc}", steps=step, runs=runs, failures=[*failures, *failed]
            ) from exc
        # An "auto" step that wrote nothing: no call, no answer (handled by the loop).
        return AssistantTurn("", ()), model.name, []


def _run_calls(conv: _Conversation, calls: Sequence[ToolCall], step: int) -> None:
    """Run the model's calls of one step in order, each result appended to the messages as it
    comes (the next call's room counts it); past ``max_tool_calls`` a call is refused, and one
    that finds no room is not run (the model is told either way)."""
    limits = conv.limits
    allowed = min(len(calls), limits.max_tool_calls)
    for i, call in enumerate(calls):
        room = _room(conv.window, conv.messages, conv.tools, allowed - i, limits.tool_result_share)
        if i >= limits.max_tool_calls:
            run = _refused_call(call, step, limits.max_tool_calls)
        elif room is not None and room < MIN_TOOL_CHARS:
            run = _no_room_call(call, step)
        else:
            run = run_tool(conv.toolbox, call, step=step, first_n=conv.next_n, max_chars=room)
        conv.add(run)


def _read_for_model(conv: _Conversation, question: str, step: int) -> None:
    """Book first, when the model was asked to call the tool and still did not: the loop calls
    it with the question itself (``forced``), as if the model had, and shows the result."""
    arguments = json.dumps({"question": question}, ensure_ascii=False)
    call = ToolCall(id=f"call-book-first-{step}", name=RELATED_SEGMENTS, arguments=arguments)
    conv.messages.append(AssistantTurn("", (call,)).to_message())
    room = _room(conv.window, conv.messages, conv.tools, 1, conv.limits.tool_result_share)
    run = run_tool(conv.toolbox, call, step=step, first_n=conv.next_n, forced=True, max_chars=room)
    conv.add(run)


def run_agent(
    model: ToolCallingModel,
    toolbox: Toolbox,
    question: str,
    limits: AgentSettings | None = None,
    *,
    clock: Callable[[], float] = time.monotonic,
) -> AgentRun:
    """Run the loop until the model's final text; see the module docstring. ``limits``: the
    ``agent`` settings section (None: its defaults).

    Raises :class:`AgentFailed` (with the runs so far) on a model error, when ``max_steps``
    model calls gave no accepted final text, or when ``total_timeout_s`` is spent.
    """
    limits = limits if limits is not None else AgentSettings()
    messages: list[ToolMessage] = [dict(m) for m in build_agent_messages(question)]
    tools = toolbox.schemas()
    runs: list[ToolRun] = []
    failures: list[Failure] = []
    deadline = clock() + limits.total_timeout_s
    window = window_of(model)
    conv = _Conversation(
        toolbox=toolbox, limits=limits, window=window, messages=messages, tools=tools, runs=runs
    )

    must_read = False  # the model answered without reading: the next step names the tool
    answer_now = False  # it wrote a tool's name as its text after reading: ask for the answer
    names = [str(t.get("function", {}).get("name", "")) for t in tools]
    reminded = False  # the question was repeated after the tool results (once)

    for step in range(1, limits.max_steps + 1):
        remaining = deadline - clock()
        if remaining <= 0:
            raise AgentFailed("timeout", steps=step - 1, runs=runs, failures=failures)
        last = step == limits.max_steps
        full = _window_full(window, messages, tools, runs, limits.tool_result_share)
        text_only = last or full or answer_now
        # "auto" said outright: llama.cpp's chatml-function-calling format reads a missing
        # tool_choice as "none" and never lets the model call a tool.
        choice: ToolChoice = "none" if text_only else "auto"
        if must_read and not runs and not last:
            choice = named_tool(RELATED_SEGMENTS)
        if text_only and runs and not reminded:
            messages.append(dict(answer_now_message(question)))
            reminded = True
        timeout = min(limits.timeout_s, remaining)
        turn, answered_by, failed = _ask_step(
            model, messages, tools, timeout, choice, step=step, runs=runs, failures=failures
        )
        failures.extend(failed)
        if turn.tool_calls and not text_only:
            messages.append(turn.to_message())
            _run_calls(conv, turn.tool_calls, step)
            continue
        # No call and no answer: an empty reply, or a tool's name written as the text.
        silent = not turn.text.strip() or names_a_tool(turn.text, names)
        if silent and text_only:
            if not last:
                continue  # asked for text, it still called a tool: the next step asks again
            break  # the text-only last step still asked for tools
        if silent and runs:
            answer_now = True  # it read, then wrote no call: the next step asks for its answer
            continue
        if not runs:
            if last:
                break
            if not must_read:
                must_read = True  # book first: the next step has the model call the tool
                continue
            # It still did not call it: read for it and ask again.
            _read_for_model(conv, question, step)
            continue
        return AgentRun(text=turn.text, model=answered_by, steps=step, runs=runs, failures=failures)
    raise AgentFailed(
        f"no final answer within {limits.max_steps} steps",
        steps=limits.max_steps,
        runs=runs,
        failures=failures,
    )


def names_a_tool(text: str, names: Iterable[str]) -> bool:
    """Whether ``text`` is only a tool's name (``functions.NAME:``, ``NAME``): a call written as
    text, no answer."""
    bare = text.strip().removeprefix("functions.").rstrip(":").strip()
    return bool(bare) and bare in set(names)


def shown_tags(runs: Iterable[ToolRun]) -> set[str]:
    """The position tags of this turn: those of the exact spans of the sources the tools
    returned (a tag-like string in a passage's own text is not one of them)."""
    return {format_tag(s.unit, s.start, s.end) for r in runs if r.error is None for s in r.sources}
