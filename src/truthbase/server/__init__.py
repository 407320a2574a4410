"""The web app: a FastAPI server over one index (REST + server-sent events), the chat page and
the pdf.js viewer. See :func:`create_app`."""

from __future__ import annotations

from .app import ROUTES, create_app, default_web_dir

__all__ = ["ROUTES", "create_app", "default_web_dir"]
