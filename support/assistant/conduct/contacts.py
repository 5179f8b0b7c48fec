"""Links, email addresses and phone numbers: a reply gives only the values this turn's tools gave (an
email also where a tool call of this turn was given it and found the order).
"""

import json
import re

from orders.numbers import ORDER_NUMBERS
from orders.patterns import AMOUNT_MENTION_RE, EMAIL_MENTION_RE, RMA_NUMBER_MENTION_RE
from support.assistant.claims import ToolResult, dates_removed
from support.assistant.conduct.normalise import _alnum, _lower, normalised

_URL_RE = re.compile(r"\b(?:https?://|www\.)[^\s<>\"']+", re.IGNORECASE)
# A domain of any ending: labels and a top-level label of letters (not "e.g.", "36.98" or "No. 5").
_DOMAIN_RE = re.compile(
    r"(?<![\w@.-])(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z]{2,24}|xn--[a-z0-9-]{2,59})(?![\w-])",
    re.IGNORECASE,
)

# A bare IPv4 address ("45.33.2.1/refund"): a link with no domain to read.
_IPV4_RE = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)")

_KEYPAD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "22233344455566677778889999")
_NUMBER_WORDS = {
    "zero": "0",
    "oh": "0",
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "hundred": "00",
    "thousand": "000",
}
_NUMBER_WORD_RE = re.compile(r"\b(?:(double|triple)\s+)?(" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)
# Digits with anything but letters and line breaks between them: any run of up to 5 other characters is
# a separator ("555 - 010 - 0199", "555_010_0199", "555|010|0199", "555\u00b7010\u00b70199").
_PHONE_RE = re.compile(r"(?<![\w$.,-])\+?\(?\d(?:(?:[^\w\n]|_){0,5}\d){6,14}(?![\w-])")
# A vanity number: groups of digits and letters (any case) joined by dashes or dots, "1-800-Bookly-1".
_VANITY_RE = re.compile(r"(?<![\w-])\+?(?=[A-Za-z0-9.-]*\d)[A-Za-z0-9]+(?:[-.][A-Za-z0-9]+)+(?![\w-])")
# A time of day, "9:00-17:00", "14:05": not a phone, as no date is one (claims.dates_removed).
_TIME_RE = re.compile(r"(?<![\d:])\d{1,2}:\d{2}(?![\d:])")
_ISBN_RE = re.compile(r"^97[89]\d{10}$")  # a book's number, which customers quote


def _number_words_as_digits(text: str) -> str:
    def digits(match: re.Match) -> str:
        times = {"double": 2, "triple": 3}.get(_lower(match.group(1) or ""), 1)
        return _NUMBER_WORDS[_lower(match.group(2))] * times

    return _NUMBER_WORD_RE.sub(digits, text)


def _links(reply: str, grounded: str) -> bool:
    without_emails = EMAIL_MENTION_RE.sub(" ", reply)
    links = [match.group(0).rstrip(".,;:!?)") for match in _URL_RE.finditer(without_emails)]
    bare = _URL_RE.sub(" ", without_emails)
    links += [match.group(0) for pattern in (_DOMAIN_RE, _IPV4_RE) for match in pattern.finditer(bare)]
    return any(_lower(link) not in grounded for link in links)


def _emails(reply: str, grounded: str, vouched: frozenset[str]) -> bool:
    return any(
        _lower(match.group(0)) not in grounded and _lower(match.group(0)) not in vouched
        for match in EMAIL_MENTION_RE.finditer(reply)
    )


def emails_vouched_for(results: list[ToolResult]) -> frozenset[str]:
    """The emails a tool call of this turn passed as `customer_email` and that found the order: every
    tool taking one answers only when it is the order's own email, so the tool vouches for it. One that
    found nothing vouches for nothing (an injected model could call a tool with any address first)."""
    vouched = set()
    for result in results:
        email = result.arguments.get("customer_email")
        if not isinstance(email, str):
            continue
        try:
            content = json.loads(result.content)
        except ValueError:
            continue
        if isinstance(content, dict) and "error" not in content and content.get("order_id"):
            vouched.add(_lower(normalised(email.strip())))
    return frozenset(vouched)


def _phones(reply: str, grounding: str) -> bool:
    """A run of 7 to 15 digits (letters read as a keypad's, numbers in words as digits) that this
    turn's tools did not give; order numbers, RMA numbers, dates and amounts are read first."""
    known = _alnum(grounding)
    text = dates_removed(RMA_NUMBER_MENTION_RE.sub(" ", reply))
    text = _TIME_RE.sub(" ", AMOUNT_MENTION_RE.sub(" ", text))
    text = ORDER_NUMBERS.look_alike_re.sub(" ", EMAIL_MENTION_RE.sub(" ", text))
    for match in _VANITY_RE.finditer(text):
        value = _alnum(match.group(0))
        if 7 <= len(value) <= 15 and re.search("[a-z]", value) and value not in known:
            digits = value.upper().translate(_KEYPAD)
            if digits not in known and sum(c.isdigit() for c in value) >= 3:
                return True
    for match in _PHONE_RE.finditer(_number_words_as_digits(text)):
        digits = re.sub(r"\D", "", match.group(0))
        if not 7 <= len(digits) <= 15 or _ISBN_RE.match(digits):
            continue
        if digits not in known:
            return True
    return False
