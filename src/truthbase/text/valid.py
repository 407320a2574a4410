"""Whether a string is text at all: a lone UTF-16 surrogate is no character of any encoding.

It reaches the code from outside only: JSON's ``"\\ud800"`` escape, and a command line's bytes
that are not UTF-8 (Python keeps them as surrogates). The tokenizer and both stores refuse
such a string with errors of their own (a TypeError, a UnicodeEncodeError) that no door can
explain, so each entry point asks here first and says which input it was.
"""

from __future__ import annotations

import re
import unicodedata

from ..errors import InvalidInput

__all__ = [
    "BIDI_CONTROL",
    "LONE_SURROGATE",
    "display_line",
    "has_lone_surrogate",
    "has_visible",
    "json_may_hold_surrogate",
    "quoted",
    "require_text",
]

#: A surrogate code point: in a ``str`` (where a pair is one character) always a lone one.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")

#: The characters that reorder the text around them (embeddings, overrides, isolates, marks): in
#: a name or title they make it read as something else ("\u202egnp.exe" shows as "exe.png").
BIDI_CONTROL = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


#: A JSON escape of a surrogate (``\\ud800``): the only way JSON text read from UTF-8 can hold
#: one once decoded (a pair of them decodes to one character; this cannot tell, so it is a
#: cheap first look, not the answer).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def has_lone_surrogate(value: str) -> bool:
    return LONE_SURROGATE.search(value) is not None


def json_may_hold_surrogate(text: str) -> bool:
    """Whether the JSON ``text`` may decode to a string with a lone surrogate (False: it
    cannot, and nothing decoded from it need be searched)."""
    return has_lone_surrogate(text) or _SURROGATE_ESCAPE.search(text) is not None


def require_text(value: str, what: str, *, max_chars: int | None = None) -> str:
    """``value``, or InvalidInput naming ``what`` when it is not text or is longer than
    ``max_chars``."""
    if max_chars is not None and len(value) > max_chars:
        raise InvalidInput(
            f"the {what} is {len(value):,} characters long: at most {max_chars:,} are taken"
        )
    if has_lone_surrogate(value):
        raise InvalidInput(f"the {what} is not valid text (bytes that are not UTF-8?)")
    return value


#: The characters of a value an error message repeats (:func:`quoted`).
QUOTED_CHARS = 80


def quoted(value: object) -> str:
    """``value`` as an error message repeats it: its ``repr``, cut after :data:`QUOTED_CHARS`
    characters with its length stated. A message names what was wrong; echoing a 100 KB name
    back whole (into a terminal, a log line, a JSON reply) says nothing more."""
    text = repr(value)
    if len(text) <= QUOTED_CHARS:
        return text
    size = f"{len(value):,} characters" if isinstance(value, str) else f"{len(text):,} as written"
    return f"{text[: QUOTED_CHARS - 1]}… ({size})"


def has_visible(value: str) -> bool:
    """Whether ``value`` has a character that shows: not whitespace, a control or a format
    character (a zero-width space alone is no name)."""
    return any(not ch.isspace() and unicodedata.category(ch) not in ("Cc", "Cf") for ch in value)


def display_line(value: str) -> str:
    """``value`` as one line to show (a title): each control character and line or paragraph
    separator a space, bidirectional controls dropped, runs of whitespace one space; "" when
    nothing visible is left. A control character kept would reach a terminal (an escape
    sequence in ``truthbase threads list``)."""
    spaced = "".join(
        " " if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch
        for ch in BIDI_CONTROL.sub("", value)
    )
    line = " ".join(spaced.split())
    return line if has_visible(line) else ""
