"""The HTTP side of quotas: who is asking, and the limits the settings set.

The pure part (limits, admissions, waits) is :mod:`truthbase.quota`; the atomic counting is the
store's (``Store.try_admit``). ``POST /api/chat`` asks before any model call.
"""

from __future__ import annotations

from starlette.requests import Request

from ..config import QuotaSettings
from ..quota import QuotaLimits

__all__ = ["client_key", "quota_limits"]


def quota_limits(settings: QuotaSettings) -> QuotaLimits:
    """The limits of the ``quota`` settings."""
    return QuotaLimits(
        per_minute=settings.per_client_per_minute,
        per_day=settings.per_client_per_day,
        global_per_day=settings.global_per_day,
    )


def client_key(request: Request, header: str | None) -> str:
    """Who is asking: the configured header's value (for X-Forwarded-For style lists, the first
    address), else the peer's IP address."""
    if header:
        value = request.headers.get(header, "").split(",")[0].strip()
        if value:
            return value[:200]
    return request.client.host if request.client is not None else "unknown"
