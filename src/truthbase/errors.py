"""The root of every exception TruthBase raises on purpose, and its general kinds.

A :class:`TruthBaseError` carries a message written for the person who caused it: the CLI prints
it on one line and exits 2, the HTTP API answers it with a 4xx (or 503) and a JSON ``detail``.
Any other exception is a bug and surfaces as one (a traceback, exit 1; a logged 500).

Each stage keeps its own kinds (``StoreError``, ``EmbeddingError``, ``ExtractionError``,
``LLMError``, ``GoldenError``, ...) next to its code; they derive from the root or from one of
the general kinds below. Which HTTP status a kind gets is decided in one place, the server.
"""

from __future__ import annotations

__all__ = ["InvalidInput", "NotFound", "TruthBaseError", "Unavailable"]


class TruthBaseError(Exception):
    """An error whose message says what went wrong and what to do; not a bug."""


class InvalidInput(TruthBaseError, ValueError):
    """A value from the user or the caller that cannot be used: an unknown mode, a bad
    argument, an unloadable setting. Still a ``ValueError``, as the builtin checks it replaces."""


class NotFound(TruthBaseError, LookupError):
    """Something asked for by name or id does not exist (a document, an id prefix, an index)."""


class Unavailable(TruthBaseError):
    """A backend the request needs cannot serve it now: a chat model or an embedder that fails,
    times out or cannot be reached."""
