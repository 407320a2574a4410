"""Uploads are recognized by content: the magic bytes of PDF and EPUB, whatever the name."""

from __future__ import annotations

import io
import zipfile

from tests.helpers.canaries import make_pdf
from truthbase.extract.sniff import sniff_kind
from truthbase.server.uploads import _display_name


def _epub(first: str = "mimetype", stored: bool = True) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(
            zipfile.ZipInfo(first),
            "application/epub+zip",
            compress_type=zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED,
        )
        archive.writestr("META-INF/container.xml", "<container/>")
    return buffer.getvalue()


def test_pdf_and_epub_by_their_heads() -> None:
    assert sniff_kind(make_pdf([["hello"]])) == "pdf"
    assert sniff_kind(b"junk before the header " + make_pdf([["x"]])) == "pdf"
    assert sniff_kind(_epub()) == "epub"


def test_other_files_are_neither() -> None:
    assert sniff_kind(b"\x89PNG\r\n\x1a\n") is None
    assert sniff_kind(b"") is None
    assert sniff_kind(_epub(first="readme.txt")) is None  # a ZIP, not an EPUB
    assert sniff_kind(_epub(stored=False)) is None  # mimetype must be stored, uncompressed
    assert sniff_kind(b"x" * 2000 + b"%PDF-1.4") is None  # too far in


def test_display_names_are_names_not_paths() -> None:
    assert _display_name(b"../../etc/passwd") == "passwd"
    assert _display_name(b"C:\\Users\\me\\report.pdf") == "report.pdf"
    assert _display_name(b"a\x00b\nc.pdf") == "abc.pdf"
    assert _display_name(None) == "upload"
