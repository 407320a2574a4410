"""Who is asking, for every request: the gate in front of every page and ``/api`` route, the
session cookie, the login and logout routes.

Modes. With no user defined and the server bound to a loopback address, the app runs as it did
before accounts: one local user, the operator (:data:`~truthbase.people.OPERATOR`), who sees
every document. With users defined, or bound to any other address, every page and ``/api``
route needs a login (the session cookie) or an API token (``Authorization: Bearer``): ``/api``
answers 401 without one, a page redirects to ``/login``. Only the login page itself, its
stylesheet and scripts, and ``/healthz`` (without the document count) are open.

The session cookie carries a random session id and its HMAC-SHA256 under the server's secret
key (``auth.secret_key_file``, created on first use); the store keeps only the id's sha256, with
the expiry (``auth.session_lifetime_s``). The cookie is HttpOnly, SameSite=Strict, Path=/,
Secure when the request came over HTTPS (``auth.cookie_secure``), and expires with the session.

Cross-site requests: a POST (or any unsafe method) whose ``Origin`` (or ``Sec-Fetch-Site``) says
it comes from another site is refused with 403 before any handler runs, whatever the mode
(SameSite=Strict already keeps the cookie off it; this also keeps a foreign page from spending
the local user's quota). Requests with an API token are exempt: a browser never adds one.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Receive, Scope, Send

from ..access import sees_everything
from ..app.accounts import sign_in
from ..app.viewers import (
    accounts_required,
    bearer_secret,
    bearer_viewer,
    session_holder,
    sign_out,
)
from ..config import AuthSettings
from ..people import OPERATOR, Viewer
from ..text.valid import has_lone_surrogate
from .deps import CurrentState, CurrentViewer
from .pages import page
from .state import AppState

__all__ = [
    "COOKIE",
    "AuthGate",
    "router",
]

COOKIE = "truthbase_session"
#: Paths open without a login (the login page needs its stylesheet and scripts).
# /metrics decides for itself: admins, or scrapers on a loopback address (server/observe.py).
_OPEN = ("/login", "/healthz", "/metrics")
_OPEN_PREFIXES = ("/css/", "/js/")
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def _signature(key: bytes, value: str) -> str:
    digest = hmac.new(key, value.encode("utf-8"), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def sign(key: bytes, session_id: str) -> str:
    return f"{session_id}.{_signature(key, session_id)}"


def unsign(key: bytes, cookie: str) -> str | None:
    """The session id a cookie signed with ``key`` names; None for any other value (a cookie
    parser may hand over non-ASCII characters, which ``compare_digest`` refuses as text: the
    two sides are compared as UTF-8 bytes)."""
    session_id, _, signature = cookie.rpartition(".")
    expected = _signature(key, session_id).encode("ascii")
    if not session_id or not hmac.compare_digest(signature.encode("utf-8", "replace"), expected):
        return None
    return session_id


def _is_open(path: str) -> bool:
    return path in _OPEN or path.startswith(_OPEN_PREFIXES)


def _cross_site(scope: Scope) -> bool:
    headers: dict[str, str] = {
        k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])
    }
    if headers.get("sec-fetch-site", "") == "cross-site":
        return True
    origin = headers.get("origin")
    if not origin:
        return False
    if origin == "null":  # sandboxed frames, file: pages, redirects across origins
        return True
    try:
        netloc = urlsplit(origin).netloc
    except ValueError:  # "http://[::1": no origin a browser sends; refused like a foreign one
        return True
    return netloc.lower() != headers.get("host", "").lower()


class AuthGate:
    """ASGI middleware: finds the viewer (API token, session cookie, or the local user), puts
    it on ``request.state.viewer``, and refuses what needs a login and has none, and cross-site
    unsafe requests."""

    def __init__(self, app: ASGIApp, state: AppState) -> None:
        self.app = app
        self.state = state

    def _find(self, scope: Scope) -> tuple[Viewer | None, str, bool]:
        """(viewer, how: "token" | "session" | "local" | "", accounts required); sync."""
        store = self.state.store
        required = accounts_required(store, self.state.settings.server.host)
        if not required:
            return OPERATOR, "local", False
        request = Request(scope)
        authorization = request.headers.get("authorization", "")
        if bearer_secret(authorization) is not None:  # a wrong token is no login, whatever else
            return bearer_viewer(store, authorization), "token", True
        cookie = request.cookies.get(COOKIE)
        if cookie:
            session_id = unsign(self.state.key(), cookie)
            if session_id is not None:
                viewer = session_holder(store, session_id)
                if viewer is not None:
                    return viewer, "session", True
        return None, "", True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        viewer, how, required = await run_in_threadpool(self._find, scope)
        state = scope.setdefault("state", {})
        state["viewer"], state["auth_via"], state["accounts"] = viewer, how, required
        if scope["method"] not in _SAFE_METHODS and how != "token" and _cross_site(scope):
            response: Response = JSONResponse({"detail": "cross-site request refused"}, 403)
            await response(scope, receive, send)
            return
        if viewer is None and not _is_open(path):
            if path.startswith("/api/") or path == "/openapi.json":
                response = JSONResponse(
                    {
                        "detail": "login required: sign in at /login, or send Authorization: "
                        "Bearer TOKEN (truthbase tokens create)"
                    },
                    status_code=401,
                    headers={"WWW-Authenticate": 'Bearer realm="truthbase"'},
                )
            else:
                query = scope.get("query_string", b"").decode("latin-1")
                target = path + (f"?{query}" if query else "")
                response = RedirectResponse(f"/login?next={quote(target, safe='')}", 303)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _safe_next(value: str | None) -> str:
    """Where to go after the login: a path of this site only (never another origin)."""
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value:
        return "/"
    return value


def _cookie_secure(auth: AuthSettings, request: Request) -> bool:
    if auth.cookie_secure == "always":
        return True
    if auth.cookie_secure == "never":
        return False
    return request.url.scheme == "https"


async def _credentials(request: Request) -> tuple[str, str, str | None, bool]:
    """(name, password, next, whether the body was a form) of a login POST: JSON or an
    urlencoded form (no multipart parser needed)."""
    raw = await request.body()
    if len(raw) > 10_000:
        raise HTTPException(413, "login body too large")
    content_type = request.headers.get("content-type", "")
    if content_type.startswith("application/json"):
        try:
            data: Any = json.loads(raw or b"{}")
        except ValueError as exc:
            raise HTTPException(422, "the body is not JSON") from exc
        if not isinstance(data, dict):
            raise HTTPException(422, "the body must be a JSON object")
        nxt = data.get("next")
        credentials = (str(data.get("name", "")), str(data.get("password", "")))
        if any(has_lone_surrogate(v) for v in (*credentials, nxt if isinstance(nxt, str) else "")):
            # A lone surrogate ("\ud800" in JSON) is no text: the password hash cannot read it.
            raise HTTPException(422, "the body is not valid Unicode text (a lone surrogate)")
        return (*credentials, nxt if isinstance(nxt, str) else None, False)
    form = parse_qs(raw.decode("utf-8", "replace"), keep_blank_values=True)
    return (
        form.get("name", [""])[0],
        form.get("password", [""])[0],
        form.get("next", [None])[0],
        True,
    )


_CREDENTIALS = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "password": {"type": "string"},
        "next": {"type": "string", "description": "Where to go after (a path of this site)."},
    },
}
# The body is read by hand (JSON or a form, see _credentials): declared here for /openapi.json.
_LOGIN_OPENAPI: dict[str, Any] = {
    "requestBody": {
        "content": {
            "application/json": {"schema": _CREDENTIALS},
            "application/x-www-form-urlencoded": {"schema": _CREDENTIALS},
        }
    },
    "responses": {"303": {"description": "A form post: to the next page, or back to the login."}},
}


router = APIRouter()


@router.get("/login", response_class=HTMLResponse, include_in_schema=False)
async def login_page(request: Request, state: CurrentState, viewer: CurrentViewer) -> Response:
    """The login page; a signed-in user goes straight on."""
    if viewer.user is not None:
        return RedirectResponse(_safe_next(request.query_params.get("next")), 303)
    return page(state.web_dir, "login.html")


@router.post("/login", tags=["auth"], openapi_extra=_LOGIN_OPENAPI)
async def login(request: Request, state: CurrentState) -> Response:
    """Sign in with ``{"name": ..., "password": ...}`` (JSON or a form): sets the session
    cookie. 401 for a wrong name or password (the same answer for both)."""
    name, password, nxt, is_form = await _credentials(request)
    auth = state.settings.auth
    signed_in = await run_in_threadpool(
        sign_in, state.store, name, password, auth.session_lifetime_s
    )
    if signed_in is None:
        if is_form:
            return RedirectResponse("/login?failed=1", 303)
        raise HTTPException(401, "wrong name or password")
    user = signed_in.user
    target = _safe_next(nxt)
    response: Response = (
        RedirectResponse(target, 303)
        if is_form
        else JSONResponse({"user": user.name, "admin": user.admin, "next": target})
    )
    response.set_cookie(
        COOKIE,
        sign(state.key(), signed_in.session_id),
        max_age=auth.session_lifetime_s,
        path="/",
        secure=_cookie_secure(auth, request),
        httponly=True,
        samesite="strict",
    )
    return response


@router.post("/logout", tags=["auth"], responses={303: {"description": "To the login page."}})
async def logout(request: Request, state: CurrentState) -> Response:
    """End this session (the cookie is cleared); then the login page."""
    cookie = request.cookies.get(COOKIE)
    session_id = unsign(state.key(), cookie) if cookie else None
    if session_id is not None:
        await run_in_threadpool(sign_out, state.store, session_id)
    wants_json = "application/json" in request.headers.get("accept", "")
    response: Response = (
        JSONResponse({"user": None}) if wants_json else RedirectResponse("/login", 303)
    )
    response.delete_cookie(
        COOKIE,
        path="/",
        secure=_cookie_secure(state.settings.auth, request),
        httponly=True,
        samesite="strict",
    )
    return response


@router.get("/api/me", tags=["auth"])
async def me(request: Request, viewer: CurrentViewer) -> dict[str, Any]:
    """Who is asking: ``user`` (None for the single local user), ``admin``, and ``mode``:
    ``local`` (no accounts: every document, said on the page) or ``accounts``."""
    local = not getattr(request.state, "accounts", False)
    return {
        "user": viewer.user,
        "admin": sees_everything(viewer),
        "mode": "local" if local else "accounts",
    }
