"""An export as Markdown: each answer, its [n] markers as footnotes, and each footnote the
citation's quote, document, printed and physical page, state, span and the link that opens its
highlight. At the end, the machine-readable evidence (:func:`.evidence.evidence_json`, as the
HTML report embeds it) in an HTML comment, which no Markdown renderer shows:
:func:`markdown_evidence` takes it back out, so that ``truthbase verify --report`` re-checks a
Markdown export too. Pure: text in, text out."""

from __future__ import annotations

import json
from collections.abc import Sequence

from .evidence import (
    EVIDENCE_FORMAT,
    EVIDENCE_VERSION,
    CitedEvidence,
    ExportedAnswer,
    evidence_json,
    split_markers,
)

__all__ = ["markdown_evidence", "markdown_report"]

# The comment's first line names the format; the JSON holds no "--" (escaped as "-\u002d",
# which can only occur in its strings), so the comment ends at the first "-->".
_OPEN = f"<!-- {EVIDENCE_FORMAT}/"


def _footnote_id(answer: ExportedAnswer, n: int, several: bool) -> str:
    # Footnote labels are global to a Markdown file: a thread's answers each have their [1].
    return f"a{answer.answer_id}-{n}" if several else str(n)


def _inline(text: str) -> str:
    """Text on one line of Markdown, its characters that start markup escaped."""
    flat = " ".join(text.split())
    for ch in "\\`*_[]<>#|":
        flat = flat.replace(ch, "\\" + ch)
    return flat


def _footnote(c: CitedEvidence) -> str:
    title = _inline(c.title) if c.title else "(document no longer in the index)"
    parts = [f"“{_inline(c.quote)}” — *{title}*, {c.place}"]
    if c.link:
        parts.append(f"[open the highlight]({c.link.replace(')', '%29')})")
    facts = f"state: {c.state}; sha256 `{c.doc_id}`; unit {c.unit}, span [{c.start}, {c.end})"
    if c.reasons:
        facts += "; " + _inline(", ".join(c.reasons))
    parts.append(facts)
    return ". ".join(parts)


def _answer_text(answer: ExportedAnswer, several: bool) -> str:
    cited = {c.n for c in answer.citations}
    out: list[str] = []
    for piece in split_markers(answer.text):
        if isinstance(piece, str):
            out.append(piece)
        else:
            out.append(
                "".join(
                    f"[^{_footnote_id(answer, n, several)}]" if n in cited else f"[{n}]"
                    for n in piece
                )
            )
    return "".join(out)


def _answer_section(answer: ExportedAnswer, several: bool) -> list[str]:
    lines = [f"## {_inline(answer.question)}", ""]
    lines.append(f"*Answer {answer.answer_id}, {answer.created_at}*")
    lines.append("")
    lines.append("(no answer: refused)" if answer.refused else _answer_text(answer, several))
    lines.append("")
    by_n: dict[int | None, list[CitedEvidence]] = {}
    for c in answer.citations:
        by_n.setdefault(c.n, []).append(c)
    for n, group in by_n.items():
        label = _footnote_id(answer, n, several) if n is not None else f"a{answer.answer_id}-x"
        body = "\n    ".join(_footnote(c) for c in group)
        lines.append(f"[^{label}]: {body}")
    if by_n:
        lines.append("")
    return lines


def markdown_report(answers: Sequence[ExportedAnswer], exported_at: str) -> str:
    """The answers (one, or a thread's in order) as one Markdown document."""
    several = len(answers) > 1
    lines = ["# TruthBase answers" if several else "# TruthBase answer", ""]
    lines.append(f"Exported {exported_at}. Each footnote names the cited document by its sha256.")
    lines.append("")
    for answer in answers:
        lines.extend(_answer_section(answer, several))
    evidence = json.dumps(evidence_json(tuple(answers), exported_at), ensure_ascii=False)
    lines += ["", f"{_OPEN}{EVIDENCE_VERSION}", evidence.replace("--", "-\\u002d"), "-->"]
    return "\n".join(lines).rstrip("\n") + "\n"


def markdown_evidence(report: str) -> str | None:
    """The evidence JSON text of a Markdown export (None when it has none): after the first
    line that is the comment's opening and a version number, up to the first line that is
    "-->". One scan, not a regular expression with a lazy body (which retried from every
    opening without an end: quadratic time in a file of many)."""
    at = 0
    while (start := report.find(_OPEN, at)) >= 0:
        at = start + 1
        if start > 0 and report[start - 1] != "\n":
            continue
        line_end = report.find("\n", start)
        if line_end < 0:
            return None
        if not report[start + len(_OPEN) : line_end].isdecimal():
            continue
        body = line_end + 1
        close = report.find("\n-->", body)
        while close >= 0:
            after = close + len("\n-->")
            if after == len(report) or report[after] == "\n":
                return report[body:close]
            close = report.find("\n-->", close + 1)
        return None  # no opening after this one can have an end either
    return None
