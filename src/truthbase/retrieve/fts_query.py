"""Turn a user's question into an SQLite FTS5 MATCH expression.

The full-text arm is a recall device: the expression is an OR of the question's terms (AND loses
most recall), and BM25 ranks chunks that match more, and rarer, terms first. The FTS table uses
``tokenize='porter unicode61 remove_diacritics 2'``, so case, diacritics and English inflection
are folded by FTS5 itself, on both sides; this module only decides *which* terms to send.

Safety: every term is emitted as an FTS5 string (double-quoted, any internal quote doubled) whose
content is only the word characters this module tokenized, joined by single spaces. No operator,
column filter, bracket, NUL or stray quote from the input ever reaches the FTS5 parser, so no
input can raise an FTS5 syntax error.

Term rules:

- Words: runs of letters and digits (``[^\\W_]+``, close to unicode61's token characters). English
  stop words, including question words (what, which, how, does, according, ...), are dropped.
  An all-caps word of two or more letters in a question that also has lower-case letters is an
  acronym and is kept even when its lower-case form is a stop word ("IT", "US"); FTS5's operator
  words (AND, OR, NOT, NEAR) are the exception, since that is how people type boolean queries.
- Identifiers: a whitespace-separated chunk whose word characters are split by punctuation
  ("GV.OC-01", "ID.RA-10", "Self-RAG", "BLEU-4", "2.0", "cross-cutting") becomes the phrase of
  its parts ("GV OC 01": unicode61 splits the stored text the same way, so the phrase matches
  exactly the adjacent tokens) *and* its content parts as OR terms: parts of two or more
  characters that are neither stop words nor pure numbers ("gv", "oc"; "self", "rag"). The
  phrase gives BM25 its precise, rare match; the parts are the safety net when the document
  writes the identifier another way ("Self-RAG" vs "SELF-RAG's", "GV.OC" in a table heading,
  "cross cutting"), and they rank below the phrase match because a chunk with the phrase also
  has every part. Pure-number and one-letter parts ("01", "4", "f") are left to the phrase: alone
  they match nearly every chunk. A trailing possessive ('s) is dropped first ("RAPTOR's").
  ``parts=False`` emits the phrase alone, to compare the two on the golden set.
- Quoted phrases: text in double quotes ("..." or “...”) or in single quotes at word boundaries
  ('No Critic') becomes a phrase term plus its content words, as for identifiers. A quoted single
  word is kept even when it is a stop word: the user asked for it.

Terms are deduplicated (case-insensitively, on their tokens) and capped at :data:`MAX_TERMS` so a
pasted page cannot produce an unbounded query.
"""

from __future__ import annotations

import re
import unicodedata

from ..text import QUERY_STOP_WORDS, WORD

__all__ = ["MAX_TERMS", "build_fts_query", "query_terms"]

#: Most terms one query carries; later terms are dropped.
MAX_TERMS = 64


# FTS5's own operator words, never kept as acronyms.
_FTS_OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})

_DOUBLE_QUOTED = re.compile(r'"([^"]*)"')
# A single-quoted span: the opening quote not preceded, the closing one not followed, by a word
# character, so apostrophes (RAPTOR's, can't, authors') never open or close a phrase.
_SINGLE_QUOTED = re.compile(r"(?<!\w)'([^'\n]+?)'(?!\w)")
_POSSESSIVE = re.compile(r"'s$", re.IGNORECASE)
_TYPOGRAPHIC = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2033": '"',
        "\u00ab": '"',
        "\u00bb": '"',
    }
)
_TRAILING_PUNCT = "\"'.,;:!?)]}>"


def _phrase(tokens: list[str]) -> str:
    """One FTS5 string: the tokens joined by spaces, double-quoted, inner quotes doubled."""
    body = " ".join(tokens)
    return '"' + body.replace('"', '""') + '"'


def _is_content_part(token: str) -> bool:
    """A part of an identifier or phrase worth an OR term of its own."""
    return len(token) >= 2 and not token.isdigit() and token.casefold() not in QUERY_STOP_WORDS


def _is_kept_word(token: str, acronyms_allowed: bool) -> bool:
    """A lone word worth a term: not a stop word, unless it is an acronym."""
    if token.casefold() not in QUERY_STOP_WORDS:
        return True
    return acronyms_allowed and len(token) >= 2 and token.isupper() and token not in _FTS_OPERATORS


class _Terms:
    """Ordered, deduplicated terms, capped at MAX_TERMS."""

    def __init__(self, parts: bool) -> None:
        self.parts = parts
        self.terms: list[str] = []
        self._seen: set[tuple[str, ...]] = set()

    def add(self, tokens: list[str]) -> None:
        key = tuple(t.casefold() for t in tokens)
        if not key or key in self._seen or len(self.terms) >= MAX_TERMS:
            return
        self._seen.add(key)
        self.terms.append(_phrase(tokens))

    def add_phrase_with_parts(self, tokens: list[str]) -> None:
        """A multi-token phrase, then (when parts are on) its content parts."""
        self.add(tokens)
        if not self.parts:
            return
        for token in tokens:
            if _is_content_part(token):
                self.add([token])


def _add_quoted(terms: _Terms, inner: str) -> None:
    tokens = WORD.findall(inner)
    if len(tokens) == 1:
        terms.add(tokens)  # explicitly quoted: kept even if a stop word
    elif tokens:
        terms.add_phrase_with_parts(tokens)


def _add_chunk(terms: _Terms, chunk: str, acronyms_allowed: bool) -> None:
    """One whitespace-separated chunk of the question: a word, or an identifier."""
    chunk = _POSSESSIVE.sub("", chunk.rstrip(_TRAILING_PUNCT))
    tokens = WORD.findall(chunk)
    if len(tokens) == 1:
        if _is_kept_word(tokens[0], acronyms_allowed):
            terms.add(tokens)
        return
    if not tokens:
        return
    # An identifier. Dropped when nothing in it carries meaning: "and/or", "e.g.", "it's".
    if "".join(tokens).casefold() in QUERY_STOP_WORDS or all(
        t.casefold() in QUERY_STOP_WORDS or (len(t) == 1 and not t.isdigit()) for t in tokens
    ):
        return
    terms.add_phrase_with_parts(tokens)


def query_terms(question: str, *, parts: bool = True) -> list[str]:
    """The FTS5 terms of ``question``, each an FTS5 string, in question order (phrases first).

    ``parts=False`` leaves identifiers and quoted phrases as phrases only, without their parts
    as separate OR terms (an option to compare on the golden set).
    """
    text = unicodedata.normalize("NFKC", question).translate(_TYPOGRAPHIC)
    acronyms_allowed = any(ch.islower() for ch in text)
    terms = _Terms(parts)

    def take_quoted(match: re.Match[str]) -> str:
        _add_quoted(terms, match.group(1))
        return " "

    text = _DOUBLE_QUOTED.sub(take_quoted, text)
    text = _SINGLE_QUOTED.sub(take_quoted, text)
    for chunk in text.split():
        _add_chunk(terms, chunk, acronyms_allowed)
    return terms.terms


def build_fts_query(question: str, *, parts: bool = True) -> str | None:
    """An FTS5 MATCH expression: the OR of the question's terms, or None when none remain.

    >>> build_fts_query("What does subcategory GV.OC-03 require?")
    '"subcategory" OR "GV OC 03" OR "GV" OR "OC" OR "require"'
    """
    terms = query_terms(question, parts=parts)
    return " OR ".join(terms) if terms else None
