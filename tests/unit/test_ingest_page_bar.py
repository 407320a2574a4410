"""The terminal's progress bar counts pages: a document's pages as they are embedded, then all
of them when it is done; files already in the index count for nothing."""

from __future__ import annotations

from pathlib import Path

from truthbase.cli.ingest import PageBar, document_line
from truthbase.ingest import DocumentDone, FileOutcome, PagesDone, RunStarted, StageTimes


def test_the_bar_counts_pages_done_of_the_pages_planned() -> None:
    bar = PageBar()
    a, b, c = Path("a.pdf"), Path("b.pdf"), Path("c.pdf")
    bar(RunStarted(files=(a, b, c), todo=2, pages_total=8))
    (task,) = bar.progress.tasks
    assert task.total == 8 and task.completed == 0
    bar(PagesDone(path=a, stage="extract", done=0, total=5))
    bar(PagesDone(path=a, stage="embed", done=3, total=5))
    assert task.completed == 3 and task.description == "a.pdf"
    bar(DocumentDone(outcome=FileOutcome(path=a, status="ingested", pages=5, chunks=9)))
    assert task.completed == 5
    bar(DocumentDone(outcome=FileOutcome(path=c, status="unchanged")))
    assert task.completed == 5
    bar(PagesDone(path=b, stage="embed", done=2, total=3))
    assert task.completed == 7
    bar(DocumentDone(outcome=FileOutcome(path=b, status="failed", reason="corrupt")))
    assert task.completed == 7  # the pages it got to


def test_a_document_line_says_pages_chunks_seconds_or_the_failure() -> None:
    times = StageTimes(extract=1.0, chunk=0.25, embed=2.0, store=0.5)
    done = FileOutcome(path=Path("d/a.pdf"), status="ingested", pages=3, chunks=12, times=times)
    assert document_line(done) == "ingested d/a.pdf: 3 pages, 12 chunks, 3.8 s"
    failed = FileOutcome(path=Path("b.pdf"), status="failed", reason="encrypted", message="x")
    assert document_line(failed) == "failed b.pdf: encrypted: x"
