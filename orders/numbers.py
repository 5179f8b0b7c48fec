"""The store's order numbers. Their shape is the store's own (`#1001`, `100-2345678`, `WEB-88812`; the
demo's is `BK-` and 4 to 6 digits): BOOKLY_ORDER_NUMBER_PATTERN, checked with its example when the
settings load. Every place that reads, checks or writes an order number goes through ORDER_NUMBERS, so
the shape is defined once: the model's validator, the intake, the tools and their schemas, the reply
validator, the built-in model and the prompts' example.
"""

import re
from dataclasses import dataclass, field

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.deconstruct import deconstructible

# The longest order number Order.number holds.
MAX_LENGTH = 32


def _hyphen_parts(pattern: str) -> list[str]:
    """The pattern cut at its literal hyphens outside classes and groups ("BK-[0-9]{4,6}" → "BK",
    "[0-9]{4,6}"); the whole pattern when it has a top-level alternative, which a cut would break."""
    parts, start, depth, in_class, index = [], 0, 0, False, 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            index += 1 + (pattern[index + 1 : index + 2] == "^")
            index += pattern[index : index + 1] == "]"  # "[]…]" and "[^]…]": that first "]" is a member
            continue
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            return [pattern]
        elif char == "-" and depth == 0:
            parts.append(pattern[start:index])
            start = index + 1
        index += 1
    parts.append(pattern[start:])
    return parts


def _separator(before: str) -> str:
    """Between two parts as people type them: after letters ("BK", "WEB") the hyphen may be left out or
    spaced; between digits it stays (else any run of digits, a phone number, would read as an order's)."""
    return r"\s*-?\s*" if re.fullmatch(r"[A-Za-z#]+", before) else r"\s*-\s*"


@dataclass(frozen=True)
class OrderNumbering:
    """One store's order-number shape: the exact form stored and checked, and the loose forms people
    type ("bk 10042", "BK10042") that mean the same number."""

    pattern: str
    example: str
    exact: re.Pattern = field(init=False, repr=False)
    mention_re: re.Pattern = field(init=False, repr=False)
    # The loose form without groups, to embed in a larger expression ("shipped" said of an order).
    mention_pattern: str = field(init=False, repr=False)
    _parts: int = field(init=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "exact", re.compile(self.pattern))
        try:
            parts = _hyphen_parts(self.pattern)
            named = unnamed = ""
            for index, part in enumerate(parts):
                between = _separator(parts[index - 1]) if index else ""
                named += f"{between}(?P<p{index}>{part})"
                unnamed += f"{between}(?:{part})"
            loose = re.compile(rf"(?<![\w-]){named}(?![\w-])", re.IGNORECASE)
        except (re.error, IndexError):  # a hyphen the cut misread (e.g. "-?"): the exact shape, any case
            parts, unnamed = [], f"(?:{self.pattern})"
            loose = re.compile(rf"(?<![\w-]){unnamed}(?![\w-])", re.IGNORECASE)
        object.__setattr__(self, "mention_re", loose)
        object.__setattr__(self, "mention_pattern", rf"(?<![\w-]){unnamed}(?![\w-])")
        object.__setattr__(self, "_parts", len(parts))

    @property
    def prefix(self) -> str:
        """What the example has before its first digit ("BK-", "#", or nothing for "100-2345678"): what
        customers are told a number starts with. The example itself is never shown to them: it may be a
        real order's number, which a reply may only name from a tool's result."""
        return re.match(r"\D*", self.example).group()

    @property
    def look_alike_re(self) -> re.Pattern:
        """What reads as an order number even when it is not one of the store's shape ("BK-123",
        "BK-1234567"): the prefix and digits, or the shape itself when numbers have no prefix. What a
        reply may not name unless a tool's result did."""
        letters = self.prefix.rstrip("- ")
        if not letters:
            return self.mention_re
        return re.compile(rf"(?<![\w-]){re.escape(letters)}\s*-?\s*\d+", re.IGNORECASE)

    def starts_with(self, template: str, otherwise: str) -> str:
        """`template` with {prefix} filled in when numbers have one, else `otherwise`."""
        return template.format(prefix=self.prefix) if self.prefix else otherwise

    @property
    def json_schema_pattern(self) -> str:
        """The exact shape for a JSON Schema `pattern`, which matches anywhere unless anchored."""
        return f"^(?:{self.pattern})$"

    def _canonical(self, match: re.Match) -> str | None:
        parts = [match.group(f"p{index}") for index in range(self._parts)]
        number = "-".join(parts) if parts else match.group(0)
        for form in (number, number.upper(), number.lower()):
            if len(form) <= MAX_LENGTH and self.exact.fullmatch(form):
                return form
        return None

    def canonical(self, text: str) -> str | None:
        """The number as the store writes it, when `text` is one number written any way; else None."""
        match = self.mention_re.fullmatch(text.strip())
        return self._canonical(match) if match else None

    def key(self, text: str) -> str:
        """The number as the store writes it, or the text as given when it is not one (to be refused)."""
        return self.canonical(text) or text.strip()

    def mentions(self, text: str) -> list[str]:
        """The numbers written in running text, as the store writes them, in order."""
        found = (self._canonical(match) for match in self.mention_re.finditer(text))
        return [number for number in found if number]

    def last_mention(self, text: str) -> str | None:
        numbers = self.mentions(text)
        return numbers[-1] if numbers else None

    def replace(self, replacement: str, text: str) -> str:
        """`text` with every number in it replaced (for redaction and for reading the words around it)."""
        return self.mention_re.sub(replacement, text)


ORDER_NUMBERS = OrderNumbering(settings.BOOKLY_ORDER_NUMBER_PATTERN, settings.BOOKLY_ORDER_NUMBER_EXAMPLE)


@deconstructible
class OrderNumberValidator:
    """Order.number's shape, read from the setting when it runs (so migrations hold no shape)."""

    def __call__(self, value: str) -> None:
        if not ORDER_NUMBERS.exact.fullmatch(value or ""):
            raise ValidationError(
                "Use the store's order number shape, like %(example)s.",
                code="invalid",
                params={"example": ORDER_NUMBERS.example},
            )

    def __eq__(self, other) -> bool:
        return isinstance(other, OrderNumberValidator)
