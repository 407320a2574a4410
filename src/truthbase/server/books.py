"""What the EPUB routes read once per book: its section hrefs and its image layout."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from ..store import Store
from .epub_files import BookFileError, BookLayout, book_layout
from .reader import normalize_href

__all__ = ["BookCache", "HasStore"]


class HasStore(Protocol):
    """Whatever holds the open index (the app's state)."""

    @property
    def store(self) -> Store: ...


class BookCache:
    """Per-book facts read once: section hrefs and image layout."""

    def __init__(self, owner: HasStore, file_matches_index: Callable[[str, Path], bool]) -> None:
        self._owner = owner
        self.file_matches_index = file_matches_index
        self._lock = threading.Lock()
        self._hrefs: dict[str, dict[str, int]] = {}
        self._layouts: dict[str, BookLayout | None] = {}

    @property
    def store(self) -> Store:
        return self._owner.store

    def units_by_href(self, doc_id: str, unit_count: int) -> dict[str, int]:
        """An EPUB's section hrefs (normalized) -> unit index, read once per document."""
        with self._lock:
            cached = self._hrefs.get(doc_id)
        if cached is None:
            cached = {}
            for index in range(unit_count):
                unit = self.store.unit(doc_id, index)
                if unit is not None and unit.href:
                    cached.setdefault(normalize_href(unit.href), index)
            with self._lock:
                self._hrefs[doc_id] = cached
        return cached

    def book_layout(self, doc_id: str, path: Path) -> BookLayout | None:
        """The EPUB's image layout, or None when its file is gone, changed or unreadable."""
        if not path.is_file() or not self.file_matches_index(doc_id, path):
            return None
        with self._lock:
            if doc_id in self._layouts:
                return self._layouts[doc_id]
        try:
            layout: BookLayout | None = book_layout(path)
        except BookFileError:
            layout = None
        with self._lock:
            self._layouts[doc_id] = layout
        return layout
