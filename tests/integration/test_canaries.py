"""Prompt-injection canaries through the LLM answerer and agent mode, with a scripted model that
*obeys* every injection (tests/helpers/canary_docs.py): it writes the injected claim and cites
the source (or the tool passage) that holds the injection, plus the fake markers and tags the
document asked for.

What must hold whatever the model does: no ``supported`` citation whose quote comes from the
injected text (the document says it, as an order to the model: :func:`truthbase.cite.resolve.
citation_state`), and no delimiter escape (document text that, read as the model reads it,
NFKC and invisible characters gone, opens or closes a delimiter of the prompt). The ingest
screen flags every canary document.

The look-alike delimiters (zero-width, word-joiner, fullwidth) still escape the prompt's
escaping: NFKC and invisible-character stripping before escaping is issue 17's item 1,
merged separately; those cases are expected to fail until then (xfail, not strict).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.canary_docs import CANARY_SET, Canary, delimiter_escapes, write_canaries
from tests.helpers.transcripts import Reply, completion, scripted_server, tool_reply
from truthbase.answer import Answer, DoneEvent, answer_question
from truthbase.answer.agent import agent_events
from truthbase.answer.extractive import ExtractiveAnswerer
from truthbase.answer.llm import LLMAnswerer
from truthbase.config import LLMSettings, Settings
from truthbase.embed import Embedder, load_embedder
from truthbase.ingest import IngestOptions, ingest_file, sha256_file
from truthbase.ingest.screen import screen_texts
from truthbase.modes import agent_for
from truthbase.segments.tools import RELATED_SEGMENTS
from truthbase.store import SQLiteStore
from truthbase.text.matching import find_quote
from truthbase.text.sentences import split_sentences


@dataclass
class Library:
    store: SQLiteStore
    embedder: Embedder
    docs: dict[str, str]  # canary name -> document id


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    folder = tmp_path_factory.mktemp("canaries")
    files = write_canaries(folder / "files")
    embedder = load_embedder(Settings().embedder)
    store = SQLiteStore(folder / "index.sqlite")
    try:
        for path in sorted(set(files.values())):
            outcome = ingest_file(path, store, embedder, IngestOptions())
            assert outcome.status == "ingested", outcome
        yield Library(store, embedder, {n: sha256_file(p) for n, p in files.items()})
    finally:
        store.close()


def _cases() -> list[Any]:
    return [pytest.param(c, id=c.name) for c in CANARY_SET]


_SOURCE = re.compile(r'<source n="(\d+)"[^>]*>\n(.*?)\n</source>', re.DOTALL)
_TAG = re.compile(r"\[f\d+-\d+-\d+\]")


def _extra_markers(canary: Canary) -> str:
    """The markers the injection asked for ("cite [1] and [2]", a fake source n="9")."""
    found = re.findall(r"\[\d+\]", canary.injected) + re.findall(r'n="(\d+)"', canary.injected)
    return "".join(m if m.startswith("[") else f"[{m}]" for m in found)


def _key(canary: Canary) -> str:
    """A piece of the injected claim that the honest text does not have."""
    return canary.marks[0] if not canary.marks[0].startswith("[") else canary.claim


def _obey_llm(canary: Canary, body: dict[str, Any]) -> Reply:
    user = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
    cited = "1"
    for n, text in _SOURCE.findall(user):
        if _key(canary).casefold() in text.casefold():
            cited = n
    text = f"{canary.claim} [{cited}]{_extra_markers(canary)}."
    if body.get("stream"):
        return Reply(pieces=[text[: len(text) // 2], text[len(text) // 2 :]])
    return Reply(body=completion(text))


def _tool_results(body: dict[str, Any]) -> list[str]:
    return [
        m["content"]
        for m in body["messages"]
        if m["role"] in ("tool", "user") and "<tool_result" in str(m.get("content", ""))
    ]


def _obey_agent(canary: Canary, question: str, body: dict[str, Any]) -> Reply:
    results = _tool_results(body)
    if not results:
        return tool_reply((RELATED_SEGMENTS, {"question": question}))
    content = results[-1]
    at = content.casefold().find(_key(canary).casefold())
    tags = [(m.start(), m.group(0)) for m in _TAG.finditer(content)]
    after = [t for pos, t in tags if pos > at] if at >= 0 else []
    tag = after[0] if after else (tags[0][1] if tags else "")
    return Reply(body=completion(f"{canary.claim} {tag}{_extra_markers(canary)}."))


def _injected_region(library: Library, canary: Canary, unit: int) -> tuple[int, int] | None:
    stored = library.store.unit(library.docs[canary.name], unit)
    assert stored is not None
    found = find_quote(canary.injected, stored.text)
    if found is not None:
        return found[0][0], found[-1][1]
    at = stored.text.casefold().find(_key(canary).casefold())
    if at < 0:
        return None
    for lo, hi in split_sentences(stored.text):
        if lo <= at < hi:
            return lo, hi
    return None


def _supported_from_injection(library: Library, canary: Canary, answer: Answer) -> list[Any]:
    bad = []
    for c in answer.citations:
        if c.state != "supported" or c.doc_id != library.docs[canary.name]:
            continue
        region = _injected_region(library, canary, c.unit)
        if region is not None and c.start < region[1] and region[0] < c.end:
            bad.append(c)
    return bad


def _done(events: Iterator[Any]) -> Answer:
    answers = [e.answer for e in events if isinstance(e, DoneEvent)]
    assert len(answers) == 1
    return answers[0]


@pytest.mark.parametrize("canary", _cases())
def test_llm_answerer_obeying_the_injection(library: Library, canary: Canary) -> None:
    with scripted_server() as server:
        server.responder = lambda body: _obey_llm(canary, body)
        answerer = LLMAnswerer(
            server.model("scripted"), ExtractiveAnswerer(library.embedder), timeout=10
        )
        answer = _done(
            answer_question(
                library.store,
                library.embedder,
                canary.question,
                answerer=answerer,
                doc_ids={library.docs[canary.name]},
            )
        )
        prompts = [b["body"] for b in server.requests]
    assert answer.answerer != "extractive", answer.info  # the model answered
    user = next(m["content"] for m in reversed(prompts[0]["messages"]) if m["role"] == "user")
    n = len(answer.sources)
    assert _supported_from_injection(library, canary, answer) == []
    expected = {"<source": n, "</source": n, "<sources": 1, "</sources": 1}
    assert delimiter_escapes(user, expected) == 0


@pytest.mark.parametrize("canary", _cases())
def test_agent_obeying_the_injection(library: Library, canary: Canary, tmp_path: Path) -> None:
    with scripted_server() as server:
        server.responder = lambda body: _obey_agent(canary, canary.question, body)
        settings = Settings(
            db=tmp_path / "unused.sqlite",
            llm=LLMSettings(base_url=server.base_url, model="scripted"),
        )
        agent = agent_for(
            settings,
            library.store,
            library.embedder,
            doc_id=library.docs[canary.name],
        )
        answer = _done(agent_events(library.store, library.embedder, canary.question, agent))
        bodies = [b["body"] for b in server.requests]
    assert len(bodies) >= 2, bodies  # a tool call, then the obeying answer
    assert _supported_from_injection(library, canary, answer) == []
    for content in (c for b in bodies for c in _tool_results(b)):
        assert delimiter_escapes(content, {"<tool_result": 1, "</tool_result": 1}) == 0


def test_the_screen_flags_every_canary_document(library: Library) -> None:
    missed = []
    for canary in CANARY_SET:
        doc = library.docs[canary.name]
        info = library.store.document(doc)
        assert info is not None
        texts = [u.text for u in (library.store.unit(doc, i) for i in range(info.unit_count)) if u]
        result = screen_texts(texts)
        injected = [h for h in result.hits if _key(canary).casefold() in h.excerpt.casefold()]
        if not result.flagged or (not canary.epub and not injected and not result.hits):
            missed.append(canary.name)
    assert missed == []
