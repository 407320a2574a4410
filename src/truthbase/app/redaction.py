"""What a viewer is shown of an answer: the error-visibility policy of every door.

Those who see everything (:func:`truthbase.access.sees_everything`: admins, the operator, the
local user of a server without accounts, who runs it and reads its log) see an answer's events
as they are. Everyone else gets them with URLs (the model endpoints in ``answerer``, ``info``
and problems) and provider error strings hidden, and an ``error`` event's message replaced by a
general one, the original logged. Nobody is shown a server path in a message
(:func:`redact_paths`): paths go to the log.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable
from functools import cache
from typing import Any

from ..access import sees_everything
from ..answer.model import ErrorEvent
from ..errors import TruthBaseError
from ..people import Viewer

__all__ = [
    "ERROR_MESSAGE",
    "HIDDEN",
    "INTERNAL_ERROR",
    "REDACTED",
    "failure_event",
    "redact_event",
    "redact_paths",
    "shown_event",
]

logger = logging.getLogger(__name__)

_URL = re.compile(r"\b[a-z][a-z0-9+.\-]*://[^\s\"'<>)\]]+", re.IGNORECASE)
#: Keys whose values are provider error strings (model failures, fallback reasons from them).
_PROVIDER_KEYS = frozenset({"error", "failed", "failures", "model_failures"})
HIDDEN = "[hidden]"
ERROR_MESSAGE = "the answer could not be completed (the server log has the details)"

#: What a bug is shown as: nothing of the exception reaches anyone but the log.
INTERNAL_ERROR = "internal error"

#: What replaces a server path in a message to a client.
REDACTED = "<path>"

# An absolute POSIX path: "/" then a first component (checked against the root's entries, so
# that a route like /api/search stays), then anything up to whitespace, a quote or a bracket.
_ABSOLUTE = re.compile(r"""(?<![\w/.:~-])/([\w.@+-]+)(?:/[^\s'"<>()\[\],;:]*)?""")


@cache
def _root_entries() -> frozenset[str]:
    try:
        return frozenset(os.listdir("/"))
    except OSError:  # pragma: no cover - no readable root
        return frozenset()


def redact_paths(message: str) -> str:
    """``message`` with every absolute server path (one under an entry of ``/``) replaced by
    ``<path>``."""
    roots = _root_entries()
    return _ABSOLUTE.sub(lambda m: REDACTED if m.group(1) in roots else m.group(0), message)


def _redact(value: Any) -> Any:
    if isinstance(value, str):
        return _URL.sub(HIDDEN, value)
    if isinstance(value, dict):
        return {k: (_hide(v) if k in _PROVIDER_KEYS else _redact(v)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact(v) for v in value]
    return value


def _hide(value: Any) -> Any:
    """A provider error value as a non-admin sees it: its shape kept, its text hidden."""
    if isinstance(value, str):
        return HIDDEN
    if isinstance(value, dict):
        return {k: (_hide(v) if k == "error" else _redact(v)) for k, v in value.items()}
    if isinstance(value, Iterable) and not isinstance(value, bytes):
        return [_hide(v) for v in value]
    return value


def redact_event(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """An event's data as a non-admin gets it: URLs and provider error strings hidden; an
    ``error`` event's message replaced by a general one, the original logged."""
    if kind == "error":
        logger.warning(
            "chat error at %s (hidden from the client): %s", data.get("stage"), data.get("message")
        )
        return {**data, "message": ERROR_MESSAGE}
    redacted: dict[str, Any] = _redact(data)
    return redacted


def shown_event(viewer: Viewer, kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """An event's data as ``viewer`` is shown it: whole for those who see everything, else
    :func:`redact_event`'s."""
    return data if sees_everything(viewer) else redact_event(kind, data)


def failure_event(stage: str, exc: Exception) -> ErrorEvent:
    """The ``error`` event of an answer that failed at ``stage`` with ``exc``: a TruthBaseError
    says what it is (no server path in it); any other exception is a bug, logged with its
    traceback and shown as :data:`INTERNAL_ERROR`."""
    if isinstance(exc, TruthBaseError):
        message = redact_paths(f"{type(exc).__name__}: {exc}")
    else:
        logger.error("unexpected error in an answer (%s)", stage, exc_info=exc)
        message = INTERNAL_ERROR
    return ErrorEvent(message=message, stage=stage)
