"""Split a compound question into sub-queries, without a language model.

"Which RAPTOR querying method performed better on QASPER, and what is its main drawback?" asks two
things whose answers may sit on different pages; one query vector (and one BM25 list) pulls
towards the first clause and lets the second one's passage fall out of the top results. A
question is split where a coordinating "and" (optionally after a comma or semicolon) or a
semicolon introduces a new interrogative clause (what, which, how, ...). Every clause after the
first lacks the subject the first one named ("its main drawback"), so it inherits the first
clause's names: its capitalized words, acronyms and identifiers ("RAPTOR", "QASPER").

The whole question is always searched too; the sub-queries only add ranked lists to the fusion.
At most :data:`MAX_SUBQUERIES` are made. A question with nothing to split gives none.
"""

from __future__ import annotations

import re

__all__ = ["MAX_SUBQUERIES", "split_question"]

MAX_SUBQUERIES = 3

_WH = r"(?:what|which|who|whom|whose|when|where|why|how|is|are|does|do|did|can)"
# A clause boundary: ", and what", "; how", " and which" (the "and" joins two questions).
_BOUNDARY = re.compile(rf"(?:\s*[,;]\s*and\s+|\s*;\s*|\s+and\s+)(?={_WH}\b)", re.IGNORECASE)
# A name worth carrying into later clauses: a word with an upper-case letter that is not only the
# sentence's first letter (RAPTOR, QASPER, Self-RAG, GV.OC-01, PubHealth), or any word with a
# digit inside a name-like token (BLEU-4, 2.0 stays out: no letter).
_NAME = re.compile(r"[A-Za-z][\w.\-]*[A-Z][\w.\-]*|[A-Z][a-z]+[A-Z][\w.\-]*")
_LEADING_CAPITALIZED = re.compile(r"[A-Z][a-z]+")
_MIN_CLAUSE_WORDS = 3


def _names(clause: str) -> list[str]:
    names: list[str] = []
    for match in _NAME.finditer(clause):
        token = match.group(0).rstrip(".-")
        if token and token not in names:
            names.append(token)
    # A capitalized word that is not the clause's first word is a proper name too ("Tier").
    words = clause.split()
    for word in words[1:]:
        word = re.sub(r"'s$", "", word.strip(",;:?!'\"()"))
        if _LEADING_CAPITALIZED.fullmatch(word) and word not in names:
            names.append(word)
    return names


def split_question(question: str) -> list[str]:
    """The sub-queries of ``question``: [] unless it joins two or more interrogative clauses.

    >>> split_question("Which RAPTOR method won on QASPER, and what is its main drawback?")
    ['Which RAPTOR method won on QASPER', 'RAPTOR QASPER what is its main drawback']
    """
    text = " ".join(question.split()).rstrip("?!. ")
    clauses = [c.strip(" ,;") for c in _BOUNDARY.split(text)]
    clauses = [c for c in clauses if len(c.split()) >= _MIN_CLAUSE_WORDS]
    if len(clauses) < 2:
        return []
    clauses = clauses[:MAX_SUBQUERIES]
    context = _names(clauses[0])
    subqueries = [clauses[0]]
    for clause in clauses[1:]:
        own = set(_names(clause))
        carried = [name for name in context if name not in own]
        subqueries.append(" ".join([*carried, clause]))
    return subqueries
