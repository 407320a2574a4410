"""LLMs over any OpenAI-compatible server: the answer prompt, fallbacks, rewrite and rerank.

- :mod:`.client`: :class:`ChatModel`, :class:`OpenAIChatModel`; :mod:`.chain`:
  :func:`with_fallbacks`, :func:`load_chat_model` (the configured chain) and
  :func:`load_stage_model` (the primary alone).
- :mod:`.prompts`: the prompts, sources delimited and escaped as data; :func:`is_refusal`
  (the one rule, :mod:`truthbase.cite.refusal`, re-exported).
- :mod:`.answer`: :func:`draft_answer`, the LLM answer as a token stream naming its model.
- :mod:`.rewrite`: :func:`rewrite_query` (at most 3 sub-queries, fails open) and
  :func:`fuse_subqueries`.
- :mod:`.rerank`: :func:`rerank` (listwise over the fused top 15, fails open).
"""

from __future__ import annotations

from .answer import LLMDraft, draft_answer
from .chain import (
    AllModelsFailed,
    CompleteReply,
    Failure,
    FallbackChatModel,
    StreamReply,
    load_chat_model,
    load_stage_model,
    with_fallbacks,
)
from .client import ChatMessage, ChatModel, LLMError, LLMTimeout, OpenAIChatModel
from .prompts import (
    NO_ANSWER,
    PromptSource,
    SourceText,
    build_answer_messages,
    build_rerank_messages,
    build_rewrite_messages,
    escape_data,
    is_refusal,
)
from .rerank import RerankOutcome, rerank, rerank_outcome
from .rewrite import RewriteOutcome, fuse_subqueries, rewrite, rewrite_query

__all__ = [
    "NO_ANSWER",
    "AllModelsFailed",
    "ChatMessage",
    "ChatModel",
    "CompleteReply",
    "Failure",
    "FallbackChatModel",
    "LLMDraft",
    "LLMError",
    "LLMTimeout",
    "OpenAIChatModel",
    "PromptSource",
    "RerankOutcome",
    "RewriteOutcome",
    "SourceText",
    "StreamReply",
    "build_answer_messages",
    "build_rerank_messages",
    "build_rewrite_messages",
    "draft_answer",
    "escape_data",
    "fuse_subqueries",
    "is_refusal",
    "load_chat_model",
    "load_stage_model",
    "rerank",
    "rerank_outcome",
    "rewrite",
    "rewrite_query",
    "with_fallbacks",
]
