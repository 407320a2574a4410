"""The admin page and its data: each user's counted chats (this minute, today, agent mode today)
and what they hold; admins only (and the single local user, who is the operator)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

from ..app.accounts import require_admin
from .deps import CurrentService, CurrentState, CurrentViewer
from .pages import page

__all__ = ["router"]


router = APIRouter()


@router.get("/admin", response_class=HTMLResponse, include_in_schema=False)
async def admin_page(state: CurrentState, viewer: CurrentViewer) -> HTMLResponse:
    """Usage per user."""
    require_admin(viewer)
    return page(state.web_dir, "admin.html")


@router.get("/api/admin/usage", tags=["admin"])
async def admin_usage(service: CurrentService) -> dict[str, Any]:
    """Per user: chats counted this UTC minute and day, agent-mode chats today, documents
    owned (private ones), live API tokens; with the limits that apply (None: unlimited)."""
    rows = await run_in_threadpool(service.usage)
    quota = service.settings.quota
    return {
        "limits": {
            "chats_per_minute": quota.per_client_per_minute,
            "chats_per_day": quota.per_client_per_day,
            "agent_per_day": quota.agent_per_day,
            "global_per_day": quota.global_per_day,
        },
        "users": [r.to_json() for r in rows],
    }
