"""The HTTP side of quotas: the client's address of a request. Whether and how a request is
counted is the application's (:mod:`truthbase.app.admission`)."""

from __future__ import annotations

from starlette.requests import Request

from ..app.admission import client_address
from ..config import Settings

__all__ = ["request_address"]


def request_address(request: Request, settings: Settings) -> str:
    """The client's address: the peer's, or (through ``auth.trusted_proxies`` only) the one
    the proxies forwarded in ``quota.client_header``."""
    peer = request.client.host if request.client is not None else "unknown"
    return client_address(
        peer, request.headers, settings.quota.client_header, settings.auth.trusted_proxies
    )
