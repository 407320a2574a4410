"""EPUB extraction on the shared corpus: golden quotes, spine, TOC and the text-to-DOM map."""

from __future__ import annotations

import json
import random
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path

import pytest

from tests.helpers.corpus import CORPUS, GOLDEN_DEV, SHARED
from truthbase.extract import extract_path
from truthbase.extract.epub_map import (
    dom_map_from_json,
    dom_map_to_json,
    epub_canonical_offset,
    epub_dom_position,
    epub_dom_segments,
)
from truthbase.model import ExtractedDocument, NodePath
from truthbase.text.matching import find_quote, normalize, quote_in

pytestmark = pytest.mark.corpus

ALICE = CORPUS / "epub" / "alice-in-wonderland.epub"
PRIDE = CORPUS / "epub" / "pride-and-prejudice-pg1342.epub"
XHTML = "{http://www.w3.org/1999/xhtml}"
PG = "@public@vhost@g@gutenberg@html@files@1342@1342-h@1342-h-"


@cache
def book(path: Path) -> ExtractedDocument:
    return extract_path(path)


def epub_evidence() -> list[tuple[str, str, str, str]]:
    golden = json.loads(GOLDEN_DEV.read_text())
    paths = {k: v["path"] for k, v in golden["documents"].items()}
    return [
        (q["id"], paths[e["doc"]], e["section"], e["quote"])
        for q in golden["questions"]
        for e in q["evidence"]
        if "section" in e
    ]


def xml_text_nodes(html: str) -> dict[NodePath, str]:
    """Text nodes by NodePath as an XML (XHTML) parser builds the sanitized document."""
    body = ET.fromstring(html).find(f"{XHTML}body")
    assert body is not None
    found: dict[NodePath, str] = {}

    def walk(element: ET.Element, path: tuple[int, ...]) -> None:
        texts = [element.text or ""] + [child.tail or "" for child in element]
        for k, text in enumerate(t for t in texts if t):
            found[(*path, k)] = text
        for i, child in enumerate(element):
            walk(child, (*path, i))

    walk(body, ())
    return found


def test_golden_epub_quotes_are_in_their_sections() -> None:
    evidence = epub_evidence()
    assert len(evidence) >= 6
    missing = []
    for qid, rel, section, quote in evidence:
        doc = book(SHARED / rel)
        units = [u for u in doc.units if u.href == section]
        assert len(units) == 1, (qid, section)
        if not quote_in(quote, units[0].text):
            missing.append(qid)
    assert not missing


def test_golden_quotes_highlight_exactly() -> None:
    """The DOM segments of each quote's span spell the quote (under the matching rule)."""
    for _qid, rel, section, quote in epub_evidence():
        unit = next(u for u in book(SHARED / rel).units if u.href == section)
        assert unit.dom is not None
        spans = find_quote(quote, unit.text)
        assert spans is not None and len(spans) == 1
        start, end = spans[0]
        nodes = xml_text_nodes(unit.dom.html)
        shown = "".join(nodes[p][a:b] for p, a, b in epub_dom_segments(unit.dom, start, end))
        assert normalize(shown) == normalize(quote)


def test_alice_spine_hrefs_and_toc() -> None:
    doc = book(ALICE)
    assert doc.kind == "epub"
    assert doc.title == "Alice's Adventures in Wonderland"
    assert doc.metadata["creator"] == "Lewis Carroll"
    hrefs = [u.href for u in doc.units]
    assert hrefs == ["titlepage.xhtml"] + [f"chapter_{i:03d}.xhtml" for i in range(1, 11)] + [
        "cover.xhtml",
        "toc.xhtml",
    ]
    assert [u.dom.linear for u in doc.units if u.dom][-3:] == [True, False, False]
    assert doc.units[1].label == "Down The Rabbit-Hole"
    assert doc.units[10].label == "Alice's Evidence"
    assert doc.units[1].text.startswith("Down The Rabbit-Hole\nAlice was beginning")
    assert len(doc.toc) == 11


def test_pride_spine_hrefs_and_toc() -> None:
    doc = book(PRIDE)
    assert doc.title == "Pride and Prejudice"
    assert doc.metadata["creator"] == "Jane Austen"
    assert [u.href for u in doc.units] == [f"{PG}{i}.htm.html" for i in range(14)] + ["bm.html"]
    assert doc.units[1].label == "Chapter 7"
    chapters = [e for e in doc.toc if e.title.startswith("Chapter ")]
    assert [e.title for e in chapters] == [f"Chapter {i}" for i in range(1, 62)]
    for entry in chapters:  # every chapter entry resolves to its heading in the canonical text
        assert doc.units[entry.unit].text[entry.offset :].startswith(entry.title + "\n")
    assert not doc.report.empty_units


@pytest.mark.parametrize("path", [ALICE, PRIDE], ids=["alice", "pride"])
def test_dom_map_round_trips_against_an_xml_parse(path: Path) -> None:
    rng = random.Random(1342)
    doc = book(path)
    checked = 0
    for unit in doc.units:
        if not unit.text:
            continue
        assert unit.dom is not None
        nodes = xml_text_nodes(unit.dom.html)
        assert set(unit.dom.nodes) <= set(nodes)
        for offset in rng.sample(range(len(unit.text)), min(400, len(unit.text))):
            ch = unit.text[offset]
            pos = epub_dom_position(unit.dom, offset)
            if pos is None:
                assert ch in "\n "  # synthesized
                continue
            dom_ch = nodes[pos[0]][pos[1]]
            assert dom_ch == ch or (ch == " " and dom_ch in " \t\n\f"), (unit.href, offset)
            assert epub_canonical_offset(unit.dom, *pos) == offset
            checked += 1
        stored = dom_map_from_json(dom_map_to_json(unit.dom), unit.dom.html)
        assert stored.runs == unit.dom.runs
    assert checked > 1000
