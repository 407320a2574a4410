"""The real CLI over real files and a real SQLite file (click's CliRunner, in process)."""

from __future__ import annotations

import importlib
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers.corpus import GOLDEN_CAPABILITIES, GOLDEN_DEV, ROBUSTNESS, SEED
from tests.helpers.indexes import copy_db, empty_index
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
    assert [d["language"] for d in docs] == ["en"]
    code, out = run("--db", db, "docs")
    assert code == 0 and "language" in out and " en " in out


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


# Exit codes: 0 success, 2 a TruthBaseError (one line on stderr, no traceback), 1 a bug.


def test_success_exits_0(tmp_path: Path) -> None:
    db = empty_index(tmp_path / "new.sqlite")
    result = CliRunner().invoke(cli, ["--db", str(db), "docs", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == []
    assert result.stderr == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["docs"], "is not a TruthBase index"),  # --db names a file that is no index
        (["ask", "--mode", "llm", "anything"], "--mode llm needs an LLM"),
        (["segments", "list", "abc"], "no document id starts with 'abc'"),
        (["eval", "retrieval", "--golden", "{golden}"], "cannot read golden file"),
    ],
)
def test_a_truthbase_error_is_one_line_on_stderr_and_exit_2(
    tmp_path: Path, args: list[str], message: str
) -> None:
    db = tmp_path / "t.sqlite"
    golden = tmp_path / "golden.json"
    golden.write_text("{not json")
    if args == ["docs"]:
        db.write_text("not an SQLite file\n")
    else:
        empty_index(db)  # the commands that read want an index there
    argv = ["--db", str(db), *(a.replace("{golden}", str(golden)) for a in args)]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("error: ") and message in lines[0], result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize("bug", [RuntimeError, ValueError, KeyError])
def test_an_unexpected_exception_is_a_bug_exit_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bug: type[Exception]
) -> None:
    # ValueError too: `search` once caught it as if it were a user error (exit 2).
    def broken(*args: object, **kwargs: object) -> object:
        raise bug("a bug in search")

    # the module, not the `docs` command that truthbase.cli exports under the same name
    monkeypatch.setattr(importlib.import_module("truthbase.cli.docs"), "search", broken)
    db = empty_index(tmp_path / "t.sqlite")
    result = CliRunner().invoke(cli, ["--db", str(db), "search", "anything"])
    assert result.exit_code == 1
    assert type(result.exception) is bug
    assert "error:" not in result.output


def test_a_bug_shows_its_traceback(tmp_path: Path) -> None:
    """The real entry point in a process of its own: the traceback is on stderr, exit 1."""
    script = (
        "import sys\n"
        "from truthbase.store import SQLiteStore\n"
        "def broken(self): raise RuntimeError('a bug in list_documents')\n"
        "SQLiteStore.list_documents = broken\n"
        "from truthbase.cli import main\n"
        "sys.argv[0] = 'truthbase'\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "--db", str(empty_index(tmp_path / "t.sqlite")), "docs"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback (most recent call last)" in done.stderr
    assert "RuntimeError: a bug in list_documents" in done.stderr
    assert "error:" not in done.stderr


def test_eval_retrieval_and_answers_print_their_reports(seed_db: Path, tmp_path: Path) -> None:
    """Both eval commands end to end on a small golden set of seed-PDF questions: each prints
    its own report (answers: the weak count and the cross-validated refusal) and writes JSON."""
    golden = json.loads(GOLDEN_DEV.read_text("utf-8"))
    seed_docs = {p.stem for p in SEED.glob("*.pdf")}
    answerable = [
        q
        for q in golden["questions"]
        if q["answerable"] and all(e["doc"] in seed_docs for e in q["evidence"])
    ][:4]
    unanswerable = [q for q in golden["questions"] if not q["answerable"]][:4]
    small = tmp_path / "golden" / "small.json"
    small.parent.mkdir()
    small.write_text(
        json.dumps({**golden, "questions": answerable + unanswerable}), encoding="utf-8"
    )
    db = copy_db(seed_db, tmp_path / "seed.sqlite")
    root = str(GOLDEN_DEV.parent.parent)
    common = ["--db", str(db)]
    code, out = run(
        *common, "eval", "retrieval", "--golden", str(small), "--corpus-root", root,
        "--json", str(tmp_path / "r.json"),
    )  # fmt: skip
    assert code == 0, out
    assert "refusal threshold" not in out  # the answers report's lines stay in eval answers
    assert json.loads((tmp_path / "r.json").read_text())["questions"] == len(answerable)
    code, out = run(
        *common, "eval", "answers", "--golden", str(small), "--corpus-root", root,
        "--json", str(tmp_path / "a.json"),
    )  # fmt: skip
    assert code == 0, out
    assert "weak (counted as refused" in out
    report = json.loads((tmp_path / "a.json").read_text())
    assert report["questions"] == len(answerable) + len(unanswerable)
    assert {"weak_answerable", "weak_unanswerable", "supported_share", "refusal_cv"} <= set(report)


def test_eval_reports_capabilities_and_missing_documents(
    capabilities_db: Path, tmp_path: Path
) -> None:
    """On a set that uses the Capabilities section, both eval commands show the metrics per
    capability tag; a document that fails to ingest is named missing, its questions misses."""
    golden = json.loads(GOLDEN_CAPABILITIES.read_text("utf-8"))
    first: dict[str, dict[str, object]] = {}
    for q in golden["questions"]:
        key = "unanswerable" if not q["answerable"] else q["tags"][0]
        first.setdefault(key, q)
    small = tmp_path / "golden" / "caps.json"
    small.parent.mkdir()
    small.write_text(json.dumps({**golden, "questions": list(first.values())}), encoding="utf-8")
    db = copy_db(capabilities_db, tmp_path / "caps.sqlite")
    common = ["--db", str(db)]
    root = str(GOLDEN_CAPABILITIES.parent.parent)
    code, out = run(
        *common, "eval", "retrieval", "--golden", str(small), "--corpus-root", root,
        "--json", str(tmp_path / "r.json"),
    )  # fmt: skip
    assert code == 0, out
    report = json.loads((tmp_path / "r.json").read_text())
    for tag in ("ocr", "german", "table", "cjk"):
        assert f"{tag} questions (" in out
        assert set(report["by_capability"][tag]) == {"n", "hybrid", "fts", "dense"}
    missing = report.get("missing_documents", {})
    for name in missing:  # the scans, until OCR lands
        assert f"missing document {name}" in out
    code, out = run(
        *common, "eval", "answers", "--mode", "extractive", "--golden", str(small),
        "--corpus-root", root, "--json", str(tmp_path / "a.json"),
    )  # fmt: skip
    assert code == 0, out
    answers = json.loads((tmp_path / "a.json").read_text())
    assert set(answers["by_capability"]) == {"ocr", "german", "table", "cjk"}
    assert "citations hold the row's cells" in out
    assert answers["questions"] == len(first)
