"""The configured chat models as one chain: each model in order until one answers.

:class:`FallbackChatModel` tries the primary model, then ``llm.fallbacks`` in order, on any
:class:`~.client.LLMError` (a timeout, a provider error, a malformed reply), and says which
model answered and which failed (:class:`Failure`). A stream falls over only until its first
piece: once text was shown, a failure raises from the iteration (the answer shell's fallback
takes it from there). :class:`Cancelled` (the client went away) stops the chain before its next
call. :func:`load_chat_model` and :func:`load_stage_model` build the models from the settings.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..config import LLMEndpoint, LLMSettings
from ..errors import TruthBaseError
from .budget import reply_tokens, window_of
from .client import (
    LOCAL_DUMMY_API_KEY,
    AssistantTurn,
    ChatMessage,
    ChatModel,
    EmptyReply,
    LLMError,
    LLMTimeout,
    OpenAIChatModel,
    ToolCallingModel,
    ToolChoice,
    ToolMessage,
)

log = logging.getLogger(__name__)

__all__ = [
    "AllModelsFailed",
    "Cancelled",
    "CompleteReply",
    "Failure",
    "FallbackChatModel",
    "StreamReply",
    "ToolsReply",
    "load_chat_model",
    "load_stage_model",
    "with_fallbacks",
]


@dataclass(frozen=True, slots=True)
class Failure:
    """One model of a chain that did not answer, and why."""

    model: str
    error: str
    timed_out: bool
    empty: bool = False  # the reply had neither text nor tool calls (EmptyReply)


@dataclass(slots=True)
class CompleteReply:
    text: str
    model: str  # the name of the model that answered
    failures: list[Failure] = field(default_factory=list)


@dataclass(slots=True)
class StreamReply:
    """A stream whose model already produced its first piece (so it is the one that answers).

    Iterating ``tokens`` yields that piece, then the rest. A failure after the first piece cannot
    fall back any more (text was shown) and raises :class:`LLMError` from the iteration.
    """

    tokens: Iterator[str]
    model: str
    failures: list[Failure] = field(default_factory=list)


@dataclass(slots=True)
class ToolsReply:
    """A tool-calling turn and the model of the chain that gave it."""

    turn: AssistantTurn
    model: str
    failures: list[Failure] = field(default_factory=list)


class Cancelled(TruthBaseError):
    """The caller stopped wanting the answer (the chat's client went away): no further model
    call is made. Not an :class:`LLMError`, so no fallback catches it."""


class AllModelsFailed(LLMError):
    """Every model of a chain failed; ``failures`` says how, in order."""

    def __init__(self, failures: Sequence[Failure]) -> None:
        self.failures = list(failures)
        detail = "; ".join(f"{f.model}: {f.error}" for f in self.failures) or "no models"
        super().__init__(f"every chat model failed: {detail}")


class FallbackChatModel:
    """Models tried in order; the first that answers wins. Itself a :class:`ChatModel`.

    A model fails over on :class:`LLMError` (provider error, timeout) and on an empty reply (a
    blank completion, or a stream that ends before its first non-blank piece). Each model gets the
    full ``timeout``. ``complete_reply`` and ``stream_reply`` say which model answered; ``complete``
    and ``stream`` record it in :attr:`last_model` (only meaningful without concurrent calls).
    """

    def __init__(self, models: Sequence[ChatModel]) -> None:
        if not models:
            raise ValueError("a fallback chain needs at least one model")
        self.models: tuple[ChatModel, ...] = tuple(models)
        self.last_model: str | None = None
        self.last_failures: list[Failure] = []
        #: Asked before every model call; True raises :class:`Cancelled` instead of calling.
        self.cancelled: Callable[[], bool] | None = None

    def _check_cancelled(self) -> None:
        if self.cancelled is not None and self.cancelled():
            raise Cancelled("the answer was cancelled: the client went away")

    @property
    def name(self) -> str:
        return " -> ".join(m.name for m in self.models)

    def context_window(self) -> int:
        """The smallest window of the chain's models that know theirs (4096 when none does):
        a prompt that fits it fits every model the chain may fall back to."""
        windows = [w[0] for w in map(window_of, self.models) if w is not None]
        return min(windows) if windows else 4096

    def reply_tokens(self) -> int:
        """The largest reply any model of the chain asks room for."""
        replies = [w[1] for w in map(window_of, self.models) if w is not None]
        return max(replies) if replies else reply_tokens(None, self.context_window())

    def __repr__(self) -> str:
        return f"FallbackChatModel({list(self.models)!r})"

    def complete_reply(self, messages: Sequence[ChatMessage], timeout: float) -> CompleteReply:
        failures: list[Failure] = []
        self._check_cancelled()
        for model in self.models:
            try:
                text = model.complete(messages, timeout)
            except LLMError as exc:
                failures.append(_failure(model, exc))
                continue
            if not text.strip():
                failures.append(Failure(model.name, "empty reply", timed_out=False))
                continue
            return CompleteReply(text, model.name, failures)
        raise AllModelsFailed(failures)

    def stream_reply(self, messages: Sequence[ChatMessage], timeout: float) -> StreamReply:
        failures: list[Failure] = []
        self._check_cancelled()
        for model in self.models:
            try:
                pieces = model.stream(messages, timeout)
                first = _first_piece(pieces)
            except LLMError as exc:
                failures.append(_failure(model, exc))
                continue
            if first is None:
                failures.append(Failure(model.name, "empty reply", timed_out=False))
                continue
            return StreamReply(_chain_first(first, pieces), model.name, failures)
        raise AllModelsFailed(failures)

    def complete_tools_reply(
        self,
        messages: Sequence[ToolMessage],
        tools: Sequence[Mapping[str, Any]],
        timeout: float,
        *,
        tool_choice: ToolChoice = None,
    ) -> ToolsReply:
        """The first model's turn that has text or tool calls; models that cannot be offered
        tools (no ``complete_tools``) count as failures."""
        failures: list[Failure] = []
        self._check_cancelled()
        for model in self.models:
            if not isinstance(model, ToolCallingModel):
                failures.append(Failure(model.name, "cannot call tools", timed_out=False))
                continue
            try:
                turn = model.complete_tools(messages, tools, timeout, tool_choice=tool_choice)
            except LLMError as exc:
                failures.append(_failure(model, exc))
                continue
            return ToolsReply(turn, model.name, failures)
        raise AllModelsFailed(failures)

    def complete_tools(
        self,
        messages: Sequence[ToolMessage],
        tools: Sequence[Mapping[str, Any]],
        timeout: float,
        *,
        tool_choice: ToolChoice = None,
    ) -> AssistantTurn:
        self.last_model = None
        try:
            reply = self.complete_tools_reply(messages, tools, timeout, tool_choice=tool_choice)
        except AllModelsFailed as exc:
            self.last_failures = exc.failures
            raise
        self.last_model, self.last_failures = reply.model, reply.failures
        return reply.turn

    def complete(self, messages: Sequence[ChatMessage], timeout: float) -> str:
        self.last_model = None
        try:
            reply = self.complete_reply(messages, timeout)
        except AllModelsFailed as exc:
            self.last_failures = exc.failures
            raise
        self.last_model, self.last_failures = reply.model, reply.failures
        return reply.text

    def stream(self, messages: Sequence[ChatMessage], timeout: float) -> Iterator[str]:
        self.last_model = None
        try:
            reply = self.stream_reply(messages, timeout)
        except AllModelsFailed as exc:
            self.last_failures = exc.failures
            raise
        self.last_model, self.last_failures = reply.model, reply.failures
        return reply.tokens


def _failure(model: ChatModel, exc: LLMError) -> Failure:
    log.warning("chat model %s failed: %s", model.name, exc)
    timed_out, empty = isinstance(exc, LLMTimeout), isinstance(exc, EmptyReply)
    return Failure(model.name, str(exc), timed_out=timed_out, empty=empty)


def _first_piece(pieces: Iterator[str]) -> str | None:
    """The first non-blank piece; leading blank pieces are kept in front of it."""
    skipped = ""
    for piece in pieces:
        skipped += piece
        if skipped.strip():
            return skipped
    return None


def _chain_first(first: str, rest: Iterator[str]) -> Iterator[str]:
    yield first
    yield from rest


def with_fallbacks(models: Sequence[ChatModel]) -> FallbackChatModel:
    """A chain that tries ``models`` in order; see :class:`FallbackChatModel`."""
    return FallbackChatModel(models)


def _api_key(env: str) -> str:
    return os.environ.get(env, "").strip() or LOCAL_DUMMY_API_KEY


def _endpoint_model(endpoint: LLMEndpoint | LLMSettings, settings: LLMSettings) -> OpenAIChatModel:
    return OpenAIChatModel(
        endpoint.model,
        base_url=endpoint.base_url,
        api_key=_api_key(endpoint.api_key_env),
        temperature=settings.temperature,
        max_tokens=settings.max_tokens,
        context_tokens=settings.context_tokens,
    )


def load_stage_model(settings: LLMSettings) -> OpenAIChatModel | None:
    """The primary model alone, or None when no LLM is configured.

    For the optional stages (rewrite, rerank): their timeout bounds their latency only with one
    model; a chain would spend it once per model.
    """
    if settings.base_url is None:
        return None
    return _endpoint_model(settings, settings)


def load_chat_model(settings: LLMSettings) -> FallbackChatModel | None:
    """The primary model, then ``settings.fallbacks`` in order; None when no LLM is configured.

    The API key of each comes from the variable its ``api_key_env`` names; when that is unset a
    dummy key is sent (local servers ignore it; a hosted API answers 401, which fails over).
    """
    primary = load_stage_model(settings)
    if primary is None:
        return None
    return with_fallbacks([primary, *(_endpoint_model(e, settings) for e in settings.fallbacks)])
