"""A value built in the background for one key, one build at a time (store.background): the
rules the full-text postings and the dense graph of the SQLite store share."""

from __future__ import annotations

import threading

import pytest

from truthbase.store.background import BackgroundValue


def test_a_value_serves_its_key_and_is_dropped_when_another_keys_build_starts() -> None:
    value: BackgroundValue[int, str] = BackgroundValue("t", "failed")
    assert value.get(1, lambda: "one") is None  # started, not waited for
    thread = value.running()
    assert thread is not None
    thread.join()
    assert value.get(1, lambda: "again") == "one" and value.builds == 1
    assert value.get(2, lambda: "two", wait=True) == "two" and value.builds == 2
    assert value.ready(2) == "two" and value.ready(3) is None  # asking drops nothing
    release = threading.Event()
    assert value.get(3, lambda: "three" if release.wait(10) else None) is None
    assert not value.has_value()  # key 3's build started: key 2's value is dropped
    release.set()
    assert value.get(3, lambda: None, wait=True) == "three"


def test_one_build_at_a_time_the_older_first() -> None:
    value: BackgroundValue[int, str] = BackgroundValue("t", "failed")
    release, running = threading.Event(), threading.Event()
    started: list[int] = []

    def slow() -> str:
        started.append(1)
        running.set()
        release.wait(10)
        return "one"

    assert value.get(1, slow) is None
    assert running.wait(10)
    assert value.get(2, lambda: started.append(2) or "two") is None  # key 1's build still runs
    assert value.get(1, slow) is None  # the same key: not started twice
    assert started == [1]
    release.set()
    # Waiting for key 2 joins key 1's build, then runs key 2's.
    assert value.get(2, lambda: started.append(2) or "two", wait=True) == "two"
    assert started == [1, 2] and value.builds == 2


def test_a_failed_build_is_not_retried_for_its_key(caplog: pytest.LogCaptureFixture) -> None:
    value: BackgroundValue[int, str] = BackgroundValue("t", "the build failed")
    calls: list[int] = []

    def fail() -> str:
        calls.append(1)
        raise MemoryError("simulated")

    assert value.get(1, fail, wait=True) is None
    assert "the build failed" in caplog.text and value.failed(1)
    for _ in range(5):
        assert value.get(1, fail, wait=True) is None
    assert len(calls) == 1 and value.builds == 0
    assert value.get(2, lambda: "two", wait=True) == "two"  # a new key tries again


def test_a_stale_build_keeps_nothing_and_is_not_a_failure() -> None:
    value: BackgroundValue[int, str] = BackgroundValue("t", "failed")
    assert value.get(1, lambda: None, wait=True) is None
    assert not value.failed(1) and value.builds == 0 and not value.has_value()
    assert value.get(1, lambda: "one", wait=True) == "one"  # asked again, built
