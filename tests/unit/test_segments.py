"""The segment index: cutting by TOC or size, tagged passages, summaries (extractive and by a
scripted model), on synthetic texts whose expected cuts are known."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from truthbase.cite.parse import parse_answer
from truthbase.config import SegmentSettings
from truthbase.llm.client import ChatMessage, LLMError
from truthbase.model import Chunk, TocEntry, Unit
from truthbase.records import SearchHit, Segment, SegmentPart, StoredSegments
from truthbase.segments.budget import best_passages, fits, segment_passages
from truthbase.segments.build import FRONT_MATTER, build_segments, builder_id
from truthbase.segments.passages import (
    Span,
    inside_segment,
    passages,
    segment_sentences,
    strip_tags,
    tag,
    tags_in,
)
from truthbase.segments.render import NO_SECTION, related_passages
from truthbase.segments.select import (
    Entry,
    batches,
    picked,
    rank_by_search,
    record,
    scope_entries,
    unit_hits,
)
from truthbase.segments.summarize import (
    EXTRACTIVE_ID,
    clean_llm_summary,
    extractive_summaries,
    summarize_segments,
)
from truthbase.text.matching import normalize
from truthbase.text.sentences import split_sentences

#: The model call's timeout and the passage size of summarize_segments.
LIMITS = {"timeout": 5.0, "passage_chars": SegmentSettings().passage_chars}

# fmt: off
WORDS = [
    "garden", "letter", "carriage", "ball", "estate", "sister", "officer", "regiment",
    "parsonage", "fortune", "village", "dinner", "walk", "journey", "uncle", "aunt", "cousin",
    "library", "music", "portrait", "river", "bridge",
]
# fmt: on


def prose(n_chars: int, seed: int, topic: str = "") -> str:
    """Deterministic sentences of varied words (each ends with a period) of about n_chars."""
    out: list[str] = []
    size = 0
    i = seed
    while size < n_chars:
        words = [WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(8 + i % 5)]
        if topic:
            words.insert(2, topic)
        sentence = f"The {' '.join(words)} came {i % 17} times."
        out.append(sentence)
        size += len(sentence) + 1
        i += 1
    return " ".join(out)


def chapter(title: str, n_chars: int, seed: int) -> str:
    return f"{title}\n{prose(n_chars, seed)}\n"


def sizes(segments: Sequence[Segment]) -> list[int]:
    return [sum(p.end - p.start for p in s.parts) for s in segments]


def covered(segments: Sequence[Segment], texts: Sequence[str]) -> str:
    return "".join(texts[p.unit][p.start : p.end] for s in segments for p in s.parts)


def check_partition(segments: Sequence[Segment], texts: Sequence[str]) -> None:
    """Segments are in order, do not overlap and cover all non-blank text."""
    assert [s.index for s in segments] == list(range(len(segments)))
    positions = [(p.unit, p.start, p.end) for s in segments for p in s.parts]
    assert positions == sorted(positions)
    for (u1, _, e1), (u2, s2, _) in itertools.pairwise(positions):
        assert (u1, e1) <= (u2, s2)
    assert "".join(covered(segments, texts).split()) == "".join("".join(texts).split())


def entry(title: str, unit: int, offset: int, depth: int = 0) -> TocEntry:
    return TocEntry(title=title, unit=unit, offset=offset, depth=depth, href=f"u{unit}")


# -- building ---------------------------------------------------------------------------------


def test_small_siblings_are_batched_and_a_mid_sized_node_stands_alone() -> None:
    settings = SegmentSettings()
    chapters = [("Chapter 1", 4_000), ("Chapter 2", 5_000), ("Chapter 3", 7_000)]
    chapters += [("Chapter 4", 18_000), ("Chapter 5", 3_000), ("Chapter 6", 3_000)]
    text = "Front page\n"
    toc: list[TocEntry] = []
    for i, (title, size) in enumerate(chapters):
        toc.append(entry(title, 0, len(text)))
        text += chapter(title, size, i)
    segments = build_segments("d", [text], toc, settings)
    check_partition(segments, [text])
    titles = [s.title for s in segments]
    assert titles == [
        f"{FRONT_MATTER}; Chapter 1; Chapter 2; Chapter 3",
        "Chapter 4",
        "Chapter 5; Chapter 6",
    ]
    first = sizes(segments)[0]
    assert settings.batch_min_chars <= first <= settings.batch_max_chars


def test_a_large_node_without_children_is_split_at_sentence_starts() -> None:
    settings = SegmentSettings()
    text = chapter("Chapter 1", 10_000, 1)
    big_start = len(text)
    text += chapter("Chapter 2", 95_000, 2)
    toc = [entry("Chapter 1", 0, 0), entry("Chapter 2", 0, big_start)]
    segments = build_segments("d", [text], toc, settings)
    check_partition(segments, [text])
    parts = [s for s in segments if s.title.startswith("Chapter 2 (")]
    assert len(parts) == 3
    assert [s.title for s in parts] == ["Chapter 2 (1/3)", "Chapter 2 (2/3)", "Chapter 2 (3/3)"]
    starts = {s for s, _ in split_sentences(text)}
    for segment in parts[1:]:
        assert segment.parts[0].start in starts  # every cut opens a sentence
    for size in sizes(parts):
        assert settings.range_min_chars * 0.8 <= size <= settings.range_max_chars


def test_a_node_between_alone_and_split_sizes_stays_whole() -> None:
    text = chapter("Chapter 1", 30_000, 3)
    segments = build_segments("d", [text], [entry("Chapter 1", 0, 0)], SegmentSettings())
    assert [s.title for s in segments] == ["Chapter 1"]


def test_a_large_node_with_children_yields_its_lead_and_its_children() -> None:
    text = "Part One\nA short introduction to the part follows here.\n"
    toc = [entry("Part One", 0, 0, 0)]
    for i in range(3):
        toc.append(entry(f"Section {i + 1}", 0, len(text), 1))
        text += chapter(f"Section {i + 1}", 12_000, i)
    toc.append(entry("Part Two", 0, len(text), 0))
    text += chapter("Part Two", 5_000, 9)
    segments = build_segments("d", [text], toc, SegmentSettings())
    check_partition(segments, [text])
    assert [s.title for s in segments] == [
        "Part One; Part One › Section 1",
        "Part One › Section 2",
        "Part One › Section 3",
        "Part Two",
    ]


def test_toc_entries_out_of_order_or_at_one_position_merge() -> None:
    text = chapter("One", 3_000, 1) + chapter("Two", 3_000, 2)
    second = text.index("Two\n")
    toc = [entry("Two", 0, second), entry("One", 0, 0), entry("Part I", 0, 0)]
    segments = build_segments("d", [text], toc, SegmentSettings())
    assert [s.title for s in segments] == ["One; Part I; Two"]


def test_toc_spanning_units_makes_parts_per_unit() -> None:
    texts = [chapter("Chapter 1", 12_000, 1), chapter("Chapter 1, continued", 12_000, 2)]
    texts.append(chapter("Chapter 2", 6_000, 3))
    toc = [entry("Chapter 1", 0, 0), entry("Chapter 2", 2, 0)]
    segments = build_segments("d", texts, toc, SegmentSettings())
    check_partition(segments, texts)
    assert segments[0].title == "Chapter 1"
    assert segments[0].parts == (
        SegmentPart(0, 0, len(texts[0])),
        SegmentPart(1, 0, len(texts[1])),
    )


def test_without_a_toc_pages_are_grouped_at_page_boundaries() -> None:
    settings = SegmentSettings()
    pages = [prose(3_500, i) for i in range(40)]  # 140k characters
    segments = build_segments("d", pages, [], settings, title="Report")
    check_partition(segments, pages)
    assert len(segments) == 4
    assert [s.title for s in segments] == [f"Report ({i}/4)" for i in range(1, 5)]
    for segment in segments:
        assert all(p.start == 0 and p.end == len(pages[p.unit]) for p in segment.parts)
    for size in sizes(segments):
        assert settings.range_min_chars <= size <= settings.range_max_chars


def test_without_a_toc_one_long_unit_is_cut_at_sentence_starts() -> None:
    settings = SegmentSettings()
    text = prose(150_000, 5)
    segments = build_segments("d", [text], [], settings, title="Book")
    check_partition(segments, [text])
    starts = {s for s, _ in split_sentences(text)}
    assert len(segments) == 4
    for segment in segments[1:]:
        assert segment.parts[0].start in starts
    for size in sizes(segments):
        assert settings.range_min_chars <= size <= settings.range_max_chars


def test_blank_text_makes_no_segments() -> None:
    assert build_segments("d", ["", "   \n"], [], SegmentSettings()) == []
    assert build_segments("d", [], [], SegmentSettings()) == []


def test_a_short_document_is_one_segment() -> None:
    segments = build_segments("d", ["Just one line of text."], [], SegmentSettings(), title="T")
    assert [(s.title, s.parts) for s in segments] == [("T", (SegmentPart(0, 0, 22),))]


def test_the_builder_id_follows_the_sizes() -> None:
    assert builder_id(SegmentSettings()) == builder_id(SegmentSettings())
    assert builder_id(SegmentSettings()) != builder_id(SegmentSettings(alone_chars=10_000))


def test_sizes_must_be_ordered() -> None:
    with pytest.raises(ValueError):
        SegmentSettings(batch_min_chars=30_000, batch_max_chars=20_000)


# -- passages and tags ------------------------------------------------------------------------


def test_passages_join_whole_sentences_of_one_unit() -> None:
    sentences = [Span(0, 0, 100), Span(0, 101, 250), Span(0, 251, 700), Span(1, 0, 50)]
    assert passages(sentences, 300) == [Span(0, 0, 250), Span(0, 251, 700), Span(1, 0, 50)]


def test_tags_round_trip_and_strip() -> None:
    text = f"One thing {tag(Span(3, 10, 80))}. Another [f3-10] and [f1-2-3]."
    assert tags_in(text) == [Span(3, 10, 80), Span(1, 2, 3)]
    assert strip_tags(text) == "One thing . Another and ."
    parsed = parse_answer(text)
    assert [(t.unit, t.start, t.end) for c in parsed.claims for t in c.tags] == [
        (3, 10, 80),
        (1, 2, 3),
    ]


def test_inside_segment() -> None:
    segment = Segment(doc_id="d", index=0, title="t", parts=(SegmentPart(2, 100, 500),))
    assert inside_segment(Span(2, 100, 500), segment)
    assert not inside_segment(Span(2, 99, 200), segment)
    assert not inside_segment(Span(3, 100, 200), segment)
    assert not inside_segment(Span(2, 200, 200), segment)


# -- summaries --------------------------------------------------------------------------------


def _book() -> tuple[list[str], list[Segment]]:
    texts = [
        chapter("Chapter 1", 9_000, 1).replace("garden", "Pemberley garden"),
        chapter("Chapter 2", 9_000, 40).replace("letter", "Rosings letter"),
    ]
    toc = [entry("Chapter 1", 0, 0), entry("Chapter 2", 1, 0)]
    settings = SegmentSettings(batch_min_chars=5_000, batch_max_chars=8_000)
    return texts, build_segments("d", texts, toc, settings)


def test_extractive_summaries_are_tagged_verbatim_sentences_in_reading_order() -> None:
    texts, segments = _book()
    summaries = extractive_summaries(segments, texts, max_sentences=4)
    assert len(summaries) == 2
    for segment, summary in zip(segments, summaries, strict=True):
        spans = tags_in(summary)
        assert 2 <= len(spans) <= 4
        assert spans == sorted(spans)
        pieces = [p.strip() for p in re.split(r"\[f\d+-\d+-\d+\]", summary) if p.strip()]
        for span, piece in zip(spans, pieces, strict=True):
            assert inside_segment(span, segment)
            assert normalize(piece) == normalize(texts[span.unit][span.start : span.end])
    # The summaries pick the words that set each chapter apart.
    assert "Pemberley" in summaries[0] and "Pemberley" not in summaries[1]
    assert "Rosings" in summaries[1] and "Rosings" not in summaries[0]
    assert extractive_summaries(segments, texts, max_sentences=4) == summaries


def test_sentences_of_a_segment_stay_inside_it() -> None:
    texts, segments = _book()
    for segment in segments:
        spans = segment_sentences(segment, texts)
        assert spans and all(inside_segment(s, segment) for s in spans)


class ScriptedModel:
    """A chat model that replies from a script (a remote LLM's stand-in), recording requests."""

    def __init__(self, replies: Sequence[str | Exception]) -> None:
        self.replies = list(replies)
        self.requests: list[list[ChatMessage]] = []

    @property
    def name(self) -> str:
        return "scripted"

    def complete(self, messages: Sequence[ChatMessage], timeout: float) -> str:
        self.requests.append(list(messages))
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    def stream(self, messages: Sequence[ChatMessage], timeout: float) -> object:
        raise NotImplementedError


def test_llm_summary_keeps_only_tags_inside_the_segment() -> None:
    texts, segments = _book()
    first = segments[0]
    inside = segment_sentences(first, texts)[1]
    summary = clean_llm_summary(
        f"Elizabeth walks {tag(inside)}. Invented [f9-1-2]. Broken [f0-3]. Other chapter "
        f"{tag(Span(1, 0, 20))}.",
        first,
    )
    assert summary == f"Elizabeth walks {tag(inside)}. Invented. Broken. Other chapter."


def test_summarize_segments_with_a_model_falls_back_per_segment() -> None:
    texts, segments = _book()
    good = segment_sentences(segments[0], texts)[0]
    model = ScriptedModel(
        [f"The chapter opens in the garden {tag(good)}.", LLMError("server down")]
    )
    out = summarize_segments(
        segments, texts, max_sentences=3, model=model, model_id="m1", timeout=5, passage_chars=400
    )
    assert [s.summarizer for s in out] == ["llm:m1", EXTRACTIVE_ID]
    assert out[0].summary == f"The chapter opens in the garden {tag(good)}."
    assert tags_in(out[1].summary)
    # The model saw the segment's passages, each with its tag, and the rules.
    system, user = model.requests[0]
    assert "position tag" in system["content"]
    assert tag(passages(segment_sentences(segments[0], texts), 400)[0]) in user["content"]


def test_a_model_summary_without_a_valid_tag_falls_back() -> None:
    texts, segments = _book()
    model = ScriptedModel(["A summary with no tags at all.", "Only an invented one [f7-1-9]."])
    out = summarize_segments(segments, texts, max_sentences=3, model=model, model_id="m1", **LIMITS)
    assert [s.summarizer for s in out] == [EXTRACTIVE_ID, EXTRACTIVE_ID]


# -- PDF outline offsets ----------------------------------------------------------------------


def test_an_outline_view_starts_at_the_heading_below_its_top() -> None:
    from truthbase.extract.pdf import outline_offset
    from truthbase.model import Unit

    # Reading order: a page number at the foot (y 30), the body (y 700..600), a heading at y 400.
    lines = [("7\n", 30.0), ("Body text here.\n", 700.0), ("More body.\n", 600.0)]
    lines += [("2 Methods\n", 400.0), ("We do things.", 380.0)]
    text = ""
    boxes: list[tuple[float, float, float, float] | None] = []
    for line, top in lines:
        text += line
        boxes += [None if ch == "\n" else (0.0, top - 10.0, 5.0, top) for ch in line]
    unit = Unit(index=0, text=text, boxes=boxes)
    assert text[outline_offset(unit, 410.0) :].startswith("2 Methods")
    assert text[outline_offset(unit, 710.0) :].startswith("Body")
    assert outline_offset(unit, None) == 0
    assert text[outline_offset(unit, 5.0) :] == text  # nothing below: the page's start


def test_a_version_4_index_gains_the_segments_table(tmp_path: Path) -> None:
    import sqlite3

    from truthbase.records import StoredSegments
    from truthbase.store import SQLiteStore
    from truthbase.store.sqlite import SCHEMA_VERSION

    path = tmp_path / "old.sqlite"
    SQLiteStore(path).close()
    db = sqlite3.connect(path)
    db.execute("DROP TABLE segments")
    db.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    store = SQLiteStore(path)
    try:
        assert store.segments("d", EXTRACTIVE_ID) is None
        assert store.document_toc("d") == []
        with pytest.raises(sqlite3.IntegrityError):  # segments belong to a stored document
            segment = Segment(doc_id="d", index=0, title="t", parts=(SegmentPart(0, 0, 1),))
            store.put_segments("d", EXTRACTIVE_ID, StoredSegments([segment], "b"))
    finally:
        store.close()
    db = sqlite3.connect(path)
    version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    db.close()
    assert int(version) == SCHEMA_VERSION


def test_a_failing_model_is_not_asked_again_after_three_errors_in_a_row() -> None:
    from truthbase.segments.summarize import MAX_MODEL_FAILURES

    texts = [chapter(f"Chapter {i}", 3_000, i) for i in range(6)]
    toc = [entry(f"Chapter {i}", i, 0) for i in range(6)]
    settings = SegmentSettings(batch_min_chars=0, batch_max_chars=1_000)
    segments = build_segments("d", texts, toc, settings)
    assert len(segments) == 6
    model = ScriptedModel([LLMError("timeout")] * 6)
    out = summarize_segments(segments, texts, max_sentences=2, model=model, model_id="m", **LIMITS)
    assert len(model.requests) == MAX_MODEL_FAILURES == 3
    assert all(s.summarizer == EXTRACTIVE_ID and tags_in(s.summary) for s in out)
    # A success resets the count.
    good = segment_sentences(segments[1], texts)[0]
    model = ScriptedModel(
        [LLMError("a"), f"Fine {tag(good)}.", LLMError("b"), LLMError("c"), LLMError("d")]
    )
    out = summarize_segments(segments, texts, max_sentences=2, model=model, model_id="m", **LIMITS)
    assert len(model.requests) == 5
    assert [s.summarizer for s in out][:2] == [EXTRACTIVE_ID, "llm:m"]


# -- the book tools' pure parts: select, budget, render ---------------------------------------


def _entries() -> tuple[list[str], list[Entry]]:
    texts, segments = _book()
    stored = StoredSegments(segments=extractive_summaries_applied(segments, texts), builder="b")
    return texts, scope_entries([("Book", stored)])


def extractive_summaries_applied(segments: list[Segment], texts: list[str]) -> list[Segment]:
    summaries = extractive_summaries(segments, texts, max_sentences=3)
    return [replace(s, summary=t) for s, t in zip(segments, summaries, strict=True)]


def test_the_model_pick_is_read_leniently_within_its_batch() -> None:
    _, entries = _entries()
    assert [e.key for e in entries] == ["S1", "S2"]
    assert picked('Sure! {"ids": ["S2", "S9", "S2"]}', entries) == [entries[1]]
    assert picked("1 and 2.5", entries) == [entries[0]]  # bare numbers, not decimals
    assert picked('{"ids": []}', entries) == []
    assert "[f" not in record(entries[0])  # summaries go without their tags
    assert [len(b) for b in batches(entries, 1)] == [1, 1]
    assert [len(b) for b in batches(entries, 10_000)] == [2]


def test_search_pick_sums_hits_per_segment_and_passages_fit_the_budget() -> None:
    texts, entries = _entries()
    part = entries[1].segment.parts[0]
    chunk = Chunk(
        id=1, doc_id="d", unit=part.unit, start=part.start, end=part.start + 200, text="x", rects=()
    )
    hits = [SearchHit(chunk=chunk, score=0.5, document_title="Book")]
    per_unit, text_score = unit_hits(entries, hits)
    assert per_unit == {("d", part.unit): [(part.start, part.start + 200, 0.5)]}
    assert text_score == {"S2": 0.5}
    assert rank_by_search(entries, text_score, None, 3) == [entries[1]]
    units = {("d", i): Unit(index=i, text=t, boxes=[None] * len(t)) for i, t in enumerate(texts)}
    per_segment = segment_passages(entries, units, 300)
    assert not fits(per_segment, 2_000)
    shown = best_passages("Rosings letter", per_segment, units, per_unit, 2_000)
    assert sum(s.end - s.start for item in shown for s in item.spans) <= 2_000
    # The passage the hybrid hit falls on outranks any term overlap.
    hit_segment = [item for item in shown if item.entry is entries[1]]
    assert hit_segment and hit_segment[0].spans[0].start < part.start + 200
    output = related_passages(shown, units, first_n=4)
    assert [s.n for s in output.sources] == list(range(4, 4 + len(output.sources)))
    assert "[…]" in output.content  # passages were skipped between the ones shown
    for source in output.sources:
        assert f"[f{source.unit}-{source.start}-{source.end}]" in output.content
    assert related_passages([], units).content == NO_SECTION
