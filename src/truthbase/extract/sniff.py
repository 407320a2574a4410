"""What a file is, by its content: magic bytes first, then a real open.

Uploads arrive with a name and a content type that the sender chose; neither decides anything.
:func:`sniff_kind` reads the first bytes (``%PDF-`` within the first KiB, as readers accept
leading junk; an EPUB is a ZIP whose first entry is ``mimetype`` holding
``application/epub+zip``, OCF 3.0 section 4.3); :func:`probe` then opens the file as that kind
(pypdfium2, zipfile) so that an encrypted, truncated or damaged file fails here with the same
reasons extraction uses.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from ..model import DocumentKind
from .errors import ExtractionError

__all__ = ["HEAD_BYTES", "probe", "sniff_kind"]

#: Bytes :func:`sniff_kind` needs to decide.
HEAD_BYTES = 1024
_EPUB_MIMETYPE = b"application/epub+zip"


def sniff_kind(head: bytes) -> DocumentKind | None:
    """``pdf``, ``epub`` or None (neither) from a file's first :data:`HEAD_BYTES` bytes."""
    if b"%PDF-" in head[:HEAD_BYTES]:
        return "pdf"
    # A local file header (PK\\3\\4), name length at 26, name at 30: "mimetype", stored, and
    # the media type right after (the OCF rule that lets a reader tell an EPUB by its head).
    if head.startswith(b"PK\x03\x04") and head[30:38] == b"mimetype":
        extra = int.from_bytes(head[28:30], "little")
        body = head[38 + extra : 38 + extra + len(_EPUB_MIMETYPE)]
        if body == _EPUB_MIMETYPE:
            return "epub"
    return None


def probe(path: Path, kind: DocumentKind) -> int:
    """Open ``path`` as ``kind``; the number of pages (PDF) or spine-candidate entries (EPUB:
    the archive's XHTML files, an estimate until extraction reads the spine). Raises
    ExtractionError ("encrypted", "corrupt", "not_epub") for a file that cannot be read."""
    if kind == "pdf":
        try:
            document = pdfium.PdfDocument(str(path))
        except pdfium.PdfiumError as exc:
            code = getattr(exc, "err_code", None)
            if code in (pdfium_c.FPDF_ERR_PASSWORD, pdfium_c.FPDF_ERR_SECURITY):
                raise ExtractionError(
                    "encrypted",
                    f"{path.name} is encrypted (it needs a password); upload a copy without one.",
                    path=str(path),
                ) from exc
            raise ExtractionError(
                "corrupt",
                f"{path.name} is damaged or truncated and cannot be read ({exc}).",
                path=str(path),
            ) from exc
        try:
            return len(document)
        finally:
            document.close()
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            if archive.testzip() is not None:
                raise zipfile.BadZipFile("a member fails its CRC check")
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise ExtractionError(
            "corrupt", f"{path.name} is a damaged EPUB archive ({exc}).", path=str(path)
        ) from exc
    if "META-INF/container.xml" not in names:
        raise ExtractionError(
            "not_epub", f"{path.name} has no META-INF/container.xml.", path=str(path)
        )
    return sum(1 for n in names if n.lower().endswith((".xhtml", ".html", ".htm")))
