"""Hostile input at the command line: each case once printed a Python traceback and exited 1
(session 25's review of every door; the threads, users, tokens and collections arguments, session
26's); now each is exit 2 with one sentence on stderr.

In process (click's CliRunner), as the other CLI tests: a string with a lone surrogate is what
Python makes of command-line bytes that are not UTF-8."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers.indexes import copy_db, empty_index
from truthbase.cli import cli

DEEP = "[" * 100_000 + "]" * 100_000


def _refused(argv: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    first = result.stderr.strip().splitlines()[0]
    assert first.startswith("error: ") and message in first, result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["search", "tree \udce9"], "the query is not valid text"),
        (["search", "\udced\udca0\udc80"], "the query is not valid text"),
        (["ask", "tree \udcff\udcfe"], "the question is not valid text"),
        (["search", "tree", "--collection", "\udce9"], "collection name is not valid text"),
        (["eval", "claims", "--claims", "{deep}"], "nested too deeply"),
        (["eval", "claims", "--claims", "{null}"], "a claim set is a JSON object"),
        (["eval", "claims", "--claims", "{items}"], "not a claim set of version 1"),
        (["eval", "claims", "--claims", "{no_supported}"], "not a claim set of version 1"),
        (["eval", "retrieval", "--golden", "{deep}"], "nested too deeply"),
        (["threads", "show", "\udcff"], "the thread id is not valid text"),
        (["threads", "rename", "\udcff", "t"], "the thread id is not valid text"),
        (["threads", "delete", "\udcff"], "the thread id is not valid text"),
        (["users", "remove", "\udcff"], "the user name is not valid text"),
        (["tokens", "list", "--user", "\udcff"], "the user name is not valid text"),
        (["tokens", "create", "--user", "ann", "--name", "\udcff"], "token name is not valid"),
        (["tokens", "revoke", "\udcff"], "the token id is not valid text"),
        (["collections", "create", "\udcff"], "the collection name is not valid text"),
        (["collections", "delete", "\udcff"], "the collection name is not valid text"),
        (["export", "--answer", str(2**63), "--out", "{out}"], "no answer"),
        (["export", "--answer", str(2**64), "--out", "{out}"], "no answer"),
    ],
)
def test_hostile_arguments_are_one_sentence_and_exit_2(
    tmp_path: Path, args: list[str], message: str
) -> None:
    files = {
        "deep": DEEP,
        "null": "null",
        "items": '{"version": 1, "documents": {}, "items": "x"}',
        "no_supported": (
            '{"version": 1, "documents": {"d": {"path": "d.pdf"}}, "items": [{"id": "i", '
            '"doc": "d", "page": 1, "quote": "q", "claims": [{"claim": "c", "kind": "k"}]}]}'
        ),
    }
    paths = {"out": str(tmp_path / "out.html")}
    for name, text in files.items():
        (tmp_path / f"{name}.json").write_text(text)
        paths[name] = str(tmp_path / f"{name}.json")
    db = empty_index(tmp_path / "t.sqlite")
    argv = ["--db", str(db), *(a.format(**paths) for a in args)]
    _refused(argv, message)


def test_a_history_nested_too_deeply_is_a_bad_parameter(tmp_path: Path) -> None:
    history = tmp_path / "history.json"
    history.write_text(DEEP)
    db = empty_index(tmp_path / "t.sqlite")
    argv = ["--db", str(db), "ask", "q", "--history", str(history)]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2 and "nests too deeply" in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_an_index_that_cannot_be_made_is_exit_2() -> None:
    _refused(["--db", "/dev/null", "docs"], "cannot make a new index in /dev/null")


def test_an_output_file_that_cannot_be_written_is_exit_2(seed_db: Path, tmp_path: Path) -> None:
    db = copy_db(seed_db, tmp_path / "seed.sqlite")
    asked = CliRunner().invoke(cli, ["--db", str(db), "ask", "What does RAPTOR stand for?"])
    assert asked.exit_code == 0, asked.output
    _refused(
        ["--db", str(db), "export", "--answer", "1", "--out", "/dev/full"], "cannot write /dev/full"
    )
    nested = tmp_path / "new" / "folder" / "a.html"  # a missing folder is made, as --json's is
    argv = ["--db", str(db), "export", "--answer", "1", "--out", str(nested)]
    made = CliRunner().invoke(cli, argv)
    assert made.exit_code == 0 and nested.read_text().startswith("<!DOCTYPE html>"), made.output
