"""Faults survived: the LLM failing every way a provider fails (a scripted OpenAI-compatible
server, tests/helpers/transcripts.py), a SIGKILL in the middle of an ingest (SQLite and
PostgreSQL), PostgreSQL restarted under a search, and a full disk under the SQLite index.

Each answer must complete (a ``done`` event, through the fallback chain where the model failed)
and show nothing unsupported as supported: every ``supported`` citation's quote is on its page
at its span (re-checked here), and a refusal or the extractive answerer where the model gave
nothing usable.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.corpus import ROBUSTNESS
from tests.helpers.transcripts import Reply, Scripted, completion, scripted_server, stream_piece
from truthbase.answer import (
    Answer,
    DoneEvent,
    ErrorEvent,
    Event,
    ExtractiveAnswerer,
    LLMAnswerer,
    TokenEvent,
    answer_question,
    ask,
    record_answer,
)
from truthbase.config import RetrievalSettings
from truthbase.embed import Embedder
from truthbase.ingest import IngestOptions, ingest_paths
from truthbase.llm import with_fallbacks
from truthbase.store import SQLiteStore, open_store
from truthbase.text.matching import quote_in

REPO = Path(__file__).resolve().parents[2]
QUESTION = "What are the six Functions of the CSF 2.0 Core?"
#: Small text PDFs (no OCR): the ingest to kill takes seconds, not minutes.
SMALL_PDFS = (
    "pdfplumber-scotus-transcript-p1.pdf",
    "pdfminer-pagelabels.pdf",
    "pdfjs-copy_paste_ligatures.pdf",
    "pdfminer-jo.pdf",
)
K = 3


@pytest.fixture
def server() -> Iterator[Scripted]:
    with scripted_server() as scripted:
        yield scripted


def _answer(
    store: SQLiteStore, embedder: Embedder, server: Scripted, timeout: float = 2.0
) -> tuple[list[Event], Answer]:
    """One answer through the pipeline with the scripted model first, the extractive last."""
    answerer = LLMAnswerer(
        with_fallbacks([server.model("scripted")]), ExtractiveAnswerer(embedder), timeout=timeout
    )
    events = list(
        answer_question(store, embedder, QUESTION, RetrievalSettings(), answerer=answerer, k=K)
    )
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert not errors, errors
    done = events[-1]
    assert isinstance(done, DoneEvent), [type(e).__name__ for e in events]
    _assert_nothing_unsupported_is_supported(store, done.answer)
    return events, done.answer


def _assert_nothing_unsupported_is_supported(store: SQLiteStore, answer: Answer) -> None:
    numbers = {s.n for s in answer.sources}
    for c in answer.citations:
        assert c.n in numbers
        if c.supported or c.verified:
            unit = store.unit(c.doc_id, c.unit)
            assert unit is not None and c.quote, c
            assert quote_in(c.quote, unit.text[c.start : c.end]), c
    if answer.refused:
        assert not any(c.supported for c in answer.citations)


def _fell_back(answer: Answer) -> None:
    assert answer.answerer == "extractive", answer.info
    assert answer.info["fell_back_to"] == "extractive"
    assert [f["model"] for f in answer.info["failed"]] == ["scripted"]
    assert not answer.refused and answer.citations
    assert all(c.supported for c in answer.citations)


# -- the LLM --------------------------------------------------------------------------------------


def test_a_model_that_times_out_falls_back(
    seed_store: SQLiteStore, embedder: Embedder, server: Scripted
) -> None:
    server.say(Reply(body=completion("late"), delay_s=1.5))
    _, answer = _answer(seed_store, embedder, server, timeout=0.4)
    _fell_back(answer)
    assert answer.info["failed"][0]["timed_out"] is True


def test_a_model_that_returns_500_falls_back(
    seed_store: SQLiteStore, embedder: Embedder, server: Scripted
) -> None:
    server.say(Reply(500, {"error": {"message": "internal"}}))
    _, answer = _answer(seed_store, embedder, server)
    _fell_back(answer)


def test_a_model_that_returns_garbage_falls_back(
    seed_store: SQLiteStore, embedder: Embedder, server: Scripted
) -> None:
    server.say(Reply(200, b"<html>\x00\xff not a completion</html>"))
    _, answer = _answer(seed_store, embedder, server)
    _fell_back(answer)


def test_a_slow_stream_completes_with_the_model(
    seed_store: SQLiteStore, embedder: Embedder, server: Scripted
) -> None:
    text = ["The Functions ", "are GOVERN, IDENTIFY, ", "PROTECT, DETECT, ", "RESPOND, RECOVER."]
    # two pieces, a pause shorter than the timeout, then the rest and the end of the reply
    tail = "".join(stream_piece(p) for p in text[2:])
    server.say(Reply(pieces=text[:2], pause_s=0.5, tail=tail))
    events, answer = _answer(seed_store, embedder, server, timeout=2.0)
    assert answer.answerer == "scripted" and answer.info["failed"] == []
    assert "".join(e.text for e in events if isinstance(e, TokenEvent)) == "".join(text)


def test_a_stream_that_stalls_after_its_first_tokens_falls_back(
    seed_store: SQLiteStore, embedder: Embedder, server: Scripted
) -> None:
    server.say(Reply(pieces=["The Functions are GOVERN [1], "], pause_s=2.0, tail=None))
    _, answer = _answer(seed_store, embedder, server, timeout=0.5)
    _fell_back(answer)
    assert answer.info["failed"][0]["timed_out"] is True
    assert "GOVERN [1], " not in answer.text


def test_a_truncated_stream_falls_back(
    seed_store: SQLiteStore, embedder: Embedder, server: Scripted
) -> None:
    # the connection ends without a finish_reason and without [DONE]
    server.say(Reply(pieces=["The Functions are GOVERN, IDENTIFY and"], done=False))
    _, answer = _answer(seed_store, embedder, server)
    _fell_back(answer)


def test_a_stream_that_stops_mid_marker_falls_back(
    seed_store: SQLiteStore, embedder: Embedder, server: Scripted
) -> None:
    server.say(Reply(pieces=["The Functions are GOVERN and RECOVER [", "1"], done=False))
    _, answer = _answer(seed_store, embedder, server)
    _fell_back(answer)
    assert "[1" not in answer.text.replace("[1]", "")


# -- SIGKILL during ingest ------------------------------------------------------------------------

#: Rows that must belong to a document (or to a chunk of one), as (table, orphan query).
ORPHANS = {
    "units": "SELECT count(*) FROM units WHERE doc_id NOT IN (SELECT id FROM documents)",
    "chunks": "SELECT count(*) FROM chunks WHERE doc_id NOT IN (SELECT id FROM documents)",
    "windows": "SELECT count(*) FROM windows WHERE chunk_id NOT IN (SELECT id FROM chunks)",
    "chunk_tokens": "SELECT count(*) FROM chunk_tokens WHERE chunk_id NOT IN "
    "(SELECT id FROM chunks)",
    "document_screens": "SELECT count(*) FROM document_screens WHERE doc_id NOT IN "
    "(SELECT id FROM documents)",
    "document_holders": "SELECT count(*) FROM document_holders WHERE doc_id NOT IN "
    "(SELECT id FROM documents)",
    "documents without chunks": "SELECT count(*) FROM documents WHERE id NOT IN "
    "(SELECT doc_id FROM chunks)",
    "jobs left running": "SELECT count(*) FROM jobs WHERE state = 'running'",
}
#: Rows written twice (a document's chunks ingested again beside the first copy; documents and
#: units cannot be: their keys are the file's sha256 and the page).
TWICE = {
    "chunks": 'SELECT count(*) FROM (SELECT doc_id, unit, start, "end", kind FROM chunks '
    "GROUP BY 1, 2, 3, 4, 5 HAVING count(*) > 1) AS twice",
    "windows": 'SELECT count(*) FROM (SELECT chunk_id, start, "end" FROM windows '
    "GROUP BY 1, 2, 3 HAVING count(*) > 1) AS twice",
}


def _query(backend: str, location: str, sql: str) -> Any:
    if backend == "sqlite":
        db = sqlite3.connect(f"file:{location}?mode=ro", uri=True, timeout=30)
        try:
            return db.execute(sql).fetchall()
        finally:
            db.close()
    import psycopg

    with psycopg.connect(location, autocommit=True, connect_timeout=10) as conn:
        conn.execute("SET search_path TO truthbase, public")
        return conn.execute(sql).fetchall()


def _documents(backend: str, location: str) -> int:
    try:
        return int(_query(backend, location, "SELECT count(*) FROM documents")[0][0])
    except Exception:  # not created yet
        return 0


@pytest.mark.corpus
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_sigkill_during_ingest_leaves_no_orphans_and_a_reingest_adds_each_document_once(
    backend: str, tmp_path: Path, embedder: Embedder, request: pytest.FixtureRequest
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in SMALL_PDFS:
        shutil.copy(ROBUSTNESS / name, folder / name)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "TRUTHBASE_OCR__ENABLED": "false"}
    if backend == "sqlite":
        location = str(tmp_path / "index.sqlite")
        args = ["--db", location]
    else:
        location = request.getfixturevalue("pg_url")
        env["TRUTHBASE_DATABASE_URL"] = location
        args = []
    command = [sys.executable, "-m", "truthbase.cli", *args, "ingest", str(folder)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    try:
        # Killed once the first document is in: the next ones are being extracted, embedded
        # or written when the signal lands.
        while _documents(backend, location) < 1:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            assert time.monotonic() < deadline, "the ingest wrote no document in 120 s"
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
    finally:
        process.kill()
        process.wait(30)
    if process.stderr:
        process.stderr.close()
    killed_with = _documents(backend, location)
    assert 1 <= killed_with < len(SMALL_PDFS), "the ingest finished before the kill"
    for what, sql in ORPHANS.items():
        assert _query(backend, location, sql)[0][0] == 0, what

    store = open_store(Path(location)) if backend == "sqlite" else _pg(location)
    try:
        summary = ingest_paths([folder], store, embedder, IngestOptions())
        assert not summary.failed, [(o.path, o.message) for o in summary.failed]
        assert summary.count("unchanged") == killed_with
        assert summary.count("ingested") == len(SMALL_PDFS) - killed_with
        documents = store.list_documents()
        assert len(documents) == len({d.id for d in documents}) == len(SMALL_PDFS)
        counts = store.counts()
    finally:
        store.close()
    for what, sql in ORPHANS.items():
        assert _query(backend, location, sql)[0][0] == 0, what
    assert counts["documents"] == len(SMALL_PDFS)
    for what, sql in TWICE.items():
        assert _query(backend, location, sql)[0][0] == 0, what


def _pg(url: str) -> Any:
    from truthbase.store.postgres import PostgresStore

    return PostgresStore(url)


# -- a full disk under the SQLite index -----------------------------------------------------------


@contextlib.contextmanager
def _small_disk(folder: Path) -> Iterator[bool]:
    """A 4 MiB tmpfs at ``folder`` (True) when this process may mount one (root, CAP_SYS_ADMIN),
    else nothing mounted (False: the caller limits the file size of its subprocess instead)."""
    folder.mkdir()
    mounted = (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)],
            capture_output=True,
            check=False,
        ).returncode
        == 0
        if shutil.which("mount") and os.geteuid() == 0
        else False
    )
    try:
        yield mounted
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)


#: The child of the RLIMIT_FSIZE fallback: what writes temporary files on first use (the language
#: identifier unpacks its model) is loaded first, then no file may grow past 64 KiB (a write past
#: it fails with EFBIG, SIGXFSZ ignored), then the CLI runs as `python -m truthbase.cli` would.
_LIMITED_CLI = """
import resource, runpy, signal, sys
from truthbase.text.language import detect_document
detect_document(["a few words of English to load the language identifier"])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))
sys.argv = ["truthbase", *sys.argv[1:]]
runpy.run_module("truthbase.cli", run_name="__main__")
"""


@pytest.mark.corpus
def test_a_full_disk_is_a_clear_error_and_the_index_still_opens_and_verifies(
    tmp_path: Path, embedder: Embedder
) -> None:
    with _small_disk(tmp_path / "disk") as mounted:
        db = tmp_path / "disk" / "index.sqlite"
        store = SQLiteStore(db)
        try:
            summary = ingest_paths(
                [ROBUSTNESS / "pdfminer-jo.pdf"], store, embedder, IngestOptions()
            )
            assert summary.count("ingested") == 1
            first = store.chunks([1])[0].text
            answer = ask(store, embedder, first[:200], k=3)
            record_answer(store, answer)
        finally:
            store.close()
        before = db.stat().st_size
        filler = tmp_path / "disk" / "filler"
        if mounted:  # the disk full but for 40 KiB
            free = shutil.disk_usage(filler.parent).free
            filler.write_bytes(b"\0" * max(0, free - 40 * 1024))
        env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "TRUTHBASE_OCR__ENABLED": "false"}
        pdf = ROBUSTNESS / "pdfplumber-scotus-transcript-p1.pdf"
        runner = ["-m", "truthbase.cli"] if mounted else ["-c", _LIMITED_CLI]
        result = subprocess.run(
            [sys.executable, *runner, "--db", str(db), "ingest", str(pdf)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        how = "tmpfs" if mounted else "RLIMIT_FSIZE"
        print(f"\n{how}: exit {result.returncode}: {result.stderr.strip()[-300:]}")
        assert result.returncode == 2, result.stderr[-2000:]
        assert "disk is full or a file-size limit was reached" in result.stderr
        assert "Traceback" not in result.stderr
        filler.unlink(missing_ok=True)
        # the index opens, holds what it held, and its answers verify
        assert db.stat().st_size >= before
        check = sqlite3.connect(db)
        try:
            assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finally:
            check.close()
        store = SQLiteStore(db)
        try:
            assert [d.title for d in store.list_documents()] and len(store.list_documents()) == 1
            assert len(store.answers()) == 1
        finally:
            store.close()
        verified = subprocess.run(
            [sys.executable, "-m", "truthbase.cli", "--db", str(db), "verify"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert verified.returncode == 0, verified.stdout + verified.stderr


# -- PostgreSQL restarted under a search ----------------------------------------------------------


def _pg_ctl(server: Any, *args: str) -> None:
    server._run([str(server.bin / "pg_ctl"), "-D", str(server.data), *args], timeout=90)


@pytest.mark.corpus
def test_postgres_restarted_during_searches_is_a_clear_error_then_served_again(
    embedder: Embedder,
) -> None:
    from tests.helpers.pg_server import PgServer
    from truthbase.errors import Unavailable
    from truthbase.retrieve.hybrid import search
    from truthbase.store import StoreError
    from truthbase.store.postgres import PostgresStore

    # its own server: the run's shared one stays up for the other tests
    with PgServer() as server:
        store = PostgresStore(server.url, connect_timeout_s=3, statement_timeout_s=10)
        try:
            ingest_paths([ROBUSTNESS / "pdfminer-jo.pdf"], store, embedder, IngestOptions())
            query = "Jo"
            assert search(store, embedder, query, RetrievalSettings(), k=3).hits
            outcomes: list[str] = []
            slowest = 0.0
            stop = threading.Event()

            def searching() -> None:
                nonlocal slowest
                while not stop.is_set():
                    started = time.monotonic()
                    try:
                        search(store, embedder, query, RetrievalSettings(), k=3)
                        outcomes.append("ok")
                    except StoreError as exc:
                        assert isinstance(exc, Unavailable), exc  # 503 in the server
                        assert "database" in str(exc)
                        outcomes.append("error")
                    slowest = max(slowest, time.monotonic() - started)

            threads = [threading.Thread(target=searching) for _ in range(3)]
            for t in threads:
                t.start()
            time.sleep(0.5)
            # the restart: backends terminated under their queries, a second without a server
            _pg_ctl(server, "-m", "fast", "-w", "stop")
            time.sleep(1.0)
            log = str(server.root / "server.log")
            _pg_ctl(server, "-l", log, "-o", _options(server), "-w", "-t", "60", "start")
            time.sleep(0.5)
            stop.set()
            for t in threads:
                t.join(30)
                assert not t.is_alive(), "a search hung across the restart"
            # a bug (any other exception) would have ended a thread early: each kept going
            assert "ok" in outcomes and slowest < 15, (outcomes, slowest)
            # served again right after the restart: dead idle connections were replaced
            assert search(store, embedder, query, RetrievalSettings(), k=3).hits
        finally:
            store.close()


def _options(server: Any) -> str:
    return (
        f"-c listen_addresses=127.0.0.1 -p {server.port} -k {server.root} "
        "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    )
