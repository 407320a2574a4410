"""Quota counters in PostgreSQL: the SQL function ``truthbase.try_admit`` (``functions.sql``),
one statement that locks the counter rows of ``truthbase.quota_counters`` in a fixed order, so
concurrent admissions serialize without deadlocks; a refusal changes nothing."""

from __future__ import annotations

from ...quota import Admission, QuotaLimits
from .pool import Pool

__all__ = ["try_admit"]


def try_admit(pool: Pool, client_key: str, now: float, limits: QuotaLimits) -> Admission:
    """One atomic admission: all counters up by one, or none."""
    if limits.unlimited:
        return Admission(admitted=True)
    with pool.connection() as conn:
        row = conn.execute(
            "SELECT admitted, retry_after_s FROM truthbase.try_admit(%s, %s, %s, %s, %s)",
            (client_key, float(now), limits.per_minute, limits.per_day, limits.global_per_day),
        ).fetchone()
    return Admission(admitted=bool(row[0]), retry_after_s=float(row[1]))
