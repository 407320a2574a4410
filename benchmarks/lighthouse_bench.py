"""Lighthouse (npm ``lighthouse`` in web/node_modules) on the chat page, mobile and desktop, run
against Debian's Chromium (CHROME_PATH=/usr/bin/chromium, headless, no sandbox): the category
scores, LCP, FCP, TBT, CLS and the bytes the page loads.

Goals (issue 16, item 7): mobile performance >= 98 (it was 77: 609 KiB of pdf.js loaded before
anything needed it), accessibility and best practices 100 on both.

Run alone: ``python benchmarks/lighthouse_bench.py --db INDEX [--web-dir DIR ...]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from frontend_bench import CHROMIUM, serve

ROOT = Path(__file__).resolve().parents[1]
LIGHTHOUSE = ROOT / "src" / "truthbase" / "web" / "node_modules" / ".bin" / "lighthouse"
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
METRICS = {
    "largest-contentful-paint": "lcp_ms",
    "first-contentful-paint": "fcp_ms",
    "total-blocking-time": "tbt_ms",
    "cumulative-layout-shift": "cls",
    "speed-index": "speed_index_ms",
}


def run_lighthouse(url: str, preset: str, timeout: float = 240) -> dict[str, Any]:
    """One Lighthouse run of ``url`` (``preset``: "mobile", Lighthouse's default, or "desktop")."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        command = [
            str(LIGHTHOUSE),
            url,
            "--output=json",
            f"--output-path={out}",
            "--quiet",
            f"--only-categories={','.join(CATEGORIES)}",
            "--chrome-flags=--headless=new --no-sandbox --disable-gpu --no-first-run",
        ]
        if preset == "desktop":
            command.append("--preset=desktop")
        env = {**os.environ, "CHROME_PATH": str(CHROMIUM)}
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=timeout, check=False
        )
        if done.returncode != 0 or not out.exists():
            return {"error": (done.stderr or done.stdout)[-500:]}
        report = json.loads(out.read_text())
    audits = report["audits"]
    result: dict[str, Any] = {
        "scores": {
            name: round(100 * category["score"])
            for name, category in report["categories"].items()
            if category.get("score") is not None
        },
        "bytes_kib": round(audits["total-byte-weight"]["numericValue"] / 1024),
    }
    for audit, key in METRICS.items():
        if audit in audits:
            value = audits[audit]["numericValue"]
            result[key] = round(value, 3) if key == "cls" else round(value)
    failing = [
        audit_id
        for category in ("accessibility", "best-practices")
        for ref in report["categories"].get(category, {}).get("auditRefs", [])
        if ref.get("weight")
        and (audit_id := ref["id"]) in audits
        and audits[audit_id].get("score") not in (None, 1)
    ]
    if failing:
        result["failing_audits"] = failing
    return result


def median_run(url: str, preset: str, runs: int) -> dict[str, Any]:
    """The run with the median performance score of ``runs`` (Lighthouse's own advice for a
    noisy machine), with every run's score beside it."""
    results = [run_lighthouse(url, preset) for _ in range(runs)]
    good = [r for r in results if "error" not in r]
    if not good:
        return results[0]
    good.sort(key=lambda r: r["scores"].get("performance", 0))
    runs_scores = [r["scores"].get("performance") for r in good]
    return {**good[len(good) // 2], "performance_runs": runs_scores}


def bench_lighthouse(db: Path, web_dir: Path | None = None, runs: int = 3) -> dict[str, Any] | None:
    """Mobile and desktop Lighthouse of the chat page over ``db``; None without the tools."""
    if not CHROMIUM.exists() or not LIGHTHOUSE.exists():
        return None
    with serve(db, web_dir) as url:
        return {preset: median_run(f"{url}/", preset, runs) for preset in ("mobile", "desktop")}


def print_lighthouse(report: dict[str, Any] | None, label: str = "") -> None:
    if report is None:
        print(f"lighthouse{label}: skipped (needs {CHROMIUM} and {LIGHTHOUSE}: make system web)")
        return
    for preset, r in report.items():
        if "error" in r:
            print(f"lighthouse{label} {preset}: failed: {r['error']}")
            continue
        scores = ", ".join(f"{k} {v}" for k, v in r["scores"].items())
        print(
            f"lighthouse{label} {preset}: {scores}; LCP {r.get('lcp_ms')} ms, FCP "
            f"{r.get('fcp_ms')} ms, TBT {r.get('tbt_ms')} ms, CLS {r.get('cls')}, "
            f"{r['bytes_kib']} KiB, performance runs {r.get('performance_runs')} "
            "(goal: mobile performance >= 98, accessibility and best practices 100)"
        )
        if r.get("failing_audits"):
            print(f"  failing: {', '.join(r['failing_audits'])}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", type=Path, required=True, help="an index (the seed PDFs)")
    parser.add_argument("--web-dir", type=Path, action="append", default=[], help="compare")
    parser.add_argument("--runs", type=int, default=3, help="runs per preset (the median)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    out: dict[str, Any] = {}
    for web_dir in args.web_dir or [None]:
        label = f" ({web_dir})" if web_dir else ""
        out[str(web_dir or "web")] = report = bench_lighthouse(args.db, web_dir, args.runs)
        print_lighthouse(report, label)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
