"""Segment summaries that carry position tags: extractive (the default) or by a chat model.

Extractive (``extractive-v1``): the segment's most central sentences, verbatim, in reading
order, each followed by its tag. Central means close to the segment's TF-IDF centroid: terms
weigh by their frequency in the segment times their rarity across the document's segments, so a
chapter's summary favours the names and words that set it apart from the rest of the book. A
maximal-marginal-relevance pick keeps near-duplicate sentences out. Pure and fast (no model).

LLM (``llm:{model}``): the segment's text goes to the model as passages each followed by its
tag; the model writes a short summary with tags after its claims. Tags that do not lie inside
the segment are dropped; a reply without any valid tag, and any model error, falls back to the
extractive summary of that segment (its ``summarizer`` says so).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from ..cite.tags import TAG, TAG_LIKE, neutralize_tags
from ..llm.budget import message_tokens, room_chars, window_of
from ..llm.client import ChatMessage, ChatModel, LLMError
from ..llm.prompts import build_summary_messages
from ..records import Segment
from ..text.vocabulary import idf_log1p, terms
from .passages import Span, inside_segment, passages, segment_sentences, segment_size, tag

__all__ = [
    "EXTRACTIVE_ID",
    "MAX_MODEL_FAILURES",
    "extractive_summaries",
    "llm_summarizer_id",
    "llm_summary",
    "summarize_segments",
]

EXTRACTIVE_ID = "extractive-v1"
#: Model errors in a row after which the rest of a document's summaries are extractive.
MAX_MODEL_FAILURES = 3

#: Sentences shorter or longer than this (characters) are not picked for a summary.
_MIN_SENTENCE, _MAX_SENTENCE = 40, 400
#: One summary sentence per this many characters of segment text, up to the configured most.
_CHARS_PER_SENTENCE = 2_500
#: Maximal marginal relevance: weight of centrality against redundancy with picked sentences.
_MMR_LAMBDA = 0.75
_TERMINAL = re.compile(r"[.!?…][\"'”’»)\]]*$")
#: Bibliography entries and links say nothing about a section: "arXiv preprint", "doi:", URLs,
#: "pp. 188", "(2020)", "Proceedings of", "8:423-438, 2020.".
_REFERENCE = re.compile(
    r"https?:|\bURL\b|\bdoi:|\barxiv\b|\bpp\. ?\d|\(\d{4}[a-z]?\)|\bproceedings of\b"
    r"|, (?:19|20)\d{2}\.$|\d+:\d+[–-]\d+",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W\d_]+")
#: A sentence whose words are mostly capitalized is a list of names (authors) or a heading.
_MAX_CAPITALIZED = 0.6


def _prose(text: str) -> bool:
    """Whether a sentence reads as prose, not as a reference, a link or a list of names."""
    if _REFERENCE.search(text):
        return False
    words = _WORD.findall(text)[1:]
    if not words:
        return False
    capitalized = sum(1 for w in words if w[0].isupper())
    return capitalized / len(words) <= _MAX_CAPITALIZED


def llm_summarizer_id(model: str) -> str:
    return f"llm:{model}"


def _vector_norm(weights: Mapping[str, float]) -> float:
    return math.sqrt(sum(w * w for w in weights.values()))


def _cosine(a: Mapping[str, float], b: Mapping[str, float], na: float, nb: float) -> float:
    if na == 0 or nb == 0:
        return 0.0
    if len(a) > len(b):
        a, b = b, a
    return sum(w * b.get(t, 0.0) for t, w in a.items()) / (na * nb)


def _pick(
    candidates: list[tuple[Span, dict[str, float]]],
    centroid: Mapping[str, float],
    k: int,
) -> list[Span]:
    """Up to ``k`` spans by maximal marginal relevance to ``centroid``."""
    c_norm = _vector_norm(centroid)
    norms = [_vector_norm(v) for _, v in candidates]
    relevance = [
        _cosine(v, centroid, n, c_norm) for (_, v), n in zip(candidates, norms, strict=True)
    ]
    chosen: list[int] = []
    redundancy = [0.0] * len(candidates)
    while len(chosen) < k:
        best, best_score = -1, -math.inf
        for i in range(len(candidates)):
            if i in chosen:
                continue
            score = _MMR_LAMBDA * relevance[i] - (1 - _MMR_LAMBDA) * redundancy[i]
            if score > best_score:
                best, best_score = i, score
        if best < 0:
            break
        chosen.append(best)
        vector = candidates[best][1]
        for i in range(len(candidates)):
            if i not in chosen:
                similarity = _cosine(candidates[i][1], vector, norms[i], norms[best])
                redundancy[i] = max(redundancy[i], similarity)
    return sorted(candidates[i][0] for i in chosen)


def _passage(texts: Mapping[int, str] | Sequence[str], span: Span) -> str:
    """The span's text on one line, its tag-like strings neutralized (document text is data: a
    tag it contains must not read as the tag of a passage)."""
    return neutralize_tags(" ".join(texts[span.unit][span.start : span.end].split()))


def _summary_text(spans: Sequence[Span], texts: Mapping[int, str] | Sequence[str]) -> str:
    return " ".join(_passage(texts, s) + " " + tag(s) for s in spans)


def extractive_summaries(
    segments: Sequence[Segment],
    texts: Mapping[int, str] | Sequence[str],
    max_sentences: int,
) -> list[str]:
    """One extractive summary per segment of one document (``texts``: its units' text)."""
    sentence_lists = [segment_sentences(s, texts) for s in segments]
    sentence_terms = [
        [terms(texts[sp.unit][sp.start : sp.end]) for sp in sl] for sl in sentence_lists
    ]
    counts = [Counter(t for ts in st for t in ts) for st in sentence_terms]
    df: Counter[str] = Counter()
    for c in counts:
        df.update(c.keys())
    n = len(segments)
    idf = {t: idf_log1p(n, d) for t, d in df.items()}
    summaries: list[str] = []
    for segment, sentences, sent_terms, count in zip(
        segments, sentence_lists, sentence_terms, counts, strict=True
    ):
        centroid = {t: (1.0 + math.log(c)) * idf[t] for t, c in count.items()}
        candidates: list[tuple[Span, dict[str, float]]] = []
        fallback: list[tuple[Span, dict[str, float]]] = []
        for span, words in zip(sentences, sent_terms, strict=True):
            if len(set(words)) < 3:
                continue
            vector = {t: idf[t] for t in set(words)}
            text = texts[span.unit][span.start : span.end].rstrip()
            length = span.end - span.start
            if _MIN_SENTENCE <= length <= _MAX_SENTENCE and _TERMINAL.search(text) and _prose(text):
                candidates.append((span, vector))
            else:
                fallback.append((span, vector))
        k = min(max_sentences, max(2, math.ceil(segment_size(segment) / _CHARS_PER_SENTENCE)))
        picked = _pick(candidates or fallback, centroid, k)
        summaries.append(_summary_text(picked, texts))
    return summaries


def _summary_messages(
    segment: Segment,
    texts: Mapping[int, str] | Sequence[str],
    sentences: int,
    passage_chars: int,
    room: int | None = None,
) -> list[ChatMessage]:
    """The summary prompt; with ``room`` (characters the model's context has for the section),
    the section's passages from its start while they fit (a longer section is summarized from
    its beginning, never sent whole to fail)."""
    lines = [
        f"{_passage(texts, p)} {tag(p)}"
        for p in passages(segment_sentences(segment, texts), passage_chars)
    ]
    if room is not None:
        kept: list[str] = []
        for line in lines:
            room -= len(line) + 1
            if room < 0 and kept:
                break
            kept.append(line)
        lines = kept
    return build_summary_messages(segment.title, lines, sentences)


def _summary_room(model: ChatModel, segment: Segment, sentences: int) -> int | None:
    window = window_of(model)
    if window is None:
        return None
    used = message_tokens(build_summary_messages(segment.title, [], sentences))
    return room_chars(window[0], window[1], used)


def clean_llm_summary(text: str, segment: Segment) -> str:
    """The model's summary with every tag outside the segment (or malformed) removed."""

    def keep(match: re.Match[str]) -> str:
        parts = TAG.fullmatch(match.group())
        if parts is None:
            return ""
        span = Span(int(parts[1]), int(parts[2]), int(parts[3]))
        return match.group() if inside_segment(span, segment) else ""

    cleaned = TAG_LIKE.sub(keep, text)
    cleaned = re.sub(r"[ \t]+([.,;:!?])", r"\1", cleaned)
    return " ".join(cleaned.split())


def llm_summary(
    segment: Segment,
    texts: Mapping[int, str] | Sequence[str],
    model: ChatModel,
    *,
    timeout: float,
    sentences: int,
    passage_chars: int,
) -> str | None:
    """The model's tagged summary of ``segment``, or None when it keeps no valid tag.

    Raises :class:`~truthbase.llm.client.LLMError` when the model fails."""
    room = _summary_room(model, segment, sentences)
    messages = _summary_messages(segment, texts, sentences, passage_chars, room)
    reply = model.complete(messages, timeout)
    summary = clean_llm_summary(reply, segment)
    return summary if TAG.search(summary) else None


def summarize_segments(
    segments: Sequence[Segment],
    texts: Mapping[int, str] | Sequence[str],
    *,
    max_sentences: int,
    model: ChatModel | None = None,
    model_id: str = "",
    timeout: float,
    passage_chars: int,
    on_segment: Callable[[Segment], None] | None = None,
) -> list[Segment]:
    """``segments`` with their summaries: the model's when ``model`` is given (extractive where
    it fails), else extractive. ``Segment.summarizer`` says who wrote each. After
    :data:`MAX_MODEL_FAILURES` model errors in a row the model is not asked again (a server that
    is down or times out would otherwise cost its timeout once per segment)."""
    extractive = extractive_summaries(segments, texts, max_sentences)
    out: list[Segment] = []
    failures = 0  # consecutive model errors
    for segment, fallback in zip(segments, extractive, strict=True):
        summary, by = fallback, EXTRACTIVE_ID
        if model is not None and failures < MAX_MODEL_FAILURES:
            try:
                written = llm_summary(
                    segment,
                    texts,
                    model,
                    timeout=timeout,
                    sentences=max_sentences,
                    passage_chars=passage_chars,
                )
                failures = 0
            except LLMError:
                written = None
                failures += 1
            if written is not None:
                summary, by = written, llm_summarizer_id(model_id or model.name)
        done = replace(segment, summary=summary, summarizer=by)
        out.append(done)
        if on_segment is not None:
            on_segment(done)
    return out
