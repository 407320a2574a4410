"""The HNSW graph settings are written twice, by necessity: in the settings tree (config may not
import the store) and in the store's own defaults (store/postgres/schema.Hnsw, for a store made
without settings). They must say the same."""

from __future__ import annotations

from truthbase.config import PostgresSettings
from truthbase.store.postgres.schema import Hnsw


def test_the_settings_and_the_store_default_to_the_same_graph() -> None:
    settings, store = PostgresSettings(), Hnsw()
    assert (settings.hnsw_m, settings.hnsw_ef_construction, settings.hnsw_ef_search) == (
        store.m,
        store.ef_construction,
        store.ef_search,
    )
