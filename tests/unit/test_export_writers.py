"""The export writers (truthbase.export): the HTML evidence report is self-contained (no script,
no remote resource, images as data: URIs), its evidence block reads back as written, and the
Markdown makes each [n] a footnote with the quote, the document, its pages, sha256 and link.
The cited region is rendered from a real PDF with its highlight where the rects say."""

from __future__ import annotations

import base64
import io
import re
from html.parser import HTMLParser

import pypdfium2 as pdfium
import pytest
from PIL import Image

from tests.helpers.corpus import ROBUSTNESS, SEED
from truthbase.errors import InvalidInput
from truthbase.export import (
    CitedEvidence,
    ExportedAnswer,
    PassageContext,
    evidence_json,
    html_report,
    markdown_report,
    read_evidence,
)
from truthbase.export.render import file_has_bytes, render_cited_region

SHA = "ab" * 32
NOW = "2026-12-02T08:00:00+00:00"


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (40, 20), (255, 214, 0)).save(out, format="PNG")
    return out.getvalue()


def _citation(n: int, **changes: object) -> CitedEvidence:
    fields: dict[str, object] = {
        "n": n,
        "doc_id": SHA,
        "title": "A <Title> & co",
        "kind": "pdf",
        "unit": 11,
        "page_label": "7",
        "start": 100,
        "end": 140,
        "quote": "Risk is the <b>composite</b> measure.",
        "claim": "Risk is a composite measure.",
        "state": "supported",
        "link": "http://127.0.0.1:8000/view?doc=ab&page=12&start=100&end=140",
        "image_png": _png(),
        "context": PassageContext(before="Before. ", quote="Risk is", after=" after."),
    }
    fields.update(changes)
    return CitedEvidence(**fields)  # type: ignore[arg-type]


def _answer(answer_id: int = 5, question: str = "How is risk defined?") -> ExportedAnswer:
    citations = (_citation(1), _citation(2, kind="epub", image_png=None, page_label=None))
    record = {
        "text": "Risk is composite [1]. It is measured [2].",
        "refused": False,
        "citations": [
            {
                "n": c.n,
                "doc_id": c.doc_id,
                "unit": c.unit,
                "start": c.start,
                "end": c.end,
                "quote": c.quote,
                "state": c.state,
                "verified": True,
            }
            for c in citations
        ],
        "sources": [{"text": "a long chunk that is not evidence"}],
    }
    return ExportedAnswer(
        answer_id=answer_id,
        question=question,
        created_at=NOW,
        text=str(record["text"]),
        refused=False,
        citations=citations,
        record=record,
    )


class _Tags(HTMLParser):
    """Every start tag with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def test_the_html_report_loads_nothing_and_runs_nothing() -> None:
    report = html_report([_answer(question="<script>alert(1)</script>?")], NOW)
    assert "<script" not in report.lower()
    assert "alert(1)" in report  # the question is there, escaped
    parser = _Tags()
    parser.feed(report)
    tags = parser.tags
    names = {t for t, _ in tags}
    assert not names & {"script", "link", "iframe", "object", "embed", "base"}
    images = [a["src"] for t, a in tags if t == "img"]
    assert len(images) == 1  # the PDF citation; the EPUB one shows its context
    assert all(src and src.startswith("data:image/png;base64,") for src in images)
    for _, attrs in tags:
        assert not any(k.startswith("on") for k in attrs), attrs
        assert not (attrs.get("src") or "").startswith(("http:", "https:", "//"))
    assert not re.search(r"url\(|@import", report)
    # the link that opens the highlight is an anchor, not a resource
    assert 'href="http://127.0.0.1:8000/view?doc=ab&amp;page=12' in report
    png = base64.b64decode(images[0].split(",", 1)[1])
    assert Image.open(io.BytesIO(png)).size == (40, 20)


def test_the_html_report_shows_the_evidence_of_each_citation() -> None:
    report = html_report([_answer()], NOW)
    assert SHA in report
    assert "A &lt;Title&gt; &amp; co" in report
    assert "p. 7 (page 12 of the file)" in report and "section 12" in report
    assert "characters [100, 140)" in report and "supported" in report
    assert '<sup><a href="#a5-c1">[1]</a></sup>' in report
    assert "<mark>Risk is</mark>" in report  # the EPUB passage in its context


def test_the_evidence_block_reads_back_as_written() -> None:
    answer = _answer()
    report = html_report([answer], NOW)
    evidence = read_evidence(report)
    assert evidence == evidence_json((answer,), NOW)
    kept = evidence["answers"][0]["answer"]
    assert kept["citations"] == answer.record["citations"]
    assert "sources" not in kept
    assert evidence["documents"] == [{"sha256": SHA, "title": "A <Title> & co", "kind": "pdf"}]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("<html><body>no evidence</body></html>", "no TruthBase evidence"),
        ('<pre hidden id="truthbase-evidence">{not json</pre>', "not JSON"),
        ('<pre hidden id="truthbase-evidence">{"format": "x"}</pre>', "not TruthBase"),
        (
            '<pre hidden id="truthbase-evidence">'
            '{"format": "truthbase-evidence", "version": 99, "answers": []}</pre>',
            "version 99",
        ),
    ],
)
def test_a_file_that_is_not_a_report_is_invalid(text: str, why: str) -> None:
    with pytest.raises(InvalidInput, match=why):
        read_evidence(text)


def test_markdown_makes_each_marker_a_footnote() -> None:
    md = markdown_report([_answer()], NOW)
    assert "Risk is composite [^1]. It is measured [^2]." in md
    (one,) = [line for line in md.splitlines() if line.startswith("[^1]:")]
    assert "“Risk is the \\<b\\>composite\\</b\\> measure.”" in one
    assert "*A \\<Title\\> & co*, p. 7 (page 12 of the file)" in one
    assert (
        "[open the highlight](http://127.0.0.1:8000/view?doc=ab&page=12&start=100&end=140)" in one
    )
    assert f"sha256 `{SHA}`" in one and "span [100, 140)" in one and "state: supported" in one
    assert any(line.startswith("[^2]:") and "section 12" in line for line in md.splitlines())


def test_a_markdown_export_carries_the_same_evidence_out_of_sight() -> None:
    answers = [_answer(5), _answer(6, "And then -- what? -->")]
    md = markdown_report(answers, NOW)
    assert read_evidence(md) == evidence_json(tuple(answers), NOW)  # as the HTML report's
    block = md[md.index("<!-- truthbase-evidence/1") :]
    assert block.count("-->") == 1 and block.rstrip().endswith("-->")  # one comment, at the end
    with pytest.raises(InvalidInput, match="not JSON"):
        read_evidence(md.replace('"answers"', '"answers', 1))


def test_a_thread_keeps_each_answers_footnotes_apart() -> None:
    md = markdown_report([_answer(5), _answer(6, "And then?")], NOW)
    assert "[^a5-1]" in md and "[^a6-1]" in md
    assert md.count("[^a5-1]:") == 1 and md.count("[^a6-1]:") == 1
    html = html_report([_answer(5), _answer(6)], NOW)
    assert 'id="a5-c1"' in html and 'id="a6-c1"' in html
    assert [a["id"] for a in read_evidence(html)["answers"]] == [5, 6]


@pytest.mark.corpus
def test_the_cited_region_is_rendered_with_its_highlight() -> None:
    path = SEED / "nist-ai-rmf-1.0.pdf"
    pdf = pdfium.PdfDocument(str(path))
    left, _bottom, right, top = pdf[11].get_cropbox()
    pdf.close()
    rect = (left + 100.0, top - 320.0, left + 300.0, top - 300.0)  # a band 300-320 pt down
    image = Image.open(io.BytesIO(render_cited_region(path, 11, [rect]))).convert("RGB")
    # the band with 40 pt above and below, at 2x, the page's full width
    assert image.size == (round((right - left) * 2), 200)
    inside = image.getpixel((400, 100))  # x 200 pt, the band's middle
    outside = image.getpixel((50, 100))  # x 25 pt, the margin
    assert isinstance(inside, tuple) and isinstance(outside, tuple)
    assert inside[2] < 200 < inside[0]  # yellow: the highlight
    assert outside[2] > 240  # white: no highlight


@pytest.mark.corpus
def test_an_image_is_drawn_only_from_the_indexed_bytes(tmp_path: object) -> None:
    import hashlib
    from pathlib import Path

    path = SEED / "raptor.pdf"
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    assert file_has_bytes(path, sha)
    assert not file_has_bytes(path, SHA)
    assert not file_has_bytes(Path(str(tmp_path)) / "gone.pdf", sha)


@pytest.mark.corpus
def test_a_rotated_page_is_turned_as_it_is_read_before_the_band_is_cut() -> None:
    # pypdf's habibi page 0 is /Rotate 90: 595 x 842 pt unrotated, read as 842 x 595
    path = ROBUSTNESS / "pypdf-habibi-rotated.pdf"
    rect = (62.25, 768.33, 69.98, 777.75)  # the glyph "h" of "habibi" (pdfium's loose box)
    image = Image.open(io.BytesIO(render_cited_region(path, 0, [rect]))).convert("RGB")
    # the band runs across the page as it is read (842 pt wide at 2x); the box turned 90
    # degrees clockwise lies at x 1536..1555, y 124..140 of the whole page, 80 px under the cut
    assert image.width == 1684
    assert abs(image.height - (140 + 80 - (124 - 80))) <= 1  # whole pixels
    inside = image.getpixel((1546, 88))
    assert isinstance(inside, tuple) and inside[2] < 200 < inside[0], inside
