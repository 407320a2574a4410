"""Full-text terms for PostgreSQL.

The retrieval layer builds an SQLite FTS5 MATCH expression (:mod:`truthbase.retrieve.fts_query`):
an OR of double-quoted strings, each a word or a phrase of words. PostgreSQL gets the same terms
as a ``text[]``; the SQL function ``truthbase.terms_tsquery`` turns each into a phrase of its
terms (``truthbase.fts_phrase``: split at spaces as FTS5's ``ascii`` tokenizer does, see
``migration_6.sql``; the terms are :mod:`truthbase.text.fulltext`'s) and ORs them. No term is
parsed as tsquery syntax, so none can raise a syntax error, and ``websearch_to_tsquery``'s AND
semantics (which would lose most recall) are never involved.
"""

from __future__ import annotations

import re

from ..phrases import ASCII_TOKEN

__all__ = ["MAX_TERMS", "terms_from_match_expression"]

MAX_TERMS = 64

_STRING = re.compile(r'"((?:[^"]|"")*)"')
_WORD = re.compile(r"[^\W_]+")
_OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})


def terms_from_match_expression(expression: str) -> list[str]:
    """The terms of an FTS5 expression as :func:`~truthbase.retrieve.fts_query.build_fts_query`
    writes it (``'"subcategory" OR "GV OC 03"'`` -> ``["subcategory", "GV OC 03"]``).

    Anything else (a hand-written expression, a bare question) falls back to its words, minus
    FTS5's operator words; a column filter (``text : (...)``) is dropped. Never raises.
    """
    strings = [m.group(1).replace('""', '"') for m in _STRING.finditer(expression)]
    if strings:
        terms = [" ".join(ASCII_TOKEN.findall(s)) for s in strings]
    else:
        terms = [w for w in _WORD.findall(expression) if w not in _OPERATORS]
    # A term given twice is kept twice: FTS5's bm25() counts each phrase of the expression
    # (pseudo-relevance feedback may repeat a question's term), and so does fts_arm.
    return [term for term in terms if term][:MAX_TERMS]
