"""The dev sets measured together: each set, the pool, and the fusion values chosen by leaving
one set out (`truthbase eval retrieval|tune|answers` with --golden repeated).

Each set is measured in its own index, kept between runs under the test-index cache folder in
a folder keyed on what shapes a built index (the code that builds it, the embedder, the
settings, the library versions: tests/helpers/indexes.py). A change to any of them is a fresh
folder, so a stale index is never measured; an unchanged tree reuses the indexes, which matters
for the library set (157 documents, an hour or more to ingest on two cores).

    python benchmarks/eval_sets.py                      # dev, capabilities-dev, library-dev
    python benchmarks/eval_sets.py --golden A.json --golden B.json --only tune
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.helpers.indexes import (  # noqa: E402
    PACKAGE_DIR,
    build_facts,
    cache_root,
    code_files,
    index_key,
)

from truthbase.config import Settings  # noqa: E402
from truthbase.embed import load_embedder  # noqa: E402

GOLDEN = ROOT.parent / "shared" / "golden"
DEFAULT_SETS = ("dev.json", "capabilities-dev.json", "library-dev.json")


def index_folder() -> Path:
    """The folder of the sets' indexes for the code and settings as they are now."""
    settings = Settings()
    embedder = load_embedder(settings.embedder)
    facts = build_facts(
        model_id=embedder.model_id,
        dim=embedder.dim,
        settings_json=settings.chunking.model_dump_json(),
        corpus_root=GOLDEN.parent,
    )
    return cache_root() / "eval-sets" / index_key(code_files(PACKAGE_DIR), facts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--golden",
        action="append",
        type=Path,
        help="a golden set (repeat it); default: " + ", ".join(DEFAULT_SETS),
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=ROOT / "docs" / "evals",
        help="folder of the JSON reports (sets-retrieval.json, sets-tune.json, sets-answers.json)",
    )
    parser.add_argument(
        "--only",
        choices=("retrieval", "tune", "answers"),
        action="append",
        help="run only these measurements (repeat it) [default: all three]",
    )
    args = parser.parse_args()
    goldens = args.golden or [GOLDEN / name for name in DEFAULT_SETS]
    folder = index_folder()
    print(f"indexes: {folder} (built on the first run for this code)", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    for what in args.only or ("retrieval", "tune", "answers"):
        command = [sys.executable, "-m", "truthbase.cli", "eval", what]
        for golden in goldens:
            command += ["--golden", str(golden)]
        command += ["--index-dir", str(folder), "--json", str(args.out / f"sets-{what}.json")]
        print("$ " + " ".join(command[2:]), flush=True)
        status = subprocess.run(command, cwd=ROOT, check=False).returncode
        if status != 0:
            return status
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
