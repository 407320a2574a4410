"""The Python API: one object, :class:`Library`, over one index, for scripts and agents.

``Library("my.sqlite")`` (or ``Library("postgresql://...")``) opens the index with the settings
tree (:class:`~truthbase.config.Settings`: environment, ``truthbase.toml``, or one you pass) and
offers what the command line and the server offer, through the same functions they call:

* :meth:`Library.ingest` is :func:`truthbase.ingest.ingest_paths` (as ``truthbase ingest``);
* :meth:`Library.search` is :func:`truthbase.retrieve.hybrid.search` (as ``GET /api/search``);
* :meth:`Library.ask` yields the typed events of :func:`truthbase.modes.answer_events`, the very
  records the server turns into server-sent events (``sources``, ``token``, ``citations``,
  ``done`` or ``error``; each has ``to_json()``, the event's data on the wire); a follow-up
  passes the thread's earlier turns (``history=[Turn(...), ...]``, or ``answer.as_turn(q)`` of
  an earlier answer) and its ``done`` event's ``resolution`` says what was searched;
* :meth:`Library.verify_claim` is :func:`truthbase.cite.verify.verify_claim` (as
  ``truthbase verify-claim``);
* :meth:`Library.passage` reads any span: its text, page, rects and position tag
  (:func:`truthbase.cite.tags.format_tag`).

Every read goes through :mod:`truthbase.access`: a library opened as a user
(:meth:`Library.for_viewer`) sees what that user sees, in search, answers and passages, and a
document it may not see is :class:`~truthbase.errors.NotFound`, exactly as a missing one. A
library opened plainly is the operator's, who sees everything (as the command line).

The Python API is a door like the web app, the CLI and the MCP server: :class:`Library` is the
application service (:class:`truthbase.app.Service`, where every use case and its policy live)
opened over an index, plus :meth:`Library.ingest`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

from .app import Passage, SearchMode, Service, viewer_url
from .config import Settings
from .embed import Embedder, load_embedder
from .ingest import IngestOptions, IngestSummary, ingest_paths
from .model import Visibility
from .people import Viewer
from .store import open_store
from .turns import CitedSpan, Resolution, Turn

__all__ = ["CitedSpan", "Library", "Passage", "Resolution", "SearchMode", "Turn", "viewer_url"]


class Library(Service):
    """An open index: ingest, search, ask, read passages and verify claims.

    ``location`` is an SQLite file (a path) or a PostgreSQL URL (``postgresql://...``); None
    takes ``settings.db`` / ``settings.database_url``. ``settings`` defaults to
    ``Settings()`` (the ``TRUTHBASE_*`` environment and ``truthbase.toml``). The embedder is the
    one the settings name, loaded on first use, unless you pass one. Use it as a context
    manager, or call :meth:`close`.

    >>> with Library("my.sqlite") as library:  # doctest: +SKIP
    ...     library.ingest(["papers/"])
    ...     hits = library.search("what does GV.OC-01 require?", k=3)
    """

    def __init__(
        self,
        location: str | Path | None = None,
        *,
        settings: Settings | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        base = settings if settings is not None else Settings()
        if location is not None:
            text = str(location)
            if text.startswith(("postgresql://", "postgres://")):
                base = base.model_copy(update={"database_url": text})
            else:
                base = base.model_copy(update={"db": Path(location), "database_url": None})
        loaded: list[Embedder] = [embedder] if embedder is not None else []
        lock = threading.Lock()

        def embedder_of() -> Embedder:
            with lock:
                if not loaded:
                    loaded.append(load_embedder(base.embedder))
                return loaded[0]

        super().__init__(open_store(base), base, embedder_of)
        self._owner = True

    # -- life -------------------------------------------------------------------------------

    def for_viewer(self, viewer: Viewer) -> Library:
        """This library as ``viewer`` sees it (their documents and the shared ones; everything
        for admins), sharing the open index: closing the view leaves the index open."""
        view = super().for_viewer(viewer)
        view._owner = False
        return view

    def close(self) -> None:
        """Close the index (a view from :meth:`for_viewer` leaves it open)."""
        if self._store is not None and self._owner:
            self._store.close()
        self._store = None

    def __enter__(self) -> Library:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- documents --------------------------------------------------------------------------

    def ingest(
        self,
        paths: Iterable[str | Path],
        *,
        visibility: Visibility = "shared",
    ) -> IngestSummary:
        """Ingest PDF and EPUB files and folders (recursively), one transaction per document,
        idempotent by content. New documents are this library's viewer's (the operator's for
        a plain library) with ``visibility``. A file that fails is in the summary's
        ``failed`` with its reason; the others ingest."""
        return ingest_paths(
            [Path(p) for p in paths],
            self.store,
            self.embedder,
            IngestOptions.from_settings(
                self.settings, owner=self.viewer.user_id, visibility=visibility
            ),
        )
