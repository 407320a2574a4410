"""The MCP tools as a model sees them (:data:`TOOLS`: names, descriptions, JSON schemas) and
the one entry point that runs one (:func:`call_tool`): each translates its arguments into a
call of the application service (:class:`truthbase.app.Service`) and its result into JSON.

Errors: a :class:`~truthbase.errors.TruthBaseError` (an unknown or hidden document, a span out of
range, a bad argument) is an MCP tool error whose text is its message; a spent quota says when to
retry; anything else is a bug, logged with its traceback and answered as ``internal error``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from ..app import QuotaExceeded, Service, viewer_url
from ..cite.tags import format_tag
from ..config import DEFAULT_K
from ..errors import InvalidInput, TruthBaseError
from ..model import DocumentInfo
from ..quota import Admission, retry_after_header
from ..records import CHAT_MODES, SearchHit
from ..turns import MAX_TURNS, turns_from_json

__all__ = ["RESOURCE_PREFIX", "TOOLS", "Call", "call_tool", "document_json", "tool_error"]

logger = logging.getLogger(__name__)

#: The URI of a document's metadata resource is this prefix and the document id.
RESOURCE_PREFIX = "truthbase://documents/"

_DOC_TEXT = (
    "Document id (the doc_id of list_documents or search), or a unique prefix of at least 4 "
    "characters."
)
_DOC: dict[str, Any] = {"type": "string", "minLength": 4, "description": _DOC_TEXT}

#: The tools, as a model sees them: a name, what it is for, and its arguments' JSON schema.
TOOLS: tuple[types.Tool, ...] = (
    types.Tool(
        name="search",
        description=(
            "Search the user's documents (PDFs and EPUB books) for passages relevant to a query: "
            "hybrid full-text and semantic ranking. Returns the best passages first, each with "
            "its document (doc_id, title), unit (0-based page or EPUB section) and 1-based page, "
            "the character span [start, end) of the passage in that unit's text, its position "
            "tag [f{unit}-{start}-{end}], its text and, when configured, a viewer_url that opens "
            "the document on the highlighted passage. Use it to find evidence; quote passages "
            "verbatim and check claims with verify_claim."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "description": "What to look for: a question or keywords.",
                },
                "k": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 50,
                    "default": DEFAULT_K,
                    "description": "How many passages to return.",
                },
                "doc": {**_DOC, "description": "Only search this document. " + _DOC_TEXT},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True),
    ),
    types.Tool(
        name="ask",
        description=(
            "Answer a question from the user's documents, with numbered citations. Returns the "
            "answer text with [n] markers, whether it was refused (the documents do not support "
            "an answer), and each citation: the source n, document, page, span, the exact quote "
            "and its state: 'supported' (the quote is on the page and supports the claim), "
            "'quote_only' (on the page, support not shown) or 'unverified'. Only 'supported' "
            "citations are verified evidence."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "question": {"type": "string", "minLength": 1, "description": "The question."},
                "mode": {
                    "type": "string",
                    "enum": list(CHAT_MODES),
                    "default": "auto",
                    "description": "Who answers: 'extractive' (verbatim sentences, no model), "
                    "'llm' (the configured chat model), 'agent' (the model reads the book's "
                    "table of contents and sections first), 'auto' (llm when one is configured, "
                    "else extractive).",
                },
                "doc": {
                    **_DOC,
                    "description": "Only answer from this document. " + _DOC_TEXT,
                },
                "history": {
                    "type": "array",
                    "maxItems": MAX_TURNS,
                    "description": "The earlier turns of the conversation this question "
                    "follows, oldest first: each {question, answer, citations: [{doc_id, unit, "
                    "start, end, quote}]} (an earlier ask's result has them). A follow-up such "
                    "as 'and what about the second one?' is resolved against them; the result's "
                    "searched_for says what was searched.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "question": {"type": "string", "minLength": 1},
                            "answer": {"type": "string"},
                            "citations": {"type": "array", "items": {"type": "object"}},
                            "searched_for": {"type": ["string", "null"]},
                        },
                        "required": ["question"],
                    },
                },
            },
            "required": ["question"],
            "additionalProperties": False,
        },
        annotations=types.ToolAnnotations(read_only_hint=False, idempotent_hint=False),
    ),
    types.Tool(
        name="get_passage",
        description=(
            "Read an exact span of a document: the text of characters [start, end) of unit "
            "'unit' (0-based page of a PDF, or section of an EPUB), with its 1-based page, page "
            "label, rectangles (PDF points, one per rendered line) and position tag. Use it to "
            "read around a search result (widen start and end) or to show a cited passage."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "doc": _DOC,
                "unit": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "0-based unit: page - 1 for a PDF, the section for an EPUB.",
                },
                "start": {"type": "integer", "minimum": 0, "description": "First character."},
                "end": {"type": "integer", "minimum": 0, "description": "End (exclusive)."},
            },
            "required": ["doc", "unit", "start", "end"],
            "additionalProperties": False,
        },
        annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True),
    ),
    types.Tool(
        name="verify_claim",
        description=(
            "Check a citation: is 'quote' on the given page of the document, and does it "
            "support 'claim'? Deterministic checks: every number, date and percentage of the "
            "claim must be in the quote, the negation must agree, the claim's named terms and "
            "enough of its content words must be there, and the meaning must be similar. "
            "Returns state 'supported', 'quote_only' (the quote is on the page but does not "
            "support the claim) or 'unverified' (the quote is not on that page), where the "
            "quote is (span, rects, tag) and each failed check as a reason. Give page (1-based, "
            "PDFs) or unit (0-based, PDFs and EPUB sections), not both."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "doc": _DOC,
                "page": {"type": "integer", "minimum": 1, "description": "1-based PDF page."},
                "unit": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "0-based unit (a PDF page - 1, or an EPUB section).",
                },
                "quote": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The passage, verbatim as on the page.",
                },
                "claim": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The statement the quote is cited for.",
                },
            },
            "required": ["doc", "quote", "claim"],
            "additionalProperties": False,
        },
        annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True),
    ),
    types.Tool(
        name="list_documents",
        description=(
            "List the documents you may read: id, title, kind (pdf or epub), number of units "
            "(pages or sections), language, owner and visibility. Use a doc_id from here in "
            "the other tools."
        ),
        input_schema={"type": "object", "properties": {}, "additionalProperties": False},
        annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True),
    ),
)


# -- arguments -----------------------------------------------------------------------------------


def _text(args: Mapping[str, Any], name: str, *, required: bool = True) -> str | None:
    value = args.get(name)
    if value is None:
        if required:
            raise InvalidInput(f"argument {name!r} is required")
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"argument {name!r} must be a non-empty string")
    return value


def _int(
    args: Mapping[str, Any],
    name: str,
    *,
    default: int | None = None,
    low: int = 0,
    high: int | None = None,
) -> int | None:
    value = args.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"argument {name!r} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        top = "" if high is None else f"..{high}"
        raise InvalidInput(f"argument {name!r} must be in {low}{top}, got {value}")
    return value


def _check_names(tool: str, args: Mapping[str, Any], schema: Mapping[str, Any]) -> None:
    unknown = sorted(set(args) - set(schema.get("properties", {})))
    if unknown:
        raise InvalidInput(f"{tool} takes no argument {', '.join(map(repr, unknown))}")


# -- results -------------------------------------------------------------------------------------


def document_json(info: DocumentInfo) -> dict[str, Any]:
    """A document's metadata (its resource, and one row of list_documents)."""
    return {
        "doc_id": info.id,
        "title": info.title,
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
    if base_url:
        row["viewer_url"] = viewer_url(
            base_url, kinds.get(c.doc_id, "pdf"), c.doc_id, c.unit, c.start, c.end
        )
    return row


# -- the tools -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call: the service as the caller may use it, and the caller's address (None over
    stdio: not counted against a quota)."""

    service: Service
    address: str | None = None


def _search(call: Call, args: Mapping[str, Any]) -> dict[str, Any]:
    service = call.service
    query = _text(args, "query") or ""
    k = _int(args, "k", default=DEFAULT_K, low=1, high=50)
    doc = _text(args, "doc", required=False)
    hits = service.search(query, k=k, doc=doc, address=call.address)
    kinds = {d.id: d.kind for d in service.documents()}
    base = service.settings.server.base_url
    return {
        "query": query,
        "results": [_hit_json(h, i, kinds, base) for i, h in enumerate(hits, 1)],
    }


def _ask(call: Call, args: Mapping[str, Any]) -> dict[str, Any]:
    service = call.service
    plan = service.plan_answer(
        _text(args, "question") or "",
        mode=_text(args, "mode", required=False),
        doc=_text(args, "doc", required=False),
        history=turns_from_json(args.get("history")),
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
            citations = [{k: v for k, v in c.items() if k != "rects"} for c in data["citations"]]
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
            }
    raise InvalidInput("the answer stream ended without an answer")


def _get_passage(call: Call, args: Mapping[str, Any]) -> dict[str, Any]:
    doc = _text(args, "doc") or ""
    unit, start, end = (_int(args, n) for n in ("unit", "start", "end"))
    if unit is None or start is None or end is None:
        raise InvalidInput("get_passage needs doc, unit, start and end")
    passage = call.service.passage(doc, unit, start, end)
    row = passage.to_json()
    base = call.service.settings.server.base_url
    if base:
        row["viewer_url"] = viewer_url(base, passage.kind, passage.doc_id, unit, start, end)
    return row


def _verify_claim(call: Call, args: Mapping[str, Any]) -> dict[str, Any]:
    verdict = call.service.verify_claim(
        _text(args, "doc") or "",
        _text(args, "quote") or "",
        _text(args, "claim") or "",
        page=_int(args, "page", low=1),
        unit=_int(args, "unit"),
    )
    row = verdict.to_json()
    if verdict.found and verdict.start is not None and verdict.end is not None:
        row["tag"] = format_tag(verdict.unit, verdict.start, verdict.end)
    return row


def _list_documents(call: Call, _: Mapping[str, Any]) -> dict[str, Any]:
    return {"documents": [document_json(d) for d in call.service.documents()]}


_HANDLERS: dict[str, Callable[[Call, Mapping[str, Any]], dict[str, Any]]] = {
    "search": _search,
    "ask": _ask,
    "get_passage": _get_passage,
    "verify_claim": _verify_claim,
    "list_documents": _list_documents,
}
_SCHEMAS = {tool.name: tool.input_schema for tool in TOOLS}


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
        _check_names(name, arguments, _SCHEMAS[name])
        result = handler(Call(service, address), arguments)
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
