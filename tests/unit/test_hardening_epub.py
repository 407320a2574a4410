"""Hostile EPUB markup: entity declarations in any encoding refused by every XML parse
(defusedxml), and the app's own ``tb-*`` classes stripped from a book's markup (at ingest and
when a stored section is served)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from tests.helpers.epub_books import CONTAINER, build, opf, page, sanitized_section, simple_book
from truthbase.extract import ExtractionError, extract_path
from truthbase.extract.xml_safe import UnsafeXml, parse_xml
from truthbase.server.epub_files import BookFileError, book_layout
from truthbase.server.reader import section_document


def reason(path: Path) -> str:
    with pytest.raises(ExtractionError) as info:
        extract_path(path)
    return info.value.reason


LAUGHS = (
    '<?xml version="1.0" encoding="UTF-16"?>\n'
    '<!DOCTYPE c [<!ENTITY a "ha"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>\n'
    '<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
    '<rootfiles><rootfile full-path="OEBPS/content.opf" '
    'media-type="application/oebps-package+xml"/></rootfiles>&b;</container>'
)
EXTERNAL = (
    '<?xml version="1.0"?><!DOCTYPE c [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
    '<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">&x;'
    "</container>"
)


def test_entities_in_utf16_xml_are_refused() -> None:
    data = LAUGHS.encode("utf-16")
    assert b"<!ENTITY" not in data  # what the old byte check looked for
    with pytest.raises(UnsafeXml):
        parse_xml(data)


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32"])
def test_other_wide_encodings_are_refused_as_malformed(encoding: str) -> None:
    # expat reads these not at all (a ValueError from it before): malformed, never expanded.
    with pytest.raises(ET.ParseError):
        parse_xml(LAUGHS.replace("UTF-16", encoding.upper()).encode(encoding))


def test_external_entities_are_refused_and_a_plain_doctype_is_not() -> None:
    with pytest.raises(UnsafeXml):
        parse_xml(EXTERNAL.encode())
    ncx = '<?xml version="1.0"?><!DOCTYPE ncx PUBLIC "-//NISO//DTD ncx 2005-1//EN" "x"><ncx/>'
    assert parse_xml(ncx.encode()).tag == "ncx"


def test_ingest_refuses_a_utf16_container_with_entities(tmp_path: Path) -> None:
    path = simple_book(tmp_path, "<p>x</p>", **{"META-INF/container.xml": LAUGHS.encode("utf-16")})
    assert reason(path) == "corrupt"
    (tmp_path / "ok").mkdir()
    ok = simple_book(tmp_path / "ok", "<p>x</p>")
    assert extract_path(ok).units  # the same book without entities ingests


def test_served_images_refuse_a_utf16_package_with_entities(tmp_path: Path) -> None:
    package = opf([("c1", "ch.xhtml")], ["c1"]).replace(
        '<?xml version="1.0"?>',
        '<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE p [<!ENTITY e "x">]>',
    )
    path = build(
        tmp_path,
        {
            "META-INF/container.xml": CONTAINER,
            "OEBPS/content.opf": package.encode("utf-16"),
            "OEBPS/ch.xhtml": page("<p>x</p>"),
        },
    )
    with zipfile.ZipFile(path) as zf:
        assert b"<!ENTITY" not in zf.read("OEBPS/content.opf")
    with pytest.raises(BookFileError, match="refused"):
        book_layout(path)


def test_sanitizer_strips_the_apps_own_classes() -> None:
    dom = sanitized_section(
        '<p class="note tb-strong">a <mark class="tb-strong">fake cite</mark>'
        '<span class="TB-light x">b</span><mark class="tb-light">c</mark></p>'
    )
    assert "tb-" not in dom.html.lower()
    assert '<p class="note">' in dom.html and '<span class="x">' in dom.html
    assert "<mark>fake cite</mark>" in dom.html


def test_served_sections_strip_the_apps_own_classes() -> None:
    # A section stored before ingest stripped them.
    stored = (
        '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>t</title></head><body>'
        '<p class="tb-strong keep">a<mark class="tb-strong">b</mark></p></body></html>'
    )
    served = section_document(stored, doc_id="d" * 64, unit_href="c.xhtml", units_by_href={})
    assert "tb-strong" not in served
    assert '<p class="keep">' in served and "<mark>b</mark>" in served
