"""Importing truthbase has no effect (issue 27): it reads none of its environment variables and
leaves the BLAS thread count as it found it; the command line, an edge, sets the count.

Each import runs in a fresh interpreter: this test process has imported truthbase long ago."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from threadpoolctl import threadpool_info, threadpool_limits

from truthbase.blas import BLAS_THREADS_ENV
from truthbase.cli import cli
from truthbase.store import SQLiteStore

#: Imports the package and the modules each door loads, recording every read of a
#: ``TRUTHBASE_*`` variable by truthbase's own code (a library that copies the whole environment
#: at import, as wsgiref does, is not truthbase reading it) and the BLAS thread counts before and
#: after.
_IMPORT = """
import json, os, sys
import numpy
from threadpoolctl import threadpool_info

def _reader():
    frame = sys._getframe(2)
    while frame.f_code.co_filename.startswith("<frozen") or frame.f_code.co_filename == os.__file__:
        frame = frame.f_back
    return frame.f_globals.get("__name__", "")

class _Watched(os._Environ):
    reads = []
    def __getitem__(self, key):
        reader = _reader()
        if reader.split(".")[0] == "truthbase":
            _Watched.reads.append(f"{reader}: {key}")
        return super().__getitem__(key)

watched = _Watched(os.environ._data, os.environ.encodekey, os.environ.decodekey,
                   os.environ.encodevalue, os.environ.decodevalue)
os.environ = watched

def blas():
    return sorted((i["internal_api"], i["num_threads"]) for i in threadpool_info()
                  if i["user_api"] == "blas")

before = blas()
import truthbase, truthbase.api, truthbase.cli, truthbase.server.app, truthbase.mcp.server
import truthbase.ingest.pool, truthbase.ingest.worker, truthbase.modes
print(json.dumps({"before": before, "after": blas(), "reads": _Watched.reads}))
"""


def _blas_counts() -> list[int]:
    return [int(i["num_threads"]) for i in threadpool_info() if i["user_api"] == "blas"]


def test_importing_truthbase_reads_no_environment_and_sets_no_threads() -> None:
    # A count the import would have to change: the BLAS default is the core count, so ask for
    # one more than that (old truthbase set TRUTHBASE_BLAS_THREADS at import).
    env = {**os.environ, BLAS_THREADS_ENV: str((os.cpu_count() or 1) + 1)}
    out = subprocess.run(
        [sys.executable, "-c", _IMPORT], capture_output=True, text=True, check=True, env=env
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["before"], "no BLAS library found: the check would prove nothing"
    assert seen["after"] == seen["before"]
    assert seen["reads"] == []


def test_the_command_line_sets_the_blas_threads(tmp_path: Path) -> None:
    wanted = max(_blas_counts()) + 1
    SQLiteStore(tmp_path / "t.sqlite").close()  # `docs` reads an index; it makes none
    with threadpool_limits(limits=None):  # restores this process's counts on leaving
        result = CliRunner().invoke(
            cli,
            ["--db", str(tmp_path / "t.sqlite"), "docs"],
            env={BLAS_THREADS_ENV: str(wanted)},
        )
        assert result.exit_code == 0, result.output
        assert set(_blas_counts()) == {wanted}
