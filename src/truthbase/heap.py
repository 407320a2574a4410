"""The C heap of a process that embeds: freed blocks go back to the system.

glibc's malloc serves a large block from mmap (returned to the system when freed) only above a
threshold that it raises, after each such block is freed, to that block's size (up to 32 MB).
Loading the ONNX session frees many large blocks, so afterwards nearly every block of the
session's runs and of numpy came from the heap, which keeps what was freed: the bundled
embedder's process held 252 MB after loading its session instead of 200, and more after each
document (benchmarks/memory_bench.py). A fixed threshold keeps large blocks in mmap; the heap
is also trimmed after each document. Elsewhere than glibc both are no-ops.

Only ingest processes fix the threshold (`truthbase ingest`, its --workers processes), before
their embedder loads: a server's searches allocate and free large arrays for every question,
and from mmap each costs its page faults again (seed hybrid search p50 23 -> 27 ms measured).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys

#: Blocks of this many bytes and more come from mmap (glibc's initial dynamic threshold).
MMAP_THRESHOLD = 128 * 1024
_M_MMAP_THRESHOLD = -3  # mallopt's parameter number, from glibc's malloc.h


@functools.lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
    except OSError:
        return None
    if not (hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim")):
        return None  # musl and other C libraries without glibc's malloc controls
    return libc


@functools.lru_cache(maxsize=1)
def fix_mmap_threshold() -> bool:
    """Stop glibc from raising its mmap threshold (once a process); True if it was set."""
    libc = _libc()
    return bool(libc is not None and libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))


def trim() -> bool:
    """Give the heap's free pages back to the system; True if some were."""
    libc = _libc()
    return bool(libc is not None and libc.malloc_trim(0))
