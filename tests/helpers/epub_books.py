"""Small EPUB books written in a test's folder (container, package, chapters), and one
sanitized section, for the hardening tests (the same shapes as tests/unit/test_epub.py)."""

from __future__ import annotations

import zipfile
from pathlib import Path

from truthbase.extract.epub_html import canonical_text, find_body, parse_lenient, sanitize
from truthbase.extract.epub_html import serialize as serialize_section
from truthbase.model import DomMap

XHTML = "http://www.w3.org/1999/xhtml"
CONTAINER = (
    '<?xml version="1.0"?><container version="1.0" '
    'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
    '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
    "</rootfiles></container>"
)


def page(body: str) -> str:
    return (
        f'<?xml version="1.0" encoding="utf-8"?><html xmlns="{XHTML}"><head><title>t</title>'
        f"</head><body>{body}</body></html>"
    )


def opf(items: list[tuple[str, str]], spine: list[str]) -> str:
    manifest = "".join(
        f'<item id="{i}" href="{h}" media-type="application/xhtml+xml"/>' for i, h in items
    )
    refs = "".join(f'<itemref idref="{s}"/>' for s in spine)
    return (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>A Small Book</dc:title>'
        "<dc:creator>Ann Author</dc:creator><dc:language>en</dc:language></metadata>"
        f"<manifest>{manifest}</manifest><spine>{refs}</spine></package>"
    )


def build(folder: Path, files: dict[str, str | bytes], name: str = "book.epub") -> Path:
    path = folder / name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        for member, data in files.items():
            zf.writestr(member, data)
    return path


def simple_book(folder: Path, chapter: str, **extra: str | bytes) -> Path:
    files: dict[str, str | bytes] = {
        "META-INF/container.xml": CONTAINER,
        "OEBPS/content.opf": opf([("c1", "text/ch1.xhtml")], ["c1"]),
        "OEBPS/text/ch1.xhtml": page(chapter),
    }
    files.update(extra)
    return build(folder, files)


def sanitized_section(body_markup: str) -> DomMap:
    """The stored form of a section with ``body_markup`` (what ingest keeps)."""
    root, _ = parse_lenient(page(body_markup))
    warnings: list[str] = []
    body = sanitize(find_body(root), warnings)
    canon = canonical_text(body)
    return DomMap(html=serialize_section(body, "t"), nodes=canon.nodes, runs=canon.runs)
