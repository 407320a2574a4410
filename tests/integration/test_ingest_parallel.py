"""`ingest --workers 2` writes the same index as one process: the same documents and chunks
(spans, text, rects, vectors), a broken file reported and skipped, a repeated file unchanged."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from tests.helpers.canaries import text_pdf
from truthbase.cli import cli
from truthbase.config import Settings
from truthbase.embed import load_embedder
from truthbase.ingest import IngestOptions, ingest_paths
from truthbase.store import SQLiteStore
from truthbase.store.codec import vectors_from_codes
from truthbase.store.sqlite import CHUNK_TEXT

_TOPICS = [
    "The pumping station in the northern district replaced two valves in March.",
    "A ledger of the harbour authority lists forty ships that docked in the winter of 1911.",
    "The orchard keeps twelve varieties of apple; the oldest tree was planted in 1870.",
]


def _folder(root: Path) -> Path:
    folder = root / "docs"
    folder.mkdir()
    for i, topic in enumerate(_TOPICS):
        paragraphs = [f"{topic} Paragraph {k} of document {i} repeats it." for k in range(12)]
        (folder / f"doc{i}.pdf").write_bytes(text_pdf(paragraphs, title=f"Document {i}"))
    (folder / "copy-of-doc0.pdf").write_bytes((folder / "doc0.pdf").read_bytes())
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog >> garbage")
    return folder


def _chunks(db: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as connection:
        return connection.execute(
            f'SELECT c.doc_id, c.unit, c.start, c."end", {CHUNK_TEXT}, c.rects, c.vector '
            "FROM chunks c JOIN units u ON u.doc_id = c.doc_id AND u.idx = c.unit "
            'ORDER BY c.doc_id, c.unit, c.start, c."end"'
        ).fetchall()


def test_two_workers_ingest_the_same_chunks_as_one(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    settings = Settings()
    one, two = tmp_path / "one.sqlite", tmp_path / "two.sqlite"
    store = SQLiteStore(one)
    sequential = ingest_paths(
        [folder], store, load_embedder(settings.embedder), IngestOptions.from_settings(settings)
    )
    store.close()
    # The CLI's --workers 2 runs ingest_paths_parallel (two spawned worker processes).
    result = CliRunner().invoke(
        cli, ["--db", str(two), "ingest", "--workers", "2", str(folder)], catch_exceptions=False
    )
    assert result.exit_code == 1  # the broken file
    assert "3 ingested, 1 unchanged, 1 failed" in result.output
    assert "corrupt" in result.output
    assert {o.path.name: o.status for o in sequential.outcomes}["broken.pdf"] == "failed"
    a, b = _chunks(one), _chunks(two)
    assert len(a) == len(b) > 3
    for x, y in zip(a, b, strict=True):
        assert x[:6] == y[:6]
        # int8 codes with a float32 scale a row (schema 21), decoded to compare.
        va, vb = vectors_from_codes([x[6], y[6]], len(x[6]) - 4)
        assert np.allclose(va, vb, atol=1e-2)
