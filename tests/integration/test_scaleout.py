"""Scale-out that is real (issue 28, item 6): two `truthbase worker` processes, each in a
network namespace of its own (its own loopback; the database reached over a veth pair, as from
another machine; tests/helpers/netns.py), share one PostgreSQL queue. Every document is
ingested once, and the job of a worker killed with SIGKILL mid-job is taken over by the other
once its lease runs out. Throughput of one against two workers is benchmarks/scaleout_bench.py's
(docs/evals/scaleout.md)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.helpers.corpus import CORPUS
from tests.helpers.netns import Host, unavailable
from tests.helpers.pg_server import PgServer
from tests.helpers.scaleout import queue, reaches, run_workers

pytestmark = pytest.mark.corpus

# Real manuals of the library, 12 pages each: long enough that a worker is seen mid-job.
FILES = (
    "library/texlive/seminar/semsamp2.pdf",
    "library/texlive/psfrag/pfgguide.pdf",
    "library/texlive/metalogo/metalogo.pdf",
)


@pytest.mark.timeout(600)
def test_two_workers_on_hosts_of_their_own_share_the_queue_and_take_over_a_killed_job(
    tmp_path: Path,
) -> None:
    why = unavailable()
    if why is not None:
        pytest.skip(why)
    from truthbase.store.postgres import PostgresStore

    files = [CORPUS / name for name in FILES]
    with (
        Host(1) as first,
        Host(2) as second,
        PgServer(
            listen=("127.0.0.1", first.gateway, second.gateway), trusted_network=Host.network()
        ) as server,
    ):
        # Inside a host, 127.0.0.1 is its own: only the gateway reaches the database.
        assert not reaches(first, "127.0.0.1", server.port)
        assert reaches(first, first.gateway, server.port)
        assert reaches(second, second.gateway, server.port)

        url = server.create_database()
        store = PostgresStore(url)
        try:
            data_dir = tmp_path / "data"
            ids = queue(store, data_dir, files)
            outcome = run_workers(
                server,
                url.rsplit("/", 1)[1],
                [first, second],
                data_dir,
                store,
                kill=True,
                lease_s=4.0,
                timeout_s=480,
                logs=tmp_path / "logs",
            )
            jobs = {j.id: j for j in outcome.jobs}
            assert sorted(jobs) == sorted(ids)
            assert all(j.state == "done" for j in jobs.values()), outcome.logs
            assert outcome.killed is not None and outcome.killed_job is not None, outcome.logs
            survivor = ({"w0", "w1"} - {outcome.killed}).pop()
            taken = jobs[outcome.killed_job]
            assert taken.attempts == 2 and taken.worker == survivor, taken
            # Each file is one document, stored once, whole.
            shas = {hashlib.sha256(f.read_bytes()).hexdigest() for f in files}
            assert {d.id for d in store.list_documents()} == shas
            assert store.counts()["units"] == sum(j.pages_total for j in jobs.values())
        finally:
            store.close()
