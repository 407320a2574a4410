"""Ingest time of two source trees, interleaved in one run (issue 28 item 2).

Each round ingests the same folder (default: the seed corpus) with ``truthbase ingest`` into a
fresh SQLite file, once with every tree, in a process of its own, the order alternating from
round to round (the machine is shared: only times taken side by side compare). Reported per
tree: wall seconds of each run, the median, pages a second and the peak RSS; and the ratio of
each tree's median to the first tree's.

    python benchmarks/pooled_chunks_bench.py --tree before=../main/src --tree after=src \\
        --rounds 3 --json docs/evals/pooled-chunks-time.json

``--tree NAME=SRC[:SETTING=VALUE,...]`` adds TRUTHBASE_ settings to that tree's runs, e.g.
``after-chunk-pass=src:CHUNKING__CHUNK_PASS=true`` (this tree with the old embedding).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pypdfium2 as pdfium

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT.parent / "shared" / "corpus" / "seed"


def pages_of(folder: Path) -> int:
    """The PDF pages under ``folder`` (what the seed corpus is)."""
    total = 0
    for path in sorted(folder.rglob("*.pdf")):
        document = pdfium.PdfDocument(path)
        total += len(document)
        document.close()
    return total


def parse_tree(spec: str) -> tuple[str, Path, dict[str, str]]:
    name, _, rest = spec.partition("=")
    src, _, settings = rest.partition(":")
    if not name or not src:
        raise SystemExit(f"--tree wants NAME=SRC[:SETTING=VALUE,...], not {spec!r}")
    env = {}
    for item in filter(None, settings.split(",")):
        key, _, value = item.partition("=")
        env[f"TRUTHBASE_{key.upper()}"] = value
    return name, Path(src).resolve(), env


def ingest_once(src: Path, settings: dict[str, str], folder: Path) -> tuple[float, float]:
    """(wall seconds, peak RSS in MiB) of one ``truthbase ingest`` of ``folder`` by the tree
    at ``src``, into a fresh index."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRUTHBASE_")}
    env.update(settings)
    env["PYTHONPATH"] = str(src)
    with tempfile.TemporaryDirectory(prefix="pooled-bench-") as tmp:
        command = [sys.executable, "-m", "truthbase.cli", "--db", f"{tmp}/index.sqlite"]
        started = time.perf_counter()
        child = subprocess.Popen(
            [*command, "ingest", str(folder)],
            env=env,
            cwd=tmp,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        assert child.stderr is not None
        error = child.stderr.read()
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{src}: ingest exited {child.returncode}: {error.decode()[-2000:]}")
    return wall, usage.ru_maxrss / 1024


def write_report(
    args: argparse.Namespace,
    trees: list[tuple[str, Path, dict[str, str]]],
    pages: int,
    walls: dict[str, list[float]],
    peaks: dict[str, list[float]],
    load: list[float],
) -> None:
    """Print and (with --json) write the figures of the rounds every tree has finished."""
    rounds = min(len(w) for w in walls.values())
    if rounds == 0:
        return
    walls = {name: w[:rounds] for name, w in walls.items()}
    first = statistics.median(walls[trees[0][0]])
    report = {
        "folder": str(args.folder),
        "pages": pages,
        "rounds": rounds,
        "load_average_after_each_run": load,
        "trees": {
            name: {
                "src": str(src),
                "settings": settings,
                "wall_s": walls[name],
                "median_s": statistics.median(walls[name]),
                "pages_per_s": pages / statistics.median(walls[name]),
                "ratio_to_first": statistics.median(walls[name]) / first,
                "paired_ratios": [
                    w / b for w, b in zip(walls[name], walls[trees[0][0]], strict=True)
                ],
                "peak_rss_mib": max(peaks[name]),
            }
            for name, src, settings in trees
        },
    }
    for name, row in report["trees"].items():
        print(
            f"{name}: median {row['median_s']:.1f} s, {row['pages_per_s']:.2f} pages/s, "
            f"{row['ratio_to_first']:.2f}x of {trees[0][0]}, peak {row['peak_rss_mib']:.0f} MiB"
        )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", required=True, help="NAME=SRC[:K=V,...]")
    parser.add_argument("--folder", type=Path, default=SEED)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    trees = [parse_tree(spec) for spec in args.tree]
    pages = pages_of(args.folder)
    walls: dict[str, list[float]] = {name: [] for name, _, _ in trees}
    peaks: dict[str, list[float]] = {name: [] for name, _, _ in trees}
    load: list[float] = []
    for round_no in range(args.rounds):
        order = trees if round_no % 2 == 0 else trees[::-1]
        for name, src, settings in order:
            wall, peak = ingest_once(src, settings, args.folder)
            walls[name].append(wall)
            peaks[name].append(peak)
            load.append(os.getloadavg()[0])
            print(
                f"round {round_no + 1} {name}: {wall:.1f} s, {pages / wall:.2f} pages/s, "
                f"peak {peak:.0f} MiB, load {load[-1]:.1f}",
                flush=True,
            )
            write_report(args, trees, pages, walls, peaks, load)
    return 0


if __name__ == "__main__":
    sys.exit(main())
