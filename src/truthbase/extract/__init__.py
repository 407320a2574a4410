"""Extraction: documents to units of canonical text, each character aligned to its glyph box.

Public API: ``extract_path`` (dispatch on the file suffix), ``extract_pdf``, ``ExtractionError``
(with ``reason``: "encrypted", "not_pdf", "corrupt", "no_text", "unsupported") and
``EXTRACTOR_VERSION``.
"""

from __future__ import annotations

from pathlib import Path

from ..model import ExtractedDocument
from .epub import EPUB_EXTRACTOR_VERSION, extract_epub
from .errors import ExtractionError, ExtractionFailure
from .pdf import EXTRACTOR_VERSION, extract_pdf

__all__ = [
    "EPUB_EXTRACTOR_VERSION",
    "EXTRACTOR_VERSION",
    "ExtractionError",
    "ExtractionFailure",
    "extract_epub",
    "extract_path",
    "extract_pdf",
]


def extract_path(path: Path | str, password: str | None = None) -> ExtractedDocument:
    """Extract any supported document, chosen by its suffix (.pdf, .epub)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        return extract_pdf(path, password=password)
    if suffix == ".epub":
        return extract_epub(path)
    raise ExtractionError(
        "unsupported",
        f"{path.name}: cannot ingest {suffix or 'files without a suffix'}; supported: .pdf, .epub",
        path=str(path),
    )
