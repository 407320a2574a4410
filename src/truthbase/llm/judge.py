"""The support judge over a chat model: does the quote entail the claim? (issue 24, item 4)

:class:`ModelJudge` implements :class:`truthbase.cite.judge.Judge`: one chat call per claim,
the quote and its context delimited as data (:func:`.prompts.build_judge_messages`), the reply
read strictly (:func:`parse_verdict`): one JSON object ``{"entailed": bool, "departing_words":
[str, ...]}``, optionally inside a Markdown code fence or HTML-escaped (llama.cpp's
chatml-function-calling format escapes it), and nothing else. Anything else, a
provider error or a timeout is a failed :class:`~truthbase.cite.model.Judgement` (never an
exception): the support policy then keeps its deterministic verdict. Each call is a ``judge``
span (the model call a ``chat`` span under it, :mod:`truthbase.telemetry`).

Where the server gives log-probabilities (:class:`~.client.ScoringChatModel`), the verdict is
the model's probability of ``true`` against ``false`` at the value of ``"entailed"``
(:func:`p_entailed`) held against ``support.judge_min_p``, not the word it wrote: a small model
writes ``false`` for honest paraphrases it gives ``true`` a fair chance on, and the threshold,
chosen by cross-validation on the hand-written claims (docs/evals/claims-judge.md), moves that
line to where its confidence separates supported from unsupported claims. Without them the
written word decides.

Verdicts are cached in memory (:class:`VerdictCache`, least recently used out), keyed by the
sha256 of quote, context, claim and model name; failures are not cached. An answer re-checks
its citations only once, so the cache pays on repeated questions and evals; a persistent
cache (a table of the index) would survive restarts, at the cost of invalidating on a model
change, which the key already handles.

:func:`judge_for` is the setting ``support.judge``: ``off`` no judge, ``auto`` one when a chat
model is configured, ``llm`` one or :class:`JudgeNotConfigured`.
"""

from __future__ import annotations

import hashlib
import html
import json
import logging
import math
import re
import threading
from collections import OrderedDict
from dataclasses import replace

from ..cite.model import Judgement
from ..config import LLMSettings, SupportSettings
from ..errors import InvalidInput
from ..telemetry import span
from ..text.valid import quoted
from .chain import load_stage_model
from .client import ChatModel, LLMTimeout, ScoringChatModel, TokenChoice
from .parse import strip_fences
from .prompts import build_judge_messages

__all__ = [
    "JUDGE_MAX_TOKENS",
    "JudgeNotConfigured",
    "ModelJudge",
    "VerdictCache",
    "judge_for",
    "p_entailed",
    "parse_verdict",
    "verdict_key",
]

log = logging.getLogger(__name__)

_KEYS = frozenset({"entailed", "departing_words"})
#: Most tokens of a verdict (``{"entailed": false, "departing_words": [...]}``).
JUDGE_MAX_TOKENS = 128
#: Likely tokens asked for at each token of the verdict: ``true`` and ``false`` are among a
#: model's first few at the verdict's value.
JUDGE_ALTERNATIVES = 8
#: Where the value of "entailed" begins, the quotes plain or HTML-escaped (a model served with
#: llama.cpp's chatml-function-calling format writes ``{&#34;entailed&#34;: false, ...}``).
_VALUE = re.compile(r'(?:"|&#34;|&quot;)entailed(?:"|&#34;|&quot;)\s*:\s*')


class JudgeNotConfigured(InvalidInput):
    """``support.judge = "llm"`` (or ``--judge``) without a chat model (``llm.base_url``)."""


def parse_verdict(text: str) -> tuple[bool, tuple[str, ...]] | None:
    """``(entailed, departing_words)`` from the reply, or None when it is not exactly one JSON
    object with a boolean ``entailed`` and a list of strings ``departing_words`` (no other key;
    a Markdown code fence around it, or HTML escapes of its quotes, are allowed)."""
    bare = strip_fences(text)
    if bare.startswith("{&#34;") or bare.startswith("{&quot;"):
        # llama-cpp-python's chatml-function-calling format (the suite's Qwen server) sends
        # the reply's text HTML-escaped: the same object, escaped in transport.
        bare = html.unescape(bare)
    try:
        value = json.loads(bare)
    except ValueError:
        return None
    if not isinstance(value, dict) or set(value) != _KEYS:
        return None
    entailed, words = value["entailed"], value["departing_words"]
    if not isinstance(entailed, bool) or not isinstance(words, list):
        return None
    if not all(isinstance(w, str) for w in words):
        return None
    return entailed, tuple(" ".join(w.split()) for w in words if w.strip())


def p_entailed(tokens: tuple[TokenChoice, ...]) -> float | None:
    """P(``true``) / (P(``true``) + P(``false``)) at the token that begins the value of
    ``"entailed"`` in the reply these tokens spell; None when there is no such token or neither
    word is among its alternatives."""
    text = "".join(t.token for t in tokens)
    found = _VALUE.search(text)
    if found is None:
        return None
    offset = 0
    for choice in tokens:
        end = offset + len(choice.token)
        if end > found.end():
            if not choice.token[max(0, found.end() - offset) :].strip():
                offset = end  # a token of spaces before the value: the value is the next one
                continue
            weights = {"true": 0.0, "false": 0.0}
            for token, logprob in choice.alternatives:
                word = token.strip().lower()
                if word in weights:
                    weights[word] += math.exp(logprob)
            total = weights["true"] + weights["false"]
            return weights["true"] / total if total > 0 else None
        offset = end
    return None


def verdict_key(claim: str, quote: str, context: str, model: str) -> str:
    """The cache key: sha256 of the four texts, each length-prefixed (no two inputs collide by
    moving text from one field to the next)."""
    digest = hashlib.sha256()
    for part in (quote, context, claim, model):
        data = part.encode("utf-8")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


class VerdictCache:
    """Judgements by :func:`verdict_key`, the least recently used dropped past ``size``;
    thread-safe (the server answers in a thread pool)."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._items: OrderedDict[str, Judgement] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Judgement | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: str, judgement: Judgement) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._items[key] = judgement
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


class ModelJudge:
    """The :class:`~truthbase.cite.judge.Judge` of ``model``: see the module doc."""

    def __init__(
        self,
        model: ChatModel,
        *,
        timeout: float,
        cache: VerdictCache | None = None,
        min_p: float = 0.5,
        logprobs: bool = True,
    ) -> None:
        self.model = model
        self.timeout = timeout
        self.cache = cache if cache is not None else VerdictCache()
        self.min_p = min_p
        self.logprobs = logprobs

    @property
    def name(self) -> str:
        return self.model.name

    def __call__(self, claim: str, quote: str, context: str) -> Judgement:
        key = verdict_key(claim, quote, context, self.model.name)
        hit = self.cache.get(key)
        if hit is not None:
            return self._decided(replace(hit, cached=True))
        with span("judge", model=self.model.name) as current:
            judgement = self._ask(claim, quote, context)
            # The decided verdict (by probability where there is one), as the reader sees it;
            # the written word beside it wherever the probability decided.
            decided = self._decided(judgement)
            current.set_attribute("truthbase.judge.entailed", str(decided.entailed))
            if judgement.p_entailed is not None:
                current.set_attribute("truthbase.judge.p_entailed", judgement.p_entailed)
                current.set_attribute("truthbase.judge.written", str(judgement.entailed))
            if judgement.failed:
                current.set_attribute("truthbase.judge.failure", judgement.failure[:200])
        if not judgement.failed:
            self.cache.put(key, judgement)  # as the model wrote it: the threshold is applied after
        return decided

    def _decided(self, judgement: Judgement) -> Judgement:
        """The verdict by the model's probability where it is known (see the module doc)."""
        if judgement.failed or judgement.p_entailed is None:
            return judgement
        return replace(judgement, entailed=judgement.p_entailed >= self.min_p)

    def _ask(self, claim: str, quote: str, context: str) -> Judgement:
        def failed(why: str) -> Judgement:
            log.info("support judge failed open (%s)", why)
            return Judgement(entailed=None, judge=self.name, failure=why)

        messages = build_judge_messages(claim, quote, context)
        tokens: tuple[TokenChoice, ...] = ()
        try:
            if self.logprobs and isinstance(self.model, ScoringChatModel):
                reply = self.model.complete_scored(
                    messages, self.timeout, alternatives=JUDGE_ALTERNATIVES
                )
                text, tokens = reply.text, reply.tokens
            else:
                text = self.model.complete(messages, self.timeout)
        except Exception as exc:  # fail open on anything: the deterministic verdict stands
            kind = "timeout" if isinstance(exc, LLMTimeout) else "error"
            return failed(f"{kind}: {exc}")
        verdict = parse_verdict(text)
        if verdict is None:
            return failed(f"malformed verdict: {text[:120]!r}")
        return Judgement(
            entailed=verdict[0],
            departing_words=verdict[1],
            judge=self.name,
            p_entailed=p_entailed(tokens),
        )


def judge_for(
    support: SupportSettings,
    llm: LLMSettings,
    *,
    choice: str | None = None,
    cache: VerdictCache | None = None,
) -> ModelJudge | None:
    """The judge ``support.judge`` (or ``choice``, overriding it) asks for: None for ``off``
    and for ``auto`` without a chat model; :class:`JudgeNotConfigured` for ``llm`` without
    one. The primary model alone answers (its timeout bounds the judge's latency)."""
    wanted = choice if choice is not None else support.judge
    if wanted not in ("off", "auto", "llm"):
        raise InvalidInput(f"unknown judge {quoted(wanted)}: use off, auto or llm")
    if wanted == "off":
        return None
    # A verdict is a short JSON object: a small reply budget bounds a model that rambles, and
    # the judge is asked greedily whatever the answer's temperature.
    model = load_stage_model(
        llm.model_copy(update={"max_tokens": JUDGE_MAX_TOKENS, "temperature": 0.0})
    )
    if model is None:
        if wanted == "llm":
            raise JudgeNotConfigured(
                "support.judge = llm needs a chat model: set TRUTHBASE_LLM__BASE_URL and "
                "TRUTHBASE_LLM__MODEL (or [llm] base_url and model in truthbase.toml)"
            )
        return None
    size = support.judge_cache_size
    return ModelJudge(
        model,
        timeout=support.judge_timeout_s,
        cache=cache if cache is not None else VerdictCache(size),
        min_p=support.judge_min_p,
        logprobs=support.judge_logprobs,
    )
