"""A value built in a background thread for one state of an index, one build at a time.

The SQLite store keeps two such values: the full-text postings of an index generation
(:mod:`.sqlite.postings`) and the dense graph of a set of vector rows (:mod:`.sqlite.ann`).
Both cost seconds to minutes of CPU and memory at library scale, both are only an accelerator
(the exact path answers meanwhile), and both follow the same rules, kept here once:

- a value serves only the key (generation, fingerprint) it was built for; it is dropped when
  the build for another key starts (holding both would double the peak memory);
- one build at a time: a build still running for an older key finishes first, and a later
  request starts the current key's (a build is both cores for minutes; two at once would be
  slower than one after the other);
- a build that raises is logged and not retried for that key: a failure that repeats on every
  query would spend the machine for nothing; a new key (the index changed) tries again;
- a build that finds its key stale (the index moved while it read) returns None: nothing is
  kept and nothing counts as failed, the next request builds the new key's.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["BackgroundValue"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

log = logging.getLogger(__name__)


class BackgroundValue(Generic[K, V]):
    """The value of the current key, once built (see the module docstring)."""

    def __init__(self, name: str, failure: str) -> None:
        self.name = name  # the build thread's name
        self.failure = failure  # what the log says when a build raises
        self._lock = threading.Lock()
        self._ready: tuple[K, V] | None = None
        self._failed: K | None = None  # the key whose build raised
        self._building: K | None = None
        self._thread: threading.Thread | None = None
        self.builds = 0  # values built (the tests count them)

    def ready(self, key: K) -> V | None:
        """The value built for ``key``, or None."""
        with self._lock:
            return self._value_of(key)

    def _value_of(self, key: K) -> V | None:
        if self._ready is not None and self._ready[0] == key:
            return self._ready[1]
        return None

    def has_value(self) -> bool:
        """Whether a value is held (for the key of the last build that succeeded)."""
        with self._lock:
            return self._ready is not None

    def failed(self, key: K) -> bool:
        with self._lock:
            return self._failed == key

    def get(self, key: K, build: Callable[[], V | None], *, wait: bool = False) -> V | None:
        """The value of ``key`` when it is built; otherwise None, after starting ``build`` in the
        background (unless a build runs: an older key's finishes first). ``wait``: block until
        this key's build ends: its value, or None (it failed, or found its key stale)."""
        with self._lock:
            # One check and start under one lock: a build of this key that ends in between
            # must not be started again.
            value = self._value_of(key)
            if value is not None or self._failed == key:
                return value
            thread = self._thread
            ours = self._building == key
            if not ours and (thread is None or not thread.is_alive()):
                # The value of another key serves no one once this key is built, and holding
                # both would double the peak memory: it is dropped as this build starts.
                self._ready = None
                thread = threading.Thread(
                    target=self._run, args=(key, build), name=self.name, daemon=True
                )
                self._building, self._thread, ours = key, thread, True
                thread.start()
        if not wait or thread is None:
            return None
        thread.join()
        if ours:
            return self.ready(key)
        return self.get(key, build, wait=True)  # an older key's build ran: now this key's

    def running(self) -> threading.Thread | None:
        """The build thread, while one runs or after (the tests join it)."""
        return self._thread

    def _run(self, key: K, build: Callable[[], V | None]) -> None:
        value: V | None = None
        failed = False
        try:
            value = build()
        except Exception:
            log.exception(self.failure)
            failed = True
        with self._lock:
            if self._building == key:
                self._building = None
            if failed:
                self._failed = key
            elif value is not None:
                self._ready = (key, value)
                self.builds += 1
