"""The public API is deliberate. (That every command, setting and route is documented is
tests/unit/test_docs_site.py's: the documentation site, no longer the README.)"""

from __future__ import annotations

import truthbase


def test_public_api_is_deliberate() -> None:
    assert sorted(truthbase.__all__) == sorted(
        [
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
    )
    for name in truthbase.__all__:
        assert getattr(truthbase, name) is not None
