"""The wheel is the app: built from this tree, installed into a fresh virtualenv outside the
repository, it ingests a PDF and serves the chat page, the viewer with pdf.js, and a chat whose
citation has its highlight, all from the installed package's files (its web assets are package
data: pyproject.toml's package-data, found by server/app.py's default_web_dir).

The fresh virtualenv gets only the wheel; the wheel's dependencies (onnxruntime, fastapi, the
embedding model's packages, ...) are read from the test's own environment through a `.pth` line
naming its site-packages. Python appends such a folder to sys.path without reading the `.pth`
files inside it, so the editable install of the repository's sources there stays inert; the test
asserts that `truthbase` is imported from the fresh virtualenv."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.helpers.corpus import ROBUSTNESS

REPO = Path(__file__).resolve().parents[2]
WEB = REPO / "src" / "truthbase" / "web"
#: The npm packages the app serves files of; the rest of node_modules (lighthouse, for the
#: benchmarks) is not copied into the build tree.
SERVED_NPM = {"pdfjs-dist", "swagger-ui-dist"}

pytestmark = [pytest.mark.slow, pytest.mark.corpus, pytest.mark.timeout(900)]


def _clean_env() -> dict[str, str]:
    """The environment without anything that would point Python at the repository's sources,
    or change the app's settings."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"} and not k.startswith("TRUTHBASE_")
    }
    env["PYTHONNOUSERSITE"] = "1"
    return env


def _build_tree(target: Path) -> Path:
    """A copy of what the wheel is built from (a fresh tree: no stale build/ of an earlier run)."""

    def ignore(folder: str, names: list[str]) -> set[str]:
        skipped = {n for n in names if n == "__pycache__" or n.endswith(".egg-info")}
        if Path(folder).name == "node_modules":
            skipped |= {n for n in names if n not in SERVED_NPM}
        return skipped

    shutil.copytree(REPO / "src", target / "src", ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, target / name)
    return target


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert (WEB / "node_modules" / "pdfjs-dist" / "build" / "pdf.mjs").is_file(), (
        "run scripts/install-web.sh"
    )
    root = tmp_path_factory.mktemp("wheel")
    tree = _build_tree(root / "tree")
    dist = root / "dist"
    pip = [sys.executable, "-m", "pip"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "-q", "-w", str(dist), str(tree)],
        check=True,
        timeout=600,
        env=_clean_env(),
    )
    (wheel,) = dist.glob("truthbase-*.whl")
    env_dir = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [*pip, "--python", str(python), "install", "--no-deps", "-q", str(wheel)],
        check=True,
        timeout=300,
        env=_clean_env(),
    )
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    outer = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (site / "outer_dependencies.pth").write_text("\n".join(outer) + "\n")
    return env_dir


def _run(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv / "bin" / "truthbase"), *args],
        cwd=cwd,
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_installed_package_is_the_one_that_runs(venv: Path, tmp_path: Path) -> None:
    probe = (
        "import json, truthbase; from truthbase.server.app import default_web_dir; "
        "print(json.dumps([truthbase.__file__, str(default_web_dir())]))"
    )
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-c", probe],
        cwd=tmp_path,
        env=_clean_env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    module, web = (Path(p) for p in json.loads(out))
    assert module.is_relative_to(venv), module
    assert web.is_relative_to(venv) and (web / "index.html").is_file(), web
    assert (web / "node_modules" / "pdfjs-dist" / "build" / "pdf.worker.mjs").is_file()
    # only what the app serves: not the benchmarks' npm packages
    assert not (web / "node_modules" / "lighthouse").exists()


@pytest.fixture(scope="module")
def served(venv: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    work = tmp_path_factory.mktemp("served")
    shutil.copy(ROBUSTNESS / "pdfminer-zen_of_python_corrupted.pdf", work / "zen_of_python.pdf")
    ingested = _run(venv, "--db", "zen.sqlite", "ingest", "zen_of_python.pdf", cwd=work)
    assert ingested.returncode == 0, ingested.stdout + ingested.stderr
    assert "1 ingested" in ingested.stdout
    command = [str(venv / "bin" / "truthbase"), "--db", "zen.sqlite", "serve", "--port", "0"]
    with subprocess.Popen(
        command,
        cwd=work,
        env=_clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            assert " at http://" in line, line
            yield line.split(" at ", 1)[1].split()[0].rstrip("/")
        finally:
            process.terminate()
            process.wait(timeout=30)


def test_pages_and_pdfjs_come_from_the_wheel(served: str) -> None:
    with httpx.Client(base_url=served, timeout=30) as client:
        index = client.get("/")
        assert index.status_code == 200 and "/js/chat.js" in index.text
        view = client.get("/view")
        assert view.status_code == 200 and "/js/view-page.js" in view.text
        viewer = client.get("/js/viewer.js")
        assert viewer.status_code == 200 and '"/pdfjs/build/pdf.mjs"' in viewer.text
        for module in ("/pdfjs/build/pdf.mjs", "/pdfjs/build/pdf.worker.mjs"):
            response = client.get(module)
            assert response.status_code == 200, module
            assert "javascript" in response.headers["content-type"], module
        assert client.get("/pdfjs/standard_fonts/FoxitSerif.pfb").status_code == 200
        assert client.get("/pdfjs/cmaps/78-EUC-H.bcmap").status_code == 200
        docs = client.get("/docs")
        assert docs.status_code == 200 and "/swagger-ui/swagger-ui-bundle.js" in docs.text
        assert client.get("/swagger-ui/swagger-ui-bundle.js").status_code == 200


def _events(stream: str) -> list[tuple[str, dict[str, object]]]:
    events = []
    for block in stream.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in fields:
            events.append((fields["event"], json.loads(fields["data"])))
    return events


def test_a_chat_cites_with_a_highlight(served: str) -> None:
    body = {"question": "Should errors pass silently?", "mode": "extractive"}
    with httpx.Client(base_url=served, timeout=120) as client:
        response = client.post("/api/chat", json=body)
    assert response.status_code == 200
    events = _events(response.text)
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "sources" and kinds[-1] == "done", kinds
    (citations,) = [data for kind, data in events if kind == "citations"]
    cited = citations["citations"]
    assert isinstance(cited, list) and cited, citations
    best = cited[0]
    assert best["state"] == "supported" and best["page"] == 1, best
    assert "Errors should never pass silently" in best["quote"]
    assert best["rects"] and all(len(rect) == 4 for rect in best["rects"]), best
