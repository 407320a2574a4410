"""One BLAS thread per process, set by the process's edge, never by an import.

Every matrix product truthbase makes while searching is small (a question against a few thousand
vectors, a dozen token rows against a few thousand token signs) or memory-bound (a matrix-vector
product over 100k vectors). OpenBLAS's worker threads, spinning on a machine whose cores are
busy, make them 10-40x slower: on the shared 2-core machine a 3,200 x 384 matrix-vector product
took 28 ms with OpenBLAS's default threads and 0.7 ms with one (benchmarks/search_bench.py).
ONNX Runtime has its own thread pool and is not affected.

``TRUTHBASE_BLAS_THREADS`` (default 1) sets the count; 0 leaves BLAS at its own default.

Importing truthbase neither reads the variable nor touches BLAS: a program's entry point calls
:func:`limit_blas_threads` once, before its first search. The edges that do: the command line
(every ``truthbase`` command, the server and the workers included), the server's start (an app
served by another runner), each process of the ingest pool, and the benchmarks. A program that
uses :class:`truthbase.Library` decides for itself (calling it is one line).
"""

from __future__ import annotations

import os

import numpy  # noqa: F401  (loaded first: threadpoolctl limits the BLAS libraries already loaded)
from threadpoolctl import threadpool_limits

#: The environment variable that overrides the BLAS thread count (0: BLAS's default).
BLAS_THREADS_ENV = "TRUTHBASE_BLAS_THREADS"


def blas_threads() -> int:
    """The configured BLAS thread count (0: leave BLAS alone)."""
    raw = os.environ.get(BLAS_THREADS_ENV, "1").strip()
    try:
        return max(0, int(raw))
    except ValueError:
        return 1


def limit_blas_threads() -> None:
    """Apply :func:`blas_threads` to the BLAS libraries of this process."""
    threads = blas_threads()
    if threads:
        threadpool_limits(limits=threads, user_api="blas")
