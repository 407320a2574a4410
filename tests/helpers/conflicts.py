"""Claims that depart from a real seed page, and a scripted chat model that writes them.

Each :class:`DepartingClaim` is a question about a passage of raptor.pdf and the answer a careless
model gives: the passage's sentence with one thing changed (a number, a direction). The scripted
model (:func:`departing_model`, on the OpenAI-compatible server of tests/helpers/transcripts.py)
answers a question of :data:`DEPARTING` with its claim and cites the source whose text has the
passage; any other prompt gets NO_ANSWER. Only the remote model is scripted: retrieval,
resolution and the support checks run for real.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tests.helpers.transcripts import Reply, completion

_SOURCE = re.compile(r'<source n="(\d+)"[^>]*>(.*?)</source>', re.S)


@dataclass(frozen=True, slots=True)
class DepartingClaim:
    question: str
    #: Words of the page's sentence (its line breaks read as spaces): the source to cite.
    passage: str
    claim: str
    code: str  # the failing check
    claim_says: str
    page_says: str  # the page's side, as the unit text has it


DEPARTING = (
    DepartingClaim(
        question="What accuracy does RAPTOR paired with GPT-4 reach on the QuALITY dataset?",
        passage="sets a new state-of-the-art with an accuracy of 82.6%",
        claim="RAPTOR paired with GPT-4 sets a new state-of-the-art on QuALITY with an accuracy "
        "of 85.6%.",
        code="number_missing",
        claim_says="85.6%",
        page_says="82.6%",
    ),
    DepartingClaim(
        question="How does RAPTOR's tree traversal move through the layers of the tree?",
        passage="descends through the lower layers",
        claim="The algorithm progressively focuses on finer details as it descends through the "
        "higher layers of the tree.",
        code="antonym",
        claim_says="higher",
        page_says="lower",
    ),
)


def _flat(text: str) -> str:
    return " ".join(text.split())


def departing_answer(body: dict[str, Any]) -> str:
    """The scripted model's answer to the chat request ``body`` (see the module doc)."""
    user = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
    for case in DEPARTING:
        if case.question not in user:
            continue
        for n, text in _SOURCE.findall(user):
            if case.passage in _flat(text):
                return f"{case.claim} [{n}]"
    return "NO_ANSWER"


def departing_model(body: dict[str, Any]) -> Reply:
    """A :class:`~tests.helpers.transcripts.Reply` for ``Scripted.responder``: streamed when
    the request asks for a stream."""
    text = departing_answer(body)
    if body.get("stream"):
        return Reply(pieces=[text[: len(text) // 2], text[len(text) // 2 :]])
    return Reply(body=completion(text))
