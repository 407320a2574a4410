"""How a unit's text was made (``Unit.text_source``, ``Unit.ocr``) in the SQLite store: round trip,
and an index from schema 6 gains the two columns in place, its older units reading back as the
PDF's own text (or an EPUB's). The same on PostgreSQL: tests/integration/test_ocr.py."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from truthbase.model import ExtractedDocument, OcrInfo, Unit
from truthbase.records import IndexedDocument, IndexEmbedder
from truthbase.store import SQLiteStore
from truthbase.store.sqlite import SCHEMA_VERSION

EMBEDDER = IndexEmbedder("m", 4)
INFO = OcrInfo(
    engine="tesseract 5.5.4", languages="eng+deu", dpi=300.0, mean_confidence=93.5, words=2,
    rotation=90,
)  # fmt: skip


def _indexed(sha: str, units: list[Unit]) -> IndexedDocument:
    document = ExtractedDocument(
        sha256=sha, title=sha, path=f"/{sha}.pdf", kind="pdf", units=units, extractor_version="t"
    )
    return IndexedDocument(
        document=document, chunks=[], vectors=np.zeros((0, 4), np.float32), embedder=EMBEDDER
    )


def _units() -> list[Unit]:
    box = (1.0, 2.0, 3.0, 4.0)
    return [
        Unit(index=0, text="ab", boxes=[box, box]),
        Unit(index=1, text="cd", boxes=[box, box], text_source="ocr", ocr=INFO),
        Unit(index=2, text="ef", boxes=[None, None], href="s.xhtml", text_source="epub"),
    ]


def test_text_source_and_ocr_round_trip(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "t.sqlite")
    try:
        store.add_document(_indexed("a", _units()))
        read = [store.unit("a", i) for i in range(3)]
        assert [u.text_source for u in read if u] == ["pdf", "ocr", "epub"]
        assert [u.ocr for u in read if u] == [None, INFO, None]
    finally:
        store.close()


def test_a_version_9_index_gains_the_columns_and_reads_old_units_as_pdf(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    SQLiteStore(path).close()
    db = sqlite3.connect(path)
    # the units table as version 9 had it, with one PDF page and one EPUB section in it
    db.executescript(
        "DROP TABLE units; CREATE TABLE units (doc_id TEXT NOT NULL REFERENCES documents(id) "
        "ON DELETE CASCADE, idx INTEGER NOT NULL, label TEXT, href TEXT, text TEXT NOT NULL, "
        "boxes BLOB, geometry TEXT, html TEXT, dom_map TEXT, language TEXT, "
        "PRIMARY KEY (doc_id, idx));"
        "INSERT INTO documents(id, title, path, kind, unit_count, ingested_at, "
        "extractor_version, report) VALUES ('old', 'Old', '/old.pdf', 'pdf', 2, '', 't', '{}');"
        " INSERT INTO units(doc_id, idx, text) VALUES ('old', 0, 'page');"
        "INSERT INTO units(doc_id, idx, href, text) VALUES ('old', 1, 's.xhtml', 'section');"
        "UPDATE meta SET value = '9' WHERE key = 'schema_version';"
    )
    db.close()
    store = SQLiteStore(path)
    try:
        old_page, old_section = store.unit("old", 0), store.unit("old", 1)
        assert old_page is not None and old_page.text_source == "pdf" and old_page.ocr is None
        assert old_section is not None and old_section.text_source == "epub"
        store.add_document(_indexed("new", _units()))
        new = store.unit("new", 1)
        assert new is not None and new.ocr == INFO
    finally:
        store.close()
    db = sqlite3.connect(path)
    version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    db.close()
    assert int(version) == SCHEMA_VERSION == 22
