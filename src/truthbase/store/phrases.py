"""The full-text query as both backends read it: FTS5's ``ascii`` tokens and the OR of quoted
phrases that :func:`truthbase.retrieve.fts_query.build_fts_query` writes.

The index's full-text columns hold :mod:`truthbase.text.fulltext`'s terms, split by SQLite's
``ascii`` tokenizer (schema.sql): a token is a run of ASCII letters and digits and of any
non-ASCII character, ASCII letters folded to lower case. PostgreSQL splits the same way
(``truthbase.fts_tokens``), and SQLite's in-memory postings (:mod:`.sqlite.postings`) must,
token for token, to count what FTS5 counts.
"""

from __future__ import annotations

import re
import string

__all__ = ["ASCII_TOKEN", "ascii_tokens", "or_of_phrases"]

#: A token as the ``ascii`` tokenizer reads it: a run of characters other than ASCII
#: punctuation, controls and spaces (an identifier's whole term, "＼cmidrule", is one).
ASCII_TOKEN = re.compile(r"[^\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]+")

_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)

#: The whole expression as the query builder writes it: quoted strings joined by OR, with
#: FTS5's white space (space, tab, CR, LF: Python's \s would take more than FTS5 does).
_OR_OF_STRINGS = re.compile(
    r'[ \t\r\n]*"(?:[^"]|"")*"(?:[ \t\r\n]+OR[ \t\r\n]+"(?:[^"]|"")*")*[ \t\r\n]*'
)
_STRING = re.compile(r'"((?:[^"]|"")*)"')


def ascii_tokens(text: str) -> list[str]:
    """``text`` split and folded as FTS5's ``ascii`` tokenizer does (only A-Z are folded)."""
    return ASCII_TOKEN.findall(text.translate(_ASCII_LOWER))


def or_of_phrases(expression: str) -> list[list[str]] | None:
    """The phrases of an expression written as the query builder writes it, each as its
    tokens, in order and repeats kept (FTS5's bm25() counts every phrase of the expression);
    None for any other expression (column filters, NEAR, AND, bare words: FTS5 itself must
    read those)."""
    if not _OR_OF_STRINGS.fullmatch(expression):
        return None
    return [ascii_tokens(m.group(1).replace('""', '"')) for m in _STRING.finditer(expression)]
