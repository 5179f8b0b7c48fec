"""Text a person wrote (a customer or staff), cleaned the same way wherever it is stored or shown.

Control characters and Unicode format characters go: among them the bidi
overrides and isolates (U+202A to U+202E, U+2066 to U+2069) that make
`bob@exa\\u202emple.com` display as "bob@examoc.elpm" on a staff page, and the
zero-width characters that hide text. A single-line field keeps no line
break either: a reason with newlines once forged lines of the support email.
"""

import re
import unicodedata

# Format characters that join letters in scripts and emoji: harmless, and needed to write them.
_JOINERS = frozenset("\u200c\u200d")
_LINE_BREAKS_RE = re.compile(r"\r\n?|[\u0085\u2028\u2029\x0b\x0c]")
_SPACES_RE = re.compile(r"\s+")


def _is_unseen(char: str) -> bool:
    return unicodedata.category(char) in ("Cc", "Cf", "Cs") and char not in _JOINERS


def text_has_unseen(value: str) -> bool:
    """Whether the text holds a control or format character (a line break or tab counts)."""
    return any(_is_unseen(char) for char in value)


def text_multi_line(value: str) -> str:
    """Lines of text: NFC, line breaks as \\n, tabs kept, no other control or format character,
    trimmed."""
    value = _LINE_BREAKS_RE.sub("\n", unicodedata.normalize("NFC", value))
    return "".join(char for char in value if char in "\n\t" or not _is_unseen(char)).strip()


def text_single_line(value: str) -> str:
    """One line of text: as text_multi_line, with every run of white space (line breaks included)
    made one space."""
    return _SPACES_RE.sub(" ", text_multi_line(value)).strip()


# A payment card's number as people type it: 13 to 19 digits, in groups or not (spaces, hyphens, dots,
# underscores; not slashes, which dates run together with: "12/29/2026 12/30/2026").
_CARD_NUMBER_RE = re.compile(r"(?<![\d._-])\d(?:[ ._-]?\d){12,18}(?!\d)")
# What goes with a card or a login, its word first: "cvv 123", "exp 12/29", "password is hunter2".
_CARD_DETAIL_RE = re.compile(
    r"\b(?P<word>cvv2?|cvc2?|cid|security code|card code|exp(?:iry|iration)?(?: date)?|expires|valid thru)"
    r"(?P<gap>\W{0,3}(?:is\W{0,3})?)(?P<value>\d{1,4}(?:\s?[/.-]\s?\d{2,4})?)\b",
    re.IGNORECASE,
)
# A password given as one ("password: x", "my password is x"), never "a password reset"; a PIN or a
# one-time code, in digits.
_SECRET_RE = re.compile(
    r"\b(?P<word>pass(?:word|phrase)|pwd)(?P<gap>\s*[:=]\s*|\s+(?:is|was)\s+)(?P<value>\S+)"
    r"|\b(?P<code>pin|passcode|one[- ]time (?:code|password)|otp|verification code"
    r"|(?:security|login|sign[- ]in) code)(?P<code_gap>\W{0,3}(?:is\W{0,3})?)\d{3,10}\b",
    re.IGNORECASE,
)


def _luhn(digits: str) -> bool:
    total = 0
    for position, digit in enumerate(int(char) for char in reversed(digits)):
        if position % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def text_secrets_masked(value: str) -> str:
    """The text with what must never leave the chat masked: payment card numbers (those that pass the
    Luhn check, however grouped), a card's security code and expiry named as such, and passwords, PINs
    and one-time codes given after their word. Kept: the words around them, and other numbers (an order
    number, a phone number, a ZIP code)."""

    def card(found: re.Match) -> str:
        digits = re.sub(r"\D", "", found.group())
        isbn = len(digits) == 13 and digits.startswith(("978", "979"))  # a book's number, at a bookshop
        return "[card number]" if _luhn(digits) and not isbn else found.group()

    def secret(found: re.Match) -> str:
        if found["word"]:
            return f"{found['word']}{found['gap']}[hidden]"
        return f"{found['code']}{found['code_gap']}[hidden]"

    value = _CARD_NUMBER_RE.sub(card, value)
    value = _CARD_DETAIL_RE.sub(lambda found: f"{found['word']}{found['gap']}[hidden]", value)
    return _SECRET_RE.sub(secret, value)
