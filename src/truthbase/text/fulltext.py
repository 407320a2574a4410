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
- Identifiers (names and code in text, :func:`identifier_terms`): a word, or words joined by
  ``. _ - / = : @ +``, that is led by ``\\``, ``-``, ``--``, ``/``, ``.`` or ``$`` or holds one of
  ``_ / = : @ +`` (``\\cmidrule``, ``--no-sandbox``, ``key=value``, ``snake_case``,
  ``/etc/fstab``, ``os.path:join``) gives first its whole self as one term, case-folded, not
  stemmed, its ASCII punctuation written as the full-width forms (``＼cmidrule``,
  ``key＝value``): no term holds an ASCII separator, so both databases keep it one token, and it
  is never a plain word's term. Its words follow as above, so a phrase of the parts ("os path
  join") still matches them side by side, and each part alone ("cmidrule") finds it too.
  Words joined by hyphens and dots alone ("Self-RAG", "GV.OC-01", ``os.path.join``, ``v1.2.3``,
  ``2.0``) get no whole term: the phrase of their words finds them as exactly, and a whole term
  for each would lengthen prose full of them for BM25 (measured: dev.json MRR .645 -> .631).
  Dashes typeset for hyphens (U+2010, U+2011, U+2013, U+2212) count as ``-``, and a flag's
  leading dashes as one ("--no-sandbox", "–no-sandbox" and "-no-sandbox" meet).
- camelCase words (a lower-case start, then capitalised humps: ``getElementById``): the word's
  term, then its humps' terms ("get element by id"). Words that start upper-case ("LaTeX",
  "PostgreSQL") are left whole.

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
    "humps",
    "identifier_terms",
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
#: A letter or digit that is not CJK.
_WORD_CHAR = f"(?:(?![{_CJK_RANGES}])[^\\W_])"
#: What leads an identifier: a backslash (a TeX macro), or, at the start of a token, dashes (a
#: command-line flag), a slash (a path), a dot (".bashrc") or a dollar sign ("$HOME").
_LEAD = "(?:\\\\|(?<![^\\s(\\[{<\"'`])(?:--?|/|\\.|\\$))"
#: A CJK run, or a compound: an optional lead, then words joined by runs of joiners.
_UNIT = re.compile(
    f"(?P<cjk>[{_CJK_RANGES}]+)|(?P<lead>{_LEAD})?{_WORD_CHAR}+(?:[._\\-/=:@+]+{_WORD_CHAR}+)*"
)
#: The joiners that make a compound a name of code (hyphens and dots alone do not: "Self-RAG",
#: "GV.OC-01", "os.path.join", "2.0" keep the phrase of their words, which matches them as
#: exactly, and prose full of them keeps its BM25 lengths).
_CODE_JOINER = re.compile(r"[_/=:@+]")
#: Dashes typeset for a hyphen, a minus or TeX's "--" (an en dash), read as "-".
_DASHES = str.maketrans(dict.fromkeys("\u2010\u2011\u2013\u2212", "-"))
#: ASCII punctuation in an identifier's whole term: its full-width form (U+FF01..U+FF5E).
_FULL_WIDTH = str.maketrans(
    {chr(c): chr(c + 0xFEE0) for c in range(0x21, 0x7F) if not chr(c).isalnum()}
)
#: A camelCase word: lower-case letters, then humps each an upper-case letter and lower-case
#: letters or digits.
_CAMEL = re.compile(r"[a-z]+(?:[A-Z][a-z0-9]+)+")
_HUMP = re.compile(r"[A-Z]?[a-z0-9]+")

_local = threading.local()  # PyStemmer's stemmers are not thread-safe: one set per thread


def stemmer_for(language: str | None) -> Callable[[str], str] | None:
    """Snowball's stemmer for ``language`` (ISO 639-1), None where it has none; one per thread
    and algorithm."""
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


def _whole(compound: str, lead: bool) -> str | None:
    """The whole term of a compound when it is an identifier (see the module's rules)."""
    if not lead and _CODE_JOINER.search(compound) is None:
        return None
    # A flag's dashes as one: TeX sets "--" in running text as an en dash ("–no-sandbox").
    whole = _fold(re.sub("^-+", "-", compound).casefold())
    return whole.translate(_FULL_WIDTH) if len(whole) <= MAX_WORD else None


def humps(word: str) -> list[str]:
    """The humps of a camelCase word, as written ("getElementById" -> get, Element, By, Id);
    ``[]`` for any other word."""
    return _HUMP.findall(word) if _CAMEL.fullmatch(word) else []


def _word_terms(compound: str, stem: Callable[[str], str] | None, split: bool) -> list[str]:
    """Each word of a compound as a term, a camelCase word followed by its humps' terms when
    ``split``."""
    out: list[str] = []
    for match in _TOKEN.finditer(compound):
        word = match.group()
        for piece in [word, *humps(word)] if split else [word]:
            # folded first, then split as before ("İ" folds to "i" and a combining dot)
            for token in _TOKEN.findall(piece.casefold()):
                if len(token) <= MAX_WORD:
                    out.append(_fold(stem(token) if stem is not None else token))
    return out


def _units(text: str) -> Iterable[re.Match[str]]:
    return _UNIT.finditer(unicodedata.normalize("NFKC", text).translate(_DASHES))


def index_terms(text: str, language: str | None, *, identifiers: bool = True) -> list[str]:
    """The index terms of ``text`` in ``language``, in text order (see the module's rules).

    ``identifiers=False`` leaves out the identifiers' whole terms and the camelCase humps: the
    words alone, which the index holds side by side (a question's phrase of words is made so).
    """
    stem = stemmer_for(language)
    out: list[str] = []
    for match in _units(text):
        if match.group("cjk") is not None:
            out.extend(_bigrams(match.group().casefold()))
            continue
        whole = _whole(match.group(), match.group("lead") is not None) if identifiers else None
        if whole is not None:
            out.append(whole)
        out.extend(_word_terms(match.group(), stem, identifiers))
    return out


def identifier_terms(text: str) -> list[str]:
    """The whole terms of the identifiers in ``text``, in text order ("see \\cmidrule and
    booktabs" -> ["＼cmidrule"]): what :func:`index_terms` puts before their words."""
    out: list[str] = []
    for match in _units(text):
        if match.group("cjk") is None:
            whole = _whole(match.group(), match.group("lead") is not None)
            if whole is not None:
                out.append(whole)
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
