"""schemathesis (PyPI) against /openapi.json of a real `truthbase serve` (uvicorn on 127.0.0.1)
over a copy of the seed index: every operation, positive and negative cases, a bounded number
of examples each: no answer >= 500 and no answer outside the schema (status code, content type,
headers, body).

Bounds (the whole test well under a minute on an idle machine): the examples and coverage
phases, then 5 fuzzed cases an operation; the chat and login operations (seconds a case: an
answer, an argon2 hash) get 2 fuzzed cases and no coverage phase, with questions cut to 200
characters (what a long question costs is the load test's business). Left out: the stateful
phase (it chains a listing into DELETE and empties the index under the other operations) and
``GET /api/jobs/events`` (an endless event stream).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.slow

CHECKS = (
    "not_a_server_error,status_code_conformance,content_type_conformance,"
    "response_headers_conformance,response_schema_conformance"
)
HOOKS = """\
import schemathesis


@schemathesis.hook
def map_body(context, body):
    if isinstance(body, dict) and isinstance(body.get("question"), str):
        body["question"] = body["question"][:200]
    return body
"""


def _config(doc_id: str) -> str:
    return f"""\
[phases]
stateful.enabled = false

[[operations]]
include-path-regex = "^/api/(spans|epub/spans)$"
parameters = {{ "query.doc" = "{doc_id}" }}

[[operations]]
include-path-regex = "^/api/(documents/[{{]doc_id[}}]/file|epub/.*)$"
parameters = {{ "path.doc_id" = "{doc_id}" }}

[[operations]]
include-path-regex = "^/(api/chat|login)$"
phases.coverage.enabled = false
generation.max-examples = 2
"""


@pytest.fixture()
def server(seed_db: Path, tmp_path: Path) -> Iterator[str]:
    db = tmp_path / "seed.sqlite"
    shutil.copyfile(seed_db, db)
    command = [sys.executable, "-m", "truthbase.cli", "--db", str(db), "serve", "--port", "0"]
    log = (tmp_path / "server.log").open("w")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        assert process.stdout is not None
        match = re.search(r"http://[\w.]+:(\d+)/", process.stdout.readline())
        assert match, (tmp_path / "server.log").read_text()
        url = f"http://127.0.0.1:{match.group(1)}"
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{url}/healthz", timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not answer"
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:  # ingest workers busy with the fuzzed uploads
            process.kill()
            process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()
        log.close()


def test_schemathesis_finds_no_server_error_and_no_schema_violation(
    server: str, tmp_path: Path
) -> None:
    doc_id = httpx.get(f"{server}/api/documents", timeout=10).json()[0]["id"]
    config = tmp_path / "schemathesis.toml"
    config.write_text(_config(doc_id), "utf-8")
    (tmp_path / "fuzz_hooks.py").write_text(HOOKS, "utf-8")
    binary = Path(sys.executable).with_name("schemathesis")
    command = [
        str(binary) if binary.exists() else "schemathesis",
        "--config-file",
        str(config),
        "run",
        f"{server}/openapi.json",
        "--checks",
        CHECKS,
        "--max-examples",
        "5",
        "--exclude-path",
        "/api/jobs/events",
        "--workers",
        "1",
        "--request-timeout",
        "60",
        "--no-shrink",
        "--max-redirects",
        "0",
        "--seed",
        "17",
        "--suppress-health-check",
        "all",
    ]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "fuzz_hooks", "NO_COLOR": "1"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path), env.get("PYTHONPATH")]))
    started = time.monotonic()
    result = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    output = result.stdout + result.stderr
    summary = re.search(r"(\d+) generated, .*", output)
    seconds = time.monotonic() - started
    print(f"schemathesis: {summary.group(0) if summary else '?'} in {seconds:.0f} s")
    assert result.returncode == 0, output[-6000:]
    assert "generated" in output and "failed" not in (summary.group(0) if summary else "failed")
