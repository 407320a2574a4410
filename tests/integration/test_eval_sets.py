"""Several golden sets at once through the real CLI: each set is measured in its own index (so
its numbers are those it gets alone), the pool weighs every question once, and `eval tune`
reports each set's numbers with the values chosen without it beside the fitted ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.helpers import indexes
from tests.helpers.corpus import GOLDEN_CAPABILITIES, GOLDEN_DEV
from truthbase.cli import cli

pytestmark = pytest.mark.slow

#: The pooled left-out hybrid Recall@8 of dev.json and capabilities-dev.json: .850 when this
#: gate was set (docs/evals/sets.md); the slack of two questions in 80 keeps it a gate on a fall.
LEFT_OUT_RECALL_FLOOR = 0.825


@pytest.fixture(scope="module")
def index_dir(
    tmp_path_factory: pytest.TempPathFactory, golden_db: Path, capabilities_db: Path
) -> Path:
    folder = tmp_path_factory.mktemp("sets")
    indexes.copy_db(golden_db, folder / f"{GOLDEN_DEV.stem}.sqlite")
    indexes.copy_db(capabilities_db, folder / f"{GOLDEN_CAPABILITIES.stem}.sqlite")
    return folder


def _run(*args: str) -> Any:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def _report(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _both(index_dir: Path, out: Path) -> list[str]:
    return [
        "--golden",
        str(GOLDEN_DEV),
        "--golden",
        str(GOLDEN_CAPABILITIES),
        "--index-dir",
        str(index_dir),
        "--json",
        str(out),
    ]


def test_each_set_gets_the_numbers_it_gets_alone(index_dir: Path, tmp_path: Path) -> None:
    _run("eval", "retrieval", *_both(index_dir, tmp_path / "sets.json"))
    alone_db = indexes.copy_db(index_dir / f"{GOLDEN_DEV.stem}.sqlite", tmp_path / "alone.sqlite")
    _run(
        "--db",
        str(alone_db),
        "eval",
        "retrieval",
        "--golden",
        str(GOLDEN_DEV),
        "--json",
        str(tmp_path / "alone.json"),
    )
    sets, alone = _report(tmp_path / "sets.json"), _report(tmp_path / "alone.json")

    assert set(sets["sets"]) == {GOLDEN_DEV.stem, GOLDEN_CAPABILITIES.stem}
    assert sets["sets"][GOLDEN_DEV.stem]["modes"] == alone["modes"]
    sizes = {name: report["questions"] for name, report in sets["sets"].items()}
    expected = sum(
        sets["sets"][name]["modes"]["hybrid"]["recall@8"] * n for name, n in sizes.items()
    ) / sum(sizes.values())
    assert sets["pool"]["hybrid"]["recall@8"] == pytest.approx(expected)


def test_tuning_leaves_each_set_out(index_dir: Path, tmp_path: Path) -> None:
    _run("eval", "tune", *_both(index_dir, tmp_path / "tune.json"))
    report = _report(tmp_path / "tune.json")

    names = {GOLDEN_DEV.stem, GOLDEN_CAPABILITIES.stem}
    assert set(report["sets"]) == names
    assert report["pool"]["questions"] == sum(row["questions"] for row in report["sets"].values())
    for row in report["sets"].values():
        assert set(row["chosen_without_it"]) == set(report["chosen"])
    left_out = report["pool"]["left_out"]["recall@8"]
    assert left_out >= LEFT_OUT_RECALL_FLOOR, report["pool"]


def test_several_sets_need_an_index_folder(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "--db",
            str(tmp_path / "x.sqlite"),
            "eval",
            "retrieval",
            "--golden",
            str(GOLDEN_DEV),
            "--golden",
            str(GOLDEN_CAPABILITIES),
        ],
    )
    assert result.exit_code == 2
    assert "--index-dir" in result.output
    assert not (tmp_path / "x.sqlite").exists()
