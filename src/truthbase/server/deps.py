"""The dependencies of the routes (FastAPI ``Depends``): the app's state, the viewer the gate
found, the settings, the store, the client's address (what admission counts by) and the
application service as the viewer may use it."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from ..app import Service
from ..app.admission import client_address
from ..config import Settings
from ..people import OPERATOR, Viewer
from ..store import Store
from .state import AppState

__all__ = [
    "ClientAddress",
    "CurrentService",
    "CurrentSettings",
    "CurrentState",
    "CurrentStore",
    "CurrentViewer",
    "app_state",
    "client_address_of",
    "service_of",
    "viewer_of",
]


def app_state(request: Request) -> AppState:
    """The state of the app serving ``request`` (set by :func:`.app.create_app`)."""
    state: AppState = request.app.state.truthbase
    return state


def viewer_of(request: Request) -> Viewer:
    """The viewer the gate found for this request (:class:`.auth.AuthGate`); the operator when
    no gate ran."""
    viewer = getattr(request.state, "viewer", None)
    return viewer if isinstance(viewer, Viewer) else OPERATOR


def settings_of(request: Request) -> Settings:
    return app_state(request).settings


def store_of(request: Request) -> Store:
    return app_state(request).store


def client_address_of(request: Request) -> str:
    """The client's address: the peer's, or (through ``auth.trusted_proxies`` only) the one
    the proxies forwarded in ``quota.client_header``."""
    settings = settings_of(request)
    peer = request.client.host if request.client is not None else "unknown"
    return client_address(
        peer, request.headers, settings.quota.client_header, settings.auth.trusted_proxies
    )


def service_of(request: Request) -> Service:
    """The application service as this request's viewer may use it."""
    state = app_state(request)
    return Service(state.store, state.settings, state.embedder, viewer_of(request))


CurrentState = Annotated[AppState, Depends(app_state)]
CurrentViewer = Annotated[Viewer, Depends(viewer_of)]
CurrentSettings = Annotated[Settings, Depends(settings_of)]
CurrentStore = Annotated[Store, Depends(store_of)]
CurrentService = Annotated[Service, Depends(service_of)]
ClientAddress = Annotated[str, Depends(client_address_of)]
