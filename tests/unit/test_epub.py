"""EPUB extraction on small books built in tmp_path: structure, canonical text, map, bad input."""

from __future__ import annotations

import unicodedata
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from truthbase.extract import ExtractionError, extract_epub, extract_path
from truthbase.extract.epub_html import (
    Element,
    canonical_text,
    find_body,
    parse_lenient,
    sanitize,
    serialize,
    text_nodes,
)
from truthbase.extract.epub_map import (
    dom_map_from_json,
    dom_map_to_json,
    epub_canonical_offset,
    epub_dom_position,
    epub_dom_range,
    epub_dom_segments,
)
from truthbase.model import DomMap, NodePath

XHTML = "http://www.w3.org/1999/xhtml"
CONTAINER = (
    '<?xml version="1.0"?><container version="1.0" '
    'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
    '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
    "</rootfiles></container>"
)


def page(body: str, head: str = "") -> str:
    return (
        f'<?xml version="1.0" encoding="utf-8"?><html xmlns="{XHTML}"><head><title>t</title>'
        f"{head}</head><body>{body}</body></html>"
    )


def opf(items: list[tuple[str, str, str]], spine: list[str], version: str = "3.0") -> str:
    manifest = "".join(
        f'<item id="{i}" href="{h}" media-type="application/xhtml+xml"{p}/>' for i, h, p in items
    )
    no = ' linear="no"'
    refs = "".join(
        f'<itemref idref="{s.lstrip("!")}"{no if s.startswith("!") else ""}/>' for s in spine
    )
    return (
        f'<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="{version}">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>A Small Book</dc:title>'
        "<dc:creator>Ann Author</dc:creator><dc:language>en</dc:language></metadata>"
        f'<manifest>{manifest}</manifest><spine toc="ncx">{refs}</spine></package>'
    )


def build(tmp_path: Path, files: dict[str, str | bytes], name: str = "book.epub") -> Path:
    path = tmp_path / name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        for member, data in files.items():
            zf.writestr(member, data)
    return path


def simple_book(tmp_path: Path, chapter: str, **extra: str | bytes) -> Path:
    files: dict[str, str | bytes] = {
        "META-INF/container.xml": CONTAINER,
        "OEBPS/content.opf": opf([("c1", "text/ch%201.xhtml", "")], ["c1"]),
        "OEBPS/text/ch 1.xhtml": page(chapter),
    }
    files.update(extra)
    return build(tmp_path, files)


def section(body_markup: str) -> tuple[str, DomMap, Element]:
    root, _ = parse_lenient(page(body_markup))
    warnings: list[str] = []
    body = sanitize(find_body(root), warnings)
    canon = canonical_text(body)
    dom = DomMap(html=serialize(body, "t"), nodes=canon.nodes, runs=canon.runs)
    dom.anchors = canon.anchors
    return canon.text, dom, body


def xml_text_nodes(html: str) -> dict[NodePath, str]:
    """Text nodes of the sanitized document as an XML parser (a browser's XHTML DOM) sees them."""
    body = ET.fromstring(html).find(f"{{{XHTML}}}body")
    assert body is not None
    found: dict[NodePath, str] = {}

    def walk(element: ET.Element, path: tuple[int, ...]) -> None:
        for i, child in enumerate(element):
            walk(child, (*path, i))
        # ElementTree splits a node's text into .text and tails; DOM text nodes are the
        # maximal runs between child elements, which is exactly .text / each .tail here.
        k = 0
        if element.text:
            found[(*path, k)] = element.text
            k += 1
        for child in element:
            if child.tail:
                found[(*path, k)] = child.tail
                k += 1

    walk(body, ())
    return found


def assert_round_trip(text: str, dom: DomMap) -> int:
    nodes = xml_text_nodes(dom.html)
    mapped = 0
    for i, ch in enumerate(text):
        pos = epub_dom_position(dom, i)
        if pos is None:
            assert ch in "\n ", (i, ch)
            continue
        mapped += 1
        node = nodes[pos[0]]
        dom_ch = node[pos[1]]
        composed = unicodedata.normalize("NFC", node[pos[1] : pos[1] + 2])[0]
        assert dom_ch == ch or composed == ch or (ch == " " and dom_ch in " \t\n\f"), (i, ch)
        assert epub_canonical_offset(dom, *pos) == i
    return mapped


# --- canonical text -------------------------------------------------------------------------


def test_blocks_whitespace_entities_scripts() -> None:
    text, dom, _ = section(
        "<h1>  Title\n  One </h1>\n<p>Some   <b>bold</b>\n\t text&amp;more &#8220;q&#8221;</p>"
        "<script>var x = '<p>no</p>';</script><style>p{}</style>"
        "<div><p>a<br/>b</p><p>   </p><p>c&nbsp;d</p></div>"
    )
    assert text == "Title One\nSome bold text&more \u201cq\u201d\na\nb\nc\u00a0d"
    assert assert_round_trip(text, dom) == len(text) - text.count("\n")


def test_inline_boundaries_collapse_to_one_space() -> None:
    text, dom, _ = section("<p>one <i> two </i> three<span> </span> four</p>")
    assert text == "one two three four"
    assert_round_trip(text, dom)


def test_pre_keeps_whitespace_and_drops_leading_newline() -> None:
    text, dom, body = section("<p>x</p><pre>\n  a  b\n   c</pre>")
    assert text == "x\n  a  b\n   c"
    assert "<pre>  a  b" in dom.html
    assert_round_trip(text, dom)
    assert body.children


def test_nfc_and_soft_hyphen() -> None:
    text, dom, _ = section("<p>Cafe\u0301 co\u00adoperate</p>")
    assert text == "Caf\u00e9 cooperate"
    pos = epub_dom_position(dom, 3)
    assert pos is not None and pos[1] == 3  # the composed é maps to the DOM's "e"
    assert epub_dom_position(dom, 7) == (pos[0], 9)  # "o" after the removed U+00AD


def test_table_cells_and_tbody() -> None:
    text, dom, _ = section(
        "<table>\n<tr><td>a</td>\n<td>b</td></tr>\n<tr><th>c</th><td>d</td></tr></table>"
    )
    assert text == "a b\nc d"
    assert "<table><tbody><tr><td>a</td><td>b</td></tr>" in dom.html
    assert_round_trip(text, dom)


def test_anchors_point_at_the_element_text() -> None:
    text, dom, _ = section('<p>intro</p><h2 id="ch2">Two</h2><p>x <a id="mid"/>y</p>')
    assert text[dom.anchors["ch2"] :].startswith("Two")
    assert text[dom.anchors["mid"] :].startswith("y")


# --- sanitized output ------------------------------------------------------------------------


def test_sanitizer_drops_active_and_remote_content() -> None:
    _, dom, _ = section(
        '<p onclick="x()">a<img src="http://evil/x.png"/><img src="img/ok.png" alt="ok"/>'
        '<a href="javascript:alert(1)">j</a><a href="ch2.xhtml#n">n</a></p>'
        "<iframe src='x'>if</iframe><svg><text>s</text></svg><object>o</object>"
    )
    html = dom.html
    for banned in ("onclick", "http://evil", "javascript:", "iframe", "svg", "object", "<script"):
        assert banned not in html
    assert '<img src="img/ok.png" alt="ok"/>' in html
    assert 'href="ch2.xhtml#n"' in html
    ET.fromstring(html)  # well-formed XML


def test_html_parser_fixups() -> None:
    _, dom, _ = section(
        '<p>para <div>block</div></p><a href="a">x<a href="b">y</a></a>'
        "<ul><li>one<li>nested</li></li></ul><h2>h<h3>sub</h3></h2><p>e<a id='e'/>f</p>"
    )
    html = dom.html
    assert "<div>para <div>block</div></div>" in html  # a <p> holding a block becomes a <div>
    assert '<a href="a">x<span>y</span></a>' in html
    assert "<li>one<div>nested</div></li>" in html
    assert "<h2>h<span>sub</span></h2>" in html
    assert '<a id="e"></a>' in html  # no self-closed non-void elements (HTML would not close it)
    assert html.endswith("</body></html>")


def test_broken_markup_is_repaired_and_mapped() -> None:
    text, dom, _ = section("<p>open <b>bold <i>both</b> after</p></div><p>tail")
    assert text == "open bold both after\ntail"
    assert_round_trip(text, dom)


def test_comments_merge_text_nodes() -> None:
    text, dom, _ = section("<p>ab<!-- c -->cd<script>x</script>ef</p>")
    assert text == "abcdef"
    assert dom.nodes == [(0, 0)]
    assert dom.runs == [(0, 6, 0, 0)]


# --- the map API -----------------------------------------------------------------------------


def test_positions_segments_and_inverse() -> None:
    text, dom, _ = section("<p>Hello   <em>big</em>\n world</p><p>next</p>")
    assert text == "Hello big world\nnext"
    assert epub_dom_position(dom, 15) is None  # the synthesized line break
    assert epub_dom_position(dom, 5) == ((0, 0), 5)  # collapsed spaces -> first of the run
    assert epub_dom_position(dom, 6) == ((0, 0, 0), 0)
    segments = epub_dom_segments(dom, 0, len(text))
    assert segments == [((0, 0), 0, 6), ((0, 0, 0), 0, 3), ((0, 1), 0, 7), ((1, 0), 0, 4)]
    assert epub_dom_range(dom, 6, 9) == (((0, 0, 0), 0), ((0, 0, 0), 3))
    # a DOM position inside collapsed whitespace maps to the next canonical character
    assert epub_canonical_offset(dom, (0, 0), 7) == 6
    assert epub_canonical_offset(dom, (9, 9), 0) is None
    assert epub_canonical_offset(dom, (1, 0), 99) == len(text)
    again = dom_map_from_json(dom_map_to_json(dom), dom.html)
    assert again.runs == dom.runs and again.nodes == dom.nodes and again.anchors == dom.anchors


# --- whole books -----------------------------------------------------------------------------


def test_epub3_structure_nav_and_linear_order(tmp_path: Path) -> None:
    nav = page(
        '<nav epub:type="toc"><ol><li><a href="text/c1.xhtml">First</a><ol>'
        '<li><a href="text/c1.xhtml#s2">Second part</a></li></ol></li>'
        '<li><a href="text/c2.xhtml">Second</a></li></ol></nav>'
    )
    files: dict[str, str | bytes] = {
        "META-INF/container.xml": CONTAINER,
        "OEBPS/content.opf": opf(
            [
                ("nav", "nav.xhtml", ' properties="nav"'),
                ("cover", "cover.xhtml", ""),
                ("c1", "text/c1.xhtml", ""),
                ("c2", "text/c2.xhtml", ""),
            ],
            ["!cover", "c1", "!nav", "c2"],
        ),
        "OEBPS/nav.xhtml": nav,
        "OEBPS/cover.xhtml": page("<p>Cover</p>"),
        "OEBPS/text/c1.xhtml": page('<h1>One</h1><p>Alpha.</p><h2 id="s2">Part</h2><p>Beta.</p>'),
        "OEBPS/text/c2.xhtml": page("<h1>Two</h1><p>Gamma.</p>"),
    }
    doc = extract_path(build(tmp_path, files))
    assert doc.kind == "epub" and doc.title == "A Small Book"
    assert doc.metadata["creator"] == "Ann Author"
    assert [u.href for u in doc.units] == [
        "text/c1.xhtml",
        "text/c2.xhtml",
        "cover.xhtml",
        "nav.xhtml",
    ]
    assert [u.index for u in doc.units] == [0, 1, 2, 3]
    assert [u.dom.linear for u in doc.units if u.dom] == [True, True, False, False]
    assert [u.label for u in doc.units] == ["First", "Second", None, None]
    assert [(e.title, e.unit, e.depth) for e in doc.toc] == [
        ("First", 0, 0),
        ("Second part", 0, 1),
        ("Second", 1, 0),
    ]
    assert doc.units[0].text[doc.toc[1].offset :].startswith("Part")
    assert all(u.boxes == [None] * len(u.text) for u in doc.units)


def test_epub2_ncx(tmp_path: Path) -> None:
    ncx = (
        '<?xml version="1.0"?><ncx xmlns="http://www.daisy.org/z3986/2005/ncx/"><navMap>'
        '<navPoint id="a"><navLabel><text>Chapter  One</text></navLabel>'
        '<content src="text/ch%201.xhtml#x"/></navPoint></navMap></ncx>'
    )
    files: dict[str, str | bytes] = {
        "META-INF/container.xml": CONTAINER,
        "OEBPS/content.opf": opf([("c1", "text/ch%201.xhtml", "")], ["c1"], "2.0").replace(
            "</manifest>",
            '<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/></manifest>',
        ),
        "OEBPS/toc.ncx": ncx,
        "OEBPS/text/ch 1.xhtml": page('<p>pre</p><p id="x">Here.</p>'),
    }
    doc = extract_epub(build(tmp_path, files))
    assert doc.units[0].href == "text/ch%201.xhtml"  # as written in the OPF
    assert doc.units[0].label == "Chapter One"
    assert doc.units[0].text[doc.toc[0].offset :] == "Here."


def test_broken_xhtml_is_reported_not_fatal(tmp_path: Path) -> None:
    doc = extract_epub(simple_book(tmp_path, "<p>one <b>two</p><p>three</i>"))
    assert doc.units[0].text == "one two\nthree"
    assert any("broken XHTML" in w for w in doc.report.warnings)


# --- bad input -------------------------------------------------------------------------------


def reason(path: Path) -> str:
    with pytest.raises(ExtractionError) as info:
        extract_path(path)
    return info.value.reason


def test_not_a_zip(tmp_path: Path) -> None:
    path = tmp_path / "fake.epub"
    path.write_bytes(b"%PDF-1.7 not a zip at all")
    assert reason(path) == "not_epub"


def test_missing_container(tmp_path: Path) -> None:
    path = build(tmp_path, {"OEBPS/content.opf": opf([], [])})
    assert reason(path) == "not_epub"


def test_broken_container_and_opf(tmp_path: Path) -> None:
    assert reason(simple_book(tmp_path, "<p>x</p>", **{"META-INF/container.xml": "<c"})) == (
        "corrupt"
    )
    path = build(
        tmp_path,
        {"META-INF/container.xml": CONTAINER, "OEBPS/content.opf": "<package"},
        name="b.epub",
    )
    assert reason(path) == "corrupt"


def test_drm(tmp_path: Path) -> None:
    encryption = (
        '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
        'xmlns:enc="http://www.w3.org/2001/04/xmlenc#">'
        '<enc:EncryptedData><enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>'
        '<enc:CipherData><enc:CipherReference URI="OEBPS/text/ch%201.xhtml"/></enc:CipherData>'
        "</enc:EncryptedData></encryption>"
    )
    path = simple_book(tmp_path, "<p>x</p>", **{"META-INF/encryption.xml": encryption})
    assert reason(path) == "drm"


def test_font_obfuscation_is_not_drm(tmp_path: Path) -> None:
    encryption = (
        '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
        'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
        '<enc:EncryptionMethod Algorithm="http://www.idpf.org/2008/embedding"/>'
        '<enc:CipherData><enc:CipherReference URI="OEBPS/fonts/a.otf"/></enc:CipherData>'
        "</enc:EncryptedData></encryption>"
    )
    doc = extract_epub(
        simple_book(tmp_path, "<p>fine</p>", **{"META-INF/encryption.xml": encryption})
    )
    assert doc.units[0].text == "fine"


def test_zip_bomb_ratio(tmp_path: Path) -> None:
    path = simple_book(tmp_path, "<p>x</p>", **{"OEBPS/zeros.bin": b"\0" * (8 * 2**20)})
    assert reason(path) == "zip_bomb"


def test_zip_bomb_total(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from truthbase.extract import epub

    monkeypatch.setattr(epub, "MAX_TOTAL_UNCOMPRESSED", 1000)
    path = simple_book(tmp_path, "<p>" + "word " * 400 + "</p>")
    assert reason(path) == "zip_bomb"


def test_no_text_and_empty_spine(tmp_path: Path) -> None:
    assert reason(simple_book(tmp_path, '<img src="a.png"/>')) == "no_text"
    path = build(
        tmp_path,
        {"META-INF/container.xml": CONTAINER, "OEBPS/content.opf": opf([], [])},
        name="e.epub",
    )
    assert reason(path) == "corrupt"


def test_garbage_members_never_leak_other_exceptions(tmp_path: Path) -> None:
    deep = "<div>" * 5000 + "deep" + "</div>" * 5000
    junk = "\x00\x01<<p>>&#xD800;&bogus;<![CDATA[cd]]><?pi x?>" + deep
    doc = extract_epub(simple_book(tmp_path, junk))
    assert "deep" in doc.units[0].text
    ET.fromstring(doc.units[0].dom.html if doc.units[0].dom else "")
    found = text_nodes(find_body(parse_lenient(doc.units[0].dom.html)[0]))  # type: ignore[union-attr]
    assert found
