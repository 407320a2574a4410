"""TruthBase: verifiable question answering over PDFs and EPUB books.

The Python API is :class:`Library` (:mod:`truthbase.api`): open an index, ingest, search, ask,
read passages and verify claims. It is imported on first use, so that importing any one stage
(``truthbase.model``, ``truthbase.extract``) does not load the whole pipeline.

Importing the package has no effect: it reads no environment variable and sets no thread count.
A program's entry point (the CLI, the server, a worker or pool process, a benchmark) calls
:func:`truthbase.blas.limit_blas_threads` itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
    Unit,
)
from .records import SearchHit
from .text.matching import find_quote, normalize, quote_in

if TYPE_CHECKING:
    from .api import Library

__all__ = [
    "Chunk",
    "ChunkDraft",
    "DocumentInfo",
    "ExtractedDocument",
    "Library",
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


def __getattr__(name: str) -> Any:
    """:class:`Library`, imported on first use (see the module's docstring)."""
    if name == "Library":
        from .api import Library

        return Library
    raise AttributeError(f"module 'truthbase' has no attribute {name!r}")
