"""A PDF's title (extract/title.py): the metadata's, unless it names a file; then the first large
line of the first text page, with the file's name where the shown title lacks it. No metadata
title: the file's name."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from tests.helpers.corpus import CORPUS, SEED
from tests.helpers.layout_pages import lines_page
from truthbase.extract.pdf import extract_pdf
from truthbase.extract.title import document_title, shown_title, usable_metadata_title
from truthbase.model import Rect, Unit

LIBRARY = CORPUS / "library" / "texlive"
BODY = "Plain running text of the page goes on here at the body size of the document."


def test_metadata_titles_that_are_file_names_or_placeholders_are_not_titles() -> None:
    assert usable_metadata_title("The NIST Cybersecurity Framework (CSF) 2.0")
    assert usable_metadata_title("Geometrie und Topologie")
    for name in ("float.dvi", "report.docx", "Microsoft Word - report.docx", "untitled", "", " "):
        assert not usable_metadata_title(name), name


def test_the_first_large_line_and_its_continuation_in_the_same_type_are_the_title() -> None:
    page = lines_page(
        0,
        [
            ("Publication quality tables∗", 17.2),
            ("in LaTeX", 17.2),  # the same type: the title's second line
            ("Simon Fear", 12.0),  # the author, a size down: not the title
            ("Contents", 20.7),  # a bold heading further down may be taller
            (BODY, 9.0),
            (BODY, 9.0),
        ],
    )
    assert shown_title([page]) == "Publication quality tables in LaTeX"  # footnote mark gone


def test_no_line_clearly_larger_than_the_body_means_no_shown_title() -> None:
    page = lines_page(0, [("Minutes of the meeting", 9.5), (BODY, 9.0), (BODY, 9.0)])
    assert shown_title([page]) is None
    assert document_title("minutes.doc", [page], "minutes-2024") == "minutes-2024"


def test_scanned_pages_and_late_first_pages_give_no_shown_title() -> None:
    large = [("A Title Set Large", 18.0), (BODY, 9.0)]
    assert shown_title([lines_page(0, large, source="ocr")]) is None  # word boxes, not type sizes
    blank = [lines_page(i, [("", 9.0)]) for i in range(3)]
    assert shown_title([*blank, lines_page(3, large)]) is None  # not near the front: no title page


def test_the_file_name_follows_a_shown_title_that_does_not_contain_it() -> None:
    page = lines_page(0, [("Publication quality tables in LaTeX", 17.2), (BODY, 9.0), (BODY, 9.0)])
    assert document_title("booktabs.dvi", [page], "booktabs") == (
        "Publication quality tables in LaTeX (booktabs)"
    )
    named = lines_page(0, [("The booktabs package", 17.2), (BODY, 9.0), (BODY, 9.0)])
    assert document_title("booktabs.dvi", [named], "booktabs") == "The booktabs package"
    # A metadata title that is a title wins, whatever the page shows; none at all: the file's
    # name, which a person chose (the shown title in its place was measured worse: titles.md).
    assert document_title("Booktabs manual", [page], "booktabs") == "Booktabs manual"
    assert document_title(" \x00", [page], "booktabs") == "booktabs"


@cache
def _title(path: Path) -> str:
    return extract_pdf(path).title


@pytest.mark.corpus
@pytest.mark.skipif(not LIBRARY.exists(), reason="needs ../shared/corpus/library")
def test_manuals_whose_metadata_names_a_file_get_their_printed_titles() -> None:
    # dvips wrote the .dvi file's name as the Title; the page shows the package's name.
    assert _title(LIBRARY / "float" / "float.pdf") == "An Improved Environment for Floats"
    assert _title(LIBRARY / "mdwtools" / "at.pdf") == "The at package"  # not its "Contents"
    assert _title(LIBRARY / "fancyref" / "fancyref.pdf") == "Fancy Cross-referencing (fancyref)"
    assert _title(LIBRARY / "xcolor" / "xcolor2.pdf") == (
        "Color extensions with the xcolor package — pstricks examples (xcolor2)"
    )
    # No Title at all: the file's name, as before.
    assert _title(LIBRARY / "booktabs" / "booktabs.pdf") == "booktabs"


@pytest.mark.corpus
def test_seed_titles_are_their_metadata_titles_or_file_names() -> None:
    assert _title(SEED / "nist-csf-2.0.pdf") == "The NIST Cybersecurity Framework (CSF) 2.0"
    assert _title(SEED / "raptor.pdf") == "raptor"  # an empty Title


def test_a_margin_line_number_and_a_footnote_mark_set_small_are_not_the_title() -> None:
    title = "1 A Package to Number Lines 2"  # line numbers in the margin, set small
    boxes: list[Rect | None] = [(0.0, 0.0, 5.0, 17.0)] * len(title)
    boxes[0] = boxes[-1] = (0.0, 0.0, 3.0, 7.0)
    text = "\n".join([title, BODY, BODY])
    boxes += [None] + [(0.0, 0.0, 5.0, 9.0)] * len(BODY) + [None]
    boxes += [(0.0, 0.0, 5.0, 9.0)] * len(BODY)
    page = Unit(index=0, text=text, boxes=boxes)
    assert shown_title([page]) == "A Package to Number Lines"
