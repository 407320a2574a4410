"""Reading structured output out of what a model wrote, leniently and never raising."""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["loads_loose", "strip_fences"]

_FENCE = re.compile(r"```[a-zA-Z]*\s*(.*?)\s*```", re.DOTALL)
_MAX_STARTS = 64  # raw_decode attempts: bounded work on long garbage


def strip_fences(text: str) -> str:
    """The inside of the first Markdown code fence, else ``text``, stripped."""
    match = _FENCE.search(text)
    return (match.group(1) if match else text).strip()


def loads_loose(text: str) -> Any | None:
    """The first JSON object or array in ``text``, or None.

    Tries the whole text, the inside of a code fence, then each ``{`` or ``[`` in turn (the
    first value that decodes from there wins, trailing prose ignored).
    """
    for candidate in (text.strip(), strip_fences(text)):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict | list):
            return value
    decoder = json.JSONDecoder()
    for count, match in enumerate(re.finditer(r"[\[{]", text)):
        if count >= _MAX_STARTS:
            break
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict | list):
            return value
    return None
