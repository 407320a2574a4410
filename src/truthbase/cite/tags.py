"""The position tag ``[f{unit}-{start}-{end}]``: the one place its format is written.

A tag names the char span [start, end) of unit ``unit`` (0-based) of a document's canonical
text. The book tools write one after each passage they show (:mod:`truthbase.segments.render`),
summaries carry them (:mod:`truthbase.segments.summarize`), the agent copies them into its answer
and :mod:`truthbase.cite.parse` reads them back. Every writer calls :func:`format_tag`, every
reader uses :data:`TAG` / :func:`parse_tag` / :func:`find_tags`, so the format cannot drift.

Document text is data: a PDF whose text says "[f0-0-40]" must not hand the model (or the parser)
a tag no tool produced. :func:`neutralize_tags` escapes every tag-like string of document text
(its ``[`` becomes ``&#91;``, as :func:`truthbase.llm.prompts.escape_data` turns ``<`` into
``&lt;``) before the text is shown next to real tags.

Pure; no imports from the rest of the package.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = [
    "TAG",
    "TAG_LIKE",
    "TAG_PATTERN",
    "find_tags",
    "format_tag",
    "neutralize_tags",
    "parse_tag",
    "strip_tags",
]

_UNIT_DIGITS, _OFFSET_DIGITS = 6, 9
#: A well-formed tag, as a pattern without groups (to embed in larger patterns).
TAG_PATTERN = rf"\[f\d{{1,{_UNIT_DIGITS}}}-\d{{1,{_OFFSET_DIGITS}}}-\d{{1,{_OFFSET_DIGITS}}}\]"
#: A well-formed tag with its three numbers as groups 1, 2, 3.
TAG = re.compile(
    rf"\[f(\d{{1,{_UNIT_DIGITS}}})-(\d{{1,{_OFFSET_DIGITS}}})-(\d{{1,{_OFFSET_DIGITS}}})\]"
)
#: Anything that looks like a tag, well formed or not ("[f3-10]", "[f3-10-20-30]",
#: "[f 3-10-20]"); "[for example]" does not (a digit or hyphen must follow the f).
TAG_LIKE = re.compile(r"\[f\s*[\d-][^\[\]\n]{0,60}\]")


def format_tag(unit: int, start: int, end: int) -> str:
    """The tag of the span [start, end) of unit ``unit``; ValueError for what no tag can say."""
    if min(unit, start, end) < 0:
        raise ValueError(f"a tag has no negative numbers: {(unit, start, end)}")
    if unit >= 10**_UNIT_DIGITS or max(start, end) >= 10**_OFFSET_DIGITS:
        raise ValueError(f"too large for a tag: {(unit, start, end)}")
    return f"[f{unit}-{start}-{end}]"


def parse_tag(text: str) -> tuple[int, int, int] | None:
    """(unit, start, end) when ``text`` is exactly one well-formed tag, else None."""
    match = TAG.fullmatch(text.strip())
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def find_tags(text: str) -> Iterator[tuple[int, int, int]]:
    """The well-formed tags of ``text``, in order (repeats kept)."""
    for match in TAG.finditer(text):
        yield int(match[1]), int(match[2]), int(match[3])


def strip_tags(text: str) -> str:
    """``text`` without anything that looks like a tag, whitespace collapsed."""
    return " ".join(TAG_LIKE.sub(" ", text).split())


def neutralize_tags(text: str) -> str:
    """Document ``text`` with every tag-like string escaped (``[f0-0-40]`` ->
    ``&#91;f0-0-40]``): it reads the same, and nothing parses it as a tag."""
    return TAG_LIKE.sub(lambda m: "&#91;" + m.group()[1:], text)
