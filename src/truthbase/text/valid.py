"""Whether a string is text at all: a lone UTF-16 surrogate is no character of any encoding.

It reaches the code from outside only: JSON's ``"\\ud800"`` escape, and a command line's bytes
that are not UTF-8 (Python keeps them as surrogates). The tokenizer and both stores refuse
such a string with errors of their own (a TypeError, a UnicodeEncodeError) that no door can
explain, so each entry point asks here first and says which input it was.
"""

from __future__ import annotations

import re

from ..errors import InvalidInput

__all__ = ["LONE_SURROGATE", "has_lone_surrogate", "require_text"]

#: A surrogate code point: in a ``str`` (where a pair is one character) always a lone one.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def has_lone_surrogate(value: str) -> bool:
    return LONE_SURROGATE.search(value) is not None


def require_text(value: str, what: str) -> str:
    """``value``, or InvalidInput naming ``what`` when it is not text."""
    if has_lone_surrogate(value):
        raise InvalidInput(f"the {what} is not valid text (bytes that are not UTF-8?)")
    return value
