"""The MCP tools as a model sees them (:data:`TOOLS`: names, descriptions, JSON schemas) and
the one entry point that runs one (:func:`call_tool`): each translates its arguments into a
call of the application service (:class:`truthbase.app.Service`) and its result into JSON.
Each tool's arguments are one typed model (:class:`SearchArguments`, ...; :mod:`.base`): the
schema a model reads is generated from it and the call is validated by it, so the two cannot
drift. The tools over what a user keeps (saved threads, their links, feedback, the re-check of
an exported report) are :mod:`.kept`'s.

Errors: a :class:`~truthbase.errors.TruthBaseError` (an unknown or hidden document, a span out of
range, a bad argument) is an MCP tool error whose text is its message; a spent quota says when to
retry; anything else is a bug, logged with its traceback and answered as ``internal error``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

import mcp_types as types
from pydantic import BaseModel, ConfigDict, Field

from ..app import QuotaExceeded, Service, viewer_url
from ..cite.tags import format_tag
from ..config import DEFAULT_K
from ..errors import InvalidInput, TruthBaseError
from ..model import DocumentInfo, listed_titles
from ..quota import Admission, retry_after_header
from ..records import MAX_QUESTION_CHARS, MAX_QUOTE_CHARS, ChatMode, SearchHit
from ..turns import MAX_TURNS, turns_from_json
from .base import Arguments, Call, NoArguments, Tool, input_schema, parse_arguments
from .kept import KEPT_TOOLS, without_rects

__all__ = [
    "RESOURCE_PREFIX",
    "TOOLS",
    "AskArguments",
    "Call",
    "ClaimArguments",
    "NoArguments",
    "PassageArguments",
    "SearchArguments",
    "call_tool",
    "document_json",
    "input_schema",
    "tool_error",
]

logger = logging.getLogger(__name__)

#: The URI of a document's metadata resource is this prefix and the document id.
RESOURCE_PREFIX = "truthbase://documents/"

_DOC_TEXT = (
    "Document id (the doc_id of list_documents or search), or a unique prefix of at least 4 "
    "characters."
)


# -- the tools' descriptions, as a model reads them -----------------------------------------------


_SEARCH = (
    "Search the user's documents (PDFs and EPUB books) for passages relevant to a query: "
    "hybrid full-text and semantic ranking. Returns the best passages first, each with "
    "its document (doc_id, title), unit (0-based page or EPUB section) and 1-based page, "
    "the character span [start, end) of the passage in that unit's text, its position "
    "tag [f{unit}-{start}-{end}], its text and, when configured, a viewer_url that opens "
    "the document on the highlighted passage. Use it to find evidence; quote passages "
    "verbatim and check claims with verify_claim."
)

_ASK = (
    "Answer a question from the user's documents, with numbered citations. Returns the "
    "answer text with [n] markers, whether it was refused (the documents do not support "
    "an answer), and each citation: the source n, document, page, span, the exact quote "
    "and its state: 'supported' (the quote is on the page and supports the claim), "
    "'quote_only' (on the page, support not shown) or 'unverified'. Only 'supported' "
    "citations are verified evidence."
)

_GET_PASSAGE = (
    "Read an exact span of a document: the text of characters [start, end) of unit "
    "'unit' (0-based page of a PDF, or section of an EPUB), with its 1-based page, page "
    "label, rectangles (PDF points, one per rendered line) and position tag. Use it to "
    "read around a search result (widen start and end) or to show a cited passage."
)

_VERIFY_CLAIM = (
    "Check a citation: is 'quote' on the given page of the document, and does it "
    "support 'claim'? Deterministic checks: every number, date and percentage of the "
    "claim must be in the quote, the negation must agree, the claim's named terms and "
    "enough of its content words must be there, and the meaning must be similar. "
    "Returns state 'supported', 'quote_only' (the quote is on the page but does not "
    "support the claim) or 'unverified' (the quote is not on that page), where the "
    "quote is (span, rects, tag) and each failed check as a reason. Give page (1-based, "
    "PDFs) or unit (0-based, PDFs and EPUB sections), not both."
)

_LIST_DOCUMENTS = (
    "List the documents you may read: id, title, display_title (the title followed by the file "
    "name where several documents share it), kind (pdf or epub), number of units "
    "(pages or sections), language, owner and visibility. Use a doc_id from here in "
    "the other tools."
)

_LIST_COLLECTIONS = (
    "List your named collections of documents (name and document ids). Pass a name as "
    "collection to search or ask to read only its documents."
)

# -- arguments: one typed model per tool; its JSON schema is generated from it --------------------


def _documents_argument() -> Any:
    return Field(
        default=None,
        max_length=2000,
        description="Only these documents (ids, or unique prefixes of at least 4 characters).",
    )


def _collection_argument() -> Any:
    return Field(
        default=None,
        min_length=1,
        max_length=100,
        description="Only the documents of your collection of this name (list_collections); "
        "with documents, both.",
    )


class SearchArguments(Arguments):
    query: str = Field(
        min_length=1,
        max_length=MAX_QUESTION_CHARS,
        description="What to look for: a question or keywords.",
    )
    k: int = Field(default=DEFAULT_K, ge=1, le=50, description="How many passages to return.")
    doc: str | None = Field(
        default=None, min_length=4, description="Only search this document. " + _DOC_TEXT
    )
    documents: list[str] | None = _documents_argument()
    collection: str | None = _collection_argument()


class HistoryTurn(BaseModel):
    """An earlier turn of the conversation, as an earlier ask's result gives it (a citation may
    carry more keys than the span: they are ignored)."""

    model_config = ConfigDict(strict=True, frozen=True)

    question: str = Field(min_length=1)
    answer: str = ""
    citations: list[dict[str, Any]] = Field(
        default_factory=list, description="Each {doc_id, unit, start, end, quote}."
    )
    searched_for: str | None = None


class AskArguments(Arguments):
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS, description="The question.")
    mode: ChatMode = Field(
        default="auto",
        description="Who answers: 'extractive' (verbatim sentences, no model), 'llm' (the "
        "configured chat model), 'agent' (the model reads the book's table of contents and "
        "sections first), 'auto' (llm when one is configured, else extractive).",
    )
    doc: str | None = Field(
        default=None, min_length=4, description="Only answer from this document. " + _DOC_TEXT
    )
    documents: list[str] | None = _documents_argument()
    collection: str | None = _collection_argument()
    history: list[HistoryTurn] | None = Field(
        default=None,
        max_length=MAX_TURNS,
        description="The earlier turns of the conversation this question follows, oldest "
        "first (an earlier ask's result has them). A follow-up such as 'and what about the "
        "second one?' is resolved against them; the result's searched_for says what was "
        "searched.",
    )
    thread: str | None = Field(
        default=None,
        pattern=r"^[0-9a-f]{32}$",
        description="A saved thread of the user's (an earlier ask's result names it): the "
        "question follows its stored turns (do not send history too) and the answer is kept "
        "in it.",
    )
    new_thread: bool = Field(
        default=False,
        description="Keep this answer in a new saved thread (the result's thread names it).",
    )


class PassageArguments(Arguments):
    doc: str = Field(min_length=4, description=_DOC_TEXT)
    unit: int = Field(
        ge=0, description="0-based unit: page - 1 for a PDF, the section for an EPUB."
    )
    start: int = Field(ge=0, description="First character.")
    end: int = Field(ge=0, description="End (exclusive).")


class ClaimArguments(Arguments):
    doc: str = Field(min_length=4, description=_DOC_TEXT)
    page: int | None = Field(default=None, ge=1, description="1-based PDF page.")
    unit: int | None = Field(
        default=None, ge=0, description="0-based unit (a PDF page - 1, or an EPUB section)."
    )
    quote: str = Field(
        min_length=1,
        max_length=MAX_QUOTE_CHARS,
        description="The passage, verbatim as on the page.",
    )
    claim: str = Field(
        min_length=1,
        max_length=MAX_QUOTE_CHARS,
        description="The statement the quote is cited for.",
    )


# -- results -------------------------------------------------------------------------------------


def document_json(info: DocumentInfo, display_title: str | None = None) -> dict[str, Any]:
    """A document's metadata (its resource, and one row of list_documents, whose
    ``display_title`` tells apart documents that share a title)."""
    return {
        "doc_id": info.id,
        "title": info.title,
        "display_title": display_title or info.title,
        "kind": info.kind,
        "units": info.unit_count,
        "pages": info.unit_count if info.kind == "pdf" else None,
        "chunks": info.chunk_count,
        "language": info.language,
        "owner": info.owner_name,
        "visibility": info.visibility,
        "ingested_at": info.ingested_at,
        "contains_instructions": info.flagged,
        "uri": RESOURCE_PREFIX + info.id,
    }


def _hit_json(
    hit: SearchHit, rank: int, kinds: Mapping[str, str], base_url: str | None
) -> dict[str, Any]:
    c = hit.chunk
    row: dict[str, Any] = {
        "rank": rank,
        "doc_id": c.doc_id,
        "title": hit.document_title,
        "unit": c.unit,
        "page": c.unit + 1,
        "label": hit.page_label,
        "start": c.start,
        "end": c.end,
        "tag": format_tag(c.unit, c.start, c.end),
        "score": round(hit.score, 6),
        "kind": c.kind,
        "text": c.text,
    }
    if c.context:
        row["context"] = c.context
    if c.section:
        row["section"] = c.section
    if base_url:
        row["viewer_url"] = viewer_url(
            base_url, kinds.get(c.doc_id, "pdf"), c.doc_id, c.unit, c.start, c.end
        )
    return row


# -- the tools -----------------------------------------------------------------------------------


def _search(call: Call, args: SearchArguments) -> dict[str, Any]:
    service = call.service
    hits = service.search(
        args.query,
        k=args.k,
        doc=args.doc,
        documents=args.documents or (),
        collection=args.collection,
        address=call.address,
    )
    kinds = {d.id: d.kind for d in service.documents()}
    base = service.settings.server.base_url
    return {
        "query": args.query,
        "results": [_hit_json(h, i, kinds, base) for i, h in enumerate(hits, 1)],
    }


def _ask(call: Call, args: AskArguments) -> dict[str, Any]:
    service = call.service
    plan = service.plan_answer(
        args.question,
        mode=args.mode,
        doc=args.doc,
        documents=args.documents or (),
        collection=args.collection,
        history=turns_from_json(
            [turn.model_dump() for turn in args.history] if args.history else None
        ),
        thread=args.thread,
        keep=args.new_thread,
    )
    service.admit_answer(plan, call.address)
    sources: list[dict[str, Any]] = []
    citations: list[dict[str, Any]] = []
    for event in service.answer(plan):
        kind, data = service.shown(event)  # what this caller may see of it
        if kind == "error":
            raise InvalidInput(f"the answer failed at {data['stage']}: {data['message']}")
        if kind == "sources":
            sources = [
                {k: v for k, v in s.items() if k not in ("rects", "chunk_id")}
                for s in data["sources"]
            ]
        elif kind == "citations":
            citations = [without_rects(c) for c in data["citations"]]
        elif kind == "done":
            answer = data["answer"]
            return {
                "answer": answer["text"],
                "refused": answer["refused"],
                "outcome": answer["outcome"],
                "answerer": answer["answerer"],
                "citations": citations,
                "sources": sources,
                "problems": answer["problems"],
                "answer_id": answer["id"],
                **({"searched_for": data["searched_for"]} if "searched_for" in data else {}),
                **({"thread": data["thread"]} if "thread" in data else {}),
            }
    raise InvalidInput("the answer stream ended without an answer")


def _get_passage(call: Call, args: PassageArguments) -> dict[str, Any]:
    passage = call.service.passage(args.doc, args.unit, args.start, args.end)
    row = passage.to_json()
    base = call.service.settings.server.base_url
    if base:
        row["viewer_url"] = viewer_url(
            base, passage.kind, passage.doc_id, args.unit, args.start, args.end
        )
    return row


def _verify_claim(call: Call, args: ClaimArguments) -> dict[str, Any]:
    verdict = call.service.verify_claim(
        args.doc, args.quote, args.claim, page=args.page, unit=args.unit
    )
    row = verdict.to_json()
    if verdict.found and verdict.start is not None and verdict.end is not None:
        row["tag"] = format_tag(verdict.unit, verdict.start, verdict.end)
    return row


def _list_documents(call: Call, _: NoArguments) -> dict[str, Any]:
    documents = call.service.documents()
    labels = listed_titles(documents)
    return {"documents": [document_json(d, labels[d.id]) for d in documents]}


def _list_collections(call: Call, _: NoArguments) -> dict[str, Any]:
    kept = call.service.collections()
    return {"collections": [{"name": c.name, "documents": list(c.documents)} for c in kept]}


_TOOLS = (
    Tool("search", _SEARCH, SearchArguments, _search),
    Tool("ask", _ASK, AskArguments, _ask, read_only=False),
    Tool("get_passage", _GET_PASSAGE, PassageArguments, _get_passage),
    Tool("verify_claim", _VERIFY_CLAIM, ClaimArguments, _verify_claim),
    Tool("list_documents", _LIST_DOCUMENTS, NoArguments, _list_documents),
    Tool("list_collections", _LIST_COLLECTIONS, NoArguments, _list_collections),
    *KEPT_TOOLS,
)

#: The tools, as a model sees them: a name, what it is for, and its arguments' JSON schema.
TOOLS: tuple[types.Tool, ...] = tuple(tool.listed() for tool in _TOOLS)
_HANDLERS: dict[str, Callable[[Call, Any], dict[str, Any]]] = {t.name: t.handler for t in _TOOLS}
_ARGUMENTS: dict[str, type[Arguments]] = {t.name: t.arguments for t in _TOOLS}


def tool_error(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )


def call_tool(
    service: Service, name: str, arguments: Mapping[str, Any], *, address: str | None = None
) -> types.CallToolResult:
    """Run tool ``name`` on ``service`` (already the caller's view; ``address``: the caller's,
    over HTTP): its JSON result, or a tool error with a clear message (never a traceback).
    Sync: the store and embedder block."""
    handler = _HANDLERS.get(name)
    if handler is None:
        return tool_error(f"no tool {name!r}: the tools are {', '.join(_HANDLERS)}")
    try:
        parsed = parse_arguments(name, _ARGUMENTS[name], arguments)
        result = handler(Call(service, address), parsed)
    except QuotaExceeded as exc:
        wait = retry_after_header(Admission(admitted=False, retry_after_s=exc.retry_after_s))
        return tool_error(f"quota exceeded: try again in {wait} s")
    except TruthBaseError as exc:
        return tool_error(f"{type(exc).__name__}: {exc}")
    except Exception:
        logger.exception("unexpected error in MCP tool %s", name)
        return tool_error("internal error")
    text = json.dumps(result, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=result
    )
