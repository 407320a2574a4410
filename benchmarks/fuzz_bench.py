"""Fuzz the parsers with hypothesis for a bounded time each; print and record the crashes.

Targets (each in a child process, so a crash inside pdfium's C code is caught and counted too):

- ``pdf``: extract_pdf (OCR off) on mutated small PDFs (flipped, inserted, deleted and spliced
  bytes, truncations). Allowed: a result or ExtractionError.
- ``epub``: extract_epub on books whose container, package and chapters hypothesis writes
  (random markup, entities, odd encodings), and on mutated zip bytes. Allowed: a result or
  ExtractionError.
- ``epub_html``: the XHTML sanitizer (parse, sanitize, serialize, canonical text) on random
  markup. Allowed: a result whose serialized form is well-formed XML.
- ``cite``: the citation parser (parse_answer, strip_markers, the tag helpers) on random
  answers; and the property that a document's text after defuse_markers holds no citation.
- ``delimiters``: the prompts' escape_data on random text with look-alike delimiters; the
  property that no delimiter tag survives (matched on the folded text).

A *crash* is any other exception (or the child dying); a *violation* is a broken property.
Both are counted with up to five examples each (type, message, input prefix). Written to
``var/fuzz.json`` and, when it exists, under ``"fuzz"`` in ``var/bench.json`` (bench.py writes
that file first, in `make bench`).

    .venv/bin/python benchmarks/fuzz_bench.py [--seconds 30] [--targets pdf,epub,...]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import multiprocessing as mp
import re
import sys
import tempfile
import time
import traceback
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from tests.helpers.canaries import make_pdf  # noqa: E402

TARGETS = ("pdf", "epub", "epub_html", "cite", "delimiters")
MAX_EXAMPLES_KEPT = 5


class _TimeUp(Exception):
    """The target's time is spent (raised inside the hypothesis test to end it)."""


# -- inputs ------------------------------------------------------------------------------------


@st.composite
def mutated(draw: st.DrawFn, seeds: list[bytes]) -> bytes:
    """One of ``seeds`` with a few random byte edits."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["flip", "insert", "delete", "truncate", "splice", "repeat"]))
        pos = draw(st.integers(0, max(0, len(data) - 1)))
        if op == "flip" and data:
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif op == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=16))
        elif op == "delete":
            del data[pos : pos + draw(st.integers(1, 64))]
        elif op == "truncate":
            del data[pos:]
        elif op == "splice":
            other = draw(st.sampled_from(seeds))
            start = draw(st.integers(0, max(0, len(other) - 1)))
            data[pos:pos] = other[start : start + draw(st.integers(1, 256))]
        elif op == "repeat" and data:
            data[pos:pos] = data[pos : pos + draw(st.integers(1, 32))] * draw(st.integers(2, 20))
    return bytes(data)


def _pdf_seeds() -> list[bytes]:
    return [
        make_pdf([["Hello world.", "A second line (with parens)."]], title="T"),
        make_pdf([["Page one."], ["Page two [1]."], []], title=None),
        make_pdf([["x" * 80] * 40]),
    ]


_MARKUP_PIECES = [
    "<p>", "</p>", "<div>", "</div>", "<a href='#x'>", "<a href='ch2.xhtml'>", "</a>", "<table>",
    "<tr>", "<td>", "</td>", "</table>", "<pre>\n", "</pre>", "<br/>", "<img src='i.png'/>",
    "<script>x()</script>", "<mark class='tb-strong'>", "</mark>", "<h1>", "</h1>", "<li>",
    "<ul>", "</ul>", "<!-- c -->", "&amp;", "&nbsp;", "&#x10FFFF;", "&#0;", "&bogus;",
    "<![CDATA[x]]>", "<svg><text>s</text></svg>", "<p class='a b'>", "\u00ad", "\u200b",
    "e\u0301", "\ufb01", "<span id='n1'>", "</span>", "<", ">", "&", "'", '"', " ", "\n", "\t",
]  # fmt: skip
markup = st.lists(
    st.one_of(st.sampled_from(_MARKUP_PIECES), st.text(max_size=12)), max_size=60
).map("".join)

_CONTAINER = (
    '<?xml version="1.0"?><container version="1.0" '
    'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
    '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
    "</rootfiles></container>"
)
_OPF = (
    '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
    '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{title}</dc:title>'
    "<dc:language>en</dc:language></metadata><manifest>"
    '<item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/>'
    '<item id="c2" href="{href}" media-type="application/xhtml+xml"/></manifest>'
    '<spine><itemref idref="c1"/><itemref idref="c2"/></spine></package>'
)


def _page(body: str) -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
        f"<head><title>t</title></head><body>{body}</body></html>"
    )


def _zip(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        for name, data in members.items():
            zf.writestr(name, data)
    return out.getvalue()


_ENCODINGS = ["utf-8", "utf-16", "utf-16-le", "utf-16-be", "latin-1", "utf-32"]
_DECLARED = ["utf-8", "UTF-16", "UTF-16-LE", "UTF-16BE", "UTF-32", "ISO-8859-1", "bogus", ""]


@st.composite
def books(draw: st.DrawFn) -> bytes:
    """An EPUB whose package, container and chapters hypothesis writes."""
    encoding = draw(st.sampled_from(_ENCODINGS))
    title = draw(st.sampled_from(["A Book", "&e;", "<b>x</b>", "", "\ud7ff"]))
    href = draw(st.sampled_from(["c2.xhtml", "../c2.xhtml", "/etc/passwd", "c%202.xhtml", ""]))
    opf = _OPF.format(title=title, href=href)
    declared = draw(st.sampled_from(_DECLARED))
    if declared:
        opf = opf.replace('<?xml version="1.0"?>', f'<?xml version="1.0" encoding="{declared}"?>')
    if draw(st.booleans()):
        opf = opf.replace(
            '<?xml version="1.0"?>', '<?xml version="1.0"?><!DOCTYPE p [<!ENTITY e "x">]>'
        )
    container = draw(st.sampled_from([_CONTAINER, _CONTAINER.replace("OEBPS/", ""), "<c", ""]))
    members = {
        "META-INF/container.xml": container.encode("utf-8"),
        "OEBPS/content.opf": opf.encode(encoding, "replace")
        if encoding != "latin-1"
        else opf.encode("utf-8"),
        "OEBPS/c1.xhtml": _page(draw(markup)).encode("utf-8", "surrogatepass"),
        "OEBPS/c2.xhtml": draw(st.one_of(markup.map(_page), markup)).encode(
            "utf-8", "surrogatepass"
        ),
    }
    data = _zip(members)
    if draw(st.booleans()):
        data = draw(mutated([data]))
    return data


_ANSWER_PIECES = [
    "[1]", "[2]", "[1, 2]", "[ 3 ]", "[99999]", "[0]", "[f1-0-10]", "[f0-5-2]", "[f12-340-512]",
    "[f-1-2-3]", "[f999999999999999999999-0-1]", "[", "]", ",", ".", "!", "?", "\n", " ",
    "NO_ANSWER", "The framework has six functions", "\uff3b1\uff3d", "[1][2]", "[1] [f3-10-80]",
]  # fmt: skip
answers = st.lists(
    st.one_of(st.sampled_from(_ANSWER_PIECES), st.text(max_size=8)), max_size=40
).map("".join)

_DELIMITER_PIECES = [
    "<", "\uff1c", "\ufe64", "\u2039", "\u3008", "/", "\uff0f", "\u2215", "source", "sources",
    "question", "passage", "tool_result", "\uff53\uff4f\uff55\uff52\uff43\uff45", ">", "\uff1e",
    "\u200b", "\u2060", "\u202e", "\U000e0020", "\u0301", "\u00ad", "\ufeff", " ", "\n", "x",
]  # fmt: skip
delimiter_texts = st.lists(
    st.one_of(st.sampled_from(_DELIMITER_PIECES), st.text(max_size=4)), max_size=30
).map("".join)


# -- checks: return None, or a violated property's description; raise for a crash -------------


def _check_file(suffix: str, extract: Callable[[Path], Any], allowed: type[BaseException]):
    def check(data: bytes) -> str | None:
        with tempfile.NamedTemporaryFile(suffix=suffix, dir=_WORK) as f:
            f.write(data)
            f.flush()
            with contextlib.suppress(allowed):
                extract(Path(f.name))
        return None

    return check


def _check_epub_html(text: str) -> str | None:
    from truthbase.extract.epub_html import (
        canonical_text,
        find_body,
        parse_lenient,
        sanitize,
        serialize,
    )

    root, warnings = parse_lenient(_page(text))
    body = sanitize(find_body(root), warnings)
    canonical_text(body)
    html = serialize(body, "t")
    try:
        ET.fromstring(html)
    except ET.ParseError as exc:
        return f"sanitized XHTML is not well-formed XML ({exc})"
    if re.search(r'class="[^"]*\btb-', html, re.IGNORECASE):
        return "a tb-* class survived the sanitizer"
    return None


def _check_cite(text: str) -> str | None:
    from truthbase.cite.parse import defuse_markers, parse_answer, strip_markers
    from truthbase.cite.tags import find_tags, neutralize_tags, strip_tags

    parse_answer(text)
    strip_markers(text)
    list(find_tags(text))
    strip_tags(text)
    neutralize_tags(text)
    defused = parse_answer(defuse_markers(text))
    if any(claim.markers or claim.tags for claim in defused.claims):
        return "a citation survived defuse_markers"
    return None


def _check_delimiters(text: str) -> str | None:
    from truthbase.llm.delimiters import fold
    from truthbase.llm.prompts import escape_data

    folded, _ = fold(escape_data(text))
    if re.search(r"<\s*/?\s*(?:sources?|passages?|question)\b", folded, re.IGNORECASE):
        return "a delimiter tag survived escape_data"
    return None


_WORK = None  # the child's scratch folder (set in _child)


def _target(name: str) -> tuple[st.SearchStrategy[Any], Callable[[Any], str | None]]:
    from truthbase.config import OcrSettings
    from truthbase.extract import ExtractionError
    from truthbase.extract.epub import extract_epub
    from truthbase.extract.pdf import extract_pdf

    if name == "pdf":
        no_ocr = OcrSettings(enabled=False)
        return mutated(_pdf_seeds()), _check_file(
            ".pdf", lambda p: extract_pdf(p, ocr=no_ocr), ExtractionError
        )
    if name == "epub":
        return books(), _check_file(".epub", extract_epub, ExtractionError)
    if name == "epub_html":
        return markup, _check_epub_html
    if name == "cite":
        return answers, _check_cite
    if name == "delimiters":
        return delimiter_texts, _check_delimiters
    raise ValueError(f"unknown target {name!r}")


# -- the run -----------------------------------------------------------------------------------


def _child(name: str, seconds: float, out: Any) -> None:
    global _WORK
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a spawned process is an edge (see truthbase.blas)
    with tempfile.TemporaryDirectory() as work:
        _WORK = work
        strategy, check = _target(name)
        report: dict[str, Any] = {"inputs": 0, "crashes": 0, "violations": 0, "examples": []}
        deadline = time.monotonic() + seconds

        def record(kind: str, what: str, value: Any) -> None:
            report[kind] += 1
            if len(report["examples"]) < MAX_EXAMPLES_KEPT:
                report["examples"].append({"kind": kind, "what": what, "input": repr(value)[:300]})

        @settings(
            max_examples=10**9,
            deadline=None,
            database=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(st.data())
        def run(data: st.DataObject) -> None:
            if time.monotonic() > deadline:
                raise _TimeUp
            value = data.draw(strategy)
            report["inputs"] += 1
            try:
                problem = check(value)
            except Exception as exc:  # the finding: anything but the documented errors
                frame = traceback.extract_tb(exc.__traceback__)[-1]
                where = f"{Path(frame.filename).name}:{frame.lineno}"
                record("crashes", f"{type(exc).__name__}: {str(exc)[:160]} ({where})", value)
                return
            if problem is not None:
                record("violations", problem, value)

        try:
            run()
        except _TimeUp:
            pass
        except BaseException as exc:  # hypothesis wraps a late _TimeUp in its own errors
            if time.monotonic() <= deadline:
                raise
            del exc
        out.put(report)


def fuzz(name: str, seconds: float) -> dict[str, Any]:
    """Fuzz one target for ``seconds`` in a child process."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    started = time.perf_counter()
    process = ctx.Process(target=_child, args=(name, seconds, queue))
    process.start()
    process.join(seconds + 120)
    report: dict[str, Any]
    if not queue.empty():
        report = queue.get()
    else:
        if process.is_alive():
            process.kill()
            process.join()
        report = {
            "inputs": None,
            "crashes": 1,
            "violations": 0,
            "examples": [{"kind": "crashes", "what": f"the child died ({process.exitcode})"}],
        }
    report["seconds"] = round(time.perf_counter() - started, 1)
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="per target")
    parser.add_argument("--targets", default=",".join(TARGETS), help="comma-separated")
    parser.add_argument("--json", type=Path, default=ROOT / "var" / "fuzz.json")
    parser.add_argument("--bench-json", type=Path, default=ROOT / "var" / "bench.json")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    for name in args.targets.split(","):
        report = fuzz(name, args.seconds)
        results[name] = report
        rate = f"{report['inputs'] / report['seconds']:.0f}/s" if report["inputs"] else "-"
        print(
            f"fuzz {name}: {report['inputs']} inputs in {report['seconds']} s ({rate}), "
            f"{report['crashes']} crashes, {report['violations']} violations"
        )
        for example in report["examples"]:
            print(f"  {example['kind']}: {example['what']}\n    input: {example.get('input', '')}")
    summary = {"seconds_per_target": args.seconds, "targets": results}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(summary, indent=2) + "\n", "utf-8")
    if args.bench_json.is_file():
        bench = json.loads(args.bench_json.read_text("utf-8"))
        bench["fuzz"] = summary
        args.bench_json.write_text(json.dumps(bench, indent=2) + "\n", "utf-8")
    print(
        f"written to {args.json}" + (f" and {args.bench_json}" if args.bench_json.is_file() else "")
    )
    return 0


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    raise SystemExit(main())
