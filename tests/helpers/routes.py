"""The routes an app serves, with those of its included routers: FastAPI keeps an included
``APIRouter`` as one entry of ``app.routes`` (its routes under ``original_router``), so a walk
over ``app.routes`` alone would miss every route of the server's routers."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from starlette.routing import BaseRoute


def served_routes(routes: Iterable[BaseRoute]) -> Iterator[Any]:
    """Every route of ``routes``, the included routers' routes in their place."""
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from served_routes(inner.routes)
        else:
            yield route
