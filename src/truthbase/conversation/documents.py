"""Which documents a question names: "Does the AI RMF give its function of the same name a
similar role?" after a turn about the CSF asks about another document than the one the earlier
answer cited, and the earlier document must not stay the follow-up's prior.

A document is named by a short form of its title: an acronym or short name the title gives in
parentheses, without its version ("Artificial Intelligence Risk Management Framework (AI RMF
1.0)": "AI RMF"; "The NIST Cybersecurity Framework (CSF) 2.0": "CSF"; not a format or a state
such as "(PDF)" or "(obsolete)"), or the whole title when it is short ("raptor", "self-rag",
"Pride and Prejudice"; a leading article dropped). A name has two characters or more. The
question names it when those words stand in it in order and the question writes one of them
with a capital letter other than its opening one: a name, not a common word that happens to be
a file's title ("test", "cite"). Deterministic, no model: titles in, document ids out.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

from ..text.vocabulary import WORD

__all__ = ["named_documents", "title_names"]

_PARENTHESES = re.compile(r"\(([^()]*)\)")
_VERSION = re.compile(r"^v?\d+(?:\.\d+)*$")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+")
#: Words in a title's parentheses that say what the file is, not what it is called.
_NOT_NAMES = frozenset(
    """
    pdf epub html txt draft final obsolete deprecated preprint revised updated online print
    english german french spanish japanese chinese
    """.split()  # noqa: SIM905
)
#: A whole title is a name up to this many words ("Pride and Prejudice").
_SHORT_TITLE_WORDS = 3
#: A name in parentheses has at most this many words.
_NAME_WORDS = 4


def _words(text: str) -> list[str]:
    return WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def title_names(title: str) -> list[tuple[str, ...]]:
    """The short forms that name a document with this ``title``, as case-folded word tuples."""
    names: list[tuple[str, ...]] = []
    for inner in _PARENTHESES.findall(title):
        words = tuple(w for w in _words(inner) if not _VERSION.match(w))
        if 0 < len(words) <= _NAME_WORDS and not set(words) <= _NOT_NAMES:
            names.append(words)
    whole = _words(_ARTICLE.sub("", unicodedata.normalize("NFKC", title).casefold().strip()))
    if 0 < len(whole) <= _SHORT_TITLE_WORDS:
        names.append(tuple(whole))
    return [
        n
        for n in dict.fromkeys(names)
        if len("".join(n)) >= 2 and any(ch.isalpha() for w in n for ch in w)
    ]


def named_documents(question: str, titles: Mapping[str, str]) -> tuple[str, ...]:
    """The ids of the documents whose title ``question`` names (:func:`title_names`), in the
    order of ``titles``."""
    text = unicodedata.normalize("NFKC", question)
    # Each word folded as the titles are (a fold may split it: "İ" gives "i" and a combining
    # dot), each piece keeping the word as written for the capital test.
    spans: list[tuple[str, int]] = []
    words: list[str] = []
    for m in WORD.finditer(text):
        for piece in WORD.findall(m.group().casefold()):
            spans.append((m.group(), m.start()))
            words.append(piece)
    # Every run of up to the longest name's words, once: each title is then a lookup.
    runs: dict[tuple[str, ...], list[int]] = {}
    for n in range(1, max(_NAME_WORDS, _SHORT_TITLE_WORDS) + 1):
        for i in range(len(words) - n + 1):
            runs.setdefault(tuple(words[i : i + n]), []).append(i)
    named: list[str] = []
    for doc_id, title in titles.items():
        for name in title_names(title):
            if any(_capitalized(spans[i : i + len(name)]) for i in runs.get(name, ())):
                named.append(doc_id)
                break
    return tuple(named)


def _capitalized(written: list[tuple[str, int]]) -> bool:
    """Whether a word of the run has a capital letter other than the question's first one."""
    return any(
        ch.isupper() and start + j > 0 for word, start in written for j, ch in enumerate(word)
    )
