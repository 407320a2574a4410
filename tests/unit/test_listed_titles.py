"""Titles as listings show them: documents that share a title are told apart by file name."""

from __future__ import annotations

from truthbase.model import DocumentInfo, listed_titles


def _doc(doc_id: str, title: str, path: str) -> DocumentInfo:
    return DocumentInfo(
        id=doc_id,
        title=title,
        path=path,
        kind="pdf",
        unit_count=1,
        chunk_count=1,
        ingested_at="2026-12-06T00:00:00Z",
        extractor_version="test",
    )


def test_only_shared_titles_get_a_file_name() -> None:
    upload = "c" * 64
    documents = [
        _doc("a" * 64, "The Listings Package", "/lib/listings/listings.pdf"),
        _doc("b" * 64, "The Listings Package", "/lib/listings/listings-devel.pdf"),
        _doc(upload, "The Listings Package", f"/data/uploads/cc/{upload}.pdf"),
        _doc("d" * 64, "booktabs", "/lib/booktabs/booktabs.pdf"),
    ]
    assert listed_titles(documents) == {
        "a" * 64: "The Listings Package (listings.pdf)",
        "b" * 64: "The Listings Package (listings-devel.pdf)",
        upload: "The Listings Package (cccccccc)",  # an upload's file is named by its hash
        "d" * 64: "booktabs",
    }
    # Told apart among the listed documents only: alone, a title is shown as it is.
    assert listed_titles(documents[1:2]) == {"b" * 64: "The Listings Package"}
