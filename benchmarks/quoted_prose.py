"""Whether the sentences an answer quotes read as whole sentences (docs/evals/selection.md,
"Sentences whole as a reader quotes them").

Reads the reports of ``truthbase eval answers`` (``--json``, one set or several with
``--index-dir``), looks every citation's span up in its set's index, and counts the spans that
a reader would not take for a sentence, by defect:

- ``caption opens a sentence``: the first line is a caption's ("Fig. 4. CSF Tiers for ...
  management"), with no sentence end, and the next line opens with a capital (a caption
  wrapped over lines goes on in lower case or after a word such as "of");
- ``numbered heading alone``: the span is one numbered line that reads as a title ("3.
  Introduction to CSF Profiles and Tiers");
- ``prose line cut short``: one line of running text (a pronoun or a finite verb, no title;
  no list item) that ends on a word: a sentence quoted without its end ("In this paper we proposed
  Preemptive Information");
- ``quotation left open``: an odd count of straight double quotes, or more opening curly
  quotes than closing ones ("The King then read from his book: \\"Rule forty-two.").

Pure counting, no model: the figures say what the rules of ``answer/quotable.py`` leave, not
whether an answer is right (``eval answers`` says that).

    python benchmarks/quoted_prose.py --index-dir DIR REPORT.json [REPORT.json ...] [--json OUT]

``DIR`` holds ``NAME.sqlite`` for each set NAME of the reports (as ``--index-dir`` made them);
a report of one set (``--db``) names its index with ``--db``.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

from truthbase.text.sentences import opens_list_item, reads_as_prose, title_like

_CAPTION = re.compile(r"(?:fig(?:ure)?s?\.?|table|tab\.|chart|exhibit)\s*\d+[.:]\s", re.IGNORECASE)
_NUMBERED = re.compile(r"\d{1,2}(?:\.\d{1,2}){0,3}\.?[ \t]+(?P<title>\S.*)")
_END = re.compile(r"[.!?…。！？][\"'”’»)\]]*$")
_GOES_ON = {"a", "an", "the", "of", "and", "or", "in", "on", "for", "to", "with", "by", "their"}


def defects(span: str) -> list[str]:
    """The defects of one quoted span (see the module docstring); [] for a whole sentence."""
    lines = [line.strip() for line in span.split("\n") if line.strip()]
    found: list[str] = []
    if (
        len(lines) > 1
        and _CAPTION.match(lines[0])
        and not _END.search(lines[0])
        and lines[1][:1].isupper()
        and lines[0].split()[-1].lower() not in _GOES_ON
    ):
        found.append("caption opens a sentence")
    numbered = _NUMBERED.fullmatch(span.strip())
    if numbered is not None and title_like(numbered["title"]):
        found.append("numbered heading alone")
    if len(lines) == 1 and not _END.search(lines[0]) and not opens_list_item(lines[0]):
        last = lines[0][-1]
        if (last.isalnum() or last == "-") and reads_as_prose(lines[0]):
            found.append("prose line cut short")
    if span.count('"') % 2 == 1 or span.count("“") > span.count("”"):
        found.append("quotation left open")
    return found


def count(report: dict[str, Any], indexes: dict[str, Path]) -> dict[str, Any]:
    """Citations and their defects over the sets of one report of ``eval answers``."""
    sets = report.get("sets", {"": report})
    citations = 0
    by_defect: dict[str, list[str]] = {}
    for name, result in sets.items():
        db = sqlite3.connect(f"file:{indexes[name]}?mode=ro", uri=True)
        try:
            for question in result["per_question"]:
                for cited in question["citations"]:
                    citations += 1
                    row = db.execute(
                        "SELECT text FROM units WHERE doc_id = ? AND idx = ?",
                        (cited["doc_id"], cited["page"] - 1),
                    ).fetchone()
                    for defect in defects(row[0][cited["start"] : cited["end"]]):
                        where = f"{name}:{question['id']}" if name else question["id"]
                        by_defect.setdefault(defect, []).append(where)
        finally:
            db.close()
    return {
        "citations": citations,
        "defects": {k: {"n": len(v), "questions": v} for k, v in sorted(by_defect.items())},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="+", type=Path, help="eval answers --json reports")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--index-dir", type=Path, help="NAME.sqlite for each set NAME")
    where.add_argument("--db", type=Path, help="the index of a report of one set")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    out: dict[str, Any] = {}
    for path in args.reports:
        report = json.loads(path.read_text(encoding="utf-8"))
        names = report.get("sets", {"": None})
        indexes = {
            name: (args.db if args.db is not None else args.index_dir / f"{name}.sqlite")
            for name in names
        }
        out[str(path)] = counted = count(report, indexes)
        print(f"{path}: {counted['citations']} citations")
        for defect, found in counted["defects"].items():
            print(f"  {defect}: {found['n']}  ({', '.join(found['questions'][:6])})")
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", "utf-8")


if __name__ == "__main__":
    main()
