"""Storage backends behind one Protocol."""

from __future__ import annotations

from pathlib import Path

from .base import ArmHit, FloatMatrix, IndexEmbedder, Store, StoreError
from .sqlite import SQLiteStore

__all__ = [
    "ArmHit",
    "FloatMatrix",
    "IndexEmbedder",
    "SQLiteStore",
    "Store",
    "StoreError",
    "open_store",
]


def open_store(db: Path) -> Store:
    """Open (or create) the index at ``db``."""
    return SQLiteStore(db)
