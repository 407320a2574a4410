"""Unit fixtures: the scripted OpenAI-compatible chat server (tests/helpers/transcripts.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.transcripts import Scripted, scripted_server


@pytest.fixture()
def server() -> Iterator[Scripted]:
    """A scripted chat server on 127.0.0.1 for one test: queue replies, read requests."""
    with scripted_server() as scripted:
        yield scripted
