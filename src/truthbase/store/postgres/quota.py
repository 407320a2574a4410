"""Quota counters in PostgreSQL: the SQL function ``truthbase.try_admit`` (``functions.sql``),
one statement that locks the counter rows of ``truthbase.quota_counters`` in a fixed order, so
concurrent admissions serialize without deadlocks; a refusal changes nothing."""

from __future__ import annotations

import math

from ...quota import DAY, MINUTE, Admission, QuotaLimits, QuotaUsage
from .pool import Pool

__all__ = ["try_admit", "usage"]


def try_admit(pool: Pool, client_key: str, now: float, limits: QuotaLimits) -> Admission:
    """One atomic admission: all counters up by one, or none."""
    if limits.unlimited:
        return Admission(admitted=True)
    with pool.connection() as conn:
        row = conn.execute(
            "SELECT admitted, retry_after_s FROM truthbase.try_admit(%s, %s, %s, %s, %s, %s)",
            (
                client_key,
                float(now),
                limits.per_minute,
                limits.per_day,
                limits.global_per_day,
                limits.agent_per_day,
            ),
        ).fetchone()
    return Admission(admitted=bool(row[0]), retry_after_s=float(row[1]))


def usage(pool: Pool, client_key: str, now: float) -> QuotaUsage:
    """The client's counts in the current minute and day (0 where nothing was counted)."""
    minute, day = math.floor(now / MINUTE), math.floor(now / DAY)
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT scope, count FROM truthbase.quota_counters WHERE key = %s AND ("
            "(scope = 'minute' AND bucket = %s) OR (scope IN ('day', 'agent') AND bucket = %s))",
            (client_key, minute, day),
        ).fetchall()
    found = {str(r[0]): int(r[1]) for r in rows}
    return QuotaUsage(
        minute=found.get("minute", 0), day=found.get("day", 0), agent_day=found.get("agent", 0)
    )
