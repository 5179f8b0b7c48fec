"""Dates in a text: ISO, written out ("March 30, 2026", "30th of March") and in figures
("3/30/2026"), each with what the words before it say it is (a delivery or an order date).
"""

import re
from datetime import date

from orders.patterns import ISO_DATE_MENTION_RE


def _iso_date(value) -> date | None:
    found = ISO_DATE_MENTION_RE.fullmatch(str(value))
    return _date(*found.group(0).split("-")) if found else None


def _date(year, month, day) -> date | None:
    try:
        return date(int(year), int(month), int(day))
    except ValueError:
        return None


_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(\d{4}))?"
_WRITTEN_DATE_RES = (
    (re.compile(rf"\b{_MONTH}\s+{_DAY}\b{_YEAR}", re.I), ("month", "day", "year")),
    (re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}{_YEAR}\b", re.I), ("day", "month", "year")),
)
# Dates in figures as people write them: 3/30/2026 (the US store's month first; a first number over 12
# can only be the day), 30.03.2026 (day first) and 2026/03/30. As ISO dates, they are read as claims.
_NUMERIC_DATE_RES = (
    (re.compile(r"(?<![\w/.])(\d{1,2})/(\d{1,2})/(\d{4})(?![\w/])"), ("month", "day", "year")),
    (re.compile(r"(?<![\w/.])(\d{1,2})\.(\d{1,2})\.(\d{4})(?![\w.]\d)"), ("day", "month", "year")),
    (re.compile(r"(?<![\w/.])(\d{4})/(\d{1,2})/(\d{1,2})(?![\w/])"), ("year", "month", "day")),
)
# Any date in figures, with dashes too ("03-30-2026", "2026.03.30"), besides those read as claims: not
# one the reply is held to, but its digits are no phone number either (dates_removed).
_ANY_NUMERIC_DATE_RE = re.compile(
    r"(?<![\w./-])(?:(?:0?[1-9]|[12]\d|3[01])([/.-])(?:0?[1-9]|[12]\d|3[01])\1(?:19|20)\d{2}|"
    r"(?:19|20)\d{2}([/.])(?:0?[1-9]|1[0-2])\2(?:0?[1-9]|[12]\d|3[01]))(?![\w/-]|\.\d)"
)


def written_dates(text: str) -> list[tuple[int, int, int | None]]:
    """(month, day, year or None) of every date in the text: ISO, written out, or in figures (3/30/2026)."""
    return [found for found, _ in _dates_with_roles(text)]


def dates_removed(text: str) -> str:
    """The text with every date `written_dates` reads (ISO, written out, in figures) and any other date
    in figures ("03-30-2026") made a space: a date's digits are no phone number."""
    for pattern in (
        _ANY_NUMERIC_DATE_RE,
        ISO_DATE_MENTION_RE,
        *(p for p, _ in _WRITTEN_DATE_RES),
        *(p for p, _ in _NUMERIC_DATE_RES),
    ):
        text = pattern.sub(" ", text)
    return text


# What a date is said to be, from the words just before it.
_DATE_ROLES = (
    (
        "delivered_on",
        re.compile(
            r"\b(?:delivered|arrived|dropped off|reached you)\W+(?:on\W+)?(?:\w+day,?\s+)?(?:the\s+)?$", re.I
        ),
    ),
    (
        "ordered_on",
        re.compile(
            r"\b(?:ordered|placed|bought|purchased)(?:\s+(?:it|them))?\W+(?:on\W+)?(?:\w+day,?\s+)?(?:the\s+)?$",
            re.I,
        ),
    ),
)


def _dates_with_roles(text: str) -> list[tuple[tuple[int, int, int | None], str | None]]:
    """Each date in the text, with what the text says it is (delivered_on, ordered_on) if it says."""
    found: list[tuple[tuple[int, int, int | None], int]] = []
    for match in ISO_DATE_MENTION_RE.finditer(text):
        year, month, day = (int(part) for part in match.group(0).split("-"))
        found.append(((month, day, year), match.start()))
    for pattern, order in _WRITTEN_DATE_RES:
        for match in pattern.finditer(text):
            parts = dict(zip(order, match.groups(), strict=True))
            day = int(parts["day"])
            if 1 <= day <= 31:
                month = _MONTHS[parts["month"].casefold().rstrip(".")]
                found.append(((month, day, int(parts["year"] or 0) or None), match.start()))
    for pattern, order in _NUMERIC_DATE_RES:
        for match in pattern.finditer(text):
            numbers = {name: int(value) for name, value in zip(order, match.groups(), strict=True)}
            if numbers["month"] > 12 and order[0] == "month":
                numbers["month"], numbers["day"] = numbers["day"], numbers["month"]
            if 1 <= numbers["month"] <= 12 and 1 <= numbers["day"] <= 31:
                found.append(((numbers["month"], numbers["day"], numbers["year"]), match.start()))
    return [
        (
            when,
            next((role for role, pattern in _DATE_ROLES if pattern.search(text[max(0, at - 40) : at])), None),
        )
        for when, at in found
    ]


def _date_known(found: tuple[int, int, int | None], dates: set[date]) -> bool:
    month, day, year = found
    return any(d.month == month and d.day == day and (year is None or d.year == year) for d in dates)
