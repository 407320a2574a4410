"""Answer quality and latency of a small local model behind an OpenAI-compatible server.

Two runs over a copy of the golden index (the seed PDFs and the EPUB books of dev.json):

- ``llm``: the LLM answerer (the answer pipeline, ``--mode llm``) on 10 questions of
  golden/dev.json (answerable ones from each document and unanswerable ones): per answer who
  answered, whether it refused, whether that was right, how many citations verified, whether a
  verified citation is on the evidence page, the prompt budget (sources cut, dropped) and the
  seconds.
- ``agent``: agent mode on 5 questions about Pride and Prejudice's content (the book tools
  scoped to it, their segments picked by search: the model's own picks would cost a call per
  batch of summaries, minutes on 2 cores): who answered, the tool calls the model made itself,
  the verified tags.

The server is started apart (e.g. ``python -m llama_cpp.server --model M.gguf --n_ctx 4096
--chat_format chatml-function-calling``). Run: ``python benchmarks/small_llm_bench.py --db
golden.sqlite --base-url http://127.0.0.1:PORT/v1 --model ALIAS [--runs llm,agent]``; prints one
JSON object.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from truthbase.answer import Answer, ask_agent
from truthbase.answer.model import DoneEvent, ErrorEvent
from truthbase.config import AgentSettings, LLMSettings, SegmentSettings, Settings
from truthbase.embed import load_embedder
from truthbase.modes import agent_for, answer_events, book_tools
from truthbase.store import SQLiteStore

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT.parent / "shared" / "golden" / "dev.json"
LLM_QUESTIONS = ("d001", "d013", "d026", "d039", "d061", "d064", "d065", "d051", "d052", "d067")
AGENT_QUESTIONS = (
    "Who does Mr. Collins marry?",
    "With whom does Lydia elope?",
    "What is the name of Mr. Darcy's estate?",
    "Who is Mr. Bingley's closest friend?",
    "How many daughters do Mr. and Mrs. Bennet have?",
)
BOOK = "Pride and Prejudice"


def _settings(db: Path, base_url: str, model: str, context: int) -> Settings:
    return Settings(
        db=db,
        llm=LLMSettings(
            base_url=base_url, model=model, timeout_s=600, max_tokens=256, context_tokens=context
        ),
        segments=SegmentSettings(summarizer="extractive"),
        # A 1.5B model on 2 busy cores takes minutes per step (the defaults: 60 s, 120 s).
        # llama-cpp-python's chatml-function-calling template drops role:tool messages.
        agent=AgentSettings(timeout_s=400, total_timeout_s=1200, tool_results_as="user"),
    )


def _facts(answer: Answer) -> dict[str, Any]:
    return {
        "answerer": answer.answerer,
        "refused": answer.refused,
        "citations": len(answer.citations),
        "verified": sum(c.verified for c in answer.citations),
        "text": answer.text[:300],
    }


def _on_evidence(
    store: SQLiteStore,
    doc_id: str,
    unit: int,
    names: dict[str, str],
    files: dict[str, str],
    evidence: list[dict[str, Any]],
) -> bool:
    """Whether the unit (page or EPUB section) holds one of the question's evidence quotes."""
    stored = store.unit(doc_id, unit)
    text = " ".join(stored.text.split()) if stored is not None else ""
    return any(
        files.get(e["doc"]) == names.get(doc_id) and " ".join(e["quote"].split())[:60] in text
        for e in evidence
    )


def run_llm(store: SQLiteStore, settings: Settings, k: int) -> list[dict[str, Any]]:
    embedder = load_embedder(settings.embedder)
    questions = {q["id"]: q for q in json.loads(DEV.read_text("utf-8"))["questions"]}
    files = {
        slug: Path(d["path"]).name
        for slug, d in json.loads(DEV.read_text("utf-8"))["documents"].items()
    }
    names = {d.id: Path(d.path).name for d in store.list_documents()}
    rows: list[dict[str, Any]] = []
    for qid in LLM_QUESTIONS:
        q = questions[qid]
        began = time.perf_counter()
        answer: Answer | None = None
        error = None
        for event in answer_events(store, embedder, q["question"], settings, mode="llm", k=k):
            if isinstance(event, DoneEvent):
                answer = event.answer
            elif isinstance(event, ErrorEvent):
                error = event.message
        seconds = time.perf_counter() - began
        row: dict[str, Any] = {"id": qid, "answerable": q["answerable"], "seconds": seconds}
        if answer is None:
            rows.append({**row, "error": error})
            continue
        row.update(_facts(answer))
        row["right_refusal"] = answer.refused != q["answerable"]
        row["evidence_hit"] = any(
            c.verified and _on_evidence(store, c.doc_id, c.unit, names, files, q["evidence"])
            for c in answer.citations
        )
        row["budget"] = answer.info.get("budget")
        rows.append(row)
    return rows


def run_agent(store: SQLiteStore, settings: Settings) -> list[dict[str, Any]]:
    embedder = load_embedder(settings.embedder)
    (book,) = [d.id for d in store.list_documents() if d.title == BOOK]
    rows: list[dict[str, Any]] = []
    for question in AGENT_QUESTIONS:
        agent = agent_for(settings, store, embedder, doc_id=book)
        agent.toolbox = book_tools(settings, store, embedder, model=None, doc_ids=[book])
        began = time.perf_counter()
        answer = ask_agent(store, embedder, question, agent)
        row = {"question": question, "seconds": time.perf_counter() - began, **_facts(answer)}
        # After a fallback, "tools" are the extractive agent's; the model's are "model_tools".
        model_runs = answer.info.get("model_tools", answer.info.get("tools", []))
        row["model_calls"] = [t["name"] for t in model_runs if not t.get("forced")]
        row["forced"] = [t["name"] for t in model_runs if t.get("forced")]
        row["tag_supported"] = sum(
            c.via == "tag" and c.state == "supported" for c in answer.citations
        )
        row["fallback_reason"] = answer.info.get("fallback_reason")
        row["failed"] = answer.info.get("failed")
        rows.append(row)
    return rows


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    seconds = [r["seconds"] for r in rows]
    out: dict[str, Any] = {
        "n": len(rows),
        "p50_s": round(statistics.median(seconds), 1),
        "max_s": round(max(seconds), 1),
        "with_verified": sum(1 for r in rows if r.get("verified")),
        "model_answered": sum(1 for r in rows if "@" in str(r.get("answerer"))),
    }
    if rows and "right_refusal" in rows[0]:
        out["right_refusal"] = sum(1 for r in rows if r.get("right_refusal"))
        out["evidence_hit"] = sum(1 for r in rows if r.get("evidence_hit"))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True, help="the golden index (copied)")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--context", type=int, default=4096)
    parser.add_argument("--runs", default="llm,agent")
    parser.add_argument("--k", type=int, default=4, help="sources per LLM answer")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "golden.sqlite"
        shutil.copyfile(args.db, db)
        settings = _settings(db, args.base_url, args.model, args.context)
        store = SQLiteStore(db)
        result: dict[str, Any] = {
            "model": args.model,
            "context_tokens": args.context,
            "k": args.k,
        }
        try:
            for name in args.runs.split(","):
                if name == "llm":
                    rows = run_llm(store, settings, args.k)
                else:
                    rows = run_agent(store, settings)
                result[name] = {"summary": _summary(rows), "rows": rows}
                print(json.dumps({name: result[name]["summary"]}), file=sys.stderr, flush=True)
        finally:
            store.close()
    print(json.dumps(result, indent=1, default=str))
    return 0


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    sys.exit(main())
