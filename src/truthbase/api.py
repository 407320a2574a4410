"""The Python API: one object, :class:`Library`, over one index, for scripts and agents.

``Library("my.sqlite")`` (or ``Library("postgresql://...")``) opens the index with the settings
tree (:class:`~truthbase.config.Settings`: environment, ``truthbase.toml``, or one you pass) and
offers what the command line and the server offer, through the same functions they call:

* :meth:`Library.ingest` is :func:`truthbase.ingest.ingest_paths` (as ``truthbase ingest``);
* :meth:`Library.search` is :func:`truthbase.retrieve.hybrid.search` (as ``GET /api/search``);
* :meth:`Library.ask` yields the typed events of :func:`truthbase.modes.answer_events`, the very
  records the server turns into server-sent events (``sources``, ``token``, ``citations``,
  ``done`` or ``error``; each has ``to_json()``, the event's data on the wire);
* :meth:`Library.verify_claim` is :func:`truthbase.cite.verify.verify_claim` (as
  ``truthbase verify-claim``);
* :meth:`Library.passage` reads any span: its text, page, rects and position tag
  (:func:`truthbase.cite.tags.format_tag`).

Every read goes through :mod:`truthbase.access`: a library opened as a user
(:meth:`Library.for_viewer`) sees what that user sees, in search, answers and passages, and a
document it may not see is :class:`~truthbase.errors.NotFound`, exactly as a missing one. A
library opened plainly is the operator's, who sees everything (as the command line).

This is a thin shell over the stages (it sits above :mod:`truthbase.modes`); the MCP server
(:mod:`truthbase.mcp_server`) is a thin shell over it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal
from urllib.parse import urlencode

from .access import narrow, require_visible, sees_everything, visible_ids
from .answer import DoneEvent, record_answer
from .answer.model import Event
from .cite.tags import format_tag
from .cite.verify import ClaimVerdict
from .cite.verify import verify_claim as _verify_claim
from .config import Settings
from .embed import Embedder, load_embedder
from .errors import InvalidInput, NotFound
from .geometry import span_line_rects
from .ingest import IngestOptions, IngestSummary, ingest_paths
from .model import DocumentInfo, Rect, Visibility
from .modes import answer_events
from .records import OPERATOR, SearchHit, Viewer
from .retrieve.hybrid import search as _search
from .store import Store, open_store

__all__ = ["Library", "Passage", "SearchMode", "viewer_url"]

#: The retrieval arms :meth:`Library.search` can use: both fused, or one alone.
SearchMode = Literal["hybrid", "fts", "dense"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Passage:
    """One span of a unit's canonical text, as a citation would show it.

    ``unit`` is 0-based (a PDF page or an EPUB section); ``page`` is ``unit + 1``;
    ``[start, end)`` are offsets into the unit's canonical text; ``rects`` are one rectangle per
    rendered line in PDF user space (empty for EPUB sections, which have no glyph boxes);
    ``tag`` is the span's position tag ``[f{unit}-{start}-{end}]``."""

    doc_id: str
    title: str
    kind: str
    unit: int
    page: int
    label: str | None
    start: int
    end: int
    text: str
    rects: tuple[Rect, ...]
    tag: str

    def to_json(self) -> dict[str, Any]:
        """The passage as JSON-ready data (rects as ``[x0, y0, x1, y1]`` lists)."""
        return {
            "doc_id": self.doc_id,
            "title": self.title,
            "kind": self.kind,
            "unit": self.unit,
            "page": self.page,
            "label": self.label,
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "rects": [list(r) for r in self.rects],
            "tag": self.tag,
        }


def viewer_url(base_url: str, kind: str, doc_id: str, unit: int, start: int, end: int) -> str:
    """The web app's link to a span: ``/view`` (PDF, 1-based page) or ``/read`` (EPUB, 0-based
    section), highlighted, under ``base_url`` (the ``server.base_url`` setting)."""
    base = base_url.rstrip("/")
    if kind == "epub":
        query = {"doc": doc_id, "unit": unit, "start": start, "end": end}
        return f"{base}/read?{urlencode(query)}"
    query = {"doc": doc_id, "page": unit + 1, "start": start, "end": end}
    return f"{base}/view?{urlencode(query)}"


class Library:
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
        self.settings: Settings = base
        self.viewer: Viewer = OPERATOR
        self._store: Store | None = open_store(base)
        self._embedder = embedder
        self._owner = True

    # -- life -------------------------------------------------------------------------------

    def for_viewer(self, viewer: Viewer) -> Library:
        """This library as ``viewer`` sees it (their documents and the shared ones; everything
        for admins), sharing the open index: closing the view leaves the index open."""
        view = object.__new__(Library)
        view.settings = self.settings
        view.viewer = viewer
        view._store = self.store
        view._embedder = self.embedder
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

    @property
    def store(self) -> Store:
        """The open store (SQLite or PostgreSQL)."""
        if self._store is None:
            raise InvalidInput("this library is closed")
        return self._store

    @property
    def embedder(self) -> Embedder:
        """The embedder of the settings (loaded on first use), or the one passed in."""
        if self._embedder is None:
            self._embedder = load_embedder(self.settings.embedder)
        return self._embedder

    # -- documents --------------------------------------------------------------------------

    def documents(self) -> list[DocumentInfo]:
        """The documents this library's viewer may see."""
        documents = self.store.list_documents()
        scope = visible_ids(self.viewer, documents)
        return [d for d in documents if scope is None or d.id in scope]

    def document(self, doc: str) -> DocumentInfo:
        """The visible document whose id is ``doc`` or starts with it (at least 4 characters);
        NotFound when there is none (or only hidden ones), InvalidInput when several match."""
        wanted = doc.strip().lower()
        if len(wanted) < 4:
            raise InvalidInput(f"document id {doc!r}: give at least 4 characters of it")
        matches = [d for d in self.documents() if d.id.startswith(wanted)]
        if not matches:
            raise NotFound(f"no document {doc}")
        if len(matches) > 1:
            raise InvalidInput(f"{len(matches)} document ids start with {doc!r}; give more of it")
        return require_visible(self.viewer, matches[0], matches[0].id)

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

    # -- retrieval and answers --------------------------------------------------------------

    def _scope(self, doc: str | None) -> frozenset[str] | None:
        scope = None if sees_everything(self.viewer) else visible_ids(self.viewer, self.documents())
        return narrow(scope, self.document(doc).id if doc is not None else None)

    def search(
        self,
        query: str,
        *,
        k: int | None = None,
        doc: str | None = None,
        mode: SearchMode = "hybrid",
    ) -> list[SearchHit]:
        """The ``k`` best chunks for ``query`` (default ``retrieval.k``) among the documents the
        viewer may see (only ``doc``'s, an id or unique prefix, when given), best first."""
        if not query.strip():
            raise InvalidInput("the query is empty")
        result = _search(
            self.store,
            self.embedder,
            query,
            self.settings.retrieval,
            k=k,
            mode=mode,
            doc_ids=self._scope(doc),
        )
        return list(result.hits)

    def ask(
        self,
        question: str,
        *,
        mode: str | None = None,
        doc: str | None = None,
        k: int | None = None,
        record: bool = True,
    ) -> Iterator[Event]:
        """The events of one answer, as the server streams them: a ``SourcesEvent`` first, then
        ``TokenEvent``s, then a ``CitationsEvent``, then a ``DoneEvent`` (its ``answer`` is the
        whole answer) or an ``ErrorEvent``. ``mode``: ``auto`` (None), ``extractive``, ``llm``
        or ``agent``, as ``truthbase ask --mode``; ``doc`` keeps the sources (and agent mode's
        book tools) to one document; ``k`` sources (default ``retrieval.k``). With ``record``
        the answer is stored for ``truthbase verify``."""
        if not question.strip():
            raise InvalidInput("the question is empty")
        doc_id = self.document(doc).id if doc is not None else None
        for event in answer_events(
            self.store,
            self.embedder,
            question,
            self.settings,
            mode=mode,
            k=k,
            doc_id=doc_id,
            viewer=self.viewer,
        ):
            if record and isinstance(event, DoneEvent):
                record_answer(self.store, event.answer)
            yield event

    # -- passages and claims ----------------------------------------------------------------

    def passage(self, doc: str, unit: int, start: int, end: int) -> Passage:
        """The span ``[start, end)`` of unit ``unit`` (0-based) of ``doc``: its text, page,
        rects and position tag. InvalidInput for a unit or span out of range."""
        info = self.document(doc)
        if not 0 <= unit < info.unit_count:
            raise InvalidInput(
                f"unit {unit} is out of range: document {info.id[:12]} has units "
                f"0..{info.unit_count - 1}"
            )
        stored = self.store.unit(info.id, unit)
        if stored is None:
            raise NotFound(f"unit {unit} of document {info.id[:12]} is not stored")
        if not 0 <= start <= end <= len(stored.text):
            raise InvalidInput(
                f"span [{start}, {end}) is outside unit {unit}'s text of length {len(stored.text)}"
            )
        return Passage(
            doc_id=info.id,
            title=info.title,
            kind=info.kind,
            unit=unit,
            page=unit + 1,
            label=stored.label,
            start=start,
            end=end,
            text=stored.text[start:end],
            rects=tuple(span_line_rects(stored.text, stored.boxes, start, end)),
            tag=format_tag(unit, start, end),
        )

    def verify_claim(
        self,
        doc: str,
        quote: str,
        claim: str,
        *,
        page: int | None = None,
        unit: int | None = None,
    ) -> ClaimVerdict:
        """Whether ``quote`` is on the page (``page``, 1-based, PDFs) or unit (``unit``,
        0-based) of ``doc`` and supports ``claim``: the verdict's ``state`` is ``supported``,
        ``quote_only`` or ``unverified``, with where the quote is and each failed check
        (:func:`truthbase.cite.verify.verify_claim`, as ``truthbase verify-claim``)."""
        if (page is None) == (unit is None):
            raise InvalidInput("give exactly one of page (PDF, 1-based) and unit (0-based)")
        info = self.document(doc)
        if page is not None:
            if info.kind == "epub":
                raise InvalidInput("an EPUB has sections, not pages: give unit (0-based)")
            if page < 1:
                raise InvalidInput(f"page {page}: pages count from 1")
            unit = page - 1
        assert unit is not None
        return _verify_claim(self.store, info.id, unit, quote, claim, self.embedder)
