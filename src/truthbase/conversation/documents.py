"""Which documents a question names: "Does the AI RMF give its function of the same name a
similar role?" after a turn about the CSF asks about another document than the one the earlier
answer cited, and the earlier document must not stay the follow-up's prior.

A document is named by a short form of its title: an acronym or short name the title gives in
parentheses, without its version ("Artificial Intelligence Risk Management Framework (AI RMF
1.0)": "AI RMF"; "The NIST Cybersecurity Framework (CSF) 2.0": "CSF"), or the whole title
when it is short ("raptor", "self-rag", "Pride and Prejudice"; a leading article dropped). The
question names it when those words stand in it in order and the question writes one of them
with a capital letter other than its opening one: a name, not a common word that happens to be
a file's title ("test", "cite"). Deterministic, no model: titles in, document ids out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..text.vocabulary import WORD

__all__ = ["named_documents", "title_names"]

_PARENTHESES = re.compile(r"\(([^()]*)\)")
_VERSION = re.compile(r"^\d+(?:\.\d+)*$")
_ARTICLES = frozenset({"the", "a", "an"})
#: A whole title is a name up to this many words ("Pride and Prejudice").
_SHORT_TITLE_WORDS = 3


def title_names(title: str) -> list[tuple[str, ...]]:
    """The short forms that name a document with this ``title``, as case-folded word tuples."""
    names: list[tuple[str, ...]] = []
    for inner in _PARENTHESES.findall(title):
        words = tuple(w for w in WORD.findall(inner.casefold()) if not _VERSION.match(w))
        if words and any(ch.isalpha() for w in words for ch in w) and len(words) <= 4:
            names.append(words)
    whole = [w for w in re.findall(r"[^\W_]+(?:[-'][^\W_]+)*", title.casefold())]
    while whole and whole[0] in _ARTICLES:
        whole = whole[1:]
    if 0 < len(whole) <= _SHORT_TITLE_WORDS:
        names.append(tuple(w for part in whole for w in WORD.findall(part)))
    return [n for n in dict.fromkeys(names) if n]


def named_documents(question: str, titles: Mapping[str, str]) -> tuple[str, ...]:
    """The ids of the documents whose title ``question`` names (:func:`title_names`), in the
    order of ``titles``."""
    spans = [(m.group().casefold(), m.start(), m.group()) for m in WORD.finditer(question)]
    words = [s[0] for s in spans]
    named: list[str] = []
    for doc_id, title in titles.items():
        for name in title_names(title):
            if _names(name, words, spans):
                named.append(doc_id)
                break
    return tuple(named)


def _names(name: tuple[str, ...], words: list[str], spans: list[tuple[str, int, str]]) -> bool:
    n = len(name)
    for i in range(len(words) - n + 1):
        if tuple(words[i : i + n]) != name:
            continue
        written = spans[i : i + n]
        if any(
            ch.isupper() and (start + j > 0)
            for _, start, text in written
            for j, ch in enumerate(text)
        ):
            return True
    return False
