"""The admin page and its data: each user's counted chats (this minute, today, agent mode today)
and what they hold; admins only (and the single local user, who is the operator)."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, HTTPException
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

from ..access import sees_everything
from ..accounts import usage
from ..records import Viewer
from .deps import CurrentState, CurrentViewer
from .pages import page

__all__ = ["router"]


router = APIRouter()


def _require_admin(viewer: Viewer) -> None:
    if not sees_everything(viewer):
        raise HTTPException(403, "admins only")


@router.get("/admin", response_class=HTMLResponse, include_in_schema=False)
async def admin_page(state: CurrentState, viewer: CurrentViewer) -> HTMLResponse:
    """Usage per user."""
    _require_admin(viewer)
    return page(state.web_dir, "admin.html")


@router.get("/api/admin/usage", tags=["admin"])
async def admin_usage(state: CurrentState, viewer: CurrentViewer) -> dict[str, Any]:
    """Per user: chats counted this UTC minute and day, agent-mode chats today, documents
    owned (private ones), live API tokens; with the limits that apply (None: unlimited)."""
    _require_admin(viewer)
    rows = await run_in_threadpool(usage, state.store, time.time())
    quota = state.settings.quota
    return {
        "limits": {
            "chats_per_minute": quota.per_client_per_minute,
            "chats_per_day": quota.per_client_per_day,
            "agent_per_day": quota.agent_per_day,
            "global_per_day": quota.global_per_day,
        },
        "users": [r.to_json() for r in rows],
    }
