"""The admin page and its data: each user's counted chats (this minute, today, agent mode today)
and what they hold; admins only (and the single local user, who is the operator)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

from ..accounts import usage
from ..config import Settings
from ..store import Store
from .deps import viewer_of

__all__ = ["add_admin_routes"]


def _require_admin(request: Request) -> None:
    viewer = viewer_of(request)
    if not (viewer.admin or viewer.local):
        raise HTTPException(403, "admins only")


def add_admin_routes(
    app: FastAPI,
    store: Callable[[], Store],
    settings: Settings,
    page: Callable[[str], HTMLResponse],
) -> None:
    """``GET /admin`` (the page) and ``GET /api/admin/usage``."""

    @app.get("/admin", response_class=HTMLResponse, include_in_schema=False)
    async def admin_page(request: Request) -> HTMLResponse:
        """Usage per user."""
        _require_admin(request)
        return page("admin.html")

    @app.get("/api/admin/usage", tags=["admin"])
    async def admin_usage(request: Request) -> dict[str, Any]:
        """Per user: chats counted this UTC minute and day, agent-mode chats today, documents
        owned (private ones), live API tokens; with the limits that apply (None: unlimited)."""
        _require_admin(request)
        rows = await run_in_threadpool(usage, store(), time.time())
        quota = settings.quota
        return {
            "limits": {
                "chats_per_minute": quota.per_client_per_minute,
                "chats_per_day": quota.per_client_per_day,
                "agent_per_day": quota.agent_per_day,
                "global_per_day": quota.global_per_day,
            },
            "users": [
                {
                    "name": r.name,
                    "admin": r.admin,
                    "chats_this_minute": r.quota.minute,
                    "chats_today": r.quota.day,
                    "agent_today": r.quota.agent_day,
                    "documents": r.documents,
                    "private_documents": r.private,
                    "tokens": r.tokens,
                }
                for r in rows
            ],
        }
