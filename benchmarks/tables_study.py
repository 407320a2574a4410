"""Tables kept as rows: TruthBase's own ruled-table finder against pdfplumber's, per page.

Three readings of each page of a PDF (default: the CA WARN report, 16 ruled pages):

- ``pdfium order``: the canonical text as it was before tables (pdfium's character order);
- ``plumber``: pdfplumber's ``find_tables()`` (a second parse of the page with pdfminer.six),
  each cell's text taken from *pdfium's* characters whose box centre lies in the cell's bbox, as
  a production use would have to (the canonical text is pdfium's characters with their boxes);
- ``own``: ``truthbase.extract.tables`` (pdfium's path segments -> grids -> rows).

The two finders are independent (different parsers, different grid code), so a row on which
they agree is taken as right; the rows where they disagree are printed for a person to judge.
For each reference row the ``pdfium order`` column says whether the old text had its cells in
column order on one line. Times are per page: for ``plumber`` the find_tables call alone (the
page's pdfminer parse included, the char mapping not), for ``own`` reading the rules plus the
grids and the row assembly (the pdfium text page is read anyway).

Needs the dev extra (pdfplumber). Run: ``python benchmarks/tables_study.py [PDF...] [--json OUT]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import pdfplumber
import pypdfium2 as pdfium

import truthbase.extract.pdf as pdf_module
from truthbase.extract import extract_pdf
from truthbase.extract.tables import CELL_SEPARATOR, assemble_tables, find_grids
from truthbase.extract.text import PageText

ROOT = Path(__file__).resolve().parents[1]
CA_WARN = ROOT.parent / "shared" / "corpus" / "robustness" / "pdfplumber-ca-warn-report.pdf"


def _norm(cell: str) -> str:
    return " ".join(cell.split())


def _plumber_rows(
    path: Path, units_boxes: list[tuple[str, list[Any]]]
) -> tuple[list[list[list[str]]], list[float]]:
    """Per page, pdfplumber's table rows with cell text from pdfium's characters."""
    pages: list[list[list[str]]] = []
    times: list[float] = []
    with pdfplumber.open(path) as doc:
        for page, (text, boxes) in zip(doc.pages, units_boxes, strict=True):
            started = time.perf_counter()
            tables = page.find_tables()
            times.append(time.perf_counter() - started)
            height = float(page.height)
            rows: list[list[str]] = []
            for table in tables:
                for row in table.rows:
                    cells: list[str] = []
                    for bbox in row.cells:
                        if bbox is None:
                            continue  # the continuation of a spanning cell
                        x0, top, x1, bottom = bbox
                        chars = [
                            text[i]
                            for i, b in enumerate(boxes)
                            if b is not None
                            and x0 <= (b[0] + b[2]) / 2 <= x1
                            and top <= height - (b[1] + b[3]) / 2 <= bottom
                        ]
                        cells.append(_norm("".join(chars)))
                    if any(cells):
                        rows.append(cells)
            pages.append(rows)
    return pages, times


def _own_rows(
    path: Path, plain: list[tuple[str, list[Any]]]
) -> tuple[list[list[list[str]]], list[float]]:
    """Per page, the rows of our finder and its time per page."""
    document = pdfium.PdfDocument(path)
    pages: list[list[list[str]]] = []
    times: list[float] = []
    try:
        for index, (text, boxes) in enumerate(plain):
            page = document[index]
            textpage = page.get_textpage()
            # Extraction reads the characters anyway: only the table work is timed.
            chars = pdf_module.read_page(textpage)[0]
            started = time.perf_counter()
            rules = pdf_module._read_rules(page)
            rotation = pdf_module._text_rotation(textpage, chars) if rules else 0
            grids = find_grids(rules, rotation)
            _, tables = assemble_tables(PageText(text, boxes), grids, rotation)
            times.append(time.perf_counter() - started)
            textpage.close()
            page.close()
            pages.append([[_norm(c) for c in cells] for t in tables for cells in t.cells])
    finally:
        document.close()
    return pages, times


def _plain(path: Path) -> list[tuple[str, list[Any]]]:
    """The canonical text and boxes of each page without table assembly."""
    original = pdf_module.find_grids
    pdf_module.find_grids = lambda rules, rotation: []  # type: ignore[assignment]
    try:
        document = extract_pdf(path)
    finally:
        pdf_module.find_grids = original  # type: ignore[assignment]
    return [(u.text, u.boxes) for u in document.units]


def _key(cells: list[str]) -> tuple[str, ...]:
    return tuple("".join(c.split()) for c in cells)


def _in_old_text(cells: list[str], text: str) -> bool:
    """The row's non-empty cells, in column order, on one line of the old text."""
    wanted = ["".join(c.split()) for c in cells if c]
    for line in text.split("\n"):
        flat = "".join(line.split())
        pos = 0
        for cell in wanted:
            found = flat.find(cell, pos)
            if found < 0:
                break
            pos = found + len(cell)
        else:
            return True
    return False


def study(path: Path) -> dict[str, Any]:
    plain = _plain(path)
    plumber, plumber_times = _plumber_rows(path, plain)
    own, own_times = _own_rows(path, plain)
    old_texts = [text for text, _ in plain]
    agree = only_own = only_plumber = old_ok = 0
    disagreements: list[dict[str, Any]] = []
    for index, (p_rows, o_rows, old) in enumerate(zip(plumber, own, old_texts, strict=True)):
        # Compared without whitespace: pdfium's generated spaces have no box, so the mapped
        # plumber cells lack them where the PDF draws no space glyph.
        p_keys = {_key(r): r for r in p_rows}
        o_keys = {_key(r): r for r in o_rows}
        for row in p_rows:
            old_ok += _in_old_text(row, old)
        for row in o_rows:
            if _key(row) in p_keys:
                agree += 1
            else:
                only_own += 1
                disagreements.append({"page": index + 1, "own": CELL_SEPARATOR.join(row)})
        for row in p_rows:
            if _key(row) not in o_keys:
                only_plumber += 1
                disagreements.append({"page": index + 1, "plumber": CELL_SEPARATOR.join(row)})
    return {
        "file": path.name,
        "pages": len(plain),
        "plumber_rows": sum(len(p) for p in plumber),
        "own_rows": sum(len(p) for p in own),
        "rows_agreeing": agree,
        "rows_only_own": only_own,
        "rows_only_plumber": only_plumber,
        "plumber_rows_in_column_order_in_old_text": old_ok,
        "plumber_ms_per_page": round(1000 * sum(plumber_times) / max(len(plumber_times), 1), 1),
        "own_ms_per_page": round(1000 * sum(own_times) / max(len(own_times), 1), 1),
        "disagreements": disagreements,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pdfs", nargs="*", type=Path, default=[CA_WARN])
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    results = [study(path) for path in args.pdfs]
    for result in results:
        summary = {k: v for k, v in result.items() if k != "disagreements"}
        print(json.dumps(summary))
        for d in result["disagreements"][:40]:
            side = "own" if "own" in d else "plumber"
            row = _norm(d[side])[:160]
            print(f"  page {d['page']} only {side}: {row}")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    sys.exit(main())
