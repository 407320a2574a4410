"""Pages that point elsewhere (text/navigation.py): lines as the extraction of real manuals
gives them (a back-of-book index, a table of contents) against prose and tables that also end
lines in numbers."""

from __future__ import annotations

from truthbase.text.navigation import is_navigation

# listings.pdf's index and NIST CSF 2.0's contents, as extracted (dot leaders, carried-over
# page lists, a letter heading).
INDEX = """\\lstlgrindeffile . . . . . . . . . . . . 47
breakatwhitespace . . . . . . . . . 36
breakautoindent . . . . . . . . . . . 36
breakindent . . . . . . . . . . . . . . 36
L
\\kern 572, 592, 1446, 1606,
1781
language 11, 30"""
CONTENTS = """Table of Contents
1. Cybersecurity Framework (CSF) Overview............................1
2. Introduction to the CSF Core.......................................3
3. Introduction to CSF Profiles and Tiers.............................6
Appendix A. CSF Core.................................................15"""


def test_an_index_and_a_table_of_contents_point_elsewhere() -> None:
    assert is_navigation(INDEX)
    assert is_navigation(CONTENTS)


def test_prose_and_tables_do_not() -> None:
    prose = (
        "The chunks and their SBERT embeddings form the leaf nodes (see Section 3, page 4).\n"
        "Nodes can belong to multiple clusters, as Table 2 shows on pages 5, 6.\n"
        "We fixed this by first tokenizing the text.\nThe collapsed tree performs better."
    )
    assert not is_navigation(prose)
    # A table's amounts end its lines in numbers with thousands separators, not page lists.
    table = (
        "香港中央结算(代理人)有限公司 | 257,055,899 | 境外上市外资股 | 257,055,899\n"
        "北京海鸿源投资管理有限公司 | 81,494,850 | 人民币普通股 | 81,494,850\n"
        "杨琴秀 | 27,955,752 | 人民币普通股 | 27,955,752\n"
        "南京方凯企业管理有限公司 | 4,332,700 | 人民币普通股 | 4,332,700"
    )
    assert not is_navigation(table)
    # Two pointing lines are not a page of them, nor are they half of the lines.
    assert not is_navigation("Contents\nIntro . . . . . 1\nUsage . . . . . 2")
    assert not is_navigation(CONTENTS + "\n" + "\n".join([prose] * 2))
