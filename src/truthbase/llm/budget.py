"""How much text fits in a model's context window (pure).

No tokenizer runs on this side of the API, so tokens are estimated from characters, on the safe
side: :data:`CHARS_PER_TOKEN` is 3 where English prose runs about 4 characters a token in the
Llama and Qwen vocabularies (position tags and numbers run nearer 1). A request fits when its
messages, its tool schemas and the reply's ``max_tokens`` together stay under the window less a
margin (:func:`room_chars`); the server rejects the rest (HTTP 400, context length exceeded) or,
worse, some silently drop the start of the conversation.

:class:`ContextWindow` is what a model that knows its window offers (the OpenAI-compatible
client and a chain of them do); :func:`window_of` asks it, None for a model that cannot say (a
scripted fake), which then goes unbudgeted. :func:`fit_sources` keeps the LLM answerer's
sources within the room: best-ranked first, the first that does not fit cut to the room left,
the rest dropped.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

__all__ = [
    "CHARS_PER_TOKEN",
    "MESSAGE_OVERHEAD_TOKENS",
    "MIN_SOURCE_CHARS",
    "ContextWindow",
    "Fitted",
    "cut_text",
    "fit_sources",
    "message_tokens",
    "reply_tokens",
    "room_chars",
    "window_of",
]

#: Characters per token, estimated low (so that the estimate of tokens runs high).
CHARS_PER_TOKEN = 3
#: The chat template's tokens around each message (role markers, separators).
MESSAGE_OVERHEAD_TOKENS = 8
#: Tokens kept free besides the reply: the estimate's error on short texts, the template's end.
MARGIN_TOKENS = 64
#: A source cut shorter than this is dropped instead (a stub cannot support a claim).
MIN_SOURCE_CHARS = 200


@runtime_checkable
class ContextWindow(Protocol):
    """A model that knows its context window and how many tokens it asks for its reply."""

    def context_window(self) -> int: ...

    def reply_tokens(self) -> int: ...


def window_of(model: object) -> tuple[int, int] | None:
    """(context tokens, reply tokens) of ``model``; None when it cannot say."""
    if isinstance(model, ContextWindow):
        return model.context_window(), model.reply_tokens()
    return None


def reply_tokens(max_tokens: int | None, context: int) -> int:
    """The reply's share of a window: ``max_tokens``, but at most a quarter of the window."""
    quarter = max(16, context // 4)
    return quarter if max_tokens is None else min(max_tokens, quarter)


def _tokens(chars: int) -> int:
    return -(-chars // CHARS_PER_TOKEN)


def message_tokens(
    messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] = ()
) -> int:
    """The estimated prompt tokens of ``messages`` (content and tool calls) and ``tools``."""
    total = 0
    for message in messages:
        chars = len(str(message.get("content") or ""))
        calls = message.get("tool_calls")
        if calls:
            chars += len(json.dumps(calls, ensure_ascii=False))
        total += _tokens(chars) + MESSAGE_OVERHEAD_TOKENS
    if tools:
        total += _tokens(len(json.dumps(list(tools), ensure_ascii=False))) + MARGIN_TOKENS
    return total


def room_chars(context: int, reply: int, used_tokens: int) -> int:
    """Characters of new text that still fit after ``used_tokens`` of prompt; 0 when none do."""
    free = context - reply - used_tokens - MARGIN_TOKENS
    return max(0, free * CHARS_PER_TOKEN)


def cut_text(text: str, max_chars: int) -> str:
    """``text`` cut at a word boundary to at most ``max_chars`` characters, marked " ..."."""
    if len(text) <= max_chars:
        return text
    head = text[: max(0, max_chars - 4)]
    if " " in head:
        head = head.rsplit(" ", 1)[0]
    return head + " ..."


class _Source(Protocol):
    @property
    def n(self) -> int: ...

    @property
    def text(self) -> str: ...


S = TypeVar("S", bound=_Source)


@dataclass(frozen=True, slots=True)
class Fitted(Generic[S]):
    """The sources that fit, and the numbers of those cut and of those dropped."""

    sources: list[S]
    cut: list[int]
    dropped: list[int]

    def to_json(self) -> dict[str, Any]:
        return {"cut": list(self.cut), "dropped": list(self.dropped)}


def fit_sources(sources: Sequence[S], room: int, *, overhead: int = 80) -> Fitted[S]:
    """Sources in the given (ranked) order while their text (plus ``overhead`` characters of
    delimiters each) fits in ``room`` characters; the first that does not fit is cut to the
    room left (dropped below :data:`MIN_SOURCE_CHARS`), every later one is dropped. The sources
    are dataclasses (the cut one is a :func:`dataclasses.replace` copy)."""
    kept: list[S] = []
    shortened: list[int] = []
    dropped: list[int] = []
    left = room
    for source in sources:
        if dropped or shortened:
            dropped.append(source.n)
            continue
        need = len(source.text) + overhead
        if need <= left:
            kept.append(source)
            left -= need
            continue
        space = left - overhead
        if space >= MIN_SOURCE_CHARS:
            kept.append(dataclasses.replace(source, text=cut_text(source.text, space)))  # type: ignore[type-var]
            shortened.append(source.n)
        else:
            dropped.append(source.n)
        left = 0
    return Fitted(kept, shortened, dropped)
