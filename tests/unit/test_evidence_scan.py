"""The evidence block of a report is found by one scan (session 25: the regular expressions
before it took time quadratic in a file of many unterminated openings). The scan finds exactly
what those expressions found, on any text made of the pieces that matter."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from truthbase.export.html import _evidence_block
from truthbase.export.markdown import markdown_evidence

# The patterns the scans replace, as they were.
_HTML = re.compile(r'<pre hidden id="truthbase-evidence"[^>]*>(.*?)</pre>', re.DOTALL)
_MARKDOWN = re.compile(r"^<!-- truthbase-evidence/(\d+)\n(.*?)\n-->$", re.DOTALL | re.MULTILINE)

PIECES = [
    "<!-- truthbase-evidence/",
    "1",
    "12",
    "²",
    "x",
    "\n",
    "-->",
    "\n-->",
    '<pre hidden id="truthbase-evidence"',
    ">",
    "</pre>",
    ' data-format="truthbase-evidence/1"',
    '{"a": 1}',
]
texts = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)


@settings(max_examples=3000, deadline=None)
@given(texts)
def test_the_scans_find_what_the_patterns_found(text: str) -> None:
    html_match = _HTML.search(text)
    assert _evidence_block(text) == (html_match.group(1) if html_match else None)
    markdown_match = _MARKDOWN.search(text)
    assert markdown_evidence(text) == (markdown_match.group(2) if markdown_match else None)


def test_an_export_reads_back() -> None:
    report = 'text\n<pre hidden id="truthbase-evidence" data-format="x">{"a": 1}</pre>\n'
    assert _evidence_block(report) == '{"a": 1}'
    markdown = 'text\n\n<!-- truthbase-evidence/1\n{"a": 1}\n-->\n'
    assert markdown_evidence(markdown) == '{"a": 1}'
    assert markdown_evidence("<!-- truthbase-evidence/1\n-->") is None  # no body line
