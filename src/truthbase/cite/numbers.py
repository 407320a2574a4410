"""Numbers in claims and quotes: what the number check of :mod:`.support` compares.

"2,048" and "2048" are one number; "42 %", "42%" and "42 percent" are one percentage; number
words ("forty two", "two thousand") equal their digits; the ordinals "third" .. "twentieth" and
"3rd" equal their numbers. A claim's number must be in the quote (a percentage as a percentage,
or as its fraction: 28% and 0.28), or be the difference of two decimals of the quote (a light
inference: 55.7 and 53.9 give 1.8), or a fraction ("a third as many") that is the ratio of two
numbers of the quote (100 and 300); "one" and "zero" are mostly not counts ("one of the",
"zero-shot"). A failure names the claim's number and the quote's nearest ones of its kind.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from decimal import ROUND_FLOOR, Decimal, InvalidOperation

from ..text.vocabulary import QUERY_STOP_WORDS
from .model import Reason

__all__ = [
    "NUMBER_WORDS",
    "ORDINAL_WORDS",
    "TOKEN",
    "number_reasons",
    "number_word_parts",
    "numbers",
    "time_bound_reasons",
]

#: A token of the checks: a word with inner apostrophes, hyphens or periods kept ("can't",
#: "GPT-4", "GV.OC-03", "2,048"), as written (before normalization).
TOKEN = re.compile(r"[^\W_]+(?:['’.,\-][^\W_]+)*")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_PERCENT_AFTER = re.compile(r"\s*(?:%|percent\b|per cent\b|prozent\b)", re.IGNORECASE)

# fmt: off
_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19,
}
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
_ORDINALS = {
    "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9,
    "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14,
    "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19,
    "twentieth": 20,
}
# fmt: on
#: Number words and their values, in counting order (units, tens, scales).
NUMBER_WORDS: dict[str, int] = {**_UNITS, **_TENS, **_SCALES}
#: Ordinal words that count as numbers ("first" and "second" do not: see the module doc).
ORDINAL_WORDS: dict[str, int] = dict(_ORDINALS)


def _canonical(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _parse_digits(raw: str) -> str | None:
    groups = re.split(r"[.,]", raw)
    seps = re.findall(r"[.,]", raw)
    if not seps:
        digits = raw
    elif all(s == "," for s in seps) and all(len(g) == 3 for g in groups[1:]):
        digits = "".join(groups)  # 2,048 / 145,619: thousands
    elif len(seps) == 1:
        digits = groups[0] + "." + groups[1]  # 4.5 and 4,5: a decimal
    elif all(s == "." for s in seps) and all(len(g) == 3 for g in groups[1:]):
        digits = "".join(groups)  # 1.000.000: German thousands
    else:
        return None  # a version, a section number: compared by its parts
    try:
        return _canonical(Decimal(digits))
    except InvalidOperation:
        return None


def number_word_parts(token: str) -> list[str] | None:
    parts = token.casefold().split("-")
    if all(p in _UNITS or p in _TENS or p in _SCALES for p in parts):
        return parts
    return None


def _number_words_value(parts: Sequence[str]) -> int:
    total, current = 0, 0
    for p in parts:
        if p in _SCALES and _SCALES[p] < 1000:
            current = max(current, 1) * _SCALES[p]
        elif p in _SCALES:
            total, current = total + max(current, 1) * _SCALES[p], 0
        else:
            current += _UNITS.get(p, 0) + _TENS.get(p, 0)
    return total + current


def numbers(text: str) -> list[tuple[str, str]]:
    """The numbers of ``text`` as (canonical value, as written); a percentage's value ends in %.

    Digits, number words and their compounds, and the ordinals of the module doc.
    """
    found: list[tuple[str, str]] = []
    tokens = list(TOKEN.finditer(text))
    i = 0
    while i < len(tokens):
        m = tokens[i]
        token = m.group()
        lower = token.casefold()
        last = i
        value: str | None = None
        if _NUMBER.fullmatch(token):
            value = _parse_digits(token)
            if value is None:  # 1.2.3: its parts
                found.extend((_canonical(Decimal(p)), p) for p in re.split(r"[.,]", token))
            elif i + 1 < len(tokens) and tokens[i + 1].group().casefold() in _SCALES:
                value = _canonical(Decimal(value) * _SCALES[tokens[i + 1].group().casefold()])
                last = i + 1  # 4 million
        elif re.fullmatch(r"\d+(?:st|nd|rd|th)", lower):
            value = str(int(lower[:-2]))
        elif lower in _ORDINALS:
            value = str(_ORDINALS[lower])
        elif re.search(r"\d", token):  # GPT-4, GV.OC-03, 2-7B: the digit runs inside
            for part in _NUMBER.findall(token):
                parsed = _parse_digits(part)
                if parsed is not None:
                    found.append((parsed, part))
        elif (parts := number_word_parts(token)) is not None:
            words = list(parts)
            while last + 1 < len(tokens):
                gap = text[tokens[last].end() : tokens[last + 1].start()]
                more = number_word_parts(tokens[last + 1].group())
                if more is None or gap.strip() not in ("", "-"):
                    break
                words += more
                last += 1
            value = str(_number_words_value(words))
        if value is not None:
            end = tokens[last].end()
            if percent := _PERCENT_AFTER.match(text, end):
                value += "%"
                end = percent.end()
            found.append((value, text[m.start() : end]))
        i = last + 1
    return found


#: Number words that are mostly not counts ("one of the", "zero-shot").
_NOT_COUNTS = frozenset({"one", "zero"})


#: Words with which a claim says how it computed a number from two of the quote's: a
#: difference ("15 points lower than"), a sum ("in total"), a ratio ("more than six times"), a
#: complement ("the remaining 81.5%", "never more than 81.5%"). Whole numbers need them: 1 + 4
#: makes any "5" a sum; a bound ("fewer than 15") or a unit ("85 points") says nothing.
_DIFFERENCE = re.compile(
    r"\b(?:difference|gap|differ|(?:higher|lower|larger|smaller|greater|bigger) than|"
    r"points? (?:higher|lower|more|less|fewer|ahead|behind|better|worse)|"
    r"differenz|unterschied|prozentpunkte?|(?:höher|niedriger|größer|kleiner) als)\b",
    re.IGNORECASE,
)
_TOTAL = re.compile(
    r"\b(?:in total|total|combined|together|altogether|sum|insgesamt|zusammen|summe)\b",
    re.IGNORECASE,
)
_TIMES = re.compile(r"\b(?:times|mal)\b", re.IGNORECASE)
_REST = re.compile(
    r"\b(?:remaining|rest|remainder|others?|not|never|non|übrigen|restlichen|nicht|nie)\b",
    re.IGNORECASE,
)
#: More numbers than this in a quote (a table) and no pair of them is tried.
_PAIRS_UP_TO = 40


def _whole(number: Decimal) -> bool:
    return number == number.to_integral_value()


#: Letters of a unit compared when a number the quote gives twice is summed ("layer" of "layers").
PREFIX_LETTERS = 5
#: Characters before and after a claim's number in which its wording says how it was computed.
_WORDING_BEFORE, _WORDING_AFTER = 30, 45


def _written_at(text: str, written: str) -> Iterator[re.Match[str]]:
    """Where ``text`` has the number as ``written``, as a whole ("5" not inside "2015")."""
    return re.finditer(rf"(?<![\d.,]){re.escape(written)}(?![\d])", text)


def _around(claim: str, written: str) -> str:
    """The claim's text around the number as ``written`` ("15 points lower than"), the number
    as a whole ("5" not inside "2015")."""
    found = next(_written_at(claim, written), None)
    if found is None:
        return claim
    return claim[max(0, found.start() - _WORDING_BEFORE) : found.end() + _WORDING_AFTER]


def _unit(text: str, written: str) -> str:
    """The unit after a number of ``text`` as ``written`` ("GB" of "320GB", "320 GB"), or
    ""."""
    found = re.search(rf"(?<![\d.,]){re.escape(written)}\s*([^\W\d_]+)", text)
    return found.group(1) if found else ""


def _derived(
    value: str, have: set[str], wording: str = "", unit: str = "", quote: str = ""
) -> bool:
    """``value`` is a light inference from the quote's numbers ``have`` (percentages end in
    %): the difference of two where one is a decimal ("55.7% vs 53.9%" gives "1.8 points"; "7"
    and "6.7" give "0.3"); where ``wording`` (the claim around the number) says so, the
    complement of a decimal percentage ("never more than 81.5%" for "at least 18.5%"), a
    difference, a sum (of two numbers, or of one the quote gives twice), a product in the unit
    of a quote's number ("320GB in total" for four of "80GB"; ``unit`` is the claim's), or a
    ratio rounded down ("more than six times")."""
    try:
        wanted = Decimal(value.rstrip("%"))
        known = [(Decimal(v.rstrip("%")), v.endswith("%")) for v in have]
    except InvalidOperation:
        return False
    percent = value.endswith("%")
    if (
        percent
        and _REST.search(wording)
        and any(pct and 0 < k < 100 and not _whole(k) and wanted == 100 - k for k, pct in known)
    ):
        return True
    if len(known) > _PAIRS_UP_TO:
        return False
    numbers_only = [k for k, _ in known]
    pairs = [(a, b) for i, a in enumerate(numbers_only) for b in numbers_only[i + 1 :]]
    # a number the quote gives twice sums with itself ("4 of them ... the other 4": 8)
    pairs += [(a, a) for a in numbers_only if _twice(a, quote, unit)]
    differ = bool(_DIFFERENCE.search(wording))
    total = bool(_TOTAL.search(wording))
    times = bool(_TIMES.search(wording))
    in_unit = bool(unit) and re.search(rf"\d\s*{re.escape(unit)}\b", quote) is not None
    for a, b in pairs:
        low, high = sorted((a, b))
        if wanted == high - low and (differ or not (_whole(a) and _whole(b))):
            return True
        if total and (wanted == a + b or (in_unit and wanted == a * b)):
            return True
        if (
            times
            and low > 0
            and wanted > 1
            and wanted == (high / low).to_integral_value(rounding=ROUND_FLOOR)
        ):
            return True
    return False


def _twice(number: Decimal, quote: str, unit: str = "") -> bool:
    """``number`` is given at least twice in ``quote``, not as a label ("Table 2"), and where
    the claim's sum has a unit of content ("12 layers"), each time with that unit ("6 layers
    with 6 attention heads" gives no 12 layers)."""
    try:
        written = [w for v, w in numbers(quote) if Decimal(v.rstrip("%")) == number]
    except InvalidOperation:
        return False
    places = [
        m
        for w in dict.fromkeys(written)
        for m in _written_at(quote, w)
        if not _LABEL.search(quote[: m.start()])
    ]
    if len(places) < 2:
        return False
    if not unit or unit.casefold() in QUERY_STOP_WORDS:
        return True
    stem = unit.casefold()[:PREFIX_LETTERS]
    return all(quote[m.end() :].lstrip().casefold().startswith(stem) for m in places)


_ITEM = r"[^\W\d_][\w\-]*(?:\s+[^\W\d_][\w\-]*){0,2}"
#: A list: items of one to three words, separated by commas, the last after "and" or "or".
_LIST = re.compile(rf"{_ITEM}(?:,\s*{_ITEM})*,?\s+(?:and|or|und|oder|sowie)\s+{_ITEM}")
#: The comma before a list's "and" ("A, B, and C": one comma less than items, not two).
_SERIAL_COMMA = re.compile(r",\s*(?:and|or|und|oder|sowie)\s")


def list_counts(text: str) -> set[int]:
    """How many items the lists of ``text`` have, each and all together: "financial, privacy,
    supply chain, reputational, technological, or physical" has six ("names six kinds of risk"
    is a count, not a number the page must give)."""
    counts = [
        found.group().count(",") + (1 if _SERIAL_COMMA.search(found.group()) else 2)
        for found in _LIST.finditer(text)
    ]
    return set(counts) | ({sum(counts)} if len(counts) > 1 else set())


def _counted(value: str, quote: str) -> bool:
    """``value`` counts the items of a list of the quote (:func:`list_counts`)."""
    return value.isdigit() and int(value) in list_counts(quote)


def _nearest_numbers(value: str, found: Sequence[tuple[str, str]]) -> list[str]:
    """The quote's numbers (as written) a reader compares ``value`` with: those of its kind
    (percentage or not), nearest in value first, two at most."""
    same = [(v, w) for v, w in found if v.endswith("%") == value.endswith("%")] or list(found)
    try:
        wanted = Decimal(value.rstrip("%"))
        same.sort(key=lambda vw: abs(Decimal(vw[0].rstrip("%")) - wanted))
    except InvalidOperation:
        pass
    return list(dict.fromkeys(w for _, w in same))[:2]


#: Words before a number that make it a label ("Table 2", "Fig. 4", "Abschnitt 3"): a name of a
#: part of the document, found where the page names it, not a quantity the quote must give.
_LABEL_WORD = (
    r"(?:table|tab|figure|fig|section|sec|appendix|chapter|eq|equation|tabelle|abbildung|abb|"
    r"abschnitt|kapitel|satz|lemma|definition|theorem|bemerkung|proposition|prop|corollary|"
    r"korollar|folgerung|remark|algorithm|algorithmus)\.?"
)
_LABEL = re.compile(rf"(?<![^\W_]){_LABEL_WORD}\s*$", re.IGNORECASE)


def _label_on_page(claim: str, written: str, page: str) -> bool:
    """``written`` follows a label word in the claim and a label word on the page."""
    number = rf"{re.escape(written)}(?![\d.,]\d)"
    for found in re.finditer(rf"(?<![\d.,]){number}", claim):
        if _LABEL.search(claim[: found.start()]):
            found_on_page = re.search(rf"(?<![^\W_]){_LABEL_WORD}\s*{number}", page, re.IGNORECASE)
            return found_on_page is not None
    return False


def _in_name(claim: str, written: str, document: str) -> bool:
    """``written`` is part of the cited document's name as the claim writes it: "CSF 2.0" for
    "The NIST Cybersecurity Framework (CSF) 2.0" (the name before it, capitalized, then the
    number)."""
    if not document:
        return False
    number = rf"{re.escape(written)}(?![\d.,]\d)"
    for found in re.finditer(rf"([^\W\d_][\w\-]*)\)?\s+{number}", claim):
        word = found.group(1)
        if word.casefold() in QUERY_STOP_WORDS or word.islower():
            continue  # "in 2023": a name comes before a version, not a function word
        named = rf"\b{re.escape(word)}\)?\s+{number}"
        if re.search(named, document, re.IGNORECASE):
            return True
    return False


def number_reasons(claim: str, quote: str, context: str = "", document: str = "") -> list[Reason]:
    """Numbers of the claim the quote does not give (the module doc of :mod:`.support`); a
    label's number ("Table 2") may be in the context, and the number of the cited document's
    name ("CSF 2.0") in its name."""
    found = numbers(quote)
    have = {v for v, _ in found}
    plain = {v.rstrip("%") for v in have}
    reasons: list[Reason] = []
    seen: set[str] = set()
    for value, written in numbers(claim):
        if value in seen or written.casefold() in _NOT_COUNTS:
            continue
        seen.add(value)
        if _label_on_page(claim, written, f"{quote}\n{context}") or _in_name(
            claim, written, document
        ):
            continue
        missing = value not in have if value.endswith("%") else value not in plain
        rival = None
        if missing and value.endswith("%"):
            missing = _canonical(Decimal(value[:-1]) / 100) not in plain  # 28% and 0.28
            rival = None if missing else _rival_percentage(claim, written, quote, found)
        if rival is not None:
            reasons.append(
                Reason(
                    "number_missing",
                    f'the quote gives "{rival}" for what the claim gives "{written}"',
                    claim_says=written,
                    page_says=rival,
                )
            )
        elif (
            missing
            and not _derived(value, have, _around(claim, written), _unit(claim, written), quote)
            and not _fraction_of(claim, written, plain, quote)
            and not _counted(value, quote)
        ):
            page = ", ".join(_nearest_numbers(value, found))
            reasons.append(
                Reason(
                    "number_missing",
                    f'"{written}" is not in the quote',
                    claim_says=written,
                    page_says=page,
                )
            )
    return reasons


def _word_after(text: str, written: str) -> str | None:
    found = re.search(rf"(?<![\d.,]){re.escape(written)}(?:\s*%|\s+percent)?\s+([^\W\d_]+)", text)
    return found.group(1).casefold() if found else None


def _rival_percentage(
    claim: str, written: str, quote: str, found: Sequence[tuple[str, str]]
) -> str | None:
    """A percentage of the quote about the word the claim's percentage is about, when the
    claim's only matches the quote as a fraction ("a 28% compression rate" where the quote has
    "0.28" and "a 72% compression rate")."""
    about = _word_after(claim, written)
    if about is None:
        return None
    for value, theirs in found:
        if value.endswith("%") and _word_after(quote, theirs) == about:
            return theirs
    return None


#: Plural fraction words after a numerator ("three quarters", "two thirds") and their
#: denominators.
_PARTS = {
    "halves": 2, "thirds": 3, "quarters": 4, "fourths": 4, "fifths": 5, "sixths": 6,
    "sevenths": 7, "eighths": 8, "ninths": 9, "tenths": 10,
}  # fmt: skip


def _fraction_of(claim: str, written: str, have: set[str], quote: str = "") -> bool:
    """``written`` is a fraction of the claim ("a third as many", "one fifth of", "three
    quarters of") that is the ratio of two numbers of the quote (100 and 300; 36 of 48): a
    light inference, as a difference is. "Three quarters" needs the part to count what the
    claim counts: "30 machines" is no part of "the 40 runs"."""
    try:
        known = [Decimal(v.rstrip("%")) for v in have]
    except InvalidOperation:
        return False
    parts = re.search(
        rf"(?<![\w.,]){re.escape(written)}[\s-]+({'|'.join(_PARTS)})\b", claim, re.IGNORECASE
    )
    if parts is not None:  # "three quarters": the numerator is the number written
        numerator = NUMBER_WORDS.get(written.casefold()) or _small(written)
        if numerator is None:
            return False
        denominator = _PARTS[parts.group(1).casefold()]
        if numerator >= denominator:
            return False  # "three thirds", "two halves": no part of a whole
        share = Decimal(numerator) / Decimal(denominator)
        return any(
            b != 0 and a == b * share and _counts_the_claims(a, quote, claim)
            for a in known
            for b in known
        )
    if written.casefold() not in _ORDINALS:
        return False
    if not re.search(rf"\b(?:a|one)\s+{re.escape(written)}\b", claim, re.IGNORECASE):
        return False
    wanted = Decimal(_ORDINALS[written.casefold()])
    return any(a != 0 and b == a * wanted for a in known for b in known)


def _counts_the_claims(number: Decimal, quote: str, claim: str) -> bool:
    """The quote's ``number`` is followed by a word the claim has, or by none of content ("36
    tables were consistent" for a claim about tables; not "30 machines")."""
    said = claim.casefold()
    for value, text in numbers(quote):
        if Decimal(value.rstrip("%")) != number:
            continue
        follows = (re.match(r"\s*([^\W\d_]+)", quote[m.end() :]) for m in _written_at(quote, text))
        after = next((f for f in follows if f is not None), None)  # the first with a word after
        word = after.group(1).casefold() if after else ""
        if not word or word in QUERY_STOP_WORDS or word[:PREFIX_LETTERS] in said:
            return True
    return False


def _small(written: str) -> int | None:
    """A numerator written in digits ("3 quarters"), else None."""
    return int(written) if written.isdigit() and 0 < int(written) < 10 else None


#: Words before a number that bound a time by it ("before version 2.0", "until 2019").
_TIME_BOUND = re.compile(
    r"\b(?:before|prior to|until|till|up to|after|since|earlier than|later than|vor|nach|bis|"
    r"seit)\s+(?:(?:the|version|release|v)\s+)*(?P<number>\d+(?:[.,]\d+)*)\b"
)
#: Words with which a claim keeps a time bound: right before the number ("by 2028", "prior to
#: the 2.0 release") or, for the adverbs of a former state, anywhere ("no longer", "formerly").
_TIME_BEFORE = re.compile(
    r"\b(?:before|prior|until|till|after|since|by|earlier|later|latest|from|vor|nach|bis|seit|"
    r"ab)\b(?:\W+\w+){0,3}\W+$"
)
_FORMER = re.compile(
    r"\b(?:formerly|previously|originally|no longer|used to|former|earlier|früher|ehemals|"
    r"nicht mehr)\b"
)


def time_bound_reasons(claim: str, quote: str) -> list[Reason]:
    """A number the quote bounds a time by ("Before version 2.0, it was called X") that the
    claim states with no word of time at all ("CSF 2.0 keeps the name X"): the claim moves what
    held before (or after) that point onto it (``time_dropped``)."""
    bounded = _TIME_BOUND.search(quote.casefold())
    if bounded is None:
        return []
    number = bounded.group("number")
    claim_norm = claim.casefold()
    said = re.search(rf"(?<![\d.,]){re.escape(number)}(?![\d])", claim_norm)
    if said is None or _FORMER.search(claim_norm):
        return []
    if _TIME_BEFORE.search(claim_norm[: said.start()]):
        return []
    return [
        Reason(
            "time_dropped",
            f'the quote says "{bounded.group()}", the claim states it without a time',
            claim_says=number,
            page_says=bounded.group(),
        )
    ]
