"""Prompts within a model's context window, and markers written before their sentence.

The window comes from the server where it reports one (a scripted server over real HTTP plays
llama.cpp's /props and vLLM's /v1/models), else from ``llm.context_tokens``; the LLM answerer's
sources are fitted to it, best-ranked first. The parse tests hold both marker styles: after the
claim ("... [1].") and before the sentence (the Qwen2.5-Coder-1.5B style, "[1] ... . [3] ...").
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.helpers.transcripts import Reply, Scripted, completion
from truthbase.cite.parse import parse_answer
from truthbase.llm import OpenAIChatModel, draft_answer, with_fallbacks
from truthbase.llm.budget import MIN_SOURCE_CHARS, fit_sources, message_tokens
from truthbase.llm.client import server_context
from truthbase.llm.prompts import SourceText
from truthbase.llm.rerank import rerank_outcome


def claims(text: str) -> list[tuple[tuple[int, ...], str]]:
    return [(c.numbers, c.text) for c in parse_answer(text).claims]


# -- markers before the sentence ----------------------------------------------------------------


def test_markers_after_the_claim_claim_the_text_before() -> None:
    assert claims("Darcy owns Pemberley [1]. It lies in Derbyshire [2][3].") == [
        ((1,), "Darcy owns Pemberley"),
        ((2, 3), "It lies in Derbyshire"),
    ]


def test_markers_before_the_sentence_claim_the_sentence_they_open() -> None:
    text = "[1] Reflection tokens are defined in the appendix. [3] They include ISREL and ISSUP."
    assert claims(text) == [
        ((1,), "Reflection tokens are defined in the appendix."),
        ((3,), "They include ISREL and ISSUP."),
    ]


def test_a_marker_opening_a_line_claims_that_line_and_styles_mix() -> None:
    text = "Pemberley is in Derbyshire [1].\n[2] Darcy owns it.\n[f3-10-80] Lydia elopes"
    parsed = parse_answer(text)
    assert [(c.numbers, c.text) for c in parsed.claims] == [
        ((1,), "Pemberley is in Derbyshire"),
        ((2,), "Darcy owns it."),
        ((), "Lydia elopes"),
    ]
    assert [t.text for t in parsed.claims[2].tags] == ["[f3-10-80]"]
    lead = parsed.claims[1]
    assert lead.group_end <= lead.start  # the claim follows its group


def test_a_leading_marker_with_no_sentence_after_it_claims_the_text_before() -> None:
    assert claims("Darcy owns Pemberley.\n[1]") == [((1,), "Darcy owns Pemberley.")]


def test_a_marker_mid_line_after_a_trailing_claim_is_not_leading() -> None:
    # "[2]" follows a claim that a trailing [1] closed: it is not the prefix style.
    assert claims("A smuggler stole the oil [1]. The keeper was cleared [2].") == [
        ((1,), "A smuggler stole the oil"),
        ((2,), "The keeper was cleared"),
    ]


# -- fitting sources -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    n: int
    text: str


def test_fit_sources_keeps_the_best_ranked_cuts_the_first_misfit_drops_the_rest() -> None:
    sources = [Text(i, f"source {i} " + "word " * 200) for i in range(1, 6)]  # ~1,010 chars each
    fitted = fit_sources(sources, 2_700, overhead=80)
    assert [s.n for s in fitted.sources] == [1, 2, 3]
    assert fitted.sources[:2] == sources[:2]
    assert fitted.cut == [3] and fitted.dropped == [4, 5]
    assert fitted.sources[2].text.endswith(" ...") and len(fitted.sources[2].text) <= 2_700 - 3 * 80
    assert sum(len(s.text) + 80 for s in fitted.sources) <= 2_700


def test_fit_sources_drops_a_misfit_rather_than_leave_a_stub() -> None:
    sources = [Text(1, "a" * 1_000), Text(2, "b " * 500)]
    fitted = fit_sources(sources, 1_000 + 80 + 80 + MIN_SOURCE_CHARS - 1, overhead=80)
    assert [s.n for s in fitted.sources] == [1] and fitted.dropped == [2] and fitted.cut == []


# -- the window and the LLM answerer -------------------------------------------------------------


def test_the_window_is_the_servers_report_else_the_setting(server: Scripted) -> None:
    assert server_context(server.base_url, "m") is None  # 404 on both routes
    server.pages["/props"] = {"default_generation_settings": {"n_ctx": 8192}}
    assert server_context(server.base_url, "m") == 8192
    server.pages["/v1/models"] = {"data": [{"id": "m", "max_model_len": 32768}]}
    assert server_context(server.base_url, "m") == 32768
    reported = OpenAIChatModel("m", base_url=server.base_url, api_key="k", context_tokens=2048)
    assert reported.context_window() == 32768 and reported.reply_tokens() == 1024
    unreported = OpenAIChatModel("x", base_url="http://127.0.0.1:9/v1", api_key="k")
    assert unreported.context_window() == 4096 and unreported.reply_tokens() == 1024
    small = OpenAIChatModel("x", base_url=None, api_key="k", context_tokens=1024, max_tokens=100)
    assert small.context_window() == 1024 and small.reply_tokens() == 100
    assert with_fallbacks([reported, unreported]).context_window() == 4096


@pytest.mark.parametrize("stream", [True, False])
def test_the_answerers_sources_fit_the_window_lowest_ranked_dropped(
    server: Scripted, stream: bool
) -> None:
    server.pages["/props"] = {"n_ctx": 2048}
    sources = [
        SourceText(i, "Pride and Prejudice", i, f"Passage {i}. " + "Elizabeth walked on. " * 60)
        for i in range(1, 9)
    ]  # 8 x ~1,270 chars: ~3,400 tokens at 3 chars a token, more than the window holds
    model = OpenAIChatModel("m", base_url=server.base_url, api_key="k")
    if stream:
        server.say(Reply(pieces=["Elizabeth walked [1]."]))
    else:
        server.say(Reply(body=completion("Elizabeth walked [1].")))
    draft = draft_answer(model, "Who walked?", sources, timeout=5, stream=stream)
    assert "".join(draft.tokens) == "Elizabeth walked [1]."
    (request,) = server.requests
    body = request["body"]
    assert body["max_tokens"] == 512
    assert message_tokens(body["messages"]) + 512 <= 2048
    user = body["messages"][-1]["content"]
    budget = draft.budget
    assert budget["context_tokens"] == 2048
    kept = [n for n in range(1, 9) if n not in budget["dropped"]]
    assert budget["dropped"] and kept == list(range(1, len(kept) + 1))  # the best ranked kept
    assert all(f'<source n="{n}"' in user for n in kept)
    assert not any(f'<source n="{n}"' in user for n in budget["dropped"])
    assert draft.info["budget"] == budget


def test_the_rerank_cuts_its_passages_to_the_window(server: Scripted) -> None:
    server.pages["/props"] = {"n_ctx": 1024}
    server.say(Reply(body=completion('{"order": [2, 1]}')))
    candidates = [(i, f"passage {i} " + "word " * 400) for i in range(1, 16)]
    model = OpenAIChatModel("m", base_url=server.base_url, api_key="k")
    outcome = rerank_outcome(model, "q", candidates, 5.0, max_chars=600)
    assert outcome.ids[:2] == [2, 1]
    body = server.requests[0]["body"]
    assert body["max_tokens"] == 256
    assert message_tokens(body["messages"]) + 256 <= 1024
    shown = body["messages"][-1]["content"].split("</passage>")[0]
    assert len(shown) < 600  # each passage cut below the setting's 600 characters
