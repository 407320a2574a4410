"""The HTTP side of quotas: who is asking, and the limits the settings set.

The pure part (limits, admissions, waits) is :mod:`truthbase.quota`; the atomic counting is the
store's (``Store.try_admit``). ``POST /api/chat`` asks before any model call.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from starlette.requests import Request

from ..config import QuotaSettings
from ..quota import QuotaLimits

__all__ = ["client_address", "client_key", "quota_limits", "trusted"]


def quota_limits(settings: QuotaSettings) -> QuotaLimits:
    """The limits of the ``quota`` settings."""
    return QuotaLimits(
        per_minute=settings.per_client_per_minute,
        per_day=settings.per_client_per_day,
        global_per_day=settings.global_per_day,
        agent_per_day=settings.agent_per_day,
    )


def trusted(address: str, proxies: Sequence[str]) -> bool:
    """Whether ``address`` is one of ``proxies`` (addresses or CIDR networks; an entry that is
    neither, such as a host name, must match exactly)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address in proxies
    for entry in proxies:
        try:
            if ip in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            if entry == address:
                return True
    return False


def client_address(request: Request, header: str | None, proxies: Sequence[str]) -> str:
    """The client's address: the peer's, unless the peer is a trusted proxy; then the header
    (``header``, default X-Forwarded-For) read from the right, the first address that is not a
    trusted proxy itself (the left part of the list is whatever the client claimed)."""
    peer = request.client.host if request.client is not None else "unknown"
    if not proxies or not trusted(peer, proxies):
        return peer
    hops = [h.strip() for h in request.headers.get(header or "X-Forwarded-For", "").split(",")]
    for hop in reversed([h for h in hops if h]):
        if not trusted(hop, proxies):
            return hop[:200]
    return peer


def client_key(request: Request, header: str | None, proxies: Sequence[str] = ()) -> str:
    """The quota key of an anonymous request (see :func:`truthbase.quota.client_key_for`)."""
    return client_address(request, header, proxies)
