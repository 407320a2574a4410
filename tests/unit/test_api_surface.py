"""The Python API's surface: `truthbase.api.__all__` is deliberate, every public name (and every
public method of Library) has its own docstring, and importing a stage does not load the API."""

from __future__ import annotations

import inspect
import subprocess
import sys
from typing import Any, cast

import pytest

import truthbase
from truthbase import api
from truthbase.errors import NotFound
from truthbase.mcp import kept as mcp_kept
from truthbase.mcp import tools as mcp_tools


def test_the_api_module_exports_what_it_means_to() -> None:
    assert sorted(api.__all__) == [
        "CitedSpan",  # a thread's earlier turns, for a follow-up (Library.ask(history=...))
        "Library",
        "Passage",
        "Resolution",
        "SearchMode",
        "Turn",
        "viewer_url",
    ]
    assert truthbase.Library is api.Library


def _own_doc(obj: object) -> str:
    return (getattr(obj, "__doc__", None) or "").strip()


def test_every_public_name_has_a_docstring() -> None:
    names = [(truthbase, n) for n in truthbase.__all__] + [(api, n) for n in api.__all__]
    for module, name in names:
        obj = getattr(module, name)
        if getattr(obj, "__module__", "").startswith("truthbase") and (
            inspect.isclass(obj) or inspect.isfunction(obj)
        ):
            assert _own_doc(obj), f"{module.__name__}.{name} has no docstring"
    methods = [n for n, _ in inspect.getmembers(api.Library) if not n.startswith("_")]
    assert {"ingest", "search", "ask", "verify_claim", "passage", "for_viewer"} <= set(methods)
    for name in methods:
        assert _own_doc(getattr(api.Library, name)), f"Library.{name} has no docstring"


def test_the_library_is_imported_on_first_use_only() -> None:
    code = "import sys, truthbase.model; print('truthbase.api' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_viewer_urls_open_the_span() -> None:
    assert api.viewer_url("http://h:8000/", "pdf", "ab", 2, 5, 9) == (
        "http://h:8000/view?doc=ab&page=3&start=5&end=9"
    )
    assert api.viewer_url("http://h", "epub", "ab", 2, 5, 9) == (
        "http://h/read?doc=ab&unit=2&start=5&end=9"
    )


def test_every_mcp_tool_has_a_schema_and_a_handler() -> None:
    names = [t.name for t in mcp_tools.TOOLS]
    assert names == [
        "search",
        "ask",
        "get_passage",
        "verify_claim",
        "list_documents",
        "list_collections",
        "list_threads",
        "open_thread",
        "share_thread",
        "unshare_thread",
        "give_feedback",
        "verify_report",
    ]
    for tool in mcp_tools.TOOLS:
        assert tool.input_schema["type"] == "object" and tool.description
        assert tool.input_schema.get("additionalProperties") is False


def test_a_tool_error_has_a_message_and_a_bug_no_traceback(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(library: object, args: object) -> dict[str, object]:
        raise RuntimeError("secret internals")

    def missing(library: object, args: object) -> dict[str, object]:
        raise NotFound("no document abcd")

    monkeypatch.setitem(mcp_tools._HANDLERS, "list_documents", broken)
    monkeypatch.setitem(mcp_tools._HANDLERS, "search", missing)
    bug = mcp_tools.call_tool(cast(Any, None), "list_documents", {})
    assert bug.is_error and bug.content[0].text == "internal error"
    assert "secret internals" in caplog.text  # logged, with its traceback, not sent
    error = mcp_tools.call_tool(cast(Any, None), "search", {"query": "q"})
    assert error.is_error and error.content[0].text == "NotFound: no document abcd"
    unknown = mcp_tools.call_tool(cast(Any, None), "search", {"query": "q", "kk": 1})
    assert "search takes no argument 'kk'" in unknown.content[0].text
    nothing = mcp_tools.call_tool(cast(Any, None), "delete_everything", {})
    assert nothing.is_error and "no tool 'delete_everything'" in nothing.content[0].text


def test_each_mcp_schema_is_generated_from_its_arguments_model() -> None:
    models = {
        "search": mcp_tools.SearchArguments,
        "ask": mcp_tools.AskArguments,
        "get_passage": mcp_tools.PassageArguments,
        "verify_claim": mcp_tools.ClaimArguments,
        "list_documents": mcp_tools.NoArguments,
        "list_collections": mcp_tools.NoArguments,
        "list_threads": mcp_kept.ThreadListArguments,
        "open_thread": mcp_kept.ThreadArguments,
        "share_thread": mcp_kept.ThreadArguments,
        "unshare_thread": mcp_kept.ThreadArguments,
        "give_feedback": mcp_kept.FeedbackArguments,
        "verify_report": mcp_kept.ReportArguments,
    }
    for tool in mcp_tools.TOOLS:
        model = models[tool.name]
        assert tool.input_schema == mcp_tools.input_schema(model)
        assert list(tool.input_schema["properties"]) == list(model.model_fields)
        required = [n for n, f in model.model_fields.items() if f.is_required()]
        assert tool.input_schema.get("required", []) == required
    # An optional argument reads as its own type, not as anyOf [T, null].
    doc = mcp_tools.TOOLS[0].input_schema["properties"]["doc"]
    assert doc["type"] == "string" and doc["minLength"] == 4 and "anyOf" not in doc


def test_mcp_arguments_are_checked_by_their_model_before_any_call() -> None:
    service = cast(Any, None)  # never reached: the arguments are refused first
    for arguments, problem in (
        ({"query": "q", "k": "5"}, "argument 'k'"),
        ({"query": "q", "k": True}, "argument 'k'"),
        ({"query": "q", "k": 51}, "argument 'k'"),
        ({}, "argument 'query'"),
        ({"query": "q", "doc": "ab"}, "argument 'doc'"),
    ):
        refused = mcp_tools.call_tool(service, "search", arguments)
        assert refused.is_error, arguments
        text = refused.content[0].text
        assert text.startswith("InvalidInput: search: ") and problem in text, text
