"""Quota counters in SQLite: the ``quota_counters`` table of the index file.

An admission reads and writes every counter inside one ``BEGIN IMMEDIATE`` transaction: SQLite's
writer lock serializes admissions across connections and processes sharing the file, so either
every counter with a limit goes up by one or none does. The table is created on the first
admission (an index whose quotas are off never gets one).
"""

from __future__ import annotations

import math

from ...quota import DAY, MINUTE, Admission, QuotaLimits, QuotaUsage, refusal_wait
from .connection import Database

__all__ = ["QuotaTable"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS quota_counters (
    scope  TEXT NOT NULL,
    key    TEXT NOT NULL,
    bucket INTEGER NOT NULL,
    count  INTEGER NOT NULL,
    PRIMARY KEY (scope, key, bucket)
)
"""


class QuotaTable:
    """The counters of one store's connection (the table is made once per connection)."""

    def __init__(self) -> None:
        self._ready = False

    def try_admit(
        self, db: Database, client_key: str, now: float, limits: QuotaLimits
    ) -> Admission:
        if limits.unlimited:
            return Admission(admitted=True)
        minute = math.floor(now / MINUTE)
        day = math.floor(now / DAY)
        keys = [
            ("minute", client_key, minute, limits.per_minute),
            ("day", client_key, day, limits.per_day),
            ("global", "", day, limits.global_per_day),
            ("agent", client_key, day, limits.agent_per_day),
        ]
        with db.lock:
            if not self._ready:
                db.conn.execute(_SCHEMA)
                self._ready = True
            with db.transaction() as conn:
                used: list[int] = []
                for scope, key, bucket, _ in keys:
                    row = conn.execute(
                        "SELECT count FROM quota_counters WHERE scope=? AND key=? AND bucket=?",
                        (scope, key, bucket),
                    ).fetchone()
                    used.append(int(row[0]) if row else 0)
                wait = refusal_wait(now, limits, used[0], used[1], used[2], used[3])
                if wait > 0:
                    # nothing was written: the commit of an empty transaction changes nothing
                    return Admission(admitted=False, retry_after_s=wait)
                for scope, key, bucket, limit in keys:
                    if limit is None:
                        continue
                    conn.execute(
                        "INSERT INTO quota_counters(scope, key, bucket, count) "
                        "VALUES (?, ?, ?, 1) ON CONFLICT(scope, key, bucket) "
                        "DO UPDATE SET count = count + 1",
                        (scope, key, bucket),
                    )
                    conn.execute(
                        "DELETE FROM quota_counters WHERE scope=? AND key=? AND bucket<?",
                        (scope, key, bucket),
                    )
        return Admission(admitted=True)

    def usage(self, db: Database, client_key: str, now: float) -> QuotaUsage:
        """The client's counts in the current minute and day (0 where nothing was counted)."""
        buckets = {"minute": math.floor(now / MINUTE), "day": math.floor(now / DAY)}
        buckets["agent"] = buckets["day"]
        with db.lock:
            if not self._ready:
                db.conn.execute(_SCHEMA)
                self._ready = True
            rows = db.conn.execute(
                "SELECT scope, bucket, count FROM quota_counters WHERE key = ? "
                "AND scope IN ('minute', 'day', 'agent')",
                (client_key,),
            ).fetchall()
        found = {str(r[0]): int(r[2]) for r in rows if int(r[1]) == buckets[str(r[0])]}
        return QuotaUsage(
            minute=found.get("minute", 0), day=found.get("day", 0), agent_day=found.get("agent", 0)
        )
