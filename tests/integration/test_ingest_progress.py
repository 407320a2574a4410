"""`truthbase ingest` tells how far it is and picks up where it stopped (issue 28): one line per
document when the output is not a terminal, JSON lines with ``--json-progress``; a folder
ingest interrupted (an exception, Ctrl-C, SIGKILL) mid-document leaves nothing of that
document, and started again goes on with the documents not stored yet."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.helpers.canaries import text_pdf
from truthbase.cli import cli
from truthbase.embed import Vectors
from truthbase.embed._fake import HashingEmbedder
from truthbase.ingest import IngestOptions, ingest_paths
from truthbase.store import SQLiteStore

REPO = Path(__file__).resolve().parents[2]

_TOPICS = (
    "The pumping station in the northern district replaced two valves in March.",
    "A ledger of the harbour authority lists forty ships that docked in the winter of 1911.",
    "The orchard keeps twelve varieties of apple; the oldest tree was planted in 1870.",
)
#: Tables that hold a document's rows (besides ``documents``), checked for leftovers.
_TABLES = ("units", "chunks", "windows", "chunk_tokens", "document_screens")


def _folder(root: Path, *, pages: Sequence[int] = (1, 3, 2), broken: bool = True) -> Path:
    folder = root / "docs"
    folder.mkdir()
    for i, (topic, n) in enumerate(zip(_TOPICS, pages, strict=True)):
        paragraphs = [f"{topic} Paragraph {k} of document {i} repeats it." for k in range(8 * n)]
        (folder / f"doc{i}.pdf").write_bytes(text_pdf(paragraphs, title=f"Document {i}"))
    if broken:
        (folder / "broken.pdf").write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog >> garbage")
    return folder


def _documents(db: Path) -> dict[str, dict[str, Any]]:
    """Per file name: pages and chunks as `truthbase docs --json` lists them."""
    result = CliRunner().invoke(cli, ["--db", str(db), "docs", "--json"], catch_exceptions=False)
    return {Path(d["path"]).name: d for d in json.loads(result.output)}


def _rows(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as connection:
        counts = {t: connection.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in _TABLES}
        counts["documents"] = connection.execute("SELECT count(*) FROM documents").fetchone()[0]
        orphans = connection.execute(
            "SELECT count(*) FROM chunks WHERE doc_id NOT IN (SELECT id FROM documents)"
        ).fetchone()[0]
    assert orphans == 0
    return counts


def test_one_line_per_document_when_the_output_is_not_a_terminal(tmp_path: Path) -> None:
    folder, db = _folder(tmp_path), tmp_path / "t.sqlite"
    result = CliRunner().invoke(cli, ["--db", str(db), "ingest", str(folder)])
    assert result.exit_code == 1, result.output  # the broken file
    lines = result.output.splitlines()
    stored = _documents(db)
    pages = sum(d["pages"] for d in stored.values())
    assert lines[0] == f"4 files, 4 to ingest ({pages} pages)"
    done = {}
    for line in lines[1:-1]:
        match = re.fullmatch(r"ingested (\S+): (\d+) pages, (\d+) chunks, \d+\.\d s", line)
        if match is not None:
            done[Path(match[1]).name] = (int(match[2]), int(match[3]))
        else:
            assert re.fullmatch(r"failed \S+broken\.pdf: corrupt: .+", line), line
    assert done == {name: (d["pages"], d["chunks"]) for name, d in stored.items()}
    assert len(lines) == 1 + 4 + 1 and lines[-1] == "3 ingested, 0 unchanged, 1 failed"

    again = CliRunner().invoke(cli, ["--db", str(db), "ingest", str(folder)])
    assert again.output.splitlines()[0] == "4 files, 1 to ingest (0 pages)"
    assert sum(line.startswith("unchanged ") for line in again.output.splitlines()) == 3


def test_json_progress_is_one_record_per_line(tmp_path: Path) -> None:
    folder, db = _folder(tmp_path), tmp_path / "t.sqlite"
    result = CliRunner().invoke(cli, ["--db", str(db), "ingest", "--json-progress", str(folder)])
    assert result.exit_code == 1
    records = [json.loads(line) for line in result.output.splitlines()]
    stored = _documents(db)
    start, *documents, summary = records
    assert start == {
        "event": "start",
        "files": 4,
        "todo": 4,
        "pages_total": sum(d["pages"] for d in stored.values()),
    }
    assert summary == {"event": "summary", "ingested": 3, "unchanged": 0, "failed": 1}
    by_name = {Path(r["file"]).name: r for r in documents}
    assert {r["event"] for r in documents} == {"document"} and len(by_name) == 4
    broken = by_name.pop("broken.pdf")
    assert broken["status"] == "failed" and broken["reason"] == "corrupt" and broken["message"]
    for name, record in by_name.items():
        assert record["status"] == "ingested" and record["doc_id"] == stored[name]["id"]
        want = stored[name]
        assert (record["pages"], record["chunks"]) == (want["pages"], want["chunks"])
        assert record["seconds"] >= 0


class Interrupting(HashingEmbedder):
    """A hashing embedder that raises KeyboardInterrupt (Ctrl-C) while embedding ``marker``."""

    def __init__(self, marker: str | None) -> None:
        super().__init__(dim=16)
        self.marker = marker

    def embed(self, texts: Sequence[str]) -> Vectors:
        if self.marker is not None and any(self.marker in text for text in texts):
            raise KeyboardInterrupt
        return super().embed(texts)


def test_an_interrupted_ingest_leaves_no_partial_document_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _folder(tmp_path, broken=False)
    whole = tmp_path / "whole.sqlite"
    store = SQLiteStore(whole)
    ingest_paths([folder], store, Interrupting(None), IngestOptions())
    store.close()

    db = tmp_path / "t.sqlite"
    store = SQLiteStore(db)
    try:
        # Ctrl-C while document 1 is embedded: document 0 is stored, nothing of document 1
        with pytest.raises(KeyboardInterrupt):
            ingest_paths([folder], store, Interrupting("document 1"), IngestOptions())
        first = _rows(db)
        assert first["documents"] == 1

        # Ctrl-C inside the store's write of document 1, after some of its rows went in
        from truthbase.store.sqlite import documents

        real, calls = documents.chunk_terms, []

        def failing(document: Any, chunk: Any) -> Any:
            calls.append(document.title)
            if document.title == "Document 1" and calls.count("Document 1") == 3:
                raise KeyboardInterrupt
            return real(document, chunk)

        monkeypatch.setattr(documents, "chunk_terms", failing)
        with pytest.raises(KeyboardInterrupt):
            ingest_paths([folder], store, Interrupting(None), IngestOptions())
        assert calls.count("Document 1") == 3  # it was mid-write
        assert _rows(db) == first
        monkeypatch.setattr(documents, "chunk_terms", real)

        summary = ingest_paths([folder], store, Interrupting(None), IngestOptions())
    finally:
        store.close()
    assert [(o.path.name, o.status) for o in summary.outcomes] == [
        ("doc0.pdf", "unchanged"),
        ("doc1.pdf", "ingested"),
        ("doc2.pdf", "ingested"),
    ]
    assert _rows(db) == _rows(whole)


@pytest.mark.timeout(600)
def test_a_killed_cli_ingest_started_again_goes_on(tmp_path: Path) -> None:
    """SIGKILL while the second document is being embedded (its first record is out): the
    index holds the first document whole and nothing of the second; the next run ingests the
    two that are left and reports the first unchanged."""
    folder, db = _folder(tmp_path, pages=(1, 30, 1), broken=False), tmp_path / "t.sqlite"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "truthbase.cli",
            "--db",
            str(db),
            "ingest",
            "--json-progress",
            str(folder),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:
            record = json.loads(line)
            if record["event"] == "document":
                assert Path(record["file"]).name == "doc0.pdf" and record["status"] == "ingested"
                os.kill(process.pid, signal.SIGKILL)
                break
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=60)
        if process.stdout is not None:
            process.stdout.close()  # else its pipe is closed by the GC, in whatever test runs then
    assert process.returncode == -signal.SIGKILL
    assert list(_documents(db)) == ["doc0.pdf"]
    rows = _rows(db)
    assert rows["documents"] == 1

    result = CliRunner().invoke(cli, ["--db", str(db), "ingest", "--json-progress", str(folder)])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.output.splitlines()]
    assert records[0]["todo"] == 2
    statuses = {Path(r["file"]).name: r["status"] for r in records if r["event"] == "document"}
    assert statuses == {"doc0.pdf": "unchanged", "doc1.pdf": "ingested", "doc2.pdf": "ingested"}
    assert sorted(_documents(db)) == ["doc0.pdf", "doc1.pdf", "doc2.pdf"]
