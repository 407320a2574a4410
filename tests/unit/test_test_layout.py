"""The test tree's own rule: what several modules share lives in tests/helpers; no module imports
a test module (test_*.py) or a conftest.py."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def imported(source: str, package: str) -> list[str]:
    """Every module (or module.name) an import statement names, relative ones made absolute."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join([*parts[: len(parts) - node.level + 1], node.module or ""])
            else:
                base = node.module or ""
            base = base.strip(".")
            found += [base, *(f"{base}.{alias.name}" for alias in node.names)]
    return found


def forbidden(names: list[str]) -> list[str]:
    return [
        name
        for name in names
        if name.split(".")[0] == "tests"
        and any(p.startswith("test_") or p == "conftest" for p in name.split(".")[1:])
    ]


def test_no_module_imports_a_test_module_or_a_conftest() -> None:
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        package = ".".join(path.relative_to(TESTS.parent).parts[:-1])
        for name in forbidden(imported(path.read_text("utf-8"), package)):
            offenders.append(f"{path.relative_to(TESTS.parent)}: {name}")
    assert not offenders, offenders


def test_the_rule_catches_relative_and_absolute_imports() -> None:
    source = (
        "from .test_verify import copy_db\n"
        "from ..conftest import GOLDEN_DEV\n"
        "from . import test_llm_transcripts as transcripts\n"
        "import tests.unit.test_agent\n"
        "from tests.helpers.indexes import copy_db\n"
    )
    assert forbidden(imported(source, "tests.integration")) == [
        "tests.integration.test_verify",
        "tests.integration.test_verify.copy_db",
        "tests.conftest",
        "tests.conftest.GOLDEN_DEV",
        "tests.integration.test_llm_transcripts",
        "tests.unit.test_agent",
    ]
