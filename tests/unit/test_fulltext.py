"""The full-text tokenizer (truthbase.text.fulltext): the terms both backends index and query."""

from __future__ import annotations

import sqlite3
import threading

from hypothesis import given
from hypothesis import strategies as st

from truthbase.text.fulltext import (
    MAX_WORD,
    humps,
    identifier_terms,
    index_terms,
    is_cjk,
    stop_words,
    term_string,
)


def test_english_is_snowball_english() -> None:
    assert index_terms("Governing the risks of generous technologies", "en") == [
        "govern",
        "the",
        "risk",
        "of",
        "generous",  # FTS5's Porter made it "gener"
        "technolog",
    ]


def test_german_umlauts_and_sharp_s() -> None:
    # case folding turns ß into ss; the German stemmer folds umlauts: every spelling meets
    assert index_terms("Straße STRASSE strasse", "de") == ["strass"] * 3
    assert index_terms("Räume Raum räumlich", "de") == ["raum", "raum", "raumlich"]
    assert index_terms("homöomorph", "de") == index_terms("Homöomorphe", "de")
    assert index_terms("abgeschlossenen Teilmengen", "de") == ["abgeschloss", "teilmeng"]


def test_diacritics_go_after_stemming_in_latin_scripts_only() -> None:
    assert index_terms("naïve café", "en") == ["naiv", "cafe"]
    assert index_terms("Ærø", None) == ["ærø"]  # no decomposition: left alone
    assert index_terms("привет", "ru") == ["привет"]


def test_unknown_language_is_not_stemmed() -> None:
    assert index_terms("Governing risks", None) == ["governing", "risks"]
    assert index_terms("Governing risks", "xx") == ["governing", "risks"]


def test_cjk_runs_become_bigrams() -> None:
    assert index_terms("营业收入", "zh") == ["营业", "业收", "收入"]
    assert index_terms("元", "zh") == ["元"]
    # kana and kanji alike; the iteration mark is a CJK letter
    assert index_terms("宮沢賢治の童話", "ja") == ["宮沢", "沢賢", "賢治", "治の", "の童", "童話"]
    assert index_terms("人々", "ja") == ["人々"]
    assert index_terms("한국어 문장", "ko") == ["한국", "국어", "문장"]


def test_mixed_scripts_split_at_the_script_boundary() -> None:
    assert index_terms("东北电气2018年第一季度", "zh") == [
        "东北",
        "北电",
        "电气",
        "2018",
        "年第",
        "第一",
        "一季",
        "季度",
    ]
    assert index_terms("GPT模型 training", "en") == ["gpt", "模型", "train"]
    # full-width letters and digits are folded (NFKC), CJK punctuation separates
    assert index_terms("ＡＢＣ２０１８。公司", "zh") == ["abc2018", "公司"]


def test_separators_and_long_words() -> None:
    assert index_terms("GV.OC-03: self_rag", "en", identifiers=False) == [
        "gv",
        "oc",
        "03",
        "self",
        "rag",
    ]
    assert index_terms("GV.OC-03: self_rag", "en") == [
        "gv",
        "oc",
        "03",
        "self＿rag",
        "self",
        "rag",
    ]
    assert index_terms("x" * (MAX_WORD + 1) + " ok", "en") == ["ok"]
    assert index_terms("", "en") == []
    assert index_terms(" \n\t.,;", "de") == []


def test_tex_macro_is_one_term_then_its_word() -> None:
    assert index_terms(r"Use \cmidrule{2-3} under \toprule", "en") == [
        "use",
        "＼cmidrule",
        "cmidrul",
        "2",  # hyphens alone join no name of code
        "3",
        "under",
        "＼toprule",
        "toprul",
    ]
    assert index_terms(r"\setbeamertemplate{footline}", "en")[:2] == [
        "＼setbeamertemplate",
        "setbeamertempl",
    ]
    assert index_terms(r"\disable@keys", "en") == ["＼disable＠keys", "disabl", "key"]
    # the macro and the word meet on the word; the macro's whole term is its own
    assert "cmidrul" in index_terms("the cmidrule command", "en")
    assert "＼cmidrule" not in index_terms("the cmidrule command", "en")


def test_options_keys_and_flags() -> None:
    assert index_terms("breaklines=true, frame=single", "en") == [
        "breaklines＝true",
        "breaklin",
        "true",
        "frame＝single",
        "frame",
        "singl",
    ]
    # TeX sets "--" in running text as an en dash: every spelling of a flag meets
    flag = ["－no－sandbox", "no", "sandbox"]
    assert index_terms("--no-sandbox", "en") == flag
    assert index_terms("\u2013no-sandbox", "en") == flag
    assert index_terms("(-no\u2010sandbox)", "en") == flag
    # a dash inside a sentence leads nothing
    assert index_terms("a - b", "en") == ["a", "b"]


def test_snake_dotted_path_and_version_names() -> None:
    assert index_terms("snake_case", None) == ["snake＿case", "snake", "case"]
    assert index_terms("os.path:join.", None) == ["os．path：join", "os", "path", "join"]
    # dots and hyphens alone: the words, side by side (a question's phrase of them matches)
    assert index_terms("os.path.join Self-RAG", None) == ["os", "path", "join", "self", "rag"]
    assert index_terms("see /etc/fstab", None) == ["see", "／etc／fstab", "etc", "fstab"]
    assert index_terms("v1.2.3 and 2.0", None) == ["v1", "2", "3", "and", "2", "0"]
    assert index_terms("the .bashrc file", None) == ["the", "．bashrc", "bashrc", "file"]


def test_camel_case_gives_its_humps_after_the_word() -> None:
    assert index_terms("getElementById", "en") == ["getelementbyid", "get", "element", "by", "id"]
    assert humps("setBeamerTemplate") == ["set", "Beamer", "Template"]
    # words that start upper-case are names, left whole
    assert index_terms("LaTeX PostgreSQL JavaScript", None) == ["latex", "postgresql", "javascript"]
    assert humps("LaTeX") == [] and humps("plain") == []


def test_plain_words_are_unchanged_by_identifiers() -> None:
    text = "Governing the risks of naïve technologies, in 2018; Straße"
    assert index_terms(text, "en") == index_terms(text, "en", identifiers=False)
    assert identifier_terms(text) == []


def test_identifier_terms_are_the_wholes_index_terms_holds() -> None:
    text = r"Set \lstset{breaklines=true} and run --no-sandbox on os.path/x"
    wholes = identifier_terms(text)
    assert wholes == ["＼lstset", "breaklines＝true", "－no－sandbox", "os．path／x"]
    terms = index_terms(text, "en")
    assert [t for t in terms if t in wholes] == wholes
    long_name = "a_" + "b" * MAX_WORD
    assert identifier_terms(long_name) == []  # too long for a whole term; its words stay
    assert index_terms(long_name, None) == ["a", "b" * MAX_WORD]


def test_is_cjk() -> None:
    assert is_cjk("收入") and is_cjk("の") and is_cjk("한국")
    assert not is_cjk("risk") and not is_cjk("2018") and not is_cjk("")


def test_stop_words_per_language() -> None:
    assert "welche" in stop_words(["de"]) and "welche" not in stop_words(["en"])
    assert "which" in stop_words(["de"])  # English's always


def test_stemmers_are_per_thread() -> None:
    # PyStemmer objects are not thread-safe: each thread gets its own, with the same result
    results: list[list[str]] = []

    def run() -> None:
        results.append(index_terms("Mannigfaltigkeiten und Räume " * 200, "de"))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 4 and all(r == results[0] for r in results)


@given(st.text(max_size=200), st.sampled_from(["en", "de", "zh", None]))
def test_fts5_ascii_reads_the_terms_back_exactly(text: str, language: str | None) -> None:
    """Whatever the text, FTS5's ascii tokenizer splits the stored string into exactly the
    terms (no term holds a separator or an ASCII capital), so both backends see these terms."""
    terms = index_terms(text, language)
    db = sqlite3.connect(":memory:")
    try:
        db.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'ascii')")
        db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        db.execute("INSERT INTO t(rowid, x) VALUES (1, ?)", (term_string(text, language),))
        got = [row[0] for row in db.execute("SELECT term FROM v ORDER BY offset")]
    finally:
        db.close()
    assert got == terms


def test_languages_set_by_extraction_are_kept() -> None:
    from truthbase.model import ExtractedDocument, Unit
    from truthbase.text.language import assign_languages

    german = "Eine Teilmenge heißt abgeschlossen, wenn ihr Komplement offen ist. " * 5
    units = [
        Unit(index=0, text=german, boxes=[None] * len(german)),
        Unit(index=1, text="x", boxes=[None], language="fr"),  # e.g. an OCR engine's
    ]
    document = ExtractedDocument(
        sha256="0", title="t", path="p", kind="pdf", units=units, extractor_version="v"
    )
    assign_languages(document)
    assert document.language == "de"
    assert [u.language for u in document.units] == ["de", "fr"]
