"""The claim-perturbation benchmark: does :func:`truthbase.cite.support.check_support` keep
faithful claims and catch wrong ones?

For each evidence quote of the golden set's answerable questions (located in the stored unit
text with the one matcher, as the answer evaluation locates it), claims are built
deterministically, from the quote and its document only:

- faithful: ``quote`` (the quote itself) and ``clause_dropped`` (the quote without one clause:
  a piece between commas or semicolons, or one that starts with "and" or "which"; the shortest
  such piece of at least three words whose removal leaves at least three content terms);
- perturbations: ``number`` (the quote's first number changed to a value it does not hold),
  ``negation`` (the quote's first negation removed, or one inserted after its first
  auxiliary verb, else "It is not true that ..."), ``term_swap`` (the quote's first named term
  replaced with another named term of the same document that the quote lacks, picked among the
  document's ten most frequent of the same shape), ``unrelated`` (a sentence of another unit of
  the same document).

A kind that a quote gives no material for (no number, no named term) is left out for it. Each
claim is checked as the product checks it: the context is the sentences around the quote on
its unit (:func:`truthbase.cite.support.context_around`), the embedder the index's.
The report has the share of perturbations caught (not supported), overall and per kind, the
share of faithful claims kept (supported), the same split into the two halves of the questions
(in golden order), and the per-claim records.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..cite.support import (
    NEGATION_WORDS,
    NUMBER_WORDS,
    ORDINAL_WORDS,
    check_support,
    context_around,
    named_terms,
    negations,
    numbers,
    term_present,
    term_shape,
)
from ..embed import Embedder
from ..store import DocumentReader
from ..text.matching import find_quote, normalize
from ..text.sentences import split_sentences
from ..text.vocabulary import terms
from .answers import section_unit
from .golden import GoldenSet
from .retrieval import PreparedCorpus

__all__ = [
    "CLAIM_METRICS",
    "FAITHFUL_KINDS",
    "PERTURBATION_KINDS",
    "build_claims",
    "evaluate_claims",
]

FAITHFUL_KINDS = ("quote", "clause_dropped")
PERTURBATION_KINDS = ("number", "negation", "term_swap", "unrelated")
#: The shares the gate compares (all higher-is-better).
CLAIM_METRICS = ("perturbations_caught", "faithful_supported")

#: Named terms of a document among which a swap picks.
_SWAP_POOL = 10
_AUXILIARIES = re.compile(
    r"\b(is|are|was|were|can|could|will|would|should|may|might|must|does|do|did|has|have|had)\b"
)


@dataclass(frozen=True, slots=True)
class _Document:
    """What the perturbations take from a document: its named terms and sentences by unit."""

    term_counts: Counter[str]
    sentences: tuple[tuple[int, str], ...]  # (unit, sentence)


def _document(store: DocumentReader, doc_id: str) -> _Document:
    info = store.document(doc_id)
    counts: Counter[str] = Counter()
    sentences: list[tuple[int, str]] = []
    for index in range(info.unit_count if info is not None else 0):
        unit = store.unit(doc_id, index)
        if unit is None:
            continue
        counts.update(named_terms(unit.text))
        for s, e in split_sentences(unit.text):
            text = " ".join(unit.text[s:e].split())
            if 60 <= len(text) <= 250 and len(terms(text)) >= 5:
                sentences.append((index, text))
    return _Document(counts, tuple(sentences))


def _pick(seed: str, count: int) -> int:
    return zlib.crc32(seed.encode("utf-8")) % count


def _sentence(text: str) -> str:
    text = text.strip().rstrip(",;:")
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?\"”'’)" else text + "."


# -- faithful ---------------------------------------------------------------------------------


def _clauses(quote: str) -> list[tuple[str, str]]:
    """The quote cut into (separator before, piece): at ", " and "; " outside brackets and
    quotation marks, and before " which "."""
    pieces: list[tuple[str, str]] = []
    depth, start, sep = 0, 0, ""
    i = 0
    while i < len(quote):
        ch = quote[i]
        if ch in "([{“":
            depth += 1
        elif ch in ")]}”":
            depth = max(0, depth - 1)
        elif depth == 0 and (m := re.match(r"[,;]\s+|\s+(?=which\s)", quote[i:])):
            pieces.append((sep, quote[start:i]))
            sep = m.group()
            i += len(m.group())
            start = i
            continue
        i += 1
    pieces.append((sep, quote[start:]))
    return [(s, p) for s, p in pieces if p.strip()]


def _clause_dropped(quote: str) -> str | None:
    """The quote without its shortest inner clause of three words or more (an "and ..." piece
    after a comma counts), else without its last one; the first piece stays, so the claim
    starts as the quote does."""
    pieces = _clauses(quote)
    candidates = [k for k in range(1, len(pieces)) if len(pieces[k][1].split()) >= 3]
    inner = [k for k in candidates if k < len(pieces) - 1]
    for pool in (inner, candidates):
        for k in sorted(pool, key=lambda k: (len(pieces[k][1]), k)):
            text = "".join(s + p for j, (s, p) in enumerate(pieces) if j != k)
            if len([t for t in terms(text) if not t.isdigit()]) >= 3:
                return _sentence(text)
    return None


# -- perturbations ----------------------------------------------------------------------------

#: Number words in the order a changed number steps through them (the next one, cyclically).
_WORD_STEPS = tuple(NUMBER_WORDS)  # zero .. nineteen, twenty .. ninety, hundred .. billion
_UNIT_STEPS, _TENS_STEPS, _SCALE_STEPS = _WORD_STEPS[:20], _WORD_STEPS[20:28], _WORD_STEPS[28:]
_ORDINAL_STEPS = tuple(ORDINAL_WORDS)


def _word_successors(word: str) -> list[str]:
    for steps in (_UNIT_STEPS, _TENS_STEPS, _SCALE_STEPS, _ORDINAL_STEPS):
        if word in steps:
            at = steps.index(word)
            return [steps[(at + k) % len(steps)] for k in range(1, len(steps))]
    return []


def _changed_number(quote: str) -> str | None:
    found = numbers(quote)
    if not found:
        return None
    have = {v.rstrip("%") for v, _ in found}
    written = found[0][1]
    match = re.search(rf"(?<![^\W_]){re.escape(written)}(?![^\W_])", quote) or re.search(
        rf"(?<!\d){re.escape(written)}(?!\d)", quote
    )
    if match is None:
        return None
    if re.search(r"\d", written):
        last = max(i for i, c in enumerate(written) if c.isdigit())
        options = [
            written[:last] + str((int(written[last]) + step) % 10) + written[last + 1 :]
            for step in range(1, 10)
        ]
    else:
        word = re.match(r"[^\W_]+", written)
        if word is None:
            return None
        head = word.group()
        options = [
            (w.capitalize() if head[0].isupper() else w) + written[len(head) :]
            for w in _word_successors(head.casefold())
        ]
    for new in options:
        if not have & {v.rstrip("%") for v, _ in numbers(new)}:
            return _sentence(quote[: match.start()] + new + quote[match.end() :])
    return None


_REMOVALS = {
    "cannot": "can",
    "without": "with",
    "none": "all",
    "nothing": "something",
    "nobody": "somebody",
    "nowhere": "somewhere",
    "ohne": "mit",
    "nichts": "etwas",
}


def _changed_negation(quote: str) -> str | None:
    if negations(quote):
        for m in re.finditer(r"[^\W_]+(?:['’][^\W_]+)?", quote):
            word = m.group()
            lower = normalize(word)
            if lower.endswith("n't"):
                base = {"won't": "will", "can't": "can", "shan't": "shall"}.get(lower, word[:-3])
                return _sentence(quote[: m.start()] + base + quote[m.end() :])
            if lower not in NEGATION_WORDS:
                continue
            if lower in _REMOVALS:
                new = _REMOVALS[lower]
                new = new.capitalize() if word[0].isupper() else new
                return _sentence(quote[: m.start()] + new + quote[m.end() :])
            if lower.startswith("kein"):
                new = word[1:] if word[0].islower() else "E" + word[2:]
                return _sentence(quote[: m.start()] + new + quote[m.end() :])
            rest = quote[m.end() :].lstrip()
            head = quote[: m.start()]
            if not head.strip():
                rest = rest[:1].upper() + rest[1:]
            return _sentence(head + rest)
        return None
    aux = _AUXILIARIES.search(quote)
    if aux is not None:
        return _sentence(quote[: aux.end()] + " not" + quote[aux.end() :])
    body = quote.strip()
    return _sentence("It is not true that " + body[:1].lower() + body[1:])


def _swapped_term(quote: str, document: _Document) -> str | None:
    own = named_terms(quote)
    if not own:
        return None
    term = own[0]
    normalized_quote = normalize(quote)
    pool = [
        t
        for t, _ in sorted(document.term_counts.items(), key=lambda kv: (-kv[1], kv[0]))
        if term_shape(t) == term_shape(term) and not term_present(t, normalized_quote)
    ][:_SWAP_POOL]
    if not pool:
        return None
    other = pool[_pick(quote, len(pool))]
    at = re.search(rf"(?<![^\W_]){re.escape(term)}(?![^\W_])", quote)
    if at is None:
        return None
    return _sentence(quote[: at.start()] + other + quote[at.end() :])


def _unrelated(quote: str, unit: int, document: _Document) -> str | None:
    others = [s for u, s in document.sentences if u != unit]
    return others[_pick(quote, len(others))] if others else None


def build_claims(quote: str, unit: int, document: _Document) -> list[tuple[str, str]]:
    """(kind, claim) for one located quote; kinds without material are left out."""
    built: list[tuple[str, str | None]] = [
        ("quote", quote),
        ("clause_dropped", _clause_dropped(quote)),
        ("number", _changed_number(quote)),
        ("negation", _changed_negation(quote)),
        ("term_swap", _swapped_term(quote, document)),
        ("unrelated", _unrelated(quote, unit, document)),
    ]
    return [(kind, claim) for kind, claim in built if claim]


# -- the report -------------------------------------------------------------------------------


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 1.0


def summarize_claims(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The shares over per-claim records."""
    faithful = [r for r in records if r["faithful"]]
    perturbed = [r for r in records if not r["faithful"]]
    by_kind: dict[str, dict[str, Any]] = {}
    for kind in FAITHFUL_KINDS + PERTURBATION_KINDS:
        rows = [r for r in records if r["kind"] == kind]
        if kind in FAITHFUL_KINDS:
            by_kind[kind] = {
                "n": len(rows),
                "supported": _share(sum(r["supported"] for r in rows), len(rows)),
            }
        else:
            by_kind[kind] = {
                "n": len(rows),
                "caught": _share(sum(not r["supported"] for r in rows), len(rows)),
            }
    return {
        "perturbations_caught": _share(sum(not r["supported"] for r in perturbed), len(perturbed)),
        "faithful_supported": _share(sum(r["supported"] for r in faithful), len(faithful)),
        "perturbations": len(perturbed),
        "faithful": len(faithful),
        "by_kind": by_kind,
    }


def evaluate_claims(
    golden: GoldenSet,
    prepared: PreparedCorpus,
    store: DocumentReader,
    embedder: Embedder | None,
    *,
    on_question: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The claim report: shares overall, per kind and per half, quotes not found, records."""
    documents: dict[str, _Document] = {}
    records: list[dict[str, Any]] = []
    not_found: list[dict[str, str]] = []
    questions = [q for q in golden.questions if q.answerable]
    runnable = [q for q in questions if all(e.doc in prepared.doc_ids for e in q.evidence)]
    half = (len(runnable) + 1) // 2
    for position, question in enumerate(runnable):
        if on_question is not None:
            on_question(question.id)
        for number, evidence in enumerate(question.evidence):
            doc_id = prepared.doc_ids[evidence.doc]
            index = evidence.unit_index
            if evidence.section is not None:
                index = section_unit(store, doc_id, evidence.section)
            unit = store.unit(doc_id, index) if index is not None else None
            found = find_quote(evidence.quote, unit.text) if unit is not None else None
            if unit is None or index is None or found is None:
                not_found.append({"id": question.id, "doc": evidence.doc})
                continue
            start, end = found[0][0], found[-1][1]
            quote = unit.text[start:end] if len(found) == 1 else evidence.quote
            context = context_around(unit.text, start, end)
            if doc_id not in documents:
                documents[doc_id] = _document(store, doc_id)
            for kind, claim in build_claims(evidence.quote, index, documents[doc_id]):
                check = check_support(claim, quote, context=context, embedder=embedder)
                records.append(
                    {
                        "id": question.id,
                        "evidence": number,
                        "half": "a" if position < half else "b",
                        "kind": kind,
                        "faithful": kind in FAITHFUL_KINDS,
                        "claim": claim,
                        "supported": check.supported,
                        "score": round(check.score, 4),
                        "coverage": round(check.coverage, 4),
                        "cosine": None if check.cosine is None else round(check.cosine, 4),
                        "reasons": [r.code for r in check.reasons],
                    }
                )
    return {
        **summarize_claims(records),
        "questions": len(runnable),
        "skipped": [q.id for q in questions if q not in runnable],
        "halves": {
            name: summarize_claims([r for r in records if r["half"] == name]) for name in "ab"
        },
        "quotes_not_found": not_found,
        "per_claim": records,
    }
