"""`truthbase verify-claim` and verify_claim on the real seed index: one test per exit code."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers.corpus import GOLDEN_DEV, SEED
from truthbase.cite.verify import verify_claim
from truthbase.cli import cli
from truthbase.errors import InvalidInput, NotFound
from truthbase.store import SQLiteStore


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def golden_quote(seed_db: Path) -> tuple[str, int, str]:
    """(doc id, page, quote): the first dev.json evidence on a seed PDF whose quote has a
    number."""
    golden = json.loads(GOLDEN_DEV.read_text("utf-8"))
    store = SQLiteStore(seed_db)
    try:
        by_name = {Path(d.path).name: d.id for d in store.list_documents()}
    finally:
        store.close()
    seed_names = {p.name for p in SEED.glob("*.pdf")}
    for question in golden["questions"]:
        for evidence in question["evidence"]:
            name = Path(golden["documents"][evidence["doc"]]["path"]).name
            if name in seed_names and evidence.get("page") and re.search(r"\d", evidence["quote"]):
                return by_name[name], evidence["page"], evidence["quote"]
    pytest.fail("dev.json has no evidence with a number on a seed PDF")


def _changed_number(quote: str) -> str:
    match = re.search(r"\d", quote)
    assert match is not None
    digit = str((int(match.group()) + 1) % 10)
    return quote[: match.start()] + digit + quote[match.end() :]


def test_a_golden_quote_supports_itself_exit_0(
    seed_db: Path, golden_quote: tuple[str, int, str]
) -> None:
    doc_id, page, quote = golden_quote
    code, out, _ = run(
        "--db", str(seed_db), "verify-claim", "--doc", doc_id[:10], "--page", str(page),
        "--quote", quote, "--claim", quote, "--json",
    )  # fmt: skip
    assert code == 0, out
    verdict = json.loads(out)
    assert verdict["state"] == "supported" and verdict["found"]
    assert verdict["doc_id"] == doc_id and verdict["page"] == page and verdict["unit"] == page - 1
    assert 0 <= verdict["start"] < verdict["end"]
    assert verdict["rects"] and all(len(r) == 4 for r in verdict["rects"])
    assert verdict["reasons"] == [] and verdict["support"]["supported"]


def test_a_changed_number_is_quote_only_exit_1(
    seed_db: Path, golden_quote: tuple[str, int, str]
) -> None:
    doc_id, page, quote = golden_quote
    claim = _changed_number(quote)
    code, out, _ = run(
        "--db", str(seed_db), "verify-claim", "--doc", doc_id, "--page", str(page),
        "--quote", quote, "--claim", claim,
    )  # fmt: skip
    assert code == 1
    assert out.startswith("quote_only")
    assert "number_missing" in out
    code, out, _ = run(
        "--db", str(seed_db), "verify-claim", "--doc", doc_id, "--page", str(page),
        "--quote", quote, "--claim", claim, "--json",
    )  # fmt: skip
    verdict = json.loads(out)
    assert code == 1 and verdict["state"] == "quote_only" and verdict["found"]
    assert [r["code"] for r in verdict["reasons"]] == ["number_missing"]


def test_a_quote_from_another_page_is_unverified_exit_1(
    seed_db: Path, golden_quote: tuple[str, int, str]
) -> None:
    doc_id, page, quote = golden_quote
    other = 1 if page != 1 else 2
    code, out, _ = run(
        "--db", str(seed_db), "verify-claim", "--doc", doc_id, "--page", str(other),
        "--quote", quote, "--claim", quote, "--json",
    )  # fmt: skip
    assert code == 1
    verdict = json.loads(out)
    assert verdict["state"] == "unverified" and not verdict["found"]
    assert [r["code"] for r in verdict["reasons"]] == ["quote_not_found"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--doc", "ffffffffffff", "--page", "1"), "no document ffffffffffff"),
        (("--doc", "DOC", "--page", "100000"), "out of range"),
        (("--doc", "DOC", "--page", "0"), "page 0 is out of range"),
        (("--doc", "DOC", "--page", "1", "--unit", "0"), "exactly one of"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    seed_db: Path, golden_quote: tuple[str, int, str], args: tuple[str, ...], message: str
) -> None:
    doc_id, _, quote = golden_quote
    args = tuple(doc_id if a == "DOC" else a for a in args)
    code, _, err = run(
        "--db", str(seed_db), "verify-claim", *args, "--quote", quote, "--claim", quote
    )  # fmt: skip
    assert code == 2
    assert message in err and err.startswith("error:") and len(err.strip().splitlines()) == 1


def test_the_api_raises_the_general_kinds(
    seed_db: Path, golden_quote: tuple[str, int, str]
) -> None:
    doc_id, page, quote = golden_quote
    store = SQLiteStore(seed_db)
    try:
        with pytest.raises(NotFound):
            verify_claim(store, "ffffffffffff", 0, quote, quote)
        with pytest.raises(InvalidInput):
            verify_claim(store, doc_id, page - 1, quote, "  ")
        with pytest.raises(InvalidInput):
            verify_claim(store, doc_id, page - 1, "", quote)
        verdict = verify_claim(store, doc_id, page - 1, quote, quote)
        assert verdict.state == "supported" and verdict.check is not None
    finally:
        store.close()
