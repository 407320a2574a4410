"""What counts as a refusal in an answer text: the one rule, :func:`is_refusal`.

It sits in cite/ (not in :mod:`truthbase.answer.policy`, which re-exports it and makes every
other refusal decision) because the parser below the answer stage needs it: a refused answer
has no citations (:func:`truthbase.cite.parse.parse_answer`).

The rule: the text refuses when

- it contains ``NO_ANSWER`` as a word, in any case (``NO_ANSWER``, ``no_answer``, "NO_ANSWER."),
  whatever else it says: a model that says it has no answer and then answers is not to be
  trusted with the answer ("NO_ANSWER. But maybe 42 [1]" is a refusal). "A word": not glued to
  letters, digits or underscores, so an identifier such as ``NO_ANSWERS_TABLE`` quoted from a
  document does not refuse; or
- the whole text is "no answer" (any case, punctuation and spaces around it): small models write
  "No answer." for the NO_ANSWER they were asked for. "There is no answer key in [2]" is a claim,
  not a refusal, so "no answer" inside a sentence does not count.

Before this module there were two rules: cite/ took ``NO_ANSWER`` case-sensitively, llm/ took
``no_answer`` anywhere, even inside a longer word; this one is the union of what either meant
to catch, without the substring accident.
"""

from __future__ import annotations

import re

from ..records import NO_ANSWER

__all__ = ["NO_ANSWER", "is_refusal"]

_REFUSAL = re.compile(rf"(?<!\w){NO_ANSWER}(?!\w)|^\W*no\W+answer\W*$", re.IGNORECASE)


def is_refusal(text: str) -> bool:
    """Whether ``text`` refuses; see the module docstring for the rule and why."""
    return _REFUSAL.search(text) is not None
