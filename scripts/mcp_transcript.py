"""Record an MCP client session with `truthbase mcp` into docs/evals/mcp-transcript.md.

The MCP SDK's own client starts `truthbase --db INDEX mcp` over stdio and makes the calls an
agent would: list the tools, list the documents, search, read the best passage, then
verify_claim a golden quote (the first dev.json evidence on the index with a number in it) as
given, with a number of the claim changed, and with a number of the quote changed. Each request
and response is written as JSON (long texts shortened), with the date and commit.

    PYTHONPATH=src .venv/bin/python scripts/mcp_transcript.py --db seed.sqlite
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
QUERY = "Who is the primary audience of the Cybersecurity Framework?"


def _short(value: Any, limit: int = 200) -> Any:
    if isinstance(value, str):
        return value if len(value) <= limit else value[: limit - 1] + "…"
    if isinstance(value, list) and value and all(isinstance(v, float) for v in value):
        return [round(v, 2) for v in value]  # a rect: whole, in hundredths of a point
    if isinstance(value, list):
        shown = [_short(v, limit) for v in value[:3]]
        return shown + ([f"... {len(value) - 3} more"] if len(value) > 3 else [])
    if isinstance(value, dict):
        return {k: _short(v, limit) for k, v in value.items()}
    return value


def _changed_number(text: str) -> str:
    match = re.search(r"\d", text)
    assert match is not None
    return text[: match.start()] + str((int(match.group()) + 1) % 10) + text[match.end() :]


def _golden_quote(golden: Path, names: dict[str, str]) -> tuple[str, int, str]:
    data = json.loads(golden.read_text("utf-8"))
    for question in data["questions"]:
        for evidence in question["evidence"]:
            name = Path(data["documents"][evidence["doc"]]["path"]).name
            if name in names and evidence.get("page") and re.search(r"\d", evidence["quote"]):
                return names[name], evidence["page"], evidence["quote"]
    raise SystemExit(f"no evidence of {golden} with a number is on a document of the index")


async def session(db: Path, golden: Path) -> list[tuple[str, dict[str, Any], Any]]:
    env = {k: v for k, v in os.environ.items() if k.startswith("TRUTHBASE_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "truthbase.cli", "--db", str(db), "mcp"], env=env
    )
    log: list[tuple[str, dict[str, Any], Any]] = []
    async with Client(params) as client:
        tools = (await client.list_tools()).tools
        log.append(
            (
                "tools/list",
                {},
                [
                    {"name": t.name, "description": t.description, "inputSchema": t.input_schema}
                    for t in tools
                ],
            )
        )

        async def call(name: str, arguments: dict[str, Any]) -> Any:
            result = await client.call_tool(name, arguments)
            shown = (
                {"isError": True, "text": result.content[0].text}
                if result.is_error
                else result.structured_content
            )
            log.append((f"tools/call {name}", arguments, shown))
            return result.structured_content

        documents = (await call("list_documents", {}))["documents"]
        hits = (await call("search", {"query": QUERY, "k": 3}))["results"]
        best = hits[0]
        await call(
            "get_passage",
            {
                "doc": best["doc_id"],
                "unit": best["unit"],
                "start": best["start"],
                "end": best["end"],
            },
        )
        by_file = {Path(_path(db, d["doc_id"])).name: d["doc_id"] for d in documents}
        doc_id, page, quote = _golden_quote(golden, by_file)
        where = {"doc": doc_id[:12], "page": page}
        await call("verify_claim", where | {"quote": quote, "claim": quote})
        await call("verify_claim", where | {"quote": quote, "claim": _changed_number(quote)})
        await call("verify_claim", where | {"quote": _changed_number(quote), "claim": quote})
        await call("get_passage", {"doc": "ffffffff", "unit": 0, "start": 0, "end": 10})
    return log


def _path(db: Path, doc_id: str) -> str:
    """The file a document was ingested from (the transcript's golden quote is matched by name)."""
    import sqlite3

    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT path FROM documents WHERE id = ?", (doc_id,)).fetchone()
    return str(row[0]) if row else ""


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True, help="An index of the seed corpus.")
    parser.add_argument(
        "--golden", type=Path, default=ROOT.parent / "shared" / "golden" / "dev.json"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "evals" / "mcp-transcript.md")
    args = parser.parse_args()
    log = anyio.run(session, args.db, args.golden)
    lines = [
        "# An MCP client session with `truthbase mcp`",
        "",
        f"Recorded {datetime.now(UTC).isoformat(timespec='seconds')} at commit {_commit()} by "
        "`scripts/mcp_transcript.py --db INDEX` (the MCP SDK's client over stdio, the index of "
        "the four seed PDFs). In responses, long texts are shortened (…) and long lists cut to 3.",
        "",
    ]
    for n, (method, arguments, result) in enumerate(log, 1):
        lines += [f"## {n}. `{method}`", ""]
        if arguments:
            lines += [
                "Request:",
                "",
                "```json",
                json.dumps(arguments, ensure_ascii=False),
                "```",
                "",
            ]
        shown = result if method == "tools/list" else _short(result)
        lines += [
            "Response:",
            "",
            "```json",
            json.dumps(shown, indent=2, ensure_ascii=False),
            "```",
            "",
        ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines), "utf-8")
    print(f"wrote {args.out} ({len(log)} exchanges)")


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    main()
