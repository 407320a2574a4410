"""Fetch the four public seed documents from their publishers into a cache folder.

`make demo` runs this when it has neither `CORPUS=` nor `../shared/corpus/seed`. Standard library
only (urllib), so it runs in the app's virtualenv; pypdfium2 (an app dependency) checks that each
file opens, and the check is skipped with a note when it is not importable.

Progress goes to stderr; stdout gets the path of each verified file, one a line, for
`truthbase ingest`. A file already in the cache that verifies is not downloaded again. Exit 0
when at least one document is there (the missing ones are named), 1 when none could be had.

The publishers' files may differ byte for byte from the copies in ../shared/corpus/seed (see its
MANIFEST.md), so the corpus sha256 is recorded beside each file's own but not required.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

USER_AGENT = "truthbase-demo/0.1 (fetches the seed corpus once)"
CHUNK = 64 * 1024
FILE_LIMIT_S = 600.0


@dataclass(frozen=True)
class Seed:
    name: str  # file name in the cache, as in ../shared/corpus/seed
    url: str
    corpus_sha256: str  # of the ../shared/corpus/seed copy (MANIFEST.md); recorded, not required
    what: str


SEEDS = (
    Seed(
        "nist-csf-2.0.pdf",
        "https://nvlpubs.nist.gov/nistpubs/CSWP/NIST.CSWP.29.pdf",
        "3c31f46fee98cac0c4323453e5109291a213b4de7fef8c058af9bf67f717433c",
        "NIST CSF 2.0 (CSWP 29)",
    ),
    Seed(
        "nist-ai-rmf-1.0.pdf",
        "https://nvlpubs.nist.gov/nistpubs/ai/NIST.AI.100-1.pdf",
        "7576edb531d9848825814ee88e28b1795d3a84b435b4b797d3670eafdc4a89f1",
        "NIST AI RMF 1.0 (AI 100-1)",
    ),
    Seed(
        "raptor.pdf",
        "https://arxiv.org/pdf/2401.18059v1",
        "01319e2e6e6ecfd504ee1bbda41d023f9e060bd3505ab3c161baa1d6d696cf75",
        "RAPTOR (arXiv 2401.18059v1)",
    ),
    # The arXiv build. The corpus copy is the ICLR 2024 camera-ready (OpenReview) re-printed
    # through Firefox, so its sha256 never matches this file's; same paper.
    Seed(
        "self-rag.pdf",
        "https://arxiv.org/pdf/2310.11511v1",
        "504fa0703251cca5fe2d2e7c4cf753bbe47002480da4ac1933c8978a65c50f71",
        "Self-RAG (arXiv 2310.11511v1)",
    ),
)


class FetchError(Exception):
    pass


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "truthbase" / "seed"


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def rebase(url: str, base_url: str | None) -> str:
    """The URL with its scheme and host replaced by base_url's (for tests: a local server)."""
    if not base_url:
        return url
    parts = urllib.parse.urlsplit(url)
    base = urllib.parse.urlsplit(base_url)
    path = base.path.rstrip("/") + parts.path
    return urllib.parse.urlunsplit((base.scheme, base.netloc, path, parts.query, ""))


def verify(path: Path) -> int:
    """Raises FetchError unless path is a non-empty PDF that pypdfium2 opens; returns its pages."""
    size = path.stat().st_size
    if size == 0:
        raise FetchError("empty file")
    with path.open("rb") as f:
        head = f.read(1024)
    if b"%PDF-" not in head:
        raise FetchError(f"not a PDF (starts with {head[:16]!r})")
    try:
        import pypdfium2 as pdfium
    except ImportError:
        return -1
    try:
        doc = pdfium.PdfDocument(str(path))
        try:
            pages = len(doc)
        finally:
            doc.close()
    except Exception as e:  # pdfium raises PdfiumError, and others on odd input
        raise FetchError(f"pypdfium2 cannot open it ({e})") from e
    if pages == 0:
        raise FetchError("a PDF with no pages")
    return pages


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def download(url: str, dest: Path, timeout: float) -> int:
    """Downloads url to dest through a temporary file, renamed only when complete and verified.

    timeout bounds each connect and read; a whole file gets at most FILE_LIMIT_S."""
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.part")
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response, tmp.open("wb") as out:
            total = int(response.headers.get("Content-Length") or 0)
            done = 0
            next_report = 0.25
            started = time.monotonic()
            while block := response.read(CHUNK):
                out.write(block)
                if time.monotonic() - started > FILE_LIMIT_S:
                    raise FetchError(f"took over {FILE_LIMIT_S:.0f} s")
                done += len(block)
                if total and done / total >= next_report and done < total:
                    say(f"     {done // 1024:,} of {total // 1024:,} KiB")
                    next_report += 0.25
            if total and done != total:
                raise FetchError(f"incomplete: {done} of {total} bytes")
        seconds = time.monotonic() - started
        size = f"{done // 1024:,} KiB" if done >= 1024 else f"{done} bytes"
        say(f"     {size} in {seconds:.1f} s")
        pages = verify(tmp)
        tmp.replace(dest)
        return pages
    except urllib.error.HTTPError as e:
        raise FetchError(f"HTTP {e.code} {e.reason}") from e
    except urllib.error.URLError as e:
        if isinstance(e.reason, socket.gaierror):
            host = urllib.parse.urlsplit(url).hostname
            raise FetchError(f"cannot resolve {host} (no network or DNS?): {e.reason}") from e
        raise FetchError(str(e.reason)) from e
    except (OSError, ValueError, http.client.HTTPException) as e:  # timeouts, resets, bad URLs
        raise FetchError(f"{type(e).__name__}: {e}") from e
    finally:
        tmp.unlink(missing_ok=True)


def record(cache: Path, seed: Seed, url: str, path: Path, pages: int) -> None:
    digest = sha256(path)
    same = digest == seed.corpus_sha256
    say(
        f"     ok: {path.stat().st_size:,} bytes, {pages} pages, sha256 {digest[:16]}…"
        + (" (same as the corpus copy)" if same else " (differs from the corpus copy; expected)")
    )
    sources = cache / "sources.json"
    try:
        data = json.loads(sources.read_text("utf-8"))
    except (OSError, ValueError):
        data = {}
    data[seed.name] = {
        "url": url,
        "bytes": path.stat().st_size,
        "sha256": digest,
        "corpus_sha256": seed.corpus_sha256,
        "same_as_corpus": same,
    }
    sources.write_text(json.dumps(data, indent=2) + "\n", "utf-8")


def fetch(cache: Path, base_url: str | None, timeout: float) -> tuple[list[Path], list[str]]:
    """Returns the verified files and one line per document that could not be had."""
    cache.mkdir(parents=True, exist_ok=True)
    have: list[Path] = []
    failed: list[str] = []
    for seed in SEEDS:
        url = rebase(seed.url, base_url)
        dest = cache / seed.name
        if dest.exists():
            try:
                verify(dest)
            except FetchError as e:
                say(f">> {dest} is in the cache but unusable ({e}): downloading it again")
                dest.unlink()
            else:
                say(f">> {seed.what}: in the cache, {dest}")
                have.append(dest)
                continue
        say(f">> {seed.what}: downloading {url}")
        say(f"     into {dest}")
        try:
            pages = download(url, dest, timeout)
        except FetchError as e:
            say(f"     FAILED: {url}: {e}")
            failed.append(f"{seed.name} ({url}: {e})")
            continue
        record(cache, seed, url, dest, pages)
        have.append(dest)
    return have, failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache-dir", type=Path, default=None, help="default: %(default)s")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per request")
    # Only for the tests: a local server stands in for nvlpubs.nist.gov and arxiv.org.
    parser.add_argument("--base-url", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    cache = args.cache_dir or default_cache_dir()
    say(f">> fetching the {len(SEEDS)} seed documents from their publishers into {cache}")
    try:
        have, failed = fetch(cache, args.base_url, args.timeout)
    except OSError as e:
        say(f">> cannot use the cache folder {cache}: {e}")
        say("   Name a folder of PDFs instead: make demo CORPUS=path/to/pdfs")
        return 1
    if not have:
        say(f">> could not download any of the {len(SEEDS)} seed documents (see above; offline?).")
        say("   Name a folder of PDFs instead: make demo CORPUS=path/to/pdfs")
        say("   (or put the shared corpus beside this clone, as ../shared/corpus/seed).")
        return 1
    if failed:
        say(f">> missing {len(failed)} of {len(SEEDS)}; the demo goes on with {len(have)}:")
        for line in failed:
            say(f"     {line}")
    for path in have:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
