"""Golden set loading and validation (format version 1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.corpus import GOLDEN_CAPABILITIES, GOLDEN_DEV
from truthbase.eval.golden import (
    CAPABILITY_TAGS,
    GoldenError,
    GoldenSet,
    default_corpus_root,
    golden_warnings,
    load_golden,
    parse_golden,
    resolve_document_paths,
)

QUOTE = "Individuals responsible for developing and leading cybersecurity programs."
DEV = GOLDEN_DEV


def golden_data(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "version": 1,
        "documents": {
            "csf": {"path": "corpus/seed/nist-csf-2.0.pdf"},
            "alice": {"path": "corpus/epub/alice.epub"},
        },
        "questions": [
            {
                "id": "q1",
                "question": "Who is the audience?",
                "answerable": True,
                "answer": "Individuals.",
                "evidence": [{"doc": "csf", "page": 2, "quote": QUOTE}],
                "tags": ["fact"],
            },
            {
                "id": "q2",
                "question": "What did the bottle say?",
                "answerable": True,
                "answer": "DRINK ME",
                "evidence": [
                    {"doc": "alice", "section": "chapter_001.xhtml", "quote": QUOTE},
                ],
                "tags": ["epub", "fact"],
            },
            {
                "id": "q3",
                "question": "Unknown?",
                "answerable": False,
                "answer": None,
                "evidence": [],
                "tags": ["unanswerable"],
            },
        ],
    }
    data.update(overrides)
    return data


def write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "golden" / "set.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_load_valid_set(tmp_path: Path) -> None:
    golden = load_golden(write(tmp_path, golden_data()))
    assert isinstance(golden, GoldenSet)
    assert [q.id for q in golden.questions] == ["q1", "q2", "q3"]
    assert [q.id for q in golden.answerable] == ["q1", "q2"]
    pdf, epub = golden.questions[0].evidence[0], golden.questions[1].evidence[0]
    assert (pdf.page, pdf.section, pdf.unit_index) == (2, None, 1)
    assert (epub.page, epub.section, epub.unit_index) == (None, "chapter_001.xhtml", None)
    assert golden.questions[1].tags == ("epub", "fact")
    assert golden_warnings(golden) == []


def test_unknown_version_is_rejected_clearly(tmp_path: Path) -> None:
    with pytest.raises(GoldenError, match=r"unsupported golden format version 2 .*reads: 1"):
        load_golden(write(tmp_path, golden_data(version=2)))
    with pytest.raises(GoldenError, match="no 'version'"):
        parse_golden({"documents": {}, "questions": []})
    with pytest.raises(GoldenError, match="unsupported golden format version True"):
        parse_golden(golden_data(version=True))


def test_evidence_must_name_a_listed_document() -> None:
    data = golden_data()
    data["questions"][0]["evidence"][0]["doc"] = "nist-csf"
    with pytest.raises(GoldenError, match="'nist-csf', which is not in 'documents'"):
        parse_golden(data)


@pytest.mark.parametrize(
    "evidence",
    [
        {"doc": "csf", "quote": QUOTE},
        {"doc": "csf", "page": 2, "section": "x.xhtml", "quote": QUOTE},
        {"doc": "csf", "page": 0, "quote": QUOTE},
        {"doc": "csf", "page": "2", "quote": QUOTE},
        {"doc": "csf", "page": 2, "quote": ""},
        {"doc": "csf", "page": 2, "quote": QUOTE, "pages": 3},
    ],
)
def test_bad_evidence_is_rejected(evidence: dict[str, Any]) -> None:
    data = golden_data()
    data["questions"][0]["evidence"] = [evidence]
    with pytest.raises(GoldenError, match="invalid golden set") as raised:
        parse_golden(data)
    message = str(raised.value)  # one line that says where: the CLI prints it as "error: ..."
    assert "\n" not in message and "questions.0.evidence.0" in message, message
    assert "errors.pydantic.dev" not in message


def test_answerable_needs_evidence_and_unanswerable_has_none() -> None:
    data = golden_data()
    data["questions"][0]["evidence"] = []
    with pytest.raises(GoldenError, match="answerable but has no evidence"):
        parse_golden(data)
    data = golden_data()
    data["questions"][2]["evidence"] = [{"doc": "csf", "page": 1, "quote": QUOTE}]
    with pytest.raises(GoldenError, match="unanswerable but has evidence"):
        parse_golden(data)


def test_duplicate_ids_and_unknown_fields_are_rejected() -> None:
    data = golden_data()
    data["questions"][1]["id"] = "q1"
    with pytest.raises(GoldenError, match="duplicate question id 'q1'"):
        parse_golden(data)
    with pytest.raises(GoldenError, match="invalid golden set"):
        parse_golden(golden_data(extra_field=1))


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(GoldenError, match="cannot read"):
        load_golden(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(GoldenError, match="cannot read"):
        load_golden(bad)
    with pytest.raises(GoldenError, match="JSON object"):
        parse_golden([1, 2])


def test_warnings_for_soft_problems() -> None:
    data = golden_data()
    data["questions"][0]["tags"] = ["fact", "made-up"]
    data["questions"][0]["evidence"][0]["quote"] = "too short"
    assert golden_warnings(parse_golden(data)) == [
        "question q1: unknown tags made-up",
        "question q1: quote of 9 characters (expected 30 to 300)",
    ]


def test_corpus_root_and_document_paths(tmp_path: Path) -> None:
    path = write(tmp_path, golden_data())
    root = default_corpus_root(path)
    assert root == tmp_path
    paths = resolve_document_paths(load_golden(path), root)
    assert paths == {
        "csf": tmp_path / "corpus/seed/nist-csf-2.0.pdf",
        "alice": tmp_path / "corpus/epub/alice.epub",
    }


def test_default_corpus_root_of_a_relative_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir("/")
    assert default_corpus_root(Path("tmp/golden/dev.json")) == Path("/tmp")


@pytest.mark.corpus
def test_the_dev_set_loads_cleanly() -> None:
    golden = load_golden(DEV)
    assert golden.version == 1
    assert golden.answerable
    assert golden_warnings(golden) == []
    root = default_corpus_root(DEV)
    assert root == DEV.parent.parent
    assert set(resolve_document_paths(golden, root)) == set(golden.documents)


def test_question_kind_follows_its_evidence() -> None:
    data = golden_data()
    data["questions"].append(
        {
            "id": "q4",
            "question": "Both?",
            "answerable": True,
            "evidence": [
                {"doc": "csf", "page": 3, "quote": QUOTE},
                {"doc": "alice", "section": "chapter_002.xhtml", "quote": QUOTE},
            ],
        }
    )
    kinds = {q.id: q.kind for q in parse_golden(data).questions}
    assert kinds == {"q1": "pdf", "q2": "epub", "q3": "none", "q4": "mixed"}


# -- the Capabilities fields (README "Capabilities"): ocr, cells, short CJK quotes -------------


def _with_evidence(evidence: dict[str, Any], tags: list[str] | None = None) -> dict[str, Any]:
    data = golden_data()
    data["questions"][0]["evidence"] = [evidence]
    data["questions"][0]["tags"] = tags or ["fact"]
    return data


def test_ocr_and_cells_evidence_load() -> None:
    ocr = parse_golden(
        _with_evidence({"doc": "csf", "page": 1, "quote": "a scan", "ocr": True}, ["ocr"])
    )
    assert ocr.questions[0].evidence[0].ocr
    table = parse_golden(
        _with_evidence(
            {"doc": "csf", "page": 2, "quote": "3000", "cells": ["Toyota", "Torrance", "3000"]},
            ["table"],
        )
    )
    record = table.questions[0].evidence[0]
    assert record.cells == ("Toyota", "Torrance", "3000") and not record.ocr
    # neither field: a plain record, as before
    plain = parse_golden(golden_data()).questions[0].evidence[0]
    assert not plain.ocr and plain.cells is None


@pytest.mark.parametrize(
    "field",
    [
        {"ocr": "yes"},  # strictly a boolean
        {"ocr": 1},
        {"cells": []},  # a table record names at least one cell
        {"cells": ["Toyota", "  "]},  # no blank cell
        {"cells": "Toyota"},  # a list, not a string
        {"cell": ["Toyota"]},  # unknown fields are still rejected
    ],
)
def test_bad_capability_fields_are_rejected(field: dict[str, Any]) -> None:
    with pytest.raises(GoldenError):
        parse_golden(_with_evidence({"doc": "csf", "page": 2, "quote": QUOTE, **field}))


@pytest.mark.parametrize(
    ("record", "tags", "warned"),
    [
        ({"quote": "公司负责人刘道骐"}, ["cjk"], False),  # one character carries a word
        ({"quote": "ここは日本です"}, ["cjk"], False),
        ({"quote": "short English quote"}, ["fact"], True),
        ({"quote": "short, as printed", "ocr": True}, ["ocr"], False),
        ({"quote": "3000", "cells": ["Torrance", "3000"]}, ["table"], False),
        ({"quote": "营业收入 revenue of the first quarter"}, ["cjk"], False),  # long enough
        ({"quote": "收入 revenue here"}, ["cjk"], True),  # mostly Latin letters
    ],
)
def test_short_quotes_are_allowed_where_the_readme_allows_them(
    record: dict[str, Any], tags: list[str], warned: bool
) -> None:
    golden = parse_golden(_with_evidence({"doc": "csf", "page": 2, **record}, tags))
    assert any("quote of" in w for w in golden_warnings(golden)) == warned


def test_capability_tags_are_known() -> None:
    golden = parse_golden(
        _with_evidence({"doc": "csf", "page": 2, "quote": QUOTE}, ["ocr", "german", "cjk", "table"])
    )
    assert golden_warnings(golden) == []


@pytest.mark.corpus
def test_the_capabilities_set_loads_cleanly() -> None:
    golden = load_golden(GOLDEN_CAPABILITIES)
    assert golden_warnings(golden) == []
    records = [e for q in golden.questions for e in q.evidence]
    assert any(e.ocr for e in records) and any(e.cells for e in records)
    tags = {t for q in golden.questions for t in q.tags}
    assert set(CAPABILITY_TAGS) <= tags
