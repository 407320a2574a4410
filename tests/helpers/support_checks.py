"""Helpers shared by the unit tests of the support checks (:mod:`truthbase.cite.support`)."""

from __future__ import annotations

import pytest

from truthbase.cite.lexicon import DEFAULT_WORDNET
from truthbase.cite.support import check_support

#: Skips a test that needs WordNet's synonyms and antonyms when its data is not installed.
needs_wordnet = pytest.mark.skipif(
    not (DEFAULT_WORDNET / "index.noun").is_file(),
    reason="WordNet (Debian wordnet-base) is not installed: scripts/install.sh installs it",
)


def reason_of(claim: str, quote: str, code: str, **kwargs: str) -> dict[str, str] | None:
    """The first reason ``code`` that :func:`check_support` gives (as JSON), and None when it
    gives none; a claim with such a reason must not be supported."""
    check = check_support(claim, quote, **kwargs)
    found = [r for r in check.reasons if r.code == code]
    if found:
        assert not check.supported
        return found[0].to_json()
    return None


def codes(claim: str, quote: str, **kwargs: str) -> list[str]:
    """The codes of the reasons :func:`check_support` gives, in order."""
    return [r.code for r in check_support(claim, quote, **kwargs).reasons]
