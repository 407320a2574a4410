"""Turn a user's question into an SQLite FTS5 MATCH expression over the index's terms.

The full-text arm is a recall device: the expression is an OR of the question's terms (AND loses
most recall), and BM25 ranks chunks that match more, and rarer, terms first. The index holds
terms made by :mod:`truthbase.text.fulltext` (case-folded, Snowball-stemmed in each unit's language,
CJK runs as character bigrams); this module decides *which* words of the question to send and
makes their terms the same way, in every language the question may be matched in: the
question's own (detected, when the detector is sure) and each language of the index
(:func:`query_languages`), OR-ed, duplicates dropped.

Safety: every term is emitted as an FTS5 string (double-quoted, any internal quote doubled) whose
content is only the word characters this module tokenized, joined by single spaces. No operator,
column filter, bracket, NUL or stray quote from the input ever reaches the FTS5 parser, so no
input can raise an FTS5 syntax error.

Term rules:

- Words: runs of letters and digits (``[^\\W_]+``). Stop words of the question's languages
  (:func:`truthbase.text.fulltext.stop_words`: English always, German, ...), including question
  words (what, which, how, does, according, welche, wann, ...), are dropped.
  An all-caps word of two or more letters in a question that also has lower-case letters is an
  acronym and is kept even when its lower-case form is a stop word ("IT", "US"); FTS5's operator
  words (AND, OR, NOT, NEAR) are the exception, since that is how people type boolean queries.
- Identifiers: a whitespace-separated chunk whose word characters are split by punctuation
  ("GV.OC-01", "ID.RA-10", "Self-RAG", "BLEU-4", "2.0", "cross-cutting") becomes the phrase of
  its parts' terms ("gv oc 01": the index splits the stored text the same way, so the phrase
  matches exactly the adjacent terms) *and* its content parts as OR terms: parts of two or more
  characters that are neither stop words nor pure numbers ("gv", "oc"; "self", "rag"). The
  phrase gives BM25 its precise, rare match; the parts are the safety net when the document
  writes the identifier another way ("Self-RAG" vs "SELF-RAG's", "GV.OC" in a table heading,
  "cross cutting"), and they rank below the phrase match because a chunk with the phrase also
  has every part. Pure-number and one-letter parts ("01", "4", "f") are left to the phrase: alone
  they match nearly every chunk. A trailing possessive ('s) is dropped first ("RAPTOR's").
  ``parts=False`` emits the phrase alone, to compare the two on the golden set.
- Chinese, Japanese and Korean: a chunk with CJK characters gives each of its terms (the
  bigrams, and any Latin word or number in it) as its own OR term: a question has no spaces to
  find its words by, and a phrase of all its bigrams would have to occur verbatim.
- Quoted phrases: text in double quotes ("..." or “...”) or in single quotes at word boundaries
  ('No Critic') becomes a phrase term plus its content words, as for identifiers (CJK too). A
  quoted single word is kept even when it is a stop word: the user asked for it.

Terms are deduplicated and capped at :data:`MAX_TERMS` so a pasted page cannot produce an
unbounded query.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from ..text.fulltext import humps, identifier_terms, index_terms, is_cjk, stop_words
from ..text.language import detect
from ..text.vocabulary import WORD

__all__ = [
    "MAX_TERMS",
    "QUESTION_CONFIDENCE",
    "build_fts_query",
    "query_languages",
    "query_terms",
    "word_terms",
]

#: Most terms one query carries; later terms are dropped.
MAX_TERMS = 64
#: How sure the detector must be of a question's language for its terms to be made in it too
#: (short texts are guessed wrong often: 85% right at 40 characters on the corpus pages).
QUESTION_CONFIDENCE = 0.5


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


def query_languages(
    question: str, index_languages: Sequence[str | None] | None = None
) -> list[str | None]:
    """The languages a question's terms are made in: its own when the detector is sure
    (:data:`QUESTION_CONFIDENCE`), then each of the index's; English when there is neither."""
    found, probability = detect(question)
    own = [found] if found is not None and probability >= QUESTION_CONFIDENCE else []
    languages = list(dict.fromkeys([*own, *(index_languages or [])]))
    return languages or ["en"]


class _Terms:
    """Ordered, deduplicated terms in every language asked, capped at MAX_TERMS."""

    def __init__(self, parts: bool, languages: Sequence[str | None]) -> None:
        self.parts = parts
        self.languages = list(languages)
        self.stops = stop_words(self.languages)
        self.terms: list[str] = []
        self._seen: set[tuple[str, ...]] = set()

    def _add_terms(self, terms: list[str]) -> None:
        key = tuple(terms)
        if not key or key in self._seen or len(self.terms) >= MAX_TERMS:
            return
        self._seen.add(key)
        self.terms.append(_phrase(terms))

    def add(self, tokens: list[str], *, quoted: str | None = None) -> None:
        """The words ``tokens`` (as written) as one term, a phrase when there are several, in
        each language; with CJK in them (and not quoted), each of their terms on its own.
        ``quoted`` (the text inside the quotes) is analysed whole, identifiers and all, as the
        index analysed the passage, so the phrase matches the index's terms side by side."""
        text = " ".join(tokens) if quoted is None else quoted
        for language in self.languages:
            terms = index_terms(text, language, identifiers=quoted is not None)
            if not quoted and any(is_cjk(term) for term in terms):
                for term in terms:
                    self._add_terms([term])
            else:
                self._add_terms(terms)

    def add_whole(self, term: str) -> None:
        """An identifier's whole term (:func:`~truthbase.text.fulltext.identifier_terms`): the
        same in every language, never stemmed."""
        self._add_terms([term])

    def add_parts(self, tokens: list[str]) -> None:
        """Each content part of ``tokens`` as its own term, when parts are on."""
        if self.parts:
            for token in tokens:
                if self.is_content_part(token):
                    self.add([token])

    def is_content_part(self, token: str) -> bool:
        """A part of an identifier or phrase worth an OR term of its own."""
        return len(token) >= 2 and not token.isdigit() and token.casefold() not in self.stops

    def is_kept_word(self, token: str, acronyms_allowed: bool) -> bool:
        """A lone word worth a term: not a stop word, unless it is an acronym."""
        if token.casefold() not in self.stops:
            return True
        return (
            acronyms_allowed and len(token) >= 2 and token.isupper() and token not in _FTS_OPERATORS
        )

    def add_phrase_with_parts(self, tokens: list[str], *, quoted: str | None = None) -> None:
        """A multi-token phrase, then (when parts are on) its content parts."""
        self.add(tokens, quoted=quoted)
        self.add_parts(tokens)


def _add_quoted(terms: _Terms, inner: str) -> None:
    tokens = WORD.findall(inner)
    if len(tokens) == 1:
        terms.add(tokens, quoted=inner)  # explicitly quoted: kept even if a stop word
    elif tokens:
        terms.add_phrase_with_parts(tokens, quoted=inner)


def _add_chunk(terms: _Terms, chunk: str, acronyms_allowed: bool) -> None:
    """One whitespace-separated chunk of the question: a word, or an identifier."""
    chunk = _POSSESSIVE.sub("", chunk.rstrip(_TRAILING_PUNCT))
    tokens = WORD.findall(chunk)
    wholes = identifier_terms(chunk)
    if len(tokens) == 1 and not wholes:
        if terms.is_kept_word(tokens[0], acronyms_allowed):
            terms.add(tokens)
            terms.add_parts(humps(tokens[0]))
        return
    if not tokens:
        return
    # An identifier. Dropped when nothing in it carries meaning ("and/or", "e.g.", "it's"),
    # unless it is a TeX macro ("\\if").
    if "\\" not in chunk and (
        "".join(tokens).casefold() in terms.stops
        or all(t.casefold() in terms.stops or (len(t) == 1 and not t.isdigit()) for t in tokens)
    ):
        return
    if not wholes:  # words that one chunk runs together ("e.g.x"): their phrase and parts
        terms.add_phrase_with_parts(tokens)
        return
    # The whole term stands for the phrase of its words (it matches where they stand side by
    # side, as written): sending both would count the one name twice in BM25's sum.
    for whole in wholes:
        terms.add_whole(whole)
    terms.add_parts(tokens)


def query_terms(
    question: str, *, parts: bool = True, languages: Sequence[str | None] | None = None
) -> list[str]:
    """The FTS5 terms of ``question``, each an FTS5 string, in question order (phrases first),
    made in ``languages`` (default: :func:`query_languages` of the question alone).

    ``parts=False`` leaves identifiers and quoted phrases as phrases only, without their parts
    as separate OR terms (an option to compare on the golden set).
    """
    text = unicodedata.normalize("NFKC", question).translate(_TYPOGRAPHIC)
    acronyms_allowed = any(ch.islower() for ch in text)
    terms = _Terms(parts, languages if languages is not None else query_languages(question))

    def take_quoted(match: re.Match[str]) -> str:
        _add_quoted(terms, match.group(1))
        return " "

    text = _DOUBLE_QUOTED.sub(take_quoted, text)
    text = _SINGLE_QUOTED.sub(take_quoted, text)
    for chunk in text.split():
        _add_chunk(terms, chunk, acronyms_allowed)
    return terms.terms


def build_fts_query(
    question: str, *, parts: bool = True, languages: Sequence[str | None] | None = None
) -> str | None:
    """An FTS5 MATCH expression: the OR of the question's terms, or None when none remain.

    >>> build_fts_query("What does subcategory GV.OC-03 require?", languages=["en"])
    '"subcategori" OR "gv oc 03" OR "gv" OR "oc" OR "requir"'
    """
    terms = query_terms(question, parts=parts, languages=languages)
    return " OR ".join(terms) if terms else None


def word_terms(words: Sequence[str], languages: Sequence[str | None]) -> list[str]:
    """Single words (pseudo-relevance feedback's expansion words) as FTS5 strings of their
    terms in each language, each distinct string once; words with CJK characters are left out
    (a feedback "word" there is a whole run of text)."""
    out: list[str] = []
    for word in words:
        for language in languages:
            terms = index_terms(word, language, identifiers=False)
            if len(terms) == 1 and not is_cjk(terms[0]):
                out.append(_phrase(terms))
    return list(dict.fromkeys(out))
