"""One way through ingest (issue 27): the CLI, the Python API and the job worker apply the same
settings and the same screen. Both tests fail on the code before `truthbase.ingest.prepare`:
the worker extracted without the OCR settings, and `truthbase ingest` and `Library.ingest`
never ran the prompt-injection screen. Everything runs through the real doors (CliRunner,
:class:`truthbase.Library`, `truthbase worker`) on real SQLite files."""

from __future__ import annotations

import hashlib
import sqlite3
import time
from pathlib import Path

from click.testing import CliRunner

from tests.helpers.canary_docs import write_canaries
from tests.helpers.corpus import ROBUSTNESS
from tests.helpers.ocr import tesseract_missing
from truthbase import Library
from truthbase.cli import cli
from truthbase.jobs import JobDraft, UploadLimits
from truthbase.store import SQLiteStore
from truthbase.store.sqlite import CHUNK_TEXT

SCAN = ROBUSTNESS / "ocrmypdf-c02-22.pdf"  # one scanned page, no text layer (MANIFEST.md)


def _queue(db: Path, data_dir: Path, source: Path) -> int:
    """An upload of ``source`` queued as the server queues one; the job's id."""
    data = source.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    relative = f"uploads/{sha[:2]}/{sha}{source.suffix}"
    (data_dir / relative).parent.mkdir(parents=True, exist_ok=True)
    (data_dir / relative).write_bytes(data)
    store = SQLiteStore(db)
    try:
        size = len(data)
        draft = JobDraft(owner=None, filename=source.name, file=relative, sha256=sha, size=size)
        return store.add_job(draft, time.time(), UploadLimits()).id
    finally:
        store.close()


def _work(db: Path, data_dir: Path, **env: str) -> None:
    """`truthbase worker --exit-when-idle`: its settings from the environment, as deployed."""
    result = CliRunner().invoke(
        cli,
        ["--db", str(db), "worker", "--exit-when-idle"],
        env={"TRUTHBASE_LIBRARY__DATA_DIR": str(data_dir), **env},
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output


def test_a_job_ingest_honours_the_ocr_settings(tmp_path: Path) -> None:
    """OCR off reaches the worker's extraction: the scan fails as OCR-off says; on (the
    default), it is read (or, where Tesseract is missing, fails for that reason)."""
    data_dir = tmp_path / "data"
    off, on = tmp_path / "off.sqlite", tmp_path / "on.sqlite"
    off_job, on_job = _queue(off, data_dir, SCAN), _queue(on, data_dir, SCAN)
    _work(off, data_dir, TRUTHBASE_OCR__ENABLED="false")
    _work(on, data_dir)
    store = SQLiteStore(off)
    try:
        job = store.job(off_job)
        assert job is not None and job.state == "failed" and job.reason == "no_text", job
        assert job.message is not None and "OCR is off" in job.message, job.message
        assert store.counts()["documents"] == 0
    finally:
        store.close()
    store = SQLiteStore(on)
    try:
        job = store.job(on_job)
        assert job is not None
        if tesseract_missing() is not None:
            assert job.state == "failed" and job.reason == "no_text", job
            assert job.message is not None and "OCR cannot run" in job.message, job.message
        else:
            assert job.state == "done" and job.doc_id is not None, job
            unit = store.unit(job.doc_id, 0)
            assert unit is not None and "kitchen" in unit.text  # read by OCR
    finally:
        store.close()


def test_every_door_screens_a_document_as_the_worker_does(tmp_path: Path) -> None:
    files = write_canaries(tmp_path / "canaries")
    pdf = next(path for path in files.values() if path.suffix == ".pdf")
    doc_id = hashlib.sha256(pdf.read_bytes()).hexdigest()

    worker_db, data_dir = tmp_path / "worker.sqlite", tmp_path / "data"
    _queue(worker_db, data_dir, pdf)
    _work(worker_db, data_dir)
    cli_db = tmp_path / "cli.sqlite"
    result = CliRunner().invoke(cli, ["--db", str(cli_db), "ingest", str(pdf)])
    assert result.exit_code == 0, result.output
    api_db = tmp_path / "api.sqlite"
    with Library(api_db) as library:
        assert library.ingest([pdf]).count("ingested") == 1

    screens, chunks = {}, {}
    for door, db in (("worker", worker_db), ("cli", cli_db), ("api", api_db)):
        store = SQLiteStore(db)
        try:
            screens[door] = store.document_screen(doc_id)
        finally:
            store.close()
        with sqlite3.connect(db) as connection:
            chunks[door] = connection.execute(
                f'SELECT c.id, c.unit, c.start, c."end", {CHUNK_TEXT}, c.rects, c.vector '
                "FROM chunks c JOIN units u ON u.doc_id = c.doc_id AND u.idx = c.unit "
                "ORDER BY c.id"
            ).fetchall()
    assert screens["worker"] is not None and screens["worker"].flagged, screens
    assert screens["cli"] == screens["worker"]
    assert screens["api"] == screens["worker"]
    assert chunks["worker"] and chunks["cli"] == chunks["worker"] == chunks["api"]
