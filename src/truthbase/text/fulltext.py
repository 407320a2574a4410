"""The full-text index terms: one Python tokenizer for both backends.

SQLite's FTS5 and PostgreSQL index the same pre-made terms (a chunk's ``terms`` column: the
terms joined by single spaces), so their BM25 sees the same terms, positions and lengths on
every language; neither database tokenizes or stems anything itself (FTS5's ``ascii``
tokenizer and ``truthbase.fts_tokens`` only split the stored string at its spaces).

The rules, for a text in language ``language`` (ISO 639-1, or None when unknown):

- NFKC, then case folding ("Straße" -> "strasse", full-width "２０１８" -> "2018").
- Chinese, Japanese and Korean (Han, kana, Hangul): each run of such characters becomes its
  character bigrams ("营业收入" -> "营业 业收 收入"; a lone character stays itself). A segmenter
  would need a dictionary or a model download; bigrams need neither and find every word of two
  or more characters (a question's bigrams OR-ed, BM25 ranks the passages holding most of them).
- Other words, runs of letters and digits (``[^\\W_]+``): stemmed with Snowball (PyPI
  ``PyStemmer``) in the text's language, where Snowball has it (:data:`STEMMERS`), then Latin
  diacritics removed ("naïve" -> "naiv"; the German stemmer folds umlauts itself). A word of
  another language, or of an unknown one, is left as it is. Words over :data:`MAX_WORD` characters
  (base64 blobs, hashes) are left out.

:data:`STOP_WORDS` holds the words of a question that are never search terms, per language (the
English list is :data:`truthbase.text.vocabulary.QUERY_STOP_WORDS`); the index keeps every word,
as FTS5 always did, so BM25's lengths count them.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Callable, Iterable
from functools import lru_cache

import Stemmer

from .vocabulary import QUERY_STOP_WORDS

__all__ = [
    "MAX_WORD",
    "STEMMERS",
    "STOP_WORDS",
    "index_terms",
    "is_cjk",
    "stop_words",
    "term_string",
]

#: Longest word that is indexed, in characters.
MAX_WORD = 64

#: ISO 639-1 code -> Snowball algorithm (PyStemmer's names). English is Snowball's "english"
#: (Porter 2), not FTS5's original Porter.
STEMMERS: dict[str, str] = {
    "ar": "arabic",
    "ca": "catalan",
    "cs": "czech",
    "da": "danish",
    "de": "german",
    "el": "greek",
    "en": "english",
    "eo": "esperanto",
    "es": "spanish",
    "et": "estonian",
    "eu": "basque",
    "fa": "persian",
    "fi": "finnish",
    "fr": "french",
    "ga": "irish",
    "hi": "hindi",
    "hu": "hungarian",
    "hy": "armenian",
    "id": "indonesian",
    "it": "italian",
    "lt": "lithuanian",
    "nb": "norwegian",
    "ne": "nepali",
    "nl": "dutch",
    "nn": "norwegian",
    "no": "norwegian",
    "pl": "polish",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sr": "serbian",
    "sv": "swedish",
    "ta": "tamil",
    "tr": "turkish",
    "yi": "yiddish",
}

# fmt: off
#: German function words and question words (Snowball's German stop list, plus wann, warum,
#: wer, ...), as they are after case folding.
_GERMAN_STOP = frozenset(
    """
    aber alle allem allen aller alles als also am an ander andere anderem anderen anderer anderes
    anderm andern anders auch auf aus bei bin bis bist da damit dann der den des dem die das dass
    du er sie es ihr wir ich mich mir dich dir ihn ihm ihnen ihre ihrem ihren ihrer ihres euch
    euer eure eurem euren eurer eures dein deine deinem deinen deiner deines mein meine meinem
    meinen meiner meines sein seine seinem seinen seiner seines unser unsere unserem unseren
    unserer unseres durch ein eine einem einen einer eines einig einige einigem einigen einiger
    einiges einmal fur für gegen gewesen hab habe haben hat hatte hatten hier hin hinter im in
    indem ins ist jede jedem jeden jeder jedes jene jenem jenen jener jenes jetzt kann kein keine
    keinem keinen keiner keines konnen können konnte könnte machen man manche manchem manchen
    mancher manches mit muss musste nach nicht nichts noch nun nur ob oder ohne sehr selbst sich
    sind so solche solchem solchen solcher solches soll sollte sondern sonst uber über um und uns
    unter viel vom von vor wahrend während war waren warst was weg weil weiter welche welchem
    welchen welcher welches wenn werde werden wie wieder will wird wirst wo wollen wollte wurde
    wurden würde würden zu zum zur zwar zwischen wann warum wieso weshalb wer wen wem wessen woher
    wohin gibt gib
    """.split()  # noqa: SIM905
)
# fmt: on

#: A question's stop words per language (case-folded); languages without a list use English's.
STOP_WORDS: dict[str, frozenset[str]] = {"en": QUERY_STOP_WORDS, "de": _GERMAN_STOP}

_CJK_RANGES = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3031-\u3035\u303b\u303c"
    "\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31a0-\u31bf\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\U00020000-\U0003134f"
)
_CJK_CHAR = re.compile(f"[{_CJK_RANGES}]")
#: A run of CJK characters, or a run of other letters and digits.
_TOKEN = re.compile(f"[{_CJK_RANGES}]+|(?:(?![{_CJK_RANGES}])[^\\W_])+")

_local = threading.local()  # PyStemmer's stemmers are not thread-safe: one set per thread


def _stemmer(language: str | None) -> Callable[[str], str] | None:
    algorithm = STEMMERS.get(language or "")
    if algorithm is None:
        return None
    stemmers: dict[str, Callable[[str], str]] | None = getattr(_local, "stemmers", None)
    if stemmers is None:
        stemmers = {}
        _local.stemmers = stemmers
    stem = stemmers.get(algorithm)
    if stem is None:
        stem = Stemmer.Stemmer(algorithm).stemWord
        stemmers[algorithm] = stem
    return stem


@lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    """A Latin letter without its diacritics ("é" -> "e"); any other character as it is."""
    base = unicodedata.normalize("NFD", ch)
    if len(base) > 1 and base[0] < "\u0250" and all(unicodedata.combining(c) for c in base[1:]):
        return base[0]
    return ch


def _fold(word: str) -> str:
    if word.isascii():
        return word
    return "".join(_fold_char(ch) for ch in word)


def is_cjk(token: str) -> bool:
    """Whether ``token`` (a term or a word) is made of CJK characters (a bigram, say)."""
    return bool(token) and _CJK_CHAR.match(token) is not None


def _bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def index_terms(text: str, language: str | None) -> list[str]:
    """The index terms of ``text`` in ``language``, in text order (see the module's rules)."""
    stem = _stemmer(language)
    out: list[str] = []
    for match in _TOKEN.finditer(unicodedata.normalize("NFKC", text).casefold()):
        token = match.group()
        if _CJK_CHAR.match(token):
            out.extend(_bigrams(token))
        elif len(token) <= MAX_WORD:
            out.append(_fold(stem(token) if stem is not None else token))
    return out


def term_string(text: str, language: str | None) -> str:
    """:func:`index_terms` joined by single spaces: what the ``terms`` columns hold."""
    return " ".join(index_terms(text, language))


def stop_words(languages: Iterable[str | None]) -> frozenset[str]:
    """The stop words of a question in any of ``languages`` (English's always among them)."""
    words = QUERY_STOP_WORDS
    for language in languages:
        words = words | STOP_WORDS.get(language or "", frozenset())
    return words
