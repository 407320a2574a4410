"""Word meanings for the support checks: lemmas, synonyms and antonyms from WordNet.

The data is Princeton WordNet 3.0 in its own database format, as Debian's ``wordnet-base``
package installs it (``/usr/share/wordnet``; ``scripts/install.sh`` installs it): ``index.POS``
lists each lemma's synsets by byte offset into ``data.POS``, whose lines hold a synset's words
and pointers (``!`` antonym, ``&`` similar to, ``+`` derivationally related, ``^`` also see,
``\\`` pertainym, ``<`` participle, ``$`` verb group, ``@`` hypernym: "procurement" is an
"acquisition"). Lemmas come from the morphology WordNet
documents (``morphy``): the exception lists (``POS.exc``) and its detachment rules.

:class:`WordNet` keeps the files' bytes and bisects the sorted index files (no table is built,
so loading takes milliseconds); data lines are read on demand. :func:`load_lexicon` returns one
per process, or :data:`EMPTY` (knows no word) when the data is not installed: the checks then
compare words as written, as they did before this module.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Protocol

__all__ = ["DEFAULT_WORDNET", "EMPTY", "Lexicon", "WordNet", "load_lexicon"]

DEFAULT_WORDNET = Path("/usr/share/wordnet")
_POS = ("noun", "verb", "adj", "adv")
_POS_LETTER = {"n": "noun", "v": "verb", "a": "adj", "s": "adj", "r": "adv"}
#: Senses of a word whose synonyms count: the first few (WordNet orders senses by frequency);
#: rarer senses relate too many words ("make" is a synonym of 40 verbs in some sense).
SENSES = 3
#: Pointers that relate two words closely enough to stand for each other in a paraphrase.
_RELATED_POINTERS = frozenset({"&", "+", "^", "\\", "<", "$", "@", "@i"})
# fmt: off
_DETACH = {
    "noun": (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"),
             ("shes", "sh"), ("men", "man"), ("ies", "y")),
    "verb": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""),
             ("ing", "e"), ("ing", "")),
    "adj": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "adv": (),
}
# fmt: on


class Lexicon(Protocol):
    """What the support checks ask of a lexical resource (hashable: answers are memoized per
    lexicon)."""

    def __hash__(self) -> int: ...

    def lemmas(self, word: str) -> frozenset[str]:
        """The dictionary forms of ``word`` in any part of speech (empty: an unknown word)."""
        ...

    def related(self, lemma: str) -> frozenset[str]:
        """Lemmas that can stand for ``lemma`` in a paraphrase (synonyms, derived forms)."""
        ...

    def antonyms(self, lemma: str) -> frozenset[str]:
        """Lemmas of opposite meaning."""
        ...

    def synonyms(self, lemma: str) -> frozenset[str]:
        """Lemmas that share a sense with ``lemma`` (its first senses' synsets): narrower than
        :meth:`related`, which adds derived forms, similar words and hypernyms."""
        ...


class _Empty:
    def lemmas(self, word: str) -> frozenset[str]:
        return frozenset()

    def related(self, lemma: str) -> frozenset[str]:
        return frozenset()

    def antonyms(self, lemma: str) -> frozenset[str]:
        return frozenset()

    def synonyms(self, lemma: str) -> frozenset[str]:
        return frozenset()


#: The lexicon that knows no word (WordNet not installed).
EMPTY: Lexicon = _Empty()


@dataclass(frozen=True, slots=True)
class _Synset:
    words: tuple[str, ...]
    pointers: tuple[tuple[str, int, str, int, int], ...]  # (symbol, offset, pos, source, target)

    def own(self, lemma: str) -> int:
        """The 1-based number of ``lemma`` among the words (-1 when not one of them)."""
        return self.words.index(lemma) + 1 if lemma in self.words else -1


@dataclass(eq=False)
class WordNet:
    """WordNet 3.0's database files in ``root`` (see the module doc)."""

    root: Path
    _indexes: dict[str, bytes] = field(default_factory=dict, init=False)
    _exceptions: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict, init=False)
    _files: dict[str, bytes] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        for pos in _POS:
            self._indexes[pos] = (self.root / f"index.{pos}").read_bytes()
            exceptions: dict[str, tuple[str, ...]] = {}
            exc = self.root / f"{pos}.exc"
            if exc.is_file():
                for line in exc.read_text(encoding="utf-8", errors="replace").splitlines():
                    parts = line.split()
                    if len(parts) >= 2:
                        exceptions[parts[0]] = tuple(parts[1:])
            self._exceptions[pos] = exceptions
            self._files[pos] = (self.root / f"data.{pos}").read_bytes()

    def _offsets(self, lemma: str, pos: str) -> tuple[int, ...]:
        """The synset offsets of ``lemma`` in ``pos``, by bisection of the sorted index file."""
        data, key = self._indexes[pos], lemma.encode("utf-8") + b" "
        lo, hi = 0, len(data)
        while lo < hi:
            mid = (lo + hi) // 2
            start = data.rfind(b"\n", 0, mid) + 1
            end = data.find(b"\n", start)
            end = len(data) if end < 0 else end
            line = data[start:end]
            if line.startswith(key):
                parts = line.decode("utf-8", errors="replace").split()
                first = 4 + int(parts[3]) + 2
                return tuple(int(o) for o in parts[first : first + int(parts[2])])
            if line.startswith(b" ") or line < key:
                lo = end + 1
            else:
                hi = start
        return ()

    def _morphy(self, word: str, pos: str) -> list[str]:
        found = [w for w in self._exceptions[pos].get(word, ()) if self._offsets(w, pos)]
        if self._offsets(word, pos):
            found.append(word)
        for suffix, repl in _DETACH[pos]:
            if word.endswith(suffix) and len(word) > len(suffix) + 1:
                base = word[: len(word) - len(suffix)] + repl
                if self._offsets(base, pos):
                    found.append(base)
        return found

    def _synset(self, pos: str, offset: int) -> _Synset:
        data = self._files[pos]
        end = data.index(b"\n", offset)
        head = data[offset:end].split(b"|", 1)[0].decode("utf-8", errors="replace").split()
        count = int(head[3], 16)
        words = tuple(head[4 + 2 * k].lower().split("(")[0] for k in range(count))
        at = 4 + 2 * count
        pointers: list[tuple[str, int, str, int, int]] = []
        for k in range(int(head[at])):
            symbol, target, letter, st = head[at + 1 + 4 * k : at + 5 + 4 * k]
            pointers.append(
                (symbol, int(target), _POS_LETTER[letter], int(st[:2], 16), int(st[2:], 16))
            )
        return _Synset(words, tuple(pointers))

    def _senses(self, lemma: str) -> Iterable[_Synset]:
        for pos in _POS:
            for offset in self._offsets(lemma, pos)[:SENSES]:
                yield self._synset(pos, offset)

    def lemmas(self, word: str) -> frozenset[str]:
        return _lemmas(self, word.casefold().replace(" ", "_"))

    def related(self, lemma: str) -> frozenset[str]:
        return _related(self, lemma)

    def antonyms(self, lemma: str) -> frozenset[str]:
        return _antonyms(self, lemma)

    def synonyms(self, lemma: str) -> frozenset[str]:
        return _synonyms(self, lemma)


@lru_cache(maxsize=65536)
def _lemmas(wordnet: WordNet, word: str) -> frozenset[str]:
    return frozenset(lemma for pos in _POS for lemma in wordnet._morphy(word, pos))


@lru_cache(maxsize=65536)
def _related(wordnet: WordNet, lemma: str) -> frozenset[str]:
    found: set[str] = set()
    for synset in wordnet._senses(lemma):
        found.update(synset.words)
        own = synset.own(lemma)
        for symbol, offset, pos, source, target in synset.pointers:
            if symbol not in _RELATED_POINTERS or (source and source != own):
                continue
            other = wordnet._synset(pos, offset).words
            found.update(other if not target else other[target - 1 : target])
    found.discard(lemma)
    return frozenset(found)


@lru_cache(maxsize=65536)
def _synonyms(wordnet: WordNet, lemma: str) -> frozenset[str]:
    return frozenset(w for synset in wordnet._senses(lemma) for w in synset.words) - {lemma}


@lru_cache(maxsize=65536)
def _antonyms(wordnet: WordNet, lemma: str) -> frozenset[str]:
    found: set[str] = set()
    for synset in wordnet._senses(lemma):
        own = synset.own(lemma)
        for symbol, offset, pos, source, target in synset.pointers:
            if symbol == "!" and source == own:
                found.add(wordnet._synset(pos, offset).words[target - 1])
    return frozenset(found)


_LOCK = threading.Lock()
_LOADED: dict[Path, Lexicon] = {}


def load_lexicon(root: Path = DEFAULT_WORDNET) -> Lexicon:
    """The process's lexicon for ``root``: WordNet when its files are there, else :data:`EMPTY`."""
    with _LOCK:
        if root not in _LOADED:
            present = (root / "index.noun").is_file() and (root / "data.noun").is_file()
            _LOADED[root] = WordNet(root) if present else EMPTY
        return _LOADED[root]
