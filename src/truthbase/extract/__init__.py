"""Extraction: documents to units of canonical text, each character aligned to its glyph box.

Public API: ``extract_path`` (dispatch on the file suffix), ``extract_pdf``, ``ExtractionError``
(with ``reason``: "encrypted", "not_pdf", "corrupt", "no_text", "unsupported"),
``EXTRACTOR_VERSION``, and the OCR engine (``OcrEngine``, ``TesseractEngine``,
``OcrUnavailable``) for pages without a text layer.
"""

from __future__ import annotations

from pathlib import Path

from ..config import OcrSettings
from ..model import ExtractedDocument
from .epub import EPUB_EXTRACTOR_VERSION, extract_epub
from .errors import ExtractionError, ExtractionFailure
from .pdf import EXTRACTOR_VERSION, OcrProgress, extract_pdf
from .tesseract import OcrEngine, OcrUnavailable, TesseractEngine

__all__ = [
    "EPUB_EXTRACTOR_VERSION",
    "EXTRACTOR_VERSION",
    "ExtractionError",
    "ExtractionFailure",
    "OcrEngine",
    "OcrProgress",
    "OcrUnavailable",
    "TesseractEngine",
    "extract_epub",
    "extract_path",
    "extract_pdf",
]


def extract_path(
    path: Path | str,
    password: str | None = None,
    *,
    ocr: OcrSettings | None = None,
    engine: OcrEngine | None = None,
    on_ocr_page: OcrProgress | None = None,
    name: str | None = None,
) -> ExtractedDocument:
    """Extract any supported document, chosen by its suffix (.pdf, .epub); PDF pages without a
    usable text layer are OCR'd as :func:`extract_pdf` says. ``name``: the file's name as its
    owner knows it, where it is stored under another (an upload is kept under its hash); a
    document that names no title of its own is called by it."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        return extract_pdf(
            path,
            password=password,
            ocr=ocr,
            engine=engine,
            on_ocr_page=on_ocr_page,
            name=name,
        )
    if suffix == ".epub":
        return extract_epub(path, name=name)
    raise ExtractionError(
        "unsupported",
        f"{path.name}: cannot ingest {suffix or 'files without a suffix'}; supported: .pdf, .epub",
        path=str(path),
    )
