"""The test-index cache (tests/helpers/indexes.py): its key follows every input, and an entry is
built once, atomically, even when two builders race."""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from tests.helpers import indexes
from tests.helpers.indexes import (
    PACKAGE_DIR,
    build_facts,
    cached_index,
    code_files,
    golden_files,
    index_key,
    seed_files,
)

FACTS = {"settings": '{"max_chars": 800}', "embedder.model_id": "m"}


def flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    """A corpus folder laid out like ../shared: seed PDFs, a book, dev.json naming them."""
    root = tmp_path / "shared"
    (root / "corpus" / "seed").mkdir(parents=True)
    (root / "corpus" / "epub").mkdir()
    (root / "golden").mkdir()
    (root / "corpus" / "seed" / "a.pdf").write_bytes(b"%PDF-1.7 seed a" * 50)
    (root / "corpus" / "seed" / "b.pdf").write_bytes(b"%PDF-1.7 seed b" * 50)
    (root / "corpus" / "epub" / "book.epub").write_bytes(b"PK book" * 50)
    documents = {
        "a": {"path": "corpus/seed/a.pdf"},
        "book": {"path": "corpus/epub/book.epub"},
    }
    (root / "golden" / "dev.json").write_text(json.dumps({"version": 1, "documents": documents}))
    return root


@pytest.fixture()
def package(tmp_path: Path) -> Path:
    """A copy of the installed truthbase package."""
    target = tmp_path / "src" / PACKAGE_DIR.name
    shutil.copytree(PACKAGE_DIR, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def test_the_key_changes_with_a_byte_of_any_corpus_file(corpus: Path) -> None:
    def key() -> str:
        files = {
            **seed_files(corpus / "corpus" / "seed"),
            **golden_files(corpus / "golden" / "dev.json"),
        }
        return index_key(files, FACTS)

    before = key()
    assert key() == before  # deterministic
    for rel in ("corpus/seed/b.pdf", "corpus/epub/book.epub", "golden/dev.json"):
        flip_a_byte(corpus / rel)
        after = key()
        assert after != before, rel
        before = after
    (corpus / "corpus" / "seed" / "c.pdf").write_bytes(b"%PDF new")  # a new seed file
    assert key() != before
    before = key()
    (corpus / "corpus" / "epub" / "book.epub").unlink()  # a named document gone
    assert key() != before


def test_the_key_changes_with_a_byte_of_the_build_code(package: Path) -> None:
    files = code_files(package)
    names = set(files)
    # the brief's list, and the .sql files the stores read
    for wanted in (
        "code/chunking.py",
        "code/text/sentences.py",
        "code/geometry.py",
        "code/ingest/pipeline.py",
        "code/model.py",
        "code/records.py",
        "code/config/__init__.py",
        "code/config/pipeline.py",
        "code/ingest/windows.py",
        "code/retrieve/late.py",
        "code/store/sqlite/schema.sql",
        "code/eval/retrieval.py",  # from the import closure of the build's entry points
    ):
        assert wanted in names, wanted
    assert any(n.startswith("code/extract/") for n in names)
    assert any(n.startswith("code/embed/") for n in names)
    before = index_key(files, FACTS)
    for name in ("code/chunking.py", "code/store/sqlite/schema.sql", next(iter(sorted(files)))):
        flip_a_byte(files[name])
        after = index_key(code_files(package), FACTS)
        assert after != before, name
        before = after


def test_the_key_changes_with_the_settings_and_the_embedder(tmp_path: Path) -> None:
    facts = build_facts(model_id="m", dim=384, settings_json="{}", corpus_root=tmp_path)
    base = index_key({}, facts)
    assert index_key({}, {**facts, "settings": '{"max_chars": 600}'}) != base
    assert index_key({}, {**facts, "embedder.model_id": "other"}) != base
    assert index_key({}, {**facts, "embedder.dim": "768"}) != base
    assert index_key({}, facts) == base


def test_the_import_closure_follows_relative_and_lazy_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "truthbase"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from .a import f\n")
    (pkg / "sub" / "a.py").write_text("def f():\n    from ..b import g\n    return g\n")
    (pkg / "b.py").write_text("from truthbase import c\n")
    (pkg / "c.py").write_text("import json\n")
    (pkg / "unused.py").write_text("")
    found = {p.relative_to(pkg).as_posix() for p in indexes.import_closure(pkg, ["truthbase.sub"])}
    assert found == {"__init__.py", "sub/__init__.py", "sub/a.py", "b.py", "c.py"}


def _write_index(path: Path, text: str = "built") -> None:
    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE t (x TEXT)")
        db.execute("INSERT INTO t VALUES (?)", (text,))
        db.commit()
    finally:
        db.close()


def test_an_entry_is_built_once_then_hit(tmp_path: Path) -> None:
    calls: list[Path] = []

    def build(path: Path) -> None:
        calls.append(path)
        _write_index(path)

    first = cached_index("seed", "k1", build, root=tmp_path)
    second = cached_index("seed", "k1", build, root=tmp_path)
    assert first.built and not second.built
    assert len(calls) == 1
    assert first.path == second.path == tmp_path / "seed-k1" / "seed.sqlite"
    assert sorted(p.name for p in first.path.parent.iterdir()) == ["meta.json", "seed.sqlite"]
    assert not first.path.stat().st_mode & 0o222  # read-only: tests work on copies
    copy = indexes.use_copy(first.path, tmp_path / "copy.sqlite")
    db = sqlite3.connect(copy)
    try:
        assert db.execute("SELECT x FROM t").fetchall() == [("built",)]
        db.execute("INSERT INTO t VALUES ('mine')")  # the copy is writable
        db.commit()
    finally:
        db.close()
    assert "hit" in second.describe() and "built" in first.describe()
    assert cached_index("seed", "k2", build, root=tmp_path).built  # another key, another entry


def test_a_failed_build_leaves_nothing(tmp_path: Path) -> None:
    def build(path: Path) -> None:
        _write_index(path)
        raise RuntimeError("extraction broke")

    with pytest.raises(RuntimeError, match="extraction broke"):
        cached_index("golden", "k", build, root=tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [".golden-k.lock"]


def test_racing_builders_build_once(tmp_path: Path) -> None:
    calls: list[int] = []
    outcomes: list[indexes.CacheOutcome] = []

    def build(path: Path) -> None:
        calls.append(1)
        time.sleep(0.3)  # long enough for the other thread to arrive and wait on the lock
        _write_index(path)

    def run() -> None:
        outcomes.append(cached_index("golden", "race", build, root=tmp_path))

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert sorted(o.built for o in outcomes) == [False, False, True]
    assert len({o.path for o in outcomes}) == 1
