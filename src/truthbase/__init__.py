"""TruthBase: verifiable question answering over PDFs and EPUB books."""

from __future__ import annotations

from .blas import limit_blas_threads
from .config import Settings
from .errors import TruthBaseError
from .geometry import span_line_rects
from .model import (
    Chunk,
    ChunkDraft,
    DocumentInfo,
    ExtractedDocument,
    PageGeometry,
    Rect,
    SearchHit,
    Unit,
)
from .textmatch import find_quote, normalize, quote_in

limit_blas_threads()  # once per process, before any search: see truthbase.blas

__all__ = [
    "Chunk",
    "ChunkDraft",
    "DocumentInfo",
    "ExtractedDocument",
    "PageGeometry",
    "Rect",
    "SearchHit",
    "Settings",
    "TruthBaseError",
    "Unit",
    "find_quote",
    "normalize",
    "quote_in",
    "span_line_rects",
]
