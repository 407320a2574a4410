"""The real CLI over real files and a real SQLite file (click's CliRunner, in process)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers.corpus import ROBUSTNESS
from truthbase.cli import cli


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def test_help_lists_every_command() -> None:
    code, out = run("--help")
    assert code == 0
    for command in ("ingest", "docs", "search"):
        assert command in out


@pytest.mark.corpus
def test_ingest_reports_failures_and_exits_1(tmp_path: Path) -> None:
    db = str(tmp_path / "t.sqlite")
    code, out = run(
        "--db",
        db,
        "ingest",
        str(ROBUSTNESS / "pdfminer-pagelabels.pdf"),
        str(ROBUSTNESS / "pdfminer-aes-256.pdf"),
        str(tmp_path / "nope.pdf"),
    )
    assert code == 1
    assert "encrypted" in out and "missing" in out
    assert "1 ingested, 0 unchanged, 2 failed" in out
    code, out = run("--db", db, "docs", "--json")
    assert code == 0
    docs = json.loads(out)
    assert [d["pages"] for d in docs] == [5]


def test_search_json_has_page_text_and_rects(seed_db: Path) -> None:
    code, out = run("--db", str(seed_db), "search", "--json", "--k", "5", "reflection tokens")
    assert code == 0
    payload = json.loads(out)
    results = payload["results"]
    assert len(results) == 5
    for hit in results:
        assert {"doc_id", "page", "text", "rects", "score"} <= hit.keys()
        assert hit["page"] >= 1
        assert hit["rects"] and all(len(r) == 4 for r in hit["rects"])
    assert any(
        "self-rag" in hit["document"].lower() or "reflection" in hit["text"].lower()
        for hit in results
    )


def test_search_explain_shows_every_arm(seed_db: Path) -> None:
    code, out = run("--db", str(seed_db), "search", "--explain", "--k", "3", "GV.OC-01")
    assert code == 0
    assert "fts" in out and "dense" in out and "late" in out
    code, out = run("--db", str(seed_db), "search", "--json", "--k", "8", "GV.OC-01")
    arms = [set(hit["arms"]) for hit in json.loads(out)["results"]]
    assert any("fts" in a for a in arms)
    assert any("dense" in a for a in arms)
    # the late-interaction list ranks the union of both arms' candidates: every result is in it
    assert all("late" in a for a in arms)


def test_search_with_another_embedder_says_to_reindex(seed_db: Path, tmp_path: Path) -> None:
    copy = tmp_path / "other.sqlite"
    copy.write_bytes(seed_db.read_bytes())
    connection = sqlite3.connect(copy)
    connection.execute("UPDATE meta SET value='some-other-model' WHERE key='embedder'")
    connection.commit()
    connection.close()
    result = CliRunner().invoke(cli, ["--db", str(copy), "search", "anything"])
    assert result.exit_code == 2
    assert "re-ingest" in result.output or "re-index" in result.output


@pytest.mark.corpus
def test_ingest_is_idempotent_through_the_cli(tmp_path: Path) -> None:
    db = str(tmp_path / "t.sqlite")
    target = str(ROBUSTNESS / "pdfminer-pagelabels.pdf")
    assert run("--db", db, "ingest", target)[0] == 0
    code, out = run("--db", db, "ingest", target)
    assert code == 0
    assert "0 ingested, 1 unchanged, 0 failed" in out
