"""The EPUB reader: exact highlights of every dev.json EPUB quote, nothing loaded from another
origin, citation previews in the chat page, and an EPUB citation that opens the reader.

Highlights are read back from the DOM: the reader registers one DOM Range per text-node piece
with the CSS Custom Highlight API (``tb-strong``); the test reads those ranges from the frame's
``CSS.highlights`` and the text the browser renders for them (a Selection over the whole range,
which puts line breaks between blocks the way the canonical text does).
"""

from __future__ import annotations

import hashlib
import html as html_lib
import json
import re
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.browser import ARTIFACTS, LiveServer
from tests.helpers.corpus import GOLDEN_DEV
from truthbase.embed import Embedder
from truthbase.eval.golden import GoldenSet, default_corpus_root, load_golden
from truthbase.ingest import IngestOptions, ingest_paths
from truthbase.server.reader import SECTION_CSP, section_document
from truthbase.store import SQLiteStore
from truthbase.text.matching import find_quote, normalize, quote_in

READY = "() => ['ready', 'error'].includes(document.querySelector('.reader')?.dataset.readerState)"
ANSWERED = (
    "() => ['done', 'refused', 'error'].includes(document.querySelector('#answer').dataset.state)"
)

# The strong highlight as the browser holds it: each range's text, the text a Selection over
# the whole range renders (line breaks between blocks), and where the first range is on screen.
READ_HIGHLIGHT = """() => {
  const frame = document.querySelector('.reader-frame');
  const win = frame.contentWindow;
  const highlight = win.CSS.highlights.get('tb-strong');
  if (!highlight) return null;
  const ranges = [...highlight];
  if (!ranges.length) return {pieces: [], rendered: '', top: null};
  const whole = win.document.createRange();
  whole.setStart(ranges[0].startContainer, ranges[0].startOffset);
  const last = ranges[ranges.length - 1];
  whole.setEnd(last.endContainer, last.endOffset);
  const selection = win.getSelection();
  selection.removeAllRanges();
  selection.addRange(whole);
  const rendered = selection.toString();
  selection.removeAllRanges();
  const box = ranges[0].getBoundingClientRect();
  return {
    pieces: ranges.map((r) => r.toString()),
    rendered,
    top: box.top,
    bottom: box.bottom,
    height: win.innerHeight,
    marks: win.document.querySelectorAll('mark').length,
    unit: Number(document.querySelector('.reader').dataset.unit),
  };
}"""


def _squash(text: str) -> str:
    """Normalized text without any whitespace: the characters, whatever the line breaks."""
    return "".join(normalize(text).split())


def _doc_ids(golden: GoldenSet) -> dict[str, str]:
    root = default_corpus_root(GOLDEN_DEV)
    return {
        key: hashlib.sha256((root / d.path).read_bytes()).hexdigest()
        for key, d in golden.documents.items()
    }


def _unit_by_href(store: SQLiteStore, doc_id: str, href: str) -> Any:
    info = store.document(doc_id)
    assert info is not None, doc_id
    for index in range(info.unit_count):
        unit = store.unit(doc_id, index)
        if unit is not None and unit.href == href:
            return unit
    raise AssertionError(f"no section {href} in {doc_id}")


def _epub_evidence(golden_db: Path) -> list[dict[str, Any]]:
    """Every EPUB evidence record of dev.json with the span its quote occupies."""
    golden = load_golden(GOLDEN_DEV)
    ids = _doc_ids(golden)
    records: list[dict[str, Any]] = []
    store = SQLiteStore(golden_db)
    try:
        for question in golden.questions:
            for evidence in question.evidence:
                if evidence.section is None:
                    continue
                doc_id = ids[evidence.doc]
                unit = _unit_by_href(store, doc_id, evidence.section)
                spans = find_quote(evidence.quote, unit.text)
                assert spans is not None, (question.id, evidence.section)
                start, end = spans[0][0], spans[-1][1]
                records.append(
                    {
                        "question": question.id,
                        "doc": doc_id,
                        "unit": unit.index,
                        "section": evidence.section,
                        "quote": evidence.quote,
                        "start": start,
                        "end": end,
                        "span_text": unit.text[start:end],
                    }
                )
    finally:
        store.close()
    return records


def _open(page: Any, server: LiveServer, doc: str, unit: int, start: int, end: int) -> Any:
    page.goto(f"{server.url}/read?doc={doc}&unit={unit}&start={start}&end={end}")
    page.wait_for_function(READY)
    assert page.get_attribute(".reader", "data-reader-state") == "ready"
    return page.evaluate(READ_HIGHLIGHT)


# --- the served section (pure, no browser) -------------------------------------------------

STORED = (
    '<html xmlns="http://www.w3.org/1999/xhtml"><head><meta charset="utf-8"/><title>B</title>'
    '</head><body><p id="a">One <a href="http://example.com/x?a=1&amp;b=2">out</a> '
    '<a href="ch2.xhtml#n1">in</a> <a href="#a">here</a> <a href="../missing.xhtml">gone</a>'
    '</p><div><img src="images/i.png" alt="pic"/>two &lt;b&gt; &amp; "q"</div></body></html>'
)


def test_section_document_neutralizes_links_and_images_and_keeps_structure() -> None:
    served = section_document(
        STORED,
        doc_id="d" * 64,
        unit_href="text/ch1.xhtml",
        units_by_href={"text/ch1.xhtml": 0, "text/ch2.xhtml": 1},
        image_url=lambda src: "/img?" + src if src == "images/i.png" else None,
    )
    assert served.startswith("<!DOCTYPE html>")
    assert '<link rel="stylesheet" href="/css/epub.css"/></head>' in served
    assert "http://example.com" not in served.replace(
        'data-external-href="http://example.com/x?a=1&amp;b=2"', ""
    )
    assert 'href="/read?doc=' + "d" * 64 + '&amp;unit=1#n1"' in served
    assert 'data-unit="1"' in served and 'data-fragment="n1"' in served
    assert '<a href="#a">here</a>' in served
    assert "<a>gone</a>" in served
    assert '<img src="/img?images/i.png" alt="pic"/>' in served
    dropped = section_document(STORED, doc_id="d" * 64, unit_href="ch1.xhtml", units_by_href={})
    assert "src=" not in dropped and 'alt="pic"' in dropped
    # Only attributes change: the same tags and the same text, in the same order.
    body_in = STORED[STORED.index("<body") :]
    body_out = served[served.index("<body") :]
    strip_attrs = re.compile(r"<(/?\w+)[^>]*>")
    assert strip_attrs.sub(r"<\1>", body_in) == strip_attrs.sub(r"<\1>", body_out)


@pytest.mark.slow
def test_epub_routes_serve_sections_and_spans(golden_db: Path) -> None:
    from fastapi.testclient import TestClient

    from truthbase.config import Settings
    from truthbase.server import create_app

    record = _epub_evidence(golden_db)[0]
    doc, unit = record["doc"], record["unit"]
    with TestClient(create_app(Settings(db=golden_db))) as client:
        section = client.get(f"/api/epub/sections/{doc}/{unit}").json()
        assert section["unit"] == unit and section["runs"] and section["nodes"]
        assert section["prev"] == (unit - 1 if unit else None)
        served = client.get(section["html_url"])
        assert served.status_code == 200
        assert served.headers["content-security-policy"] == SECTION_CSP
        assert served.headers["content-type"].startswith("text/html")
        assert "<script" not in served.text.lower()
        params = {"doc": doc, "unit": unit, "start": record["start"], "end": record["end"]}
        span = client.get("/api/epub/spans", params=params).json()
        assert span["text"] == record["span_text"] and span["segments"]
        assert all(s["start"] < s["end"] for s in span["segments"])
        too_far = {**params, "end": section["text_length"] + 1}
        assert client.get("/api/epub/spans", params=too_far).status_code == 422
        assert client.get(f"/api/epub/sections/{doc}/{section['unit_count']}").status_code == 404
        assert client.get(f"/api/epub/sections/{'0' * 64}/0").status_code == 404
        pdf = next(d for d in client.get("/api/documents").json() if d["kind"] == "pdf")
        assert client.get(f"/api/epub/sections/{pdf['id']}/0").status_code == 409
        assert client.get("/read").headers["content-security-policy"]
        # Images come from the book itself (dev.json's books are illustrated): only the
        # manifest's raster images.
        images = [
            html_lib.unescape(url)
            for r in _epub_evidence(golden_db)
            for url in re.findall(
                r'<img src="([^"]+)"',
                client.get(f"/api/epub/sections/{r['doc']}/{r['unit']}/xhtml").text,
            )
        ]
        assert images and all(url.startswith("/api/epub/images/") for url in images)
        for url in images[:3]:
            image = client.get(url)
            assert image.status_code == 200 and image.headers["content-type"].startswith("image/")
            assert image.headers["content-security-policy"] == "default-src 'none'"
        for member in ("META-INF/container.xml", "../../../etc/passwd", "x.svg"):
            refused = client.get(f"/api/epub/images/{doc}", params={"member": member})
            assert refused.status_code == 404


# --- the reader in the browser --------------------------------------------------------------


@pytest.mark.slow
def test_every_dev_epub_quote_is_highlighted_exactly(
    page: Any, golden_server: LiveServer, golden_db: Path
) -> None:
    records = _epub_evidence(golden_db)
    assert records, "dev.json has no EPUB evidence"
    results = []
    for record in records:
        began = time.perf_counter()
        got = _open(
            page, golden_server, record["doc"], record["unit"], record["start"], record["end"]
        )
        open_ms = (time.perf_counter() - began) * 1000
        assert got is not None and got["pieces"], record
        rendered = got["rendered"]
        # The characters of the highlighted ranges are exactly the span's characters ...
        assert _squash("".join(got["pieces"])) == _squash(record["span_text"]), record
        # ... and the text the browser renders for the range matches the quote under the rule,
        # with nothing more than the quote's own span (line breaks as the canonical text has them).
        assert quote_in(record["quote"], rendered), (record, rendered)
        assert normalize(rendered) == normalize(record["span_text"]), (record, rendered)
        # Scrolled into view.
        assert 0 <= got["top"] < got["height"], got
        assert got["unit"] == record["unit"]
        results.append(
            {
                "question": record["question"],
                "section": record["section"],
                "ranges": len(got["pieces"]),
                "chars": record["end"] - record["start"],
                "top_px": round(got["top"], 1),
                "open_ms": round(open_ms),
            }
        )
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "reader-dev.json").write_text(json.dumps(results, indent=1), "utf-8")
    page.screenshot(path=str(ARTIFACTS / "reader-dev-quote.png"))


@pytest.mark.slow
def test_prev_and_next_sections(page: Any, golden_server: LiveServer, golden_db: Path) -> None:
    record = _epub_evidence(golden_db)[0]
    _open(page, golden_server, record["doc"], record["unit"], record["start"], record["end"])
    unit = record["unit"]
    page.click("button[aria-label='Next section']")
    page.wait_for_function(f"() => document.querySelector('.reader').dataset.unit === '{unit + 1}'")
    page.wait_for_function(READY)
    assert f"unit={unit + 1}" in page.url
    assert page.evaluate(READ_HIGHLIGHT) is None  # the cited span is in another section
    page.click("button[aria-label='Previous section']")
    page.wait_for_function(f"() => document.querySelector('.reader').dataset.unit === '{unit}'")
    page.wait_for_function(READY)
    got = page.evaluate(READ_HIGHLIGHT)
    assert _squash("".join(got["pieces"])) == _squash(record["span_text"])


def _hostile_epub(path: Path) -> Path:
    """A small EPUB whose section asks for remote images, styles, scripts, frames and fonts."""
    section = """<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Remote</title>
<link rel="stylesheet" href="http://remote.invalid/style.css"/>
<style>@import url(http://remote.invalid/import.css); body { background:
url(http://remote.invalid/bg.png) }</style>
<script src="http://remote.invalid/script.js"></script></head>
<body style="background: url(http://remote.invalid/body.png)">
<h1>Remote resources</h1>
<p>Alpha paragraph that mentions a lighthouse keeper and his seven brass lanterns.
<img src="http://remote.invalid/pixel.png" alt="remote"/>
<img src="//remote.invalid/pixel2.png" alt="protocol relative"/>
<img src="images/local.png" srcset="http://remote.invalid/big.png 2x" alt="local"/>
<a href="http://remote.invalid/page">a remote link</a> and
<span style="background-image: url('http://remote.invalid/span.png')">styled</span>.</p>
<iframe src="http://remote.invalid/frame.html"></iframe>
<object data="http://remote.invalid/object.swf"></object>
<video src="http://remote.invalid/video.mp4" poster="http://remote.invalid/poster.png"></video>
<svg xmlns="http://www.w3.org/2000/svg"><image href="http://remote.invalid/svg.png"/></svg>
<p onclick="fetch('http://remote.invalid/onclick')">Beta paragraph about the harbour.</p>
</body></html>"""
    opf = """<?xml version="1.0" encoding="utf-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">x</dc:identifier>
<dc:title>Remote resources</dc:title><dc:language>en</dc:language></metadata>
<manifest><item id="s1" href="s1.xhtml" media-type="application/xhtml+xml"/></manifest>
<spine><itemref idref="s1"/></spine></package>"""
    container = """<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
<rootfiles><rootfile full-path="OPS/book.opf" media-type="application/oebps-package+xml"/>
</rootfiles></container>"""
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        zf.writestr("META-INF/container.xml", container)
        zf.writestr("OPS/book.opf", opf)
        zf.writestr("OPS/s1.xhtml", section)
    return path


@pytest.mark.slow
def test_no_request_leaves_the_origin_while_reading(
    page: Any,
    golden_server: LiveServer,
    golden_db: Path,
    tmp_path: Path,
    embedder: Embedder,
) -> None:
    book = _hostile_epub(tmp_path / "remote.epub")
    db = tmp_path / "hostile.sqlite"
    store = SQLiteStore(db)
    try:
        summary = ingest_paths([book], store, embedder, IngestOptions())
        assert not summary.failed, summary.failed
        doc_id = hashlib.sha256(book.read_bytes()).hexdigest()
        unit = store.unit(doc_id, 0)
    finally:
        store.close()
    assert unit is not None
    spans = find_quote("seven brass lanterns", unit.text)
    assert spans is not None

    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    with LiveServer(db) as server:
        response = page.request.get(f"{server.url}/api/epub/sections/{doc_id}/0/xhtml")
        assert response.headers["content-security-policy"] == SECTION_CSP
        served = response.text().replace('data-external-href="http://remote.invalid/page"', "")
        assert "remote.invalid" not in served
        got = _open(page, server, doc_id, 0, spans[0][0], spans[-1][1])
        assert normalize(got["rendered"]) == "seven brass lanterns"
        # The remote link is shown as text, not followed.
        frame = page.frame_locator(".reader-frame")
        link = frame.locator("a[data-external-href]")
        assert link.count() == 1 and link.get_attribute("href") is None
        page.wait_for_timeout(300)
    # Reading dev.json's sections of the real books: the same.
    for record in _epub_evidence(golden_db)[:3]:
        _open(page, golden_server, record["doc"], record["unit"], record["start"], record["end"])
    page.wait_for_timeout(300)
    origins = (server.url, golden_server.url)
    foreign = [u for u in requests if not u.startswith(origins) and not u.startswith("data:")]
    assert requests and not foreign, foreign
    assert any("/xhtml" in u for u in requests)


# --- citations in the chat page -------------------------------------------------------------


def _ask(page: Any, server: LiveServer, question: str) -> None:
    page.goto(server.url)
    page.fill("#question", question)
    page.press("#question", "Enter")
    page.wait_for_function(ANSWERED, timeout=90_000)
    assert page.get_attribute("#answer", "data-state") == "done", page.inner_text("#answer")


def _epub_questions() -> list[str]:
    golden = load_golden(GOLDEN_DEV)
    return [q.question for q in golden.questions if any(e.section for e in q.evidence)]


def _ask_until_epub_citation(page: Any, server: LiveServer) -> Any:
    for question in _epub_questions():
        _ask(page, server, question)
        cite = page.locator("#answer .cite[data-kind=epub]")
        if cite.count():
            return cite.first
    pytest.fail("no EPUB question of dev.json got an answer citing an EPUB")


@pytest.mark.slow
def test_citation_preview_toggles_with_mouse_and_keyboard(
    page: Any, golden_server: LiveServer
) -> None:
    cite = _ask_until_epub_citation(page, golden_server)
    preview_id = cite.get_attribute("aria-controls")
    preview = page.locator(f"#{preview_id}")
    assert cite.get_attribute("aria-expanded") == "false" and preview.count() == 0

    cite.click()
    assert cite.get_attribute("aria-expanded") == "true"
    assert preview.is_visible()
    quote = preview.locator(".preview-quote").inner_text()
    assert len(quote) > 10
    assert preview.locator(".preview-open").is_visible()
    cite.click()
    assert cite.get_attribute("aria-expanded") == "false" and preview.count() == 0

    # Keyboard: Enter opens, Escape closes and keeps focus on the marker, Space opens again.
    cite.focus()
    page.keyboard.press("Enter")
    assert cite.get_attribute("aria-expanded") == "true" and preview.is_visible()
    page.keyboard.press("Escape")
    assert cite.get_attribute("aria-expanded") == "false" and preview.count() == 0
    assert page.evaluate("document.activeElement.getAttribute('aria-controls')") == preview_id
    page.keyboard.press(" ")
    assert preview.is_visible()
    page.keyboard.press("Tab")
    assert "preview-open" in page.evaluate("document.activeElement.className")
    page.keyboard.press("Escape")  # Escape inside the preview closes it too
    assert preview.count() == 0
    assert page.evaluate("document.activeElement.getAttribute('aria-controls')") == preview_id


@pytest.mark.slow
def test_epub_citation_opens_the_reader_at_its_section(
    page: Any, golden_server: LiveServer, golden_db: Path
) -> None:
    cite = _ask_until_epub_citation(page, golden_server)
    doc = str(cite.get_attribute("data-doc"))
    unit = int(cite.get_attribute("data-unit") or -1)
    start = int(cite.get_attribute("data-start") or -1)
    end = int(cite.get_attribute("data-end") or -1)
    cite.click()
    page.locator(f"#{cite.get_attribute('aria-controls')} .preview-open").click()
    page.wait_for_function(READY)
    assert page.locator("#reader").is_visible() and page.locator("#viewer").is_hidden()
    got = page.evaluate(READ_HIGHLIGHT)
    assert got["unit"] == unit
    store = SQLiteStore(golden_db)
    try:
        stored = store.unit(doc, unit)
    finally:
        store.close()
    assert stored is not None
    assert _squash("".join(got["pieces"])) == _squash(stored.text[start:end])
    assert 0 <= got["top"] < got["height"]
    assert page.evaluate("document.activeElement.id") == "reader-title"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "chat-epub-citation.png"))
    page.keyboard.press("Escape")
    assert page.locator("#reader").is_hidden()
