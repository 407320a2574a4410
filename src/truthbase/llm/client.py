"""Chat models behind one small interface (the fallback chain over them is :mod:`.chain`).

:class:`ChatModel` is what the answerer and the optional stages (rewrite, rerank) need: a name,
``complete`` (the whole reply) and ``stream`` (the reply's text pieces as they come).
:class:`OpenAIChatModel` implements it over the ``openai`` client for any OpenAI-compatible
server (Ollama, vLLM, llama.cpp's server, OpenAI). :func:`.chain.with_fallbacks` chains models:
on a provider error or timeout the next one answers, and the reply says which one did. The
extractive answerer is the last resort after the chain; the answer pipeline adds it.

Tool calling (the agent mode) is a separate, non-streaming call: :class:`ToolCallingModel`'s
``complete_tools`` sends the OpenAI ``tools`` schema and returns the assistant's turn
(:class:`AssistantTurn`: its text and its tool calls); a chain tries its models in order the
same way (:meth:`.chain.FallbackChatModel.complete_tools_reply`).

A judge that wants the model's confidence, not only its words, asks a
:class:`ScoringChatModel` (``complete_scored``): the reply with each token's most likely
alternatives and their log-probabilities, where the server gives them (OpenAI, vLLM and
llama.cpp's server do; a server that refuses the option is asked again without it, and the
reply then has no tokens).

Every provider failure surfaces as :class:`LLMError` (:class:`LLMTimeout` for timeouts), never
as the client library's own exceptions.

Each model knows its context window (:meth:`OpenAIChatModel.context_window`): the server's own
report where it gives one (llama.cpp's ``/props`` ``n_ctx``, vLLM's ``max_model_len`` in
``/v1/models``), else the ``llm.context_tokens`` setting; a chain's is its smallest. The reply
asks for ``max_tokens``, but at most a quarter of the window (:mod:`.budget`), so that a prompt
cut to fit leaves room for it.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypedDict, cast, runtime_checkable

import openai
from openai.types.chat import ChatCompletionChunk, ChatCompletionMessageParam

from ..errors import InvalidInput, Unavailable
from ..telemetry import model_call, model_span, record_usage, traced
from .budget import reply_tokens

__all__ = [
    "LOCAL_DUMMY_API_KEY",
    "AssistantTurn",
    "ChatMessage",
    "ChatModel",
    "EmptyReply",
    "LLMError",
    "LLMTimeout",
    "OpenAIChatModel",
    "ScoredReply",
    "ScoringChatModel",
    "TokenChoice",
    "ToolCall",
    "ToolCallingModel",
    "ToolChoice",
    "ToolMessage",
    "named_tool",
]

log = logging.getLogger(__name__)

#: The API key sent to a local server (Ollama, vLLM, llama.cpp) when the key's variable is unset.
LOCAL_DUMMY_API_KEY = "not-needed"


class ChatMessage(TypedDict):
    role: Literal["system", "user", "assistant"]
    content: str


#: A message of a tool-calling conversation: any OpenAI chat message, ``role: tool`` and an
#: assistant's ``tool_calls`` included (plain dicts, sent as they are).
ToolMessage = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call the model asked for; ``arguments`` is the JSON text it wrote."""

    id: str
    name: str
    arguments: str

    def to_json(self) -> dict[str, Any]:
        """The call as the assistant message's ``tool_calls`` entry (to send it back)."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True, slots=True)
class AssistantTurn:
    """What the model said in one tool-calling step: text, tool calls, or both."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()

    def to_message(self) -> dict[str, Any]:
        """The turn as the assistant message that goes back into the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text}
        if self.tool_calls:
            message["tool_calls"] = [c.to_json() for c in self.tool_calls]
        return message


class LLMError(Unavailable):
    """A provider failed: connection refused, an HTTP error, a malformed or empty reply."""


class EmptyReply(LLMError):
    """The reply had neither text nor tool calls (llama-cpp-python's chatml-function-calling
    gives one to an "auto" step where the model meant to write text)."""


class LLMTimeout(LLMError):
    """A provider did not answer (or stopped sending tokens) within the timeout."""


class ChatModel(Protocol):
    """A chat model. ``timeout`` (seconds) bounds the connection and the wait for each piece.

    Both methods raise :class:`LLMError` on any provider failure. ``stream`` may raise it before
    the first piece or between pieces; it yields only non-empty pieces.
    """

    @property
    def name(self) -> str: ...

    def complete(self, messages: Sequence[ChatMessage], timeout: float) -> str: ...

    def stream(self, messages: Sequence[ChatMessage], timeout: float) -> Iterator[str]: ...


@dataclass(frozen=True, slots=True)
class TokenChoice:
    """One token of a reply and the most likely tokens at its place, as (token, log-probability),
    the chosen one among them when the server ranks it there."""

    token: str
    alternatives: tuple[tuple[str, float], ...]


@dataclass(frozen=True, slots=True)
class ScoredReply:
    """A reply's text and its tokens with their alternatives (empty: the server sent none)."""

    text: str
    tokens: tuple[TokenChoice, ...] = ()


@runtime_checkable
class ScoringChatModel(ChatModel, Protocol):
    """A chat model that can say how likely each token of its reply was (see the module doc)."""

    def complete_scored(
        self, messages: Sequence[ChatMessage], timeout: float, *, alternatives: int
    ) -> ScoredReply: ...


#: What a call lets the model do: "auto", "none", or one tool by name (:func:`named_tool`);
#: None leaves it to the server.
ToolChoice = str | Mapping[str, Any] | None


def named_tool(name: str) -> dict[str, Any]:
    """The ``tool_choice`` that makes the model call the tool ``name`` (it writes the
    arguments): what llama.cpp's chatml-function-calling format needs to call a tool reliably."""
    return {"type": "function", "function": {"name": name}}


@runtime_checkable
class ToolCallingModel(Protocol):
    """A chat model that can be offered tools (OpenAI function-calling schema).

    ``complete_tools`` is one non-streaming call: ``tool_choice`` "none" asks for text only,
    a :func:`named_tool` for a call of that tool (None: the server's default, "auto").
    Raises :class:`LLMError` on any provider failure, including a reply with neither text nor
    tool calls.
    """

    @property
    def name(self) -> str: ...

    def complete_tools(
        self,
        messages: Sequence[ToolMessage],
        tools: Sequence[Mapping[str, Any]],
        timeout: float,
        *,
        tool_choice: ToolChoice = None,
    ) -> AssistantTurn: ...


class OpenAIChatModel:
    """Chat completions from any OpenAI-compatible ``/v1`` endpoint, without retries.

    Retries are the fallback chain's business: the client's own (with backoff) would multiply
    the timeout. ``name`` defaults to ``MODEL@BASE_URL``.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None,
        api_key: str,
        temperature: float = 0.0,
        max_tokens: int | None = 1024,
        name: str | None = None,
        context_tokens: int = 4096,
        probe_context: bool = True,
    ) -> None:
        if not model.strip():
            raise InvalidInput("an OpenAI-compatible chat model needs a model name")
        self.model = model
        self.base_url = base_url
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.context_tokens = context_tokens
        self._probe = probe_context and base_url is not None
        self._window: int | None = None
        self._name = name or f"{model}@{base_url or 'api.openai.com'}"
        self._client = openai.OpenAI(api_key=api_key, base_url=base_url, max_retries=0)
        #: The server answered a request for log-probabilities with HTTP 400 once: not asked again.
        self._no_logprobs = False

    def context_window(self) -> int:
        """The server's reported context window (asked once), else ``context_tokens``."""
        if self._window is None:
            reported = server_context(self.base_url, self.model) if self._probe else None
            self._window = reported if reported is not None else self.context_tokens
        return self._window

    def reply_tokens(self) -> int:
        """The ``max_tokens`` each request sends: the setting, at most a quarter of the window."""
        return reply_tokens(self.max_tokens, self.context_window())

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"OpenAIChatModel(model={self.model!r}, base_url={self.base_url!r})"

    def _create(self, timeout: float, **params: Any) -> Any:
        """One chat completion request; any failure becomes an LLMError naming this model."""
        try:
            return self._client.chat.completions.create(
                model=self.model,
                temperature=self.temperature,
                max_tokens=self.reply_tokens(),
                timeout=timeout,
                **params,
            )
        except Exception as exc:
            raise _wrap(exc, self._name) from exc

    def complete(self, messages: Sequence[ChatMessage], timeout: float) -> str:
        with model_call(self.model, self.base_url) as call:
            response = self._create(timeout, messages=_params(messages), stream=False)
            record_usage(call, self.model, getattr(response, "usage", None), _model_of(response))
        return self._reply_text(response)[1]

    def complete_scored(
        self, messages: Sequence[ChatMessage], timeout: float, *, alternatives: int
    ) -> ScoredReply:
        """The reply with up to ``alternatives`` (1-20) likely tokens at each of its tokens."""
        if self._no_logprobs:
            return ScoredReply(self.complete(messages, timeout))
        with model_call(self.model, self.base_url) as call:
            try:
                response = self._create(
                    timeout,
                    messages=_params(messages),
                    stream=False,
                    logprobs=True,
                    top_logprobs=max(1, min(20, alternatives)),
                )
            except LLMError as exc:
                if not isinstance(exc.__cause__, openai.BadRequestError):
                    raise
                # Some servers and models refuse log-probabilities (HTTP 400): the plain reply
                # is still a verdict, so ask for that, now and from now on.
                log.info("%s refuses log-probabilities (%s); asking without", self._name, exc)
                self._no_logprobs = True
                response = self._create(timeout, messages=_params(messages), stream=False)
            record_usage(call, self.model, getattr(response, "usage", None), _model_of(response))
        choice, content = self._reply_text(response)
        return ScoredReply(content, _token_choices(getattr(choice, "logprobs", None)))

    def _reply_text(self, response: Any) -> tuple[Any, str]:
        """The first choice of a chat completion and its text; LLMError when the reply is not
        a chat completion or has no text."""
        try:
            choice = response.choices[0]
            content: object = choice.message.content
        except (AttributeError, IndexError, TypeError) as exc:  # not a chat completion at all
            raise LLMError(f"{self._name}: malformed reply: {str(response)[:200]!r}") from exc
        if not isinstance(content, str):
            raise LLMError(f"{self._name}: the reply has no text")
        return choice, content

    def complete_tools(
        self,
        messages: Sequence[ToolMessage],
        tools: Sequence[Mapping[str, Any]],
        timeout: float,
        *,
        tool_choice: ToolChoice = None,
    ) -> AssistantTurn:
        extra: dict[str, Any] = {}
        if tool_choice is not None:
            choice = dict(tool_choice) if isinstance(tool_choice, Mapping) else tool_choice
            extra["tool_choice"] = choice
        with model_call(self.model, self.base_url) as call:
            response = self._create(
                timeout,
                messages=_params(messages),
                tools=cast(Any, [dict(t) for t in tools]),
                stream=False,
                **extra,
            )
            record_usage(call, self.model, getattr(response, "usage", None), _model_of(response))
        try:
            message = response.choices[0].message
            calls = tuple(
                ToolCall(
                    id=str(c.id or f"call-{i}"),
                    name=str(c.function.name),
                    arguments=str(c.function.arguments or ""),
                )
                for i, c in enumerate(message.tool_calls or [], 1)
                if getattr(c, "function", None) is not None
            )
            text = message.content or ""
        except (AttributeError, IndexError, TypeError) as exc:  # not a chat completion at all
            raise LLMError(f"{self._name}: malformed reply: {str(response)[:200]!r}") from exc
        if not text.strip() and not calls:
            raise EmptyReply(f"{self._name}: the reply has neither text nor tool calls")
        return AssistantTurn(text, calls)

    def stream(self, messages: Sequence[ChatMessage], timeout: float) -> Iterator[str]:
        call = model_span(self.model, self.base_url)
        try:
            # The usage comes in a last chunk when asked for (OpenAI, vLLM, Ollama, llama.cpp's
            # own server; servers that do not know the option ignore it).
            chunks: openai.Stream[ChatCompletionChunk] = self._create(
                timeout,
                messages=_params(messages),
                stream=True,
                stream_options={"include_usage": True},
            )
        except BaseException as exc:
            call.record_exception(exc)
            call.end()
            raise
        # The span stays open while the pieces are read, and ends with them.
        return traced("model", self._pieces(chunks, call), opened=call)

    def _pieces(
        self, chunks: openai.Stream[ChatCompletionChunk], call: Any = None
    ) -> Iterator[str]:
        finished = False
        try:
            for chunk in chunks:
                usage = getattr(chunk, "usage", None)
                if usage is not None and call is not None:
                    record_usage(call, self.model, usage, _model_of(chunk))
                for choice in chunk.choices:
                    if choice.index == 0 and choice.delta.content:
                        yield choice.delta.content
                    if choice.index == 0 and choice.finish_reason is not None:
                        finished = True
        except (AttributeError, KeyError, TypeError) as exc:  # a chunk that is no chat chunk
            raise LLMError(f"{self._name}: malformed stream chunk") from exc
        except Exception as exc:
            raise _wrap(exc, self._name) from exc
        finally:
            chunks.close()
        if not finished:
            # Every OpenAI-compatible server ends a whole reply with a finish_reason; a
            # connection that closes before it cut the reply off (maybe mid-marker).
            raise LLMError(f"{self._name}: the stream ended before the reply was finished")


def _model_of(response: object) -> str | None:
    """The model the server says answered (``model`` of the reply), when it says one."""
    model = getattr(response, "model", None)
    return model if isinstance(model, str) and model else None


def server_context(base_url: str | None, model: str, timeout: float = 2.0) -> int | None:
    """The context window an OpenAI-compatible server reports for ``model``, or None.

    Asks ``{base_url}/models`` (vLLM: ``max_model_len``; llama.cpp: ``meta.n_ctx`` where given)
    and llama.cpp's ``/props`` beside the ``/v1`` root (``default_generation_settings.n_ctx``,
    or ``n_ctx``). Any failure (no such route, no server, not JSON) is None: the setting holds.
    """
    if base_url is None:
        return None
    root = base_url.rstrip("/")
    models = _get_json(f"{root}/models", timeout)
    if isinstance(models, dict) and isinstance(models.get("data"), list):
        for entry in models["data"]:
            if not isinstance(entry, dict) or entry.get("id") not in (model, None):
                continue
            meta = entry.get("meta")
            n_ctx = meta.get("n_ctx") if isinstance(meta, dict) else None
            for value in (entry.get("max_model_len"), n_ctx):
                if isinstance(value, int) and value > 0:
                    return value
    props_root = root[: -len("/v1")] if root.endswith("/v1") else root
    props = _get_json(f"{props_root}/props", timeout)
    if isinstance(props, dict):
        settings = props.get("default_generation_settings")
        for value in (
            settings.get("n_ctx") if isinstance(settings, dict) else None,
            props.get("n_ctx"),
        ):
            if isinstance(value, int) and value > 0:
                return value
    return None


def _get_json(url: str, timeout: float) -> object:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return json.loads(response.read())
    except (OSError, urllib.error.URLError, ValueError):
        return None


def _params(
    messages: Sequence[ChatMessage] | Sequence[ToolMessage],
) -> list[ChatCompletionMessageParam]:
    # Each ChatMessage is a valid system, user or assistant message param, each ToolMessage
    # one of those or a tool result.
    return [cast(ChatCompletionMessageParam, dict(m)) for m in messages]


def _token_choices(logprobs: object) -> tuple[TokenChoice, ...]:
    """The reply's tokens from a chat completion's ``logprobs`` (none when it is missing or
    not of the OpenAI shape: a server's extension is not worth failing a reply for)."""
    content = getattr(logprobs, "content", None)
    if not isinstance(content, list):
        return ()
    tokens = []
    for item in content:
        token, top = getattr(item, "token", None), getattr(item, "top_logprobs", None) or []
        if not isinstance(token, str):
            return ()
        alternatives = tuple(
            (alt.token, float(alt.logprob))
            for alt in top
            if isinstance(getattr(alt, "token", None), str)
            and isinstance(getattr(alt, "logprob", None), int | float)
        )
        tokens.append(TokenChoice(token, alternatives))
    return tuple(tokens)


def _wrap(exc: Exception, name: str) -> LLMError:
    """The provider failure as an :class:`LLMError`; programming errors pass through."""
    if isinstance(exc, LLMError):
        return exc
    transport = _transport_error(exc)
    if isinstance(exc, openai.APITimeoutError | TimeoutError) or (
        transport and "Timeout" in type(exc).__name__
    ):
        return LLMTimeout(f"{name}: timed out")
    if isinstance(exc, openai.APIStatusError):
        return LLMError(f"{name}: HTTP {exc.status_code}: {_detail(exc)}")
    if transport or isinstance(exc, openai.APIError | OSError | ValueError):
        # connection failures, undecodable replies and broken event streams
        return LLMError(f"{name}: {type(exc).__name__}: {exc}")
    raise exc


def _transport_error(exc: Exception) -> bool:
    """An error of the HTTP stack under ``openai`` (httpx, or httpx2 in openai 3), raised while
    a stream is read. Told by module so that either stack works without importing it."""
    return type(exc).__module__.split(".")[0] in _TRANSPORT_MODULES


_TRANSPORT_MODULES = frozenset({"httpx", "httpx2", "httpcore", "httpcore2", "h11"})


def _detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        message = body.get("message") or body.get("error")
        if isinstance(message, dict):
            message = message.get("message")
        if isinstance(message, str) and message:
            return message[:300]
    return str(exc.message)[:300]
