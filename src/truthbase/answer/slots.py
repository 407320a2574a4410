"""The kind of value a question asks for, where an answer must hold one: a price, a version, a
date. Pure functions of text.

A passage on the question's topic scores like an answer (the same words, the same embedding
neighbourhood), so support alone cannot tell "The CSF is designed to help organizations of all
sizes ..." from an answer to "How much does an organization pay to get certified against the
CSF?". What it cannot hold is a price. So a question that asks for a price, a version or a date
is answered only by sentences that hold one (policy rule 3; :mod:`.extractive` cites them, and
refuses where no close sentence does).

Only kinds whose answer has a shape are asked for here. "How many ..." is not one of them: a
sentence on the topic holds some number nearly always (every quantity question answered wrongly
on nine sets cited a sentence with a digit: docs/evals/refusal-slots.md), and "What is X's
name?" is answered by any capitalized word of a novel's page. A question whose words only
mention a kind ("Does the framework say how much risk to accept?", "How does X decide which
version to use?") asks for none: the kind's words must open the question, or follow an opening
phrase of a few words ("According to the report, what was the price ...").
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

__all__ = ["SLOT_NAMES", "Slot", "asked_slot", "fills_slot"]

#: The kinds of value a question can ask for (:func:`asked_slot`).
Slot = Literal["price", "version", "date"]

#: Each kind as a reader is told it is missing ("none of the closest passages gives a price").
SLOT_NAMES: dict[str, str] = {"price": "a price", "version": "a version", "date": "a date"}

# Where a question's asking words may start: at its beginning, after a short opening phrase
# that ends in a comma ("According to the report, what ..."; not "..., and when ...": a
# question that asks two things is answered by the sentence for either), or after a
# preposition that heads the question ("By how much", "Within what year").
_OPENING = (
    r"(?:^|^[^?,]{1,60},\s*"
    r"|^(?:by|within|until|since|for|from|in|bis|seit|für)\s+)"
)

# A word of the question (a number such as "2.0", a hyphenated or quoted word), lazily.
_WORDS = r"(?:[^\s?,]+\s){0,6}?"
# The noun of a price heads its phrase: "the cost of X", "the price?", not "the cost
# function", "the price elasticity", "the cost-benefit ratio", "the costs and benefits".
_HEADS = r"(?![\w-])(?=\s+(?:of|for|to|per|in|at)\b|\s*[?,.]|\s*$)"
_PRICE_ASKED = re.compile(
    _OPENING
    + r"(?:how much (?:does|did|do|will|would|should|is|was|are|were)\s"
    + _WORDS
    + r"(?:cost|pay|charge)\b(?!\s+in\b)"
    r"|how much (?:\w+\s)?(?:money|funding|funds|fees?|dollars|euros)\b"
    r"|(?:what|which) (?:is|was|are|were) the (?:\w+\s){0,2}?(?:price|prices|cost|costs|fee|fees)"
    + _HEADS
    + r"|what (?:does|did|do|will|would) "
    + _WORDS
    + r"cost\b"
    r"|wie ?viel (?:kostet|kosten|kostete|zahlt|zahlen|bezahlt|verlangt)\b|was kostet\b"
    r"|(?:wie hoch|was) (?:ist|war|sind|waren) (?:der|die) (?:preis|gebühr|gebühren|kosten)"
    + _HEADS
    + ")",
    re.IGNORECASE,
)
_PRICE_ASKED_CJK = re.compile(r"多少钱|价格是?多少|价钱|售价|いくら|値段|価格は")
# "Which version of Unicode", "What is the minimum Perl version", "Which version does the
# package need": not "which version of the story", "version control", "which of the versions".
_VERSION_ASKED = re.compile(
    _OPENING + r"(?:which|what) (?:is |was )?(?:the )?(?:(?:minimum|maximum|required|latest"
    r"|current|oldest|newest|earliest|lowest|highest|first|last) )?(?:(?-i:[A-Z])[\w+.-]* ){0,2}"
    r"versions?(?: number)?(?=\s+of\s+(?:the\s+)?(?-i:[A-Z\\])|\s+(?:does|do|did|is|was|are"
    r"|were|required|needed|supports?|introduced|added)\b|\s*[?,])"
    r"|welche (?:mindest|minimal)?version (?:von (?-i:[A-Z])|wird|ist|braucht|benötigt)\b",
    re.IGNORECASE,
)
# "In which year", "What date is", "On what day did", "When does the exam take place?": not
# "What year of study", "What date format", "When do the steps take place relative to ...".
_THEN = (
    r"(?=\s+(?:is|was|are|were|did|does|do|will|would|has|had|have|can|could|should|must|the"
    r"|this|that|it|they|he|she|we|ist|war|wird|wurde|findet|fand|hat)\b|\s*[?,])"
)
_DATE_ASKED = re.compile(
    _OPENING + r"(?:(?:what|which|in what|in which|on what|on which|at what) (?:year|date|month"
    r"|day|time)" + _THEN + r"|what is the date\b"
    r"|when (?!and\b)(?:\w+ ){1,12}?(?:take|takes|took) place\s*[?,.]"
    r"|(?:in welchem (?:jahr|monat)|an welchem (?:tag|datum)|welches datum|um wie viel uhr)\b"
    r"|wann (?!und\b)(?:\w+ ){1,12}?statt\s*[?,.])",
    re.IGNORECASE,
)
_DATE_ASKED_CJK = re.compile(r"哪一?年(?!级)|哪天|几月几|日期是|いつ")

_CURRENCY = re.compile(
    r"[$€£¥₹]|(?<![A-Za-z])(?:USD|EUR|GBP|JPY|CHF|INR|SEK|NOK|DKK|AUD|CAD|DM|Rs)\b"
    r"|\b(?:dollars?|euros?|cents?|pounds?|guineas?|shillings?|pence|yen|yuan|rmb|francs?"
    r"|franken|marks?|crowns?|kronen?|rupees?|hundred|thousand|million|billion|tausend|millionen?)\b"
    r"|[元円]|块钱|人民币",
    re.IGNORECASE,
)
# An answer that the thing costs nothing fills a price.
_FREE = re.compile(
    r"\b(?:free|no (?:cost|charge|fee)s?|without (?:charge|cost)|costs? nothing|kostenlos"
    r"|kostenfrei|gebührenfrei|kostet nichts|gratis|umsonst)\b|免费|無料",
    re.IGNORECASE,
)
# A version number in any shape ("15.0", "v2", "version 5", "release III", "TeX Live 2023").
# Loose on purpose: a sentence that holds no such thing loses the question, one that holds a
# section number ("1.3 Changes") only lets a passage on the topic through, as before this rule.
# A tighter pattern (a number after a capitalized name or "version") refused a right answer on
# a set nobody had read (docs/evals/refusal-slots.md).
_VERSION = re.compile(
    r"\d+\.\d+|\b[vV]\.?\s?\d|\b(?:version|release|edition|revision|fassung)\s+(?:\d|[IVX]+\b"
    r"|one|two|three|four|five|six|seven|eight|nine|ten)|\b(?:19|20)\d{2}\b"
    r"|\b(?-i:[A-Z])[\w+#.]*[\s-]?\d+|\b(?:first|second|third|fourth|fifth|\d+(?:st|nd|rd|th))"
    r"\s+(?:edition|version|release)\b|版本?\s*\d|\d\s*版|第[一二三四五六七八九十\d]+版",
    re.IGNORECASE,
)
_MONTHS = (
    "january|february|march|april|(?-i:May|Mar)|june|july|august|september|october|november"
    "|december|jan|feb|apr|jun|jul|aug|sep|sept|oct|nov|dec|jänner"
    "|januar|februar|märz|mai|juni|juli|oktober|dezember"
    "|monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    "|montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag"
)
_DATE = re.compile(
    r"\b1[0-9]{3}s?\b|\b20[0-9]{2}s?\b|\b(?:" + _MONTHS + r")\b"
    r"|\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|a|ein|eine|einer|zwei|drei"
    r"|vier|fünf|sechs|zehn)\s*(?:days?|weeks?|months?|years?|hours?|tage?n?|wochen?|monate?n?"
    r"|jahren?|stunden?)\b|\b\d{1,2}(?:st|nd|rd|th)\b|\bcentury\b|jahrhundert"
    r"|\b(?:noon|midnight|morning|evening|afternoon|mittags?|abends?|vormittags?|nachmittags?)\b"
    r"|\b(?:spring|summer|autumn|fall|winter|frühling|sommer|herbst)\b|semester\b|\bWiSe\b"
    r"|\bSoSe\b|vorlesungsende|vorlesungszeit|\b\d{1,2}\s*(?:a\.m\.|p\.m\.)"
    r"|\b\d{1,2}[./-]\d{1,2}(?:[./-]\d{2,4})?\b|\b\d{1,2}:\d{2}\b|\b\d{1,2}\s*(?:am|pm|uhr)\b"
    r"|\d+\s*(?:年|月|日)|[〇零一二三四五六七八九十]+[年月日]",
    re.IGNORECASE,
)


def asked_slot(question: str) -> Slot | None:
    """The kind of value ``question`` asks for (see the module docstring), or None: a price
    ("How much does X cost?", "What was the list price of X?"), a version ("Which version of
    the standard ...?"), a date ("In which year ...?", "When does the exam take place?")."""
    text = unicodedata.normalize("NFKC", question).strip()
    if _PRICE_ASKED.search(text) or _PRICE_ASKED_CJK.search(text):
        return "price"
    if _VERSION_ASKED.search(text):
        return "version"
    if _DATE_ASKED.search(text) or _DATE_ASKED_CJK.search(text):
        return "date"
    return None


def fills_slot(slot: Slot, text: str) -> bool:
    """Whether ``text`` holds a value of the kind ``slot``: an amount of money (or that it is
    free), a version number, a date or time of day."""
    text = unicodedata.normalize("NFKC", text)
    if slot == "price":
        return bool(_CURRENCY.search(text) or _FREE.search(text))
    if slot == "version":
        return bool(_VERSION.search(text))
    return bool(_DATE.search(text))
