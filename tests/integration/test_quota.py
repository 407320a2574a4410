"""Quotas on both backends: one atomic admission call (``Store.try_admit``), all or nothing,
across connections and processes, and the 429 of POST /api/chat before any model call."""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.helpers.pg_server import shared_server
from truthbase.config import QuotaSettings, ServerSettings, Settings
from truthbase.quota import Admission, QuotaLimits, retry_after_header
from truthbase.server import create_app
from truthbase.store import SQLiteStore, Store
from truthbase.store.postgres import PostgresStore

NOW = 1_750_000_000.0  # a fixed instant: 2025-06-15T15:06:40Z, 40 s into its minute


class Admitters:
    """Independent stores (separate connections) over one backend's storage."""

    def __init__(self, kind: str, tmp_path: Path) -> None:
        self.kind = kind
        self.tmp_path = tmp_path
        self._server = shared_server() if kind == "postgres" else None
        self.location = (
            self._server.create_database() if self._server else str(tmp_path / "quota.sqlite")
        )
        self._opened: list[Store] = []

    def open(self) -> Store:
        store: Store
        if self.kind == "sqlite":
            store = SQLiteStore(Path(self.location))
        else:
            store = PostgresStore(self.location, pool_size=2)
        self._opened.append(store)
        return store

    def settings(self) -> Settings:
        quota = QuotaSettings(global_per_day=5, client_header="X-Client")
        # Room for all 20 chats at once: the quota, not the process's chat slots, refuses.
        server = ServerSettings(max_concurrent_chats=20, allowed_hosts=["t"])
        if self.kind == "sqlite":
            return Settings(db=Path(self.location), quota=quota, server=server)
        return Settings(
            db=self.tmp_path / "unused.sqlite",
            database_url=self.location,
            quota=quota,
            server=server,
        )

    def close(self) -> None:
        for store in self._opened:
            store.close()
        if self._server is not None:
            self._server.drop_database(self.location)


@pytest.fixture(params=["sqlite", "postgres"])
def admitters(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Admitters]:
    a = Admitters(request.param, tmp_path)
    yield a
    a.close()


def test_200_concurrent_attempts_against_a_budget_of_50_admit_exactly_50(
    admitters: Admitters,
) -> None:
    """20 connections, 200 threads released at once, clients spread over 7 keys."""
    pool = [admitters.open() for _ in range(20)]
    limits = QuotaLimits(global_per_day=50)
    start = threading.Barrier(200)

    def attempt(i: int) -> Admission:
        start.wait()
        return pool[i % len(pool)].try_admit(f"client-{i % 7}", NOW + i * 0.001, limits)

    with ThreadPoolExecutor(200) as executor:
        results = list(executor.map(attempt, range(200)))
    admitted = [r for r in results if r.admitted]
    assert len(admitted) == 50
    refused = [r for r in results if not r.admitted]
    assert all(0 < r.retry_after_s <= 86_400 for r in refused)
    # the budget stays spent
    assert not pool[0].try_admit("someone-new", NOW + 1, limits).admitted


def _admit_in_a_process(kind: str, location: str, first: int, n: int) -> int:
    """In a process of its own: ``n`` attempts (clients by attempt), the count admitted."""
    store: Store = SQLiteStore(Path(location)) if kind == "sqlite" else PostgresStore(location)
    try:
        limits = QuotaLimits(global_per_day=30, per_day=12)
        return sum(
            store.try_admit(f"client-{i % 4}", NOW + i * 0.001, limits).admitted
            for i in range(first, first + n)
        )
    finally:
        store.close()


def test_processes_sharing_the_storage_admit_exactly_the_budget(admitters: Admitters) -> None:
    """4 processes x 20 attempts, 4 clients of 12 a day and a global 30: exactly 30 admitted
    (the SQLite file's writer lock, PostgreSQL's row locks, serialize them all)."""
    admitters.open().close()  # the schema, before the processes race to open it
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        admitted = pool.starmap(
            _admit_in_a_process,
            [(admitters.kind, admitters.location, 20 * p, 20) for p in range(4)],
        )
    assert sum(admitted) == 30
    assert (
        not admitters.open()
        .try_admit("client-new", NOW + 1, QuotaLimits(global_per_day=30))
        .admitted
    )


def test_limits_are_per_client_per_window_and_all_or_nothing(admitters: Admitters) -> None:
    quota = admitters.open()
    limits = QuotaLimits(per_minute=2, per_day=3, global_per_day=4)
    assert quota.try_admit("a", NOW, limits).admitted
    assert quota.try_admit("a", NOW + 1, limits).admitted
    refused = quota.try_admit("a", NOW + 2, limits)  # a's minute is spent
    assert not refused.admitted
    assert refused.retry_after_s == pytest.approx(60 - 42)
    assert retry_after_header(refused) == "18"
    # the refusal consumed nothing: b still gets the two global slots left
    assert quota.try_admit("b", NOW + 3, limits).admitted
    assert quota.try_admit("a", NOW + 60, limits).admitted  # a new minute; a's 3rd of the day
    # the global budget (4) is now spent: refused until the UTC day ends
    day_refusal = quota.try_admit("c", NOW + 61, limits)
    assert not day_refusal.admitted
    assert day_refusal.retry_after_s == pytest.approx(86_400 - (NOW + 61) % 86_400)
    # a is over its day too: the wait is the longest of the refusing windows
    assert quota.try_admit("a", NOW + 200, limits).retry_after_s > 3600
    # a new day: everything resets
    tomorrow = (NOW // 86_400 + 1) * 86_400
    assert quota.try_admit("a", tomorrow, limits).admitted


def test_unlimited_admits_without_touching_storage(admitters: Admitters) -> None:
    quota = admitters.open()
    for i in range(20):
        assert quota.try_admit("a", NOW + i, QuotaLimits()).admitted
    assert quota.try_admit("a", NOW, QuotaLimits(per_minute=0)).admitted is False


def test_chat_answers_429_with_retry_after_before_any_model_call(
    admitters: Admitters, monkeypatch: pytest.MonkeyPatch
) -> None:
    """20 concurrent chat requests against a global budget of 5: exactly 5 reach the answer
    pipeline; the other 15 get 429 with Retry-After and never load the embedder."""
    settings = admitters.settings()
    app = create_app(settings)
    model_calls: list[str] = []

    def fake_embedder(self: object) -> object:
        model_calls.append("embedder")
        raise RuntimeError("no model in this test")  # the stream reports it as an error event

    monkeypatch.setattr("truthbase.server.state.AppState.embedder", fake_embedder)

    async def run() -> list[httpx.Response]:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                return list(
                    await asyncio.gather(
                        *(
                            client.post(
                                "/api/chat",
                                json={"question": "What is GV.OC?"},
                                headers={"X-Client": f"10.0.0.{i % 3}"},
                            )
                            for i in range(20)
                        )
                    )
                )

    # A fresh thread: Playwright's sync API (the browser tests) keeps an event loop running on
    # the main thread for the whole session, and asyncio.run refuses to nest in it.
    with ThreadPoolExecutor(max_workers=1) as pool:
        responses = pool.submit(asyncio.run, run()).result()
    codes = sorted(r.status_code for r in responses)
    assert codes == [200] * 5 + [429] * 15
    for response in responses:
        if response.status_code == 429:
            assert int(response.headers["retry-after"]) >= 1
        else:
            assert "event: error" in response.text
    assert len(model_calls) == 5
