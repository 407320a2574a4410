"""An export as one self-contained HTML evidence report.

Everything is inline: the style in one ``<style>``, each image a ``data:image/png`` URI, and the
machine-readable evidence (:func:`.evidence.evidence_json`) HTML-escaped in a hidden ``<pre>``:
a data block that is no script at all, so the report opens offline with scripts off and loads
nothing from anywhere. :func:`read_evidence` takes that block back out (``truthbase verify
--report``). Pure: records in, text out.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Sequence
from typing import Any

from ..errors import InvalidInput
from ..text.valid import has_lone_surrogate, json_may_hold_surrogate
from .evidence import (
    EVIDENCE_FORMAT,
    EVIDENCE_VERSION,
    CitedEvidence,
    ExportedAnswer,
    evidence_json,
    split_markers,
)
from .markdown import markdown_evidence

__all__ = ["EVIDENCE_ELEMENT_ID", "html_report", "read_evidence"]

#: The id of the hidden ``<pre>`` that holds the evidence JSON.
EVIDENCE_ELEMENT_ID = "truthbase-evidence"

_OPENING = f'<pre hidden id="{EVIDENCE_ELEMENT_ID}"'

_STYLE = """
body { font: 16px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem;
  color: #1d1d1f; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.25rem; margin-top: 2.5rem; }
.answer { white-space: pre-wrap; } sup a { text-decoration: none; }
.citation { border-top: 1px solid #ccc; margin-top: 1.5rem; padding-top: 1rem; }
.citation img { max-width: 100%; border: 1px solid #bbb; display: block; margin: 0.5rem 0; }
blockquote { margin: 0.5rem 0; padding: 0.25rem 0.75rem; border-left: 4px solid #e0b400;
  background: #fffbe6; }
.context { color: #555; } .context mark { background: #ffe066; color: #000; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 1rem; }
dt { font-weight: 600; } dd { margin: 0; overflow-wrap: anywhere; }
.state-supported { color: #0a6b2d; } .state-quote_only { color: #8a5a00; }
.state-unverified { color: #a40000; } .note { color: #a40000; }
"""


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _anchor(answer: ExportedAnswer, n: int | None) -> str:
    return f"a{answer.answer_id}-c{n if n is not None else 'x'}"


def _answer_html(answer: ExportedAnswer) -> str:
    if answer.refused:
        return "<p><em>No answer: refused.</em></p>"
    cited = {c.n for c in answer.citations}
    out: list[str] = []
    for piece in split_markers(answer.text):
        if isinstance(piece, str):
            out.append(_e(piece))
            continue
        for n in piece:
            label = f"[{n}]"
            out.append(
                f'<sup><a href="#{_anchor(answer, n)}">{label}</a></sup>' if n in cited else label
            )
    return f'<p class="answer">{"".join(out)}</p>'


def _shown(c: CitedEvidence) -> str:
    """The image of the cited region (PDF) or the passage in its context."""
    parts: list[str] = []
    if c.image_png is not None:
        data = base64.b64encode(c.image_png).decode("ascii")
        alt = f"{c.title}, {c.place}, with the cited passage highlighted"
        parts.append(f'<img src="data:image/png;base64,{data}" alt="{_e(alt)}">')
    parts.append(f"<blockquote>{_e(c.quote)}</blockquote>")
    if c.context is not None and c.image_png is None:
        ctx = c.context
        parts.append(
            f'<p class="context">…{_e(ctx.before)}<mark>{_e(ctx.quote)}</mark>{_e(ctx.after)}…</p>'
        )
    if c.note:
        parts.append(f'<p class="note">{_e(c.note)}</p>')
    return "".join(parts)


def _facts(c: CitedEvidence) -> str:
    rows: list[tuple[str, str]] = [
        ("Document", _e(c.title or "(no longer in the index)")),
        ("sha256", f"<code>{_e(c.doc_id)}</code>"),
        ("Page", _e(c.place)),
        ("Span", f"unit {c.unit}, characters [{c.start}, {c.end})"),
        ("State", f'<span class="state-{_e(c.state)}">{_e(c.state)}</span>'),
    ]
    if c.claim:
        rows.append(("Claim", _e(c.claim)))
    if c.reasons:
        rows.append(("Reasons", _e(", ".join(c.reasons))))
    if c.link:
        rows.append(("Open", f'<a href="{_e(c.link)}">the highlight in TruthBase</a>'))
    return "<dl>" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows) + "</dl>"


def _answer_section(answer: ExportedAnswer) -> str:
    parts = [
        f"<section><h2>{_e(answer.question)}</h2>",
        f"<p><small>Answer {answer.answer_id}, {_e(answer.created_at)}</small></p>",
        _answer_html(answer),
    ]
    for c in answer.citations:
        parts.append(
            f'<div class="citation" id="{_anchor(answer, c.n)}">'
            f"<h3>[{c.n}] {_e(c.title or c.doc_id[:12])}, {_e(c.place)}</h3>"
            f"{_shown(c)}{_facts(c)}</div>"
        )
    parts.append("</section>")
    return "\n".join(parts)


def html_report(answers: Sequence[ExportedAnswer], exported_at: str) -> str:
    """The answers (one, or a thread's in order) as one self-contained HTML page."""
    evidence = json.dumps(evidence_json(tuple(answers), exported_at), ensure_ascii=False)
    title = "TruthBase evidence report"
    body = "\n".join(_answer_section(a) for a in answers)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{title}</h1><p>Exported {_e(exported_at)}. Re-check it against an index with "
        "<code>truthbase verify --report FILE</code>.</p>\n"
        f"{body}\n"
        f'<pre hidden id="{EVIDENCE_ELEMENT_ID}" data-format="{EVIDENCE_FORMAT}/'
        f'{EVIDENCE_VERSION}">{_e(evidence)}</pre>\n</body></html>\n'
    )


def read_evidence(report: str) -> dict[str, Any]:
    """The evidence block of an HTML report (or of a Markdown export:
    :func:`.markdown.markdown_evidence`); InvalidInput when there is none, or it is not
    evidence this version reads."""
    block = _evidence_block(report)
    text = html.unescape(block) if block is not None else markdown_evidence(report)
    if text is None:
        raise InvalidInput(
            "no TruthBase evidence in this file (not an exported HTML or Markdown report)"
        )
    try:
        evidence = json.loads(text)
    except ValueError as error:
        raise InvalidInput(f"the report's evidence is not JSON: {error}") from None
    except RecursionError:
        raise InvalidInput("the report's evidence nests too deeply to be evidence") from None
    if not isinstance(evidence, dict) or evidence.get("format") != EVIDENCE_FORMAT:
        raise InvalidInput("the report's evidence block is not TruthBase evidence")
    if json_may_hold_surrogate(text) and has_lone_surrogate(
        json.dumps(evidence, ensure_ascii=False)
    ):
        # "\ud800" in JSON: no text, and nothing (a problem's doc_id echoed back) can encode it
        raise InvalidInput("the report's evidence is not valid Unicode text (a lone surrogate)")
    if evidence.get("version") != EVIDENCE_VERSION:
        raise InvalidInput(f"evidence version {evidence.get('version')!r} is not one this reads")
    if not isinstance(evidence.get("answers"), list):
        raise InvalidInput("the report's evidence lists no answers")
    return evidence


def _evidence_block(report: str) -> str | None:
    """The text of the first evidence ``<pre>``: from the end of its opening tag to the first
    ``</pre>`` (escaped JSON holds no "<"). Found by scanning once, not by a regular expression:
    a pattern with a lazy body retries from every opening that has no end, which made a file of
    many unterminated openings take time quadratic in its size (minutes for a few megabytes,
    the interpreter lock held all along)."""
    start = report.find(_OPENING)
    if start < 0:
        return None
    body = report.find(">", start + len(_OPENING))
    if body < 0:
        return None
    end = report.find("</pre>", body + 1)
    return report[body + 1 : end] if end >= 0 else None
