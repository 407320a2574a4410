"""A griffe extension for the API reference (mkdocs.yml, mkdocstrings' `extensions`).

Our docstrings are prose, not Markdown written for a site: a docstring that shows citation
markers ("[1][2]") or a URL pattern ("...&end=E][&zoom=1]") would be read by mkdocs-autorefs as
a reference link `[text][id]` to a page that does not exist, which fails the strict build. The
extension escapes the second `[` of such pairs outside code spans, so they render as written,
and drops the Sphinx roles of cross-references (":class:`~truthbase.api.Library`" reads as the
code span "truthbase.api.Library").
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_CODE_SPAN = re.compile(r"(`+)(?:.|\n)*?\1")
# `[text][id]`, and `[text] [id]`, which Markdown reads as a reference link too.
_PAIR = re.compile(r"\]([ \t]?)\[")
_ROLE = re.compile(r":(?:py:)?(?:mod|class|func|meth|attr|data|exc|obj|const):`~?")


def escape_reference_pairs(text: str) -> str:
    """``text`` with the `[` of every `][` (or `] [`) outside a code span written `\\[`."""
    out: list[str] = []
    last = 0
    for match in _CODE_SPAN.finditer(text):
        out.append(_PAIR.sub(r"]\1\\[", text[last : match.start()]))
        out.append(match.group(0))
        last = match.end()
    out.append(_PAIR.sub(r"]\1\\[", text[last:]))
    return "".join(out)


def drop_roles(text: str) -> str:
    """``text`` with each Sphinx cross-reference role reduced to its code span."""
    return _ROLE.sub("`", text)


class PlainBrackets(griffe.Extension):
    """Escapes reference-link look-alikes and drops Sphinx roles in every docstring."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = escape_reference_pairs(drop_roles(obj.docstring.value))
