"""Meaning, not only words: which of a claim's content words the quote and its context carry.

A careful reader accepts "vendors are evaluated before the procurement" for "suppliers are
assessed prior to acquisition". :func:`align` gives each content word of the claim a partner in
quote or context when one of these holds, in order:

1. **same term**: the same stemmed term (:func:`truthbase.text.vocabulary.terms`), or the same first
   :data:`PREFIX` letters for longer words ("organizational" / "organization");
2. **same lemma or related lemma**: a lemma of the word (:mod:`.lexicon`, WordNet) that is a
   lemma of a passage word, or a synonym or derived form of one, either way round; two words of
   the claim read as one lemma too ("throw away" / "discard");
3. **the document naming itself**: a claim may say "the RAPTOR authors" or "NIST" for the
   cited document: the names of ``document`` (text that names it: its title, the head of its
   first page) are aligned, and where the quote says "we", "our", "this document", so are the
   words that name any document or authors ("the authors", "the paper").

4. **contextual token vectors**: with an embedder that keeps token vectors (the bundled one
   does, for late interaction), a word the above leave out earns part of its weight by how
   alike its vector is to the nearest word of the quote (:data:`TOKEN_FLOOR`).

The coverage is the idf-weighted share of aligned words, the idf over the sentences of quote
and context (as the citation aligner weighs them). Unaligned words are returned, for reasons.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

import numpy as np

from ..embed import Embedder, TokenEmbedder, TokenVectors
from ..text.fulltext import stemmer_for
from ..text.matching import normalize
from ..text.sentences import split_sentences
from ..text.vocabulary import QUERY_STOP_WORDS, SUPPORT_STOP_WORDS, WORD, idf_table, terms
from ..text.vocabulary import stem as _english_stem
from .lexicon import Lexicon

__all__ = [
    "FRAMING",
    "PHRASE_WORD",
    "PREFIX",
    "SELF_REFERENCE",
    "Alignment",
    "align",
    "at_every_place",
    "clause_after",
    "clause_before",
    "content_words",
    "normal",
    "passage_lemmas",
    "stems",
]

#: Shared leading letters that make two long words one term (derived forms WordNet misses).
PREFIX = 6
#: A claim word the lexicon does not align earns part of its weight from the best cosine of its
#: contextual vector (the embedder's word pieces, averaged) to a word of the quote (BERTScore's
#: greedy matching): nothing at :data:`TOKEN_FLOOR` or below, all of it at 1, linear between.
#: MiniLM gives unrelated words of one topic 0.3-0.6 ("harmful" / "negative" 0.47), so the
#: floor sits at the top of that band.
TOKEN_FLOOR = 0.55
#: A claim word the passage has weighs at least this share of a word it lacks. The idf is over
#: the passage's own few sentences, so a word all of them say (its topic: "offen" and
#: "abgeschlossen" in every sentence about open and closed sets) would weigh next to nothing
#: and a claim that restates it would be "4% covered". Chosen over 0, .3, .4, .5, .6, .75, .9
#: and 1 on claims-dev.json and eight claim sets written blind, each set left out in turn
#: (docs/evals/claims-realistic.md, round 5): .75 for eight of the nine.
SEEN_WEIGHT_FLOOR = 0.75
#: Words with which a passage speaks of itself or its authors.
SELF_REFERENCE = re.compile(
    r"\b(?:we|our|us|this (?:document|paper|publication|report|framework|work|guide|section|"
    r"chapter|skript|script|text)|dieses? (?:skript|dokument|text)|wir|unser\w*)\b"
)
# fmt: off
#: Words that frame a claim rather than carry its content: reporting verbs ("the paper notes
#: that"), light verbs and their objects ("takes place"), and German function words, which the
#: shared stop-word list (English) does not have.
FRAMING = frozenset(
    """
    call calls called note notes noted state states stated describe describes described define
    defines defined mention mentions mentioned list lists listed name names named point points
    observe observes report reports explain explains find finds found show shows shown treat
    treats treated consider considers considered regard regards take takes taken place mean
    meant means refer refers referred indicate indicates write writes written put puts puts
    make makes made give gives given way ways thing things also even still just another whose
    der die das den dem des ein eine einer einem einen eines und oder ist sind war wird werden
    wurde zu zum zur im in am an auf aus bei mit von für über unter als wie wenn dass daß so
    sich es er sie man auch noch nur schon dann denn doch ja nicht sein seine ihr ihre dieser
    diese dieses diesem diesen laut hat haben
    """.split()  # noqa: SIM905
)
# fmt: on
#: Words that name a document or its authors in general ("the authors", "the paper").
_DOCUMENT_WORDS = frozenset(
    """
    author authors paper document publication report framework study researchers work guide
    writers skript dokument autor autoren text script
    """.split()  # noqa: SIM905
)


#: A name in the document's own naming text: a capitalized word or an acronym.
_NAME = re.compile(r"\b[A-Z][\w\-]*")


#: A word as the checks read it in normalized text: letters and digits, joined by a hyphen or
#: an apostrophe ("state-of-the-art", "xl's").
PHRASE_WORD = re.compile(r"[^\W_]+(?:[\-'][^\W_]+)*")
#: What ends or opens a clause around a verbatim part of a quote.
_CLAUSE_MARK = re.compile(r"[,;:.!?]")
_Found = TypeVar("_Found")


def clause_before(text: str, at: int) -> str:
    """The text of ``text``'s clause before ``at`` (after its last comma, colon or stop)."""
    return _CLAUSE_MARK.split(text[:at])[-1]


def clause_after(text: str, end: int) -> str:
    """The text of ``text``'s clause from ``end`` (up to its next comma, colon or stop)."""
    return _CLAUSE_MARK.split(text[end:])[0]


def at_every_place(
    part: str, text: str, find: Callable[[int, int], _Found | None]
) -> _Found | None:
    """What ``find(start, end)`` finds at every place ``text`` holds ``part``: the last place's
    finding when each place has one, else None (one place without is enough for the part to
    stand as ``text`` says it)."""
    found: _Found | None = None
    at = text.find(part)
    while at >= 0:
        found = find(at, at + len(part))
        if found is None:
            return None
        at = text.find(part, at + 1)
    return found


@lru_cache(maxsize=2048)
def normal(text: str) -> str:
    """:func:`truthbase.text.matching.normalize`, remembered: the checks of one claim normalize its
    quote and context many times, and the claims of one answer share them."""
    return normalize(text)


@lru_cache(maxsize=2048)
def stems(text: str) -> tuple[str, ...]:
    """:func:`truthbase.text.vocabulary.terms`, remembered (see :func:`normal`)."""
    return tuple(terms(text))


@dataclass(frozen=True, slots=True)
class Alignment:
    """The claim's content words, which of them have a partner, and the weighted coverage."""

    coverage: float
    words: tuple[str, ...]
    unaligned: tuple[str, ...]


def content_words(text: str) -> list[str]:
    """Normalized content words of ``text`` in order (stop words, numbers left out)."""
    return list(_content_words(text))


@lru_cache(maxsize=2048)
def _content_words(text: str) -> tuple[str, ...]:
    return tuple(
        w
        for w in WORD.findall(normal(text))
        if w not in SUPPORT_STOP_WORDS
        and w not in QUERY_STOP_WORDS
        and w not in FRAMING
        and not any(c.isdigit() for c in w)
        and len(w) > 1
    )


def _word_vectors(tokens: TokenVectors) -> tuple[list[str], np.ndarray]:
    """Whole words from word pieces ("##" continues a word), each the mean of its pieces."""
    words: list[str] = []
    groups: list[list[int]] = []
    for k, piece in enumerate(tokens.tokens):
        if piece.startswith("##") and groups:
            words[-1] += piece[2:]
            groups[-1].append(k)
        else:
            words.append(piece)
            groups.append([k])
    if not groups:
        return [], np.zeros((0, 1), dtype=np.float32)
    vectors = np.stack([tokens.vectors[g].mean(axis=0) for g in groups])
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
    return words, vectors


def token_similarities(claim: str, passage: str, embedder: Embedder | None) -> dict[str, float]:
    """Each claim word's best cosine to a word of ``passage`` with the embedder's contextual
    token vectors (empty when the embedder keeps none)."""
    if embedder is None or not hasattr(embedder, "embed_with_tokens"):
        return {}
    token_embedder: TokenEmbedder = embedder  # type: ignore[assignment]
    _, tokens = token_embedder.embed_with_tokens([claim, passage])
    if not tokens or len(tokens) < 2:
        return {}
    claim_words, claim_vectors = _word_vectors(tokens[0])
    _, passage_vectors = _word_vectors(tokens[1])
    if not claim_words or passage_vectors.shape[0] == 0:
        return {}
    best = (claim_vectors @ passage_vectors.T).max(axis=1)
    out: dict[str, float] = {}
    for word, value in zip(claim_words, best, strict=True):
        out[word] = max(out.get(word, 0.0), float(value))
    return out


def _soft(similarity: float) -> float:
    return max(0.0, (similarity - TOKEN_FLOOR) / (1.0 - TOKEN_FLOOR))


def passage_lemmas(words: Sequence[str], lexicon: Lexicon) -> set[str]:
    """Every lemma of ``words``, and the words themselves."""
    found: set[str] = set(words)
    for w in words:
        found.update(lexicon.lemmas(w))
    return found


def _related_lemma(lemmas: frozenset[str], have: set[str], lexicon: Lexicon) -> bool:
    return any(lemma in have or lexicon.related(lemma) & have for lemma in lemmas)


def align(
    claim: str,
    quote: str,
    context: str,
    lexicon: Lexicon,
    *,
    document: str = "",
    ignore: frozenset[str] = frozenset(),
    embedder: Embedder | None = None,
    language: str | None = None,
) -> Alignment:
    """The alignment of ``claim`` to ``quote`` and ``context`` (see the module doc); words in
    ``ignore`` (numbers and cues another check compares) are left out. ``language`` (ISO 639-1)
    stems the words with Snowball's stemmer for it where it has one ("Mengen" / "Menge",
    "offenen" / "offen"), else with the light English suffix stripper."""
    words = [w for w in content_words(claim) if w not in ignore]
    if not words:
        return Alignment(1.0, (), ())
    stem = stemmer_for(language) or _english_stem
    passage = content_words(quote) + content_words(context)
    stems = {stem(w) for w in passage}
    prefixes = {w[:PREFIX] for w in passage if len(w) >= PREFIX + 2}
    lemmas = passage_lemmas(passage, lexicon)
    inverse: set[str] = set()
    for lemma in lemmas:
        inverse.update(lexicon.related(lemma))
    speaks_of_itself = bool(SELF_REFERENCE.search(normal(quote)))
    named = {part for name in _NAME.findall(document) for part in content_words(name)}
    similar = token_similarities(claim, quote, embedder)
    aligned: list[bool] = []
    credit: list[float] = []
    for k, w in enumerate(words):
        own = lexicon.lemmas(w)
        pair = lexicon.lemmas(f"{w}_{words[k + 1]}") if k + 1 < len(words) else frozenset()
        pair |= lexicon.lemmas(f"{words[k - 1]}_{w}") if k else frozenset()
        hit = (
            stem(w) in stems
            or (len(w) >= PREFIX + 2 and w[:PREFIX] in prefixes)
            or _related_lemma(own | pair, lemmas, lexicon)
            or bool((own | pair | {w}) & inverse)
            or w in named
            or (speaks_of_itself and w in _DOCUMENT_WORDS)
        )
        aligned.append(hit)
        credit.append(1.0 if hit else _soft(similar.get(w, 0.0)))
    sentences = [normal(quote[s:e]) for s, e in split_sentences(quote)] or [normal(quote)]
    sentences += [normal(context[s:e]) for s, e in split_sentences(context)]
    idf, unseen = idf_table([[stem(w) for w in content_words(s)] for s in sentences])
    floor = SEEN_WEIGHT_FLOOR * unseen
    weights = [max(idf[t], floor) if (t := stem(w)) in idf else unseen for w in words]
    total = sum(weights)
    found = sum(wt * c for wt, c in zip(weights, credit, strict=True))
    return Alignment(
        found / total if total > 0 else 1.0,
        tuple(words),
        tuple(w for w, hit in zip(words, aligned, strict=True) if not hit),
    )
