"""Request quotas, the pure part: limits, the answer to one request, and the waits.

Limits are per client per minute, per client per day, agent-mode requests per client per day,
and a global daily budget. A client is a signed-in user (key ``user:ID``, their stable id: a user
added later under a removed user's name starts afresh) or, in the anonymous local mode only, an
address (``ip:ADDR``): :func:`client_key_for`. The store
counts (``Store.try_admit``, atomically and all or nothing on both backends: either every counter
that has a limit goes up by one, or none does and the caller gets the seconds to wait, the
``Retry-After``). Windows are fixed UTC buckets: the minute ``floor(now / 60)`` and the day
``floor(now / 86400)``. The application (:mod:`truthbase.app.admission`) names the client and
makes the call before any model call of an answer that comes over a network (``POST /api/chat``,
MCP's ``ask`` over HTTP); the doors answer a refusal (429 with ``Retry-After``, a tool error).

This module imports nothing of TruthBase (the ground floor): the store and the application use it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = [
    "DAY",
    "MINUTE",
    "Admission",
    "QuotaLimits",
    "QuotaUsage",
    "client_key_for",
    "refusal_wait",
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
    agent_per_day: int | None = None  # counted only for agent-mode requests

    def __post_init__(self) -> None:
        for name, value in (
            ("per_minute", self.per_minute),
            ("per_day", self.per_day),
            ("global_per_day", self.global_per_day),
            ("agent_per_day", self.agent_per_day),
        ):
            if value is not None and value < 0:
                raise ValueError(f"quota {name} must be >= 0 or None, got {value}")

    @property
    def unlimited(self) -> bool:
        return (
            self.per_minute is None
            and self.per_day is None
            and self.global_per_day is None
            and self.agent_per_day is None
        )

    def for_request(self, agent: bool) -> QuotaLimits:
        """The limits one request is counted against: the agent budget only for agent mode."""
        if agent or self.agent_per_day is None:
            return self
        return QuotaLimits(
            per_minute=self.per_minute, per_day=self.per_day, global_per_day=self.global_per_day
        )


@dataclass(frozen=True, slots=True)
class QuotaUsage:
    """One client's counted requests in the current windows (for `truthbase users usage`)."""

    minute: int = 0
    day: int = 0
    agent_day: int = 0


def client_key_for(user_id: str | None, address: str) -> str:
    """The quota key: the user's id when signed in, else the client's address."""
    return f"user:{user_id}" if user_id is not None else f"ip:{address}"


@dataclass(frozen=True, slots=True)
class Admission:
    """The answer to one request: admitted, or refused with the seconds until it may retry."""

    admitted: bool
    retry_after_s: float = 0.0


def retry_after_header(admission: Admission) -> str:
    """The ``Retry-After`` value: whole seconds, rounded up, at least 1."""
    return str(max(1, math.ceil(admission.retry_after_s)))


def refusal_wait(
    now: float,
    limits: QuotaLimits,
    used_minute: int,
    used_day: int,
    used_global: int,
    used_agent: int = 0,
) -> float:
    """Seconds until every window that refuses has rolled over; 0 when all admit."""
    wait = 0.0
    day_end = (math.floor(now / DAY) + 1) * DAY - now
    if limits.agent_per_day is not None and used_agent >= limits.agent_per_day:
        wait = max(wait, day_end)
    if limits.global_per_day is not None and used_global >= limits.global_per_day:
        wait = max(wait, day_end)
    if limits.per_day is not None and used_day >= limits.per_day:
        wait = max(wait, day_end)
    if limits.per_minute is not None and used_minute >= limits.per_minute:
        wait = max(wait, (math.floor(now / MINUTE) + 1) * MINUTE - now)
    return wait
