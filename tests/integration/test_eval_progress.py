"""The eval commands ingest a golden set's documents first (a library: most of an hour). With
output that is not a terminal (a log, CI, this runner), each document ingested or failed is one
line as it ends, numbered of the set's documents; documents already in the index print nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers.corpus import ROBUSTNESS
from truthbase.cli import cli


def _golden(tmp_path: Path) -> Path:
    golden = {
        "version": 1,
        "documents": {
            "pagelabels": {"path": "robustness/pdfminer-pagelabels.pdf"},
            "encrypted": {"path": "robustness/pdfplumber-password-example.pdf"},
        },
        "questions": [
            {
                "id": "p001",
                "question": "What is the heading on level 1?",
                "answerable": True,
                "answer": "Heading on Level 1",
                "evidence": [{"doc": "pagelabels", "page": 1, "quote": "Heading on Level 1"}],
                "tags": ["fact"],
            }
        ],
    }
    path = tmp_path / "golden" / "small.json"
    path.parent.mkdir()
    path.write_text(json.dumps(golden), encoding="utf-8")
    return path


@pytest.mark.corpus
def test_eval_prints_a_line_per_document_it_ingests_when_not_on_a_terminal(
    tmp_path: Path,
) -> None:
    golden = _golden(tmp_path)
    args = [
        "--db", str(tmp_path / "t.sqlite"), "eval", "retrieval", "--golden", str(golden),
        "--corpus-root", str(ROBUSTNESS.parent),
    ]  # fmt: skip
    first = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert first.exit_code == 0, first.output
    lines = first.stderr.splitlines()
    ingested = [line for line in lines if line.startswith("[1/2] pagelabels: ingested ")]
    assert len(ingested) == 1, first.stderr
    assert re.search(r"\d+ pages, \d+ chunks, [\d.]+ s$", ingested[0]), ingested[0]
    assert any(line.startswith("[2/2] encrypted: failed ") for line in lines), first.stderr
    assert "missing document encrypted" in first.stderr  # and after, what it costs the eval

    again = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert again.exit_code == 0, again.output
    assert "[1/2]" not in again.stderr  # already in the index: nothing to say
    assert "[2/2] encrypted: failed " in again.stderr  # tried again, failed again
