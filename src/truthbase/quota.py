"""Request quotas: per client per minute, per client per day, and a global daily budget.

One call, :meth:`Admitter.try_admit`, admits a request or refuses it, atomically and all or
nothing: either every counter that has a limit goes up by one, or none does and the caller gets
the seconds to wait (``Retry-After``). Windows are fixed UTC buckets: the minute
``floor(now / 60)`` and the day ``floor(now / 86400)``. The server makes this call before any
model call of ``POST /api/chat`` and answers 429 when refused.

Two backends, one contract:

- :class:`SQLiteQuota`: a ``quota_counters`` table in the index's SQLite file, read and written
  inside one ``BEGIN IMMEDIATE`` transaction (SQLite's writer lock serializes every admission
  across connections and processes).
- :class:`truthbase.store.postgres.PostgresStore.try_admit`: the SQL function
  ``truthbase.try_admit``, one statement that locks the counter rows in a fixed order.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from .store.base import StoreError

if TYPE_CHECKING:
    from starlette.requests import Request

    from .config import QuotaSettings, Settings
    from .store.base import Store

__all__ = [
    "Admission",
    "Admitter",
    "QuotaLimits",
    "SQLiteQuota",
    "client_key",
    "close_admitter",
    "open_admitter",
    "quota_limits",
    "retry_after_header",
]

MINUTE = 60
DAY = 86_400


@dataclass(frozen=True, slots=True)
class QuotaLimits:
    """Requests allowed per window; None is unlimited."""

    per_minute: int | None = None
    per_day: int | None = None
    global_per_day: int | None = None

    def __post_init__(self) -> None:
        for name in ("per_minute", "per_day", "global_per_day"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"quota {name} must be >= 0 or None, got {value}")

    @property
    def unlimited(self) -> bool:
        return self.per_minute is None and self.per_day is None and self.global_per_day is None


@dataclass(frozen=True, slots=True)
class Admission:
    """The answer to one request: admitted, or refused with the seconds until it may retry."""

    admitted: bool
    retry_after_s: float = 0.0


def retry_after_header(admission: Admission) -> str:
    """The ``Retry-After`` value: whole seconds, rounded up, at least 1."""
    return str(max(1, math.ceil(admission.retry_after_s)))


class Admitter(Protocol):
    def try_admit(self, client_key: str, now: float, limits: QuotaLimits) -> Admission:
        """Admit one request of ``client_key`` at Unix time ``now``, or refuse it; atomic."""
        ...


def refusal_wait(
    now: float, limits: QuotaLimits, used_minute: int, used_day: int, used_global: int
) -> float:
    """Seconds until every window that refuses has rolled over; 0 when all admit."""
    wait = 0.0
    day_end = (math.floor(now / DAY) + 1) * DAY - now
    if limits.global_per_day is not None and used_global >= limits.global_per_day:
        wait = max(wait, day_end)
    if limits.per_day is not None and used_day >= limits.per_day:
        wait = max(wait, day_end)
    if limits.per_minute is not None and used_minute >= limits.per_minute:
        wait = max(wait, (math.floor(now / MINUTE) + 1) * MINUTE - now)
    return wait


_SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS quota_counters (
    scope  TEXT NOT NULL,
    key    TEXT NOT NULL,
    bucket INTEGER NOT NULL,
    count  INTEGER NOT NULL,
    PRIMARY KEY (scope, key, bucket)
)
"""


class SQLiteQuota:
    """Quota counters in an SQLite file (the index's own, by default), one connection per
    instance; any number of instances and processes may share the file."""

    def __init__(self, path: Path, *, timeout_s: float = 30.0) -> None:
        self.path = path
        try:
            self._db = sqlite3.connect(
                path, isolation_level=None, check_same_thread=False, timeout=timeout_s
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(_SQLITE_SCHEMA)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the quota table in {path}: {exc}") from exc
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def try_admit(self, client_key: str, now: float, limits: QuotaLimits) -> Admission:
        if limits.unlimited:
            return Admission(admitted=True)
        minute = math.floor(now / MINUTE)
        day = math.floor(now / DAY)
        keys = [
            ("minute", client_key, minute, limits.per_minute),
            ("day", client_key, day, limits.per_day),
            ("global", "", day, limits.global_per_day),
        ]
        db = self._db
        with self._lock:
            db.execute("BEGIN IMMEDIATE")
            try:
                used: list[int] = []
                for scope, key, bucket, _ in keys:
                    row = db.execute(
                        "SELECT count FROM quota_counters WHERE scope=? AND key=? AND bucket=?",
                        (scope, key, bucket),
                    ).fetchone()
                    used.append(int(row[0]) if row else 0)
                wait = refusal_wait(now, limits, used[0], used[1], used[2])
                if wait > 0:
                    db.execute("ROLLBACK")
                    return Admission(admitted=False, retry_after_s=wait)
                for scope, key, bucket, limit in keys:
                    if limit is None:
                        continue
                    db.execute(
                        "INSERT INTO quota_counters(scope, key, bucket, count) "
                        "VALUES (?, ?, ?, 1) ON CONFLICT(scope, key, bucket) "
                        "DO UPDATE SET count = count + 1",
                        (scope, key, bucket),
                    )
                    db.execute(
                        "DELETE FROM quota_counters WHERE scope=? AND key=? AND bucket<?",
                        (scope, key, bucket),
                    )
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        return Admission(admitted=True)


def quota_limits(settings: QuotaSettings) -> QuotaLimits:
    return QuotaLimits(
        per_minute=settings.per_client_per_minute,
        per_day=settings.per_client_per_day,
        global_per_day=settings.global_per_day,
    )


def open_admitter(settings: Settings, store: Store) -> Admitter | None:
    """The quota check for ``store``'s backend: the store itself when it has ``try_admit``
    (PostgreSQL), an :class:`SQLiteQuota` on the index file otherwise; None when every limit is
    off (the default)."""
    if quota_limits(settings.quota).unlimited:
        return None
    admit = getattr(store, "try_admit", None)
    if callable(admit):
        return store  # type: ignore[return-value]
    return SQLiteQuota(settings.db)


def close_admitter(admitter: Admitter, store: object) -> None:
    """Close what :func:`open_admitter` opened (the store itself is its owner's to close)."""
    if admitter is store:
        return
    close = getattr(admitter, "close", None)
    if callable(close):
        close()


def client_key(request: Request, header: str | None) -> str:
    """Who is asking: the configured header's value (for X-Forwarded-For style lists, the first
    address), else the peer's IP address."""
    if header:
        value = request.headers.get(header, "").split(",")[0].strip()
        if value:
            return value[:200]
    return request.client.host if request.client is not None else "unknown"
