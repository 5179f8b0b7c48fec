"""The plain parts of a text that claims are read from: its sentences and clauses, order numbers,
titles, amounts, tracking and RMA numbers, counts of days, refund timelines and refund methods.
"""

import re
from decimal import Decimal, InvalidOperation

from orders.money import currencies_written
from orders.numbers import ORDER_NUMBERS
from orders.patterns import AMOUNT_MENTION_RE, RMA_NUMBER_MENTION_RE, amount_mention_number


def order_number(text: str) -> str | None:
    """The canonical order number of a mention (any case, spacing, with or without the hyphen)."""
    return ORDER_NUMBERS.canonical(text) or next(iter(ORDER_NUMBERS.mentions(text, anywhere=True)), None)


def _amount(value) -> Decimal | None:
    try:
        return Decimal(str(value).replace(",", "")).quantize(Decimal("0.01"))
    except (InvalidOperation, ValueError):
        return None


def _compact(text: str) -> str:
    return re.sub(r"[\s-]", "", text).upper()


# Where a sentence's clauses meet (a comma before a year belongs to its date).
_CLAUSE_SPLIT_RE = re.compile(
    r"[;:\u2014]|,(?=\s)(?!\s\d{4}\b)|\s(?:and|but|so|while|although|though|whereas)\s", re.IGNORECASE
)
# A tracking number: a long run of capitals and digits with at least one digit (not an order or RMA number).
_TRACKING_RE = re.compile(r"\b(?!RMA)(?=[A-Z0-9]*\d)[A-Z0-9]{10,34}\b")
_SENTENCE_RE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)")


def sentences_of(text: str) -> list[str]:
    # A full stop inside a number ($36.98) or after an initial does not end a sentence.
    guarded = re.sub(r"(?<=\d)\.(?=\d)", "\u2024", text)
    return [s.strip().replace("\u2024", ".") for s in _SENTENCE_RE.findall(guarded) if s.strip()]


def _has_title(text: str, title: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(title)}(?!\w)", text, re.IGNORECASE) is not None


def _clause_before(text: str, position: int) -> str:
    before = text[:position]
    breaks = list(_CLAUSE_SPLIT_RE.finditer(before))
    return before[breaks[-1].end() :] if breaks else before


_DAY_COUNT_RE = re.compile(
    r"\b(\d{1,3})(?:\s*(?:to|-|\u2013|or)\s*(\d{1,3}))?(?:\s+business|\s+calendar|\s+working)?[\s-]+days?\b",
    re.IGNORECASE,
)


_BUSINESS_DAYS_RE = re.compile(
    r"\b(\d{1,3})(?:\s*(?:to|-|\u2013|or)\s*(\d{1,3}))?\s+(?:business|working)\s+days?\b", re.IGNORECASE
)


def _business_days(text: str) -> set[int]:
    return {int(n) for match in _BUSINESS_DAYS_RE.finditer(text) for n in match.groups() if n}


def day_counts_in(text: str) -> set[int]:
    """The numbers of days a text states: a 30-day window, 3 to 5 business days."""
    return {int(n) for match in _DAY_COUNT_RE.finditer(text) for n in match.groups() if n}


_REFUND_METHOD_RE = re.compile(
    r"\b(store credit|gift card|gift voucher|voucher|bank transfer|paypal|cash|cheque)\b", re.IGNORECASE
)
_REFUND_RE = re.compile(r"\brefund", re.IGNORECASE)


def refund_methods_in(text: str) -> list[str]:
    """The ways of refunding a sentence about a refund names (store credit, a gift card …)."""
    return [
        match.group(1).casefold()
        for sentence in sentences_of(text)
        if _REFUND_RE.search(sentence)
        for match in _REFUND_METHOD_RE.finditer(sentence)
    ]


def amount_currencies_in(text: str) -> list[tuple[Decimal, frozenset[str]]]:
    """Each amount with the currencies its sign or code may be ("R$ 189.90": BRL; "$5": the dollars')."""
    found = []
    for match in AMOUNT_MENTION_RE.finditer(text):
        number = amount_mention_number(match)
        if (amount := _amount(number)) is not None:
            found.append((amount, currencies_written(match.group(0).replace(number, "", 1))))
    return found


def amounts_in(text: str) -> list[Decimal]:
    return [
        amount
        for match in AMOUNT_MENTION_RE.finditer(text)
        if (amount := _amount(amount_mention_number(match))) is not None
    ]


def tracking_in(text: str) -> list[str]:
    return [
        match.group(0)
        for match in _TRACKING_RE.finditer(text)
        if not RMA_NUMBER_MENTION_RE.fullmatch(match.group(0)) and not ORDER_NUMBERS.canonical(match.group(0))
    ]


def rmas_in(text: str) -> list[str]:
    return [_compact(match.group(0)) for match in RMA_NUMBER_MENTION_RE.finditer(text)]
