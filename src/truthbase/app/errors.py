"""The refusals of the application layer, each a :class:`~truthbase.errors.TruthBaseError` whose
kind a door translates (the web app to a status code, MCP to a tool error, the CLI to a
message): the one exception root stays."""

from __future__ import annotations

from ..errors import TruthBaseError

__all__ = ["Conflict", "Forbidden", "NotSignedIn", "QuotaExceeded"]


class Forbidden(TruthBaseError):
    """The viewer may see the thing but not do this to it (HTTP 403)."""


class NotSignedIn(TruthBaseError):
    """The use case is for a signed-in user only, and the viewer is none (HTTP 401)."""


class Conflict(TruthBaseError):
    """The request cannot be served in the thing's present state (HTTP 409)."""


class QuotaExceeded(TruthBaseError):
    """The request's quota is spent (HTTP 429): ``retry_after_s`` until a window rolls over."""

    def __init__(self, retry_after_s: float) -> None:
        super().__init__("quota exceeded: try again later")
        self.retry_after_s = retry_after_s
