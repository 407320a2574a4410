"""The application layer: every use case with its policy, above the stages and below the doors.

:class:`~.service.Service` is the one door the web app, the CLI, the MCP server and the Python
API (:class:`truthbase.api.Library` is a Service) go through; each only translates requests
and responses. Its parts: :mod:`.admission` (quotas), :mod:`.redaction` (what a viewer is
shown), :mod:`.lifecycle` (rename, share, re-ingest, delete), :mod:`.uploads` (received files
as ingest jobs, within the upload limits), :mod:`.passages` (passages and the viewers' spans),
:mod:`.accounts` (users and API tokens, and who may manage them), :mod:`.collections` (the
named collections of documents a user keeps, to limit questions to), :mod:`.threads` (saved
threads, each its owner's alone), :mod:`.shares` (a thread's read-only links),
:mod:`.viewers` (who is
asking: API tokens, sessions), :mod:`.errors` (the refusals doors translate).
"""

from __future__ import annotations

from .errors import Conflict, Forbidden, NotSignedIn, QuotaExceeded
from .passages import Passage, viewer_url
from .service import AGENT_REFUSED, AnswerPlan, SearchMode, Service, agent_allowed

__all__ = [
    "AGENT_REFUSED",
    "AnswerPlan",
    "Conflict",
    "Forbidden",
    "NotSignedIn",
    "Passage",
    "QuotaExceeded",
    "SearchMode",
    "Service",
    "agent_allowed",
    "viewer_url",
]
