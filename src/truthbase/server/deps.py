"""The dependencies of the routes (FastAPI ``Depends``): the app's state, the viewer the gate
found, the settings, the store, and the application service as the viewer may use it."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from ..app import Service
from ..config import Settings
from ..records import OPERATOR, Viewer
from ..store import Store
from .state import AppState

__all__ = [
    "CurrentService",
    "CurrentSettings",
    "CurrentState",
    "CurrentStore",
    "CurrentViewer",
    "app_state",
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


def service_of(request: Request) -> Service:
    """The application service as this request's viewer may use it."""
    state = app_state(request)
    return Service(state.store, state.settings, state.embedder, viewer_of(request))


CurrentState = Annotated[AppState, Depends(app_state)]
CurrentViewer = Annotated[Viewer, Depends(viewer_of)]
CurrentSettings = Annotated[Settings, Depends(settings_of)]
CurrentStore = Annotated[Store, Depends(store_of)]
CurrentService = Annotated[Service, Depends(service_of)]
