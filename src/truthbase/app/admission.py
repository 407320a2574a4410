"""Quota admission: which limits a request is counted against, who the client is, and the one
call that counts it (``Store.try_admit``, atomic on both backends).

A request that comes over a network (the web app, MCP over HTTP) is counted: by the signed-in
user's id, else by the client's address (:func:`truthbase.quota.client_key_for`). One that does
not (the command line, MCP over stdio, the Python API) has no address and is not counted. The
pure parts (limits, waits) are :mod:`truthbase.quota`.
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Mapping, Sequence

from ..config import QuotaSettings
from ..people import Viewer
from ..quota import QuotaLimits, client_key_for
from ..store import QuotaCounters
from ..telemetry import span
from .errors import QuotaExceeded

__all__ = ["admit", "chat_limits", "client_address", "search_limits", "trusted"]

#: The counters of a search are kept apart from the chat's under this prefix.
SEARCH = "search:"


def chat_limits(settings: QuotaSettings, *, agent: bool) -> QuotaLimits:
    """The limits one answer is counted against (agent mode also by ``quota.agent_per_day``)."""
    limits = QuotaLimits(
        per_minute=settings.per_client_per_minute,
        per_day=settings.per_client_per_day,
        global_per_day=settings.global_per_day,
        agent_per_day=settings.agent_per_day,
    )
    return limits.for_request(agent)


def search_limits(settings: QuotaSettings) -> QuotaLimits:
    """The limits one search is counted against."""
    return QuotaLimits(
        per_minute=settings.search_per_client_per_minute,
        per_day=settings.search_per_client_per_day,
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


def client_address(
    peer: str, headers: Mapping[str, str], header: str | None, proxies: Sequence[str]
) -> str:
    """The client's address: the peer's, unless the peer is a trusted proxy; then the header
    (``header``, default X-Forwarded-For) read from the right, the first address that is not a
    trusted proxy itself (the left part of the list is whatever the client claimed)."""
    if not proxies or not trusted(peer, proxies):
        return peer
    hops = [h.strip() for h in headers.get(header or "X-Forwarded-For", "").split(",")]
    for hop in reversed([h for h in hops if h]):
        if not trusted(hop, proxies):
            return hop[:200]
    return peer


def admit(
    store: QuotaCounters, viewer: Viewer, address: str | None, limits: QuotaLimits, kind: str = ""
) -> None:
    """Count one request of ``viewer`` from ``address`` against ``limits``; QuotaExceeded (with
    the seconds to wait) when refused. No address (not over a network) or no limit: nothing
    is counted. ``kind`` keeps another use's counters (:data:`SEARCH`) apart from the chat's."""
    if address is None or limits.unlimited:
        return
    if viewer.user is not None and viewer.user_id is None:
        raise ValueError("a signed-in viewer without a user id: make it with accounts.viewer_of")
    key = kind + client_key_for(viewer.user_id, address)
    with span("quota"):
        admission = store.try_admit(key, time.time(), limits)
    if not admission.admitted:
        raise QuotaExceeded(admission.retry_after_s)
