"""The 422 answer to a request FastAPI could not validate, safe for any input.

FastAPI's own answer echoes each error's ``input`` and ``ctx``: a lone surrogate there (JSON
``"\\ud800"``) cannot be encoded as UTF-8, so the 422 became a 500. Here each error keeps only
its ``type``, ``loc`` and ``msg``, with any surrogate replaced by U+FFFD.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from ..text.valid import LONE_SURROGATE

__all__ = ["invalid_request", "validation_details"]


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, int | float | bool) or value is None:
        return value
    return _clean(str(value))


def validation_details(errors: Sequence[Any]) -> list[dict[str, Any]]:
    """``errors`` (pydantic's) as JSON-safe dicts of type, loc and msg."""
    out: list[dict[str, Any]] = []
    for error in errors:
        loc = error.get("loc", ()) if isinstance(error, dict) else ()
        out.append(
            {
                "type": _clean(error.get("type", "invalid"))
                if isinstance(error, dict)
                else "invalid",
                "loc": [_clean(part) for part in loc],
                "msg": _clean(error.get("msg", "")) if isinstance(error, dict) else _clean(error),
            }
        )
    return out


async def invalid_request(_: Request, exc: Exception) -> JSONResponse:
    """The exception handler for :class:`RequestValidationError`."""
    errors = exc.errors() if isinstance(exc, RequestValidationError) else []
    return JSONResponse({"detail": validation_details(errors)}, status_code=422)
