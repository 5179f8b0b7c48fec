"""Text patterns, each defined once: the shapes of Bookly's own identifiers (RMA numbers) and what people
write about an order in running text (email addresses, dates, amounts of money), ZIP and postal codes.
The models, the schemas, the assistant's tools and the reply validator read them from here; the store's
order numbers have a module of their own (orders.numbers).
"""

import re

from babel.numbers import list_currencies

# The shapes of Bookly's own identifiers, defined here once (the store's order numbers are the store's:
# orders.numbers). *_PATTERN is the exact shape (model validators, tool arguments and schemas);
# *_MENTION_RE finds one in running text, written the way people and models write it.
RMA_NUMBER_PATTERN = r"^RMA-[A-Z0-9]{8}$"
RMA_NUMBER_MENTION_RE = re.compile(r"\bRMA-?[A-Z0-9]{4,}\b", re.IGNORECASE)
RMA_NUMBER_LENGTH = 12
# A customer's email address in running text (the order's customer_email is an EmailField).
EMAIL_MENTION_RE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# A date as the store writes it (ISO 8601, "2026-04-01"): the shape the shop sends and replies name.
ISO_DATE_PATTERN = r"\d{4}-\d{2}-\d{2}"
ISO_DATE_MENTION_RE = re.compile(rf"\b{ISO_DATE_PATTERN}\b")
# An amount of money in running text, in any currency: after a sign ("$24.99", "R$ 1,200", "€5", "₹899")
# or a code ("USD 24.99"), or before a code ("24.99 BRL"). amount_mention_number reads its number. Codes
# that are English words a shouted reply may put before a number ("ALL 3 books") are left out.
_CURRENCY_CODES = "|".join(sorted(set(list_currencies()) - {"ALL", "TOP"}))
_AMOUNT_NUMBER = r"\d[\d,]*(?:\.\d{1,2})?"
AMOUNT_MENTION_RE = re.compile(
    # A code is a word of its own: never part of an identifier ("RMA-GBP12345", "RMA-7EUR1234").
    rf"(?:[A-Z]{{0,2}}\$|[€£¥₹₩₽₺₪₫₱₦]|(?<![\w-])(?:{_CURRENCY_CODES})(?![A-Za-z]))\s?({_AMOUNT_NUMBER})"
    # The number starts where no digit, comma or point is before it: tried at every digit of "1,1,1…",
    # a run of 4,000 characters would take seconds.
    rf"|(?<![\w,.-])({_AMOUNT_NUMBER})\s?(?:{_CURRENCY_CODES})(?![\w-])"
)


def amount_mention_number(match: re.Match) -> str:
    """The number of an amount AMOUNT_MENTION_RE found ("1,200" of "R$ 1,200")."""
    return match.group(1) or match.group(2)


# A US ZIP code, five digits or ZIP+4 (an address in the United States has one).
ZIP_CODE_PATTERN = r"^[0-9]{5}(?:-[0-9]{4})?$"
# Any other country's postal code: letters, digits, spaces and hyphens ("01310-100", "SW1A 1AA", "110001").
POSTAL_CODE_PATTERN = r"^[A-Z0-9](?:[A-Z0-9 -]{0,14}[A-Z0-9])?$"
