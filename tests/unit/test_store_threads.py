"""The SQLite store's connection per thread: in WAL mode a read on one thread does not wait for
another thread's open write transaction (one shared connection under one lock made it wait), and
writes from many threads stay serialized and each lands once."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from truthbase.store import SQLiteStore


def _hold_write(store: SQLiteStore, held: threading.Event, release: threading.Event) -> None:
    db = store._db  # the test holds a write transaction open as a slow ingest would
    with db.transaction() as conn:
        conn.execute(
            "INSERT INTO answers(question, answer, created_at) VALUES ('held', '{}', 'now')"
        )
        held.set()
        release.wait(10)


def test_a_read_does_not_wait_for_another_threads_write(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "t.sqlite")
    store.add_answer("before", {"text": "a"})
    held, release = threading.Event(), threading.Event()
    writer = threading.Thread(target=_hold_write, args=(store, held, release))
    writer.start()
    try:
        assert held.wait(5)
        read: list[list[str]] = []
        reader = threading.Thread(target=lambda: read.append([a.question for a in store.answers()]))
        started = time.perf_counter()
        reader.start()
        reader.join(2)
        waited = time.perf_counter() - started
        assert read, "the read waited for the other thread's write transaction"
        # WAL: the reader sees the last commit, not the open transaction's row
        assert read == [["before"]] and waited < 2
    finally:
        release.set()
        writer.join()
    assert [a.question for a in store.answers()] == ["before", "held"]
    store.close()


def test_writes_from_many_threads_are_serialized_and_each_lands_once(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "t.sqlite")
    held, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=_hold_write, args=(store, held, release))
    holder.start()
    assert held.wait(5)
    ids: list[int] = []
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            for i in range(10):
                ids.append(store.add_answer(f"q{n}-{i}", {"text": str(i)}))
        except BaseException as exc:  # reported below, not lost in the thread
            errors.append(exc)

    writers = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for t in writers:
        t.start()
    time.sleep(0.3)
    assert ids == [], "a write went ahead while another thread's write transaction was open"
    release.set()
    holder.join()
    for t in writers:
        t.join(30)
    assert not errors
    stored = store.answers()
    assert len(ids) == len(set(ids)) == 80
    assert sorted(a.question for a in stored if a.question != "held") == sorted(
        f"q{n}-{i}" for n in range(8) for i in range(10)
    )
    store.close()


def test_each_thread_reads_on_its_own_connection_and_close_closes_them_all(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path / "t.sqlite")
    seen: list[object] = []
    threads = [threading.Thread(target=lambda: seen.append(store._db.conn)) for _ in range(3)]
    for t in threads:
        t.start()
        t.join()
    assert len({id(c) for c in seen}) == 3 and all(c is not store._db.conn for c in seen)
    store.close()
    with pytest.raises(Exception, match="closed"):
        store.list_documents()
