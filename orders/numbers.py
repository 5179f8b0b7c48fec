"""The store's order numbers. Their shape is the store's own (`#1001`, `727`, `100-2345678`,
`WEB-88812`; the demo's is `BK-` and 4 to 6 digits): BOOKLY_ORDER_NUMBER_PATTERN, checked with its example
when the settings load, and the shapes the store used before (BOOKLY_ORDER_NUMBER_FORMER_PATTERNS), whose
orders are still found. Every place that reads, checks or writes an order number goes through
ORDER_NUMBERS, so the shapes are defined once: the model's validator, the intake, the tools and their
schemas, the reply validator, the built-in model and the prompts' example.

A number written without letters or `#` ("727", or "1050" for `#1050`) is an order's only where the
words say so: after "order" ("order 1050", "order no. 1050", "my order number is 1050"), after `#`, or
alone as the whole message ("1050", "it's 1050"). A street number, a ZIP code, a phone number or an
amount is not one ("I live at 969 Market, San Francisco 94103"). A message whose one number may be an
order's though nothing says so ("where is 1050?") is asked about (`unsure`).
"""

import functools
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar, cast

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import DatabaseError
from django.utils.deconstruct import deconstructible

T = TypeVar("T")

# The longest order number Order.number holds.
MAX_LENGTH = 32

# What, right before a number written without letters, says it is an order's: "order", "order no.",
# "order number is", "where is my order? 10042", "purchase #", or a "#" alone (not "apt #302").
_ORDER_CUE_RE = re.compile(
    r"(?:\b(?:orders?|ordr|oder|purchase)(?:\s*(?:number|num|nr|no\.?|n\.|id|ref|is|was|[:#=?-]))*|#)\s*$",
    re.IGNORECASE,
)
# A "#" that numbers something else: "apt #302", "book #2", "unit #4".
_OTHER_SIGN_RE = re.compile(
    r"\b(?:apt|apartment|unit|suite|ste|flat|room|box|book|vol|volume|issue|page|no)\.?\s*#\s*$",
    re.IGNORECASE,
)
# "order" as a verb ("can I order 1984?", "I'd like to purchase 1984"): what follows is what is bought.
_ORDERING_RE = re.compile(
    r"\b(?:i|we|you|to|can|could|would|will|wanna|gonna|please|pls|also|just|i'd|we'd|i'll)\s+(?:order|purchase)\s*$",
    re.IGNORECASE,
)
# Between two numbers of one list ("orders 1050 and 1051", "#1050, #1051"): the first says what the second
# is. A bare comma does not ("order 1050, 969 Market St": a street number).
_LIST_RE = re.compile(
    r"\s*(?:,\s*)?(?:&|\+|/|\band\b|\bor\b)(?:\s*(?:maybe|perhaps|possibly|also|else))?\s*(?:#\s*)?"
    r"|\s*,\s*#\s*",
    re.IGNORECASE,
)
# A message that is a number and nothing else said (the answer to "What is your order number?").
_ALONE_RE = re.compile(
    r"(?:[\s\W]|\b(?:it'?s|it|is|the|my|number|order|thanks?|thank you|ty|please|pls|plz|ok|okay|yes|"
    r"yeah|yep|sure|here|sorry|hi|hello|hey)\b)*",
    re.IGNORECASE,
)
# After a number, what makes it a count or an amount, not an order ("order 150 copies").
_COUNTED_RE = re.compile(
    r"\s*(?:copies|copy|books?|items?|units?|pages?|dollars?|bucks|usd|eur|euros?|gbp|pounds?|yen|jpy|"
    r"rupees?|inr|reais|brl|days?|weeks?)\b",
    re.IGNORECASE,
)
# Digits on their own, or after a "#" ("order#10552"): not part of a word, an amount ("$45", "45.99"), a
# time, a date or a postal code written with a hyphen ("01310-100").
_DIGITS_RE = re.compile(r"(?:(?<=#)|(?<![\w#$€£¥/.,:-]))[0-9]+(?![\w/-]|[.,:][0-9])")
# Around digits, what makes them part of an amount or a time ("$120.00", "5.00", "120,00", "10:30"), never
# an order of a shop whose numbers are digits: a currency sign or a figure's digits and point before them,
# or cents or minutes after. "Order no.727", "order:727" and "727, 728" stay orders.
_IN_A_FIGURE_BEFORE_RE = re.compile(r"(?:[$€£¥]|[0-9][.,:])$")
_IN_A_FIGURE_AFTER_RE = re.compile(r"[.,:][0-9]{1,2}\b")


# Words right before a number that say what else it is: "my zip is 94103", "call 5551234", "ISBN 0441".
_SAID_OTHER_RE = re.compile(
    r"\b(?:zip|postal|post ?code|postcode|cep|pin ?code|phone|tel|telephone|call|mobile|cell|text|whatsapp|"
    r"street|st|ave|avenue|road|rd|apt|apartment|unit|suite|isbn|year|born|page|chapter|edition|volume|vol|"
    r"card|ending(?: in)?|last (?:four|4)|digits|tracking|ref|reference|po|invoice|room|box|ext|extension)"
    r"\b[^0-9]{0,15}$",
    re.IGNORECASE,
)
# After a number, a street's name: it is a house number ("2500 Oak Ave", "969 Market St").
_STREET_AFTER_RE = re.compile(
    r"(?:\s+(?-i:[A-Z])[\w'.-]*){1,3}\s+(?:st|street|ave|avenue|rd|road|blvd|boulevard|lane|ln|dr|drive|ct|"
    r"court|pl|place|pkwy|hwy)\b",
    re.IGNORECASE,
)
# A year: "in 2025", "my order from 2026".
_YEAR_RE = re.compile(r"\b(?:in|since|from|of|until|till|year)\s+$", re.IGNORECASE)
_A_YEAR_RE = re.compile(r"(?:19|20)[0-9]{2}")
# Every run of digits, wherever it is (an amount, a date, a postal code): a text with one is asked about.
_ANY_DIGITS_RE = re.compile(r"[0-9]+")


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
class _NumberShape:
    """One shape of number: the exact form stored and checked, and the loose forms people type ("bk
    10042", "BK10042") that mean the same number."""

    pattern: str
    exact: re.Pattern = field(init=False, repr=False)
    loose: re.Pattern = field(init=False, repr=False)
    # The loose form without groups, to embed in a larger expression.
    loose_pattern: str = field(init=False, repr=False)
    # The letters a number of this shape starts with ("BK" of "BK-[0-9]{4,6}", "#" of "#[0-9]{4,}").
    letters: str = field(init=False, repr=False)
    _parts: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
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
        object.__setattr__(self, "loose", loose)
        object.__setattr__(self, "loose_pattern", rf"(?<![\w-]){unnamed}(?![\w-])")
        object.__setattr__(self, "_parts", len(parts))
        first = parts[0] if len(parts) > 1 else ""
        sign = re.match(r"#(?=[\[\\(0-9])", self.pattern)  # "#[0-9]{4,}": numbers written after a "#"
        object.__setattr__(
            self, "letters", first if re.fullmatch(r"[A-Za-z]+", first) else "#" if sign else ""
        )

    def canonical(self, match: re.Match[str]) -> str | None:
        parts = [match.group(f"p{index}") for index in range(self._parts)]
        number = "-".join(parts) if parts else match.group(0)
        for form in (number, number.upper(), number.lower()):
            if len(form) <= MAX_LENGTH and self.exact.fullmatch(form):
                return form
        return None


@dataclass(frozen=True)
class _Mention:
    start: int
    end: int
    number: str
    bare: bool  # written without letters or "#": an order's only where the words say so


def _prefix_of(example: str) -> str:
    """What a number has before its first digit ("BK-", "#", or nothing for "100-2345678")."""
    return re.split(r"\d", example, maxsplit=1)[0]


@dataclass(frozen=True)
class OrderNumbering:
    """The store's order-number shapes: the one its numbers have now (`pattern`, of which `example` is
    one), those of its other shops (`others`: (pattern, example) each, a business with several shops),
    and those its stored orders may have from before (`former`)."""

    pattern: str
    example: str
    former: tuple[str, ...] = ()
    others: tuple[tuple[str, str], ...] = ()
    exact: re.Pattern = field(init=False, repr=False)
    mention_re: re.Pattern = field(init=False, repr=False)
    # The loose forms without groups, to embed in a larger expression ("shipped" said of an order).
    mention_pattern: str = field(init=False, repr=False)
    _shapes: tuple[_NumberShape, ...] = field(init=False, repr=False)
    # What numbers start with, shape by shape, where their example says (the current shape's first).
    _prefixes: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        patterns = dict.fromkeys((self.pattern, *(pattern for pattern, _ in self.others), *self.former))
        shapes = tuple(_NumberShape(pattern) for pattern in patterns)
        object.__setattr__(self, "_shapes", shapes)
        either = "|".join(f"(?:{shape.pattern})" for shape in shapes) if len(shapes) > 1 else self.pattern
        object.__setattr__(self, "exact", re.compile(either))
        mention_pattern = "|".join(f"(?:{shape.loose_pattern})" for shape in shapes)
        object.__setattr__(self, "mention_pattern", f"(?:{mention_pattern})")
        object.__setattr__(self, "mention_re", re.compile(self.mention_pattern, re.IGNORECASE))
        examples = (self.example, *(example for _, example in self.others))
        object.__setattr__(self, "_prefixes", tuple(dict.fromkeys(_prefix_of(e) for e in examples)))

    @property
    def prefix(self) -> str:
        """What every shape's example has before its first digit ("BK-", "#"; nothing for "100-2345678",
        or when shops' numbers start differently): what customers are told a number starts with, and what
        they may leave out after "order" or "#". The example itself is never shown to them: it may be a
        real order's number, which a reply may only name from a tool's result."""
        return self._prefixes[0] if len(self._prefixes) == 1 else ""

    @property
    def look_alike_re(self) -> re.Pattern:
        """What reads as an order number of any of the store's shapes even when it is not one ("BK-123",
        "BK-1234567"): the letters and digits, or the shape itself when numbers have no letters. What a
        reply may not name unless a tool's result did."""
        alike = [
            rf"(?<![\w-]){re.escape(shape.letters)}\s*-?\s*\d+" if shape.letters else shape.loose_pattern
            for shape in self._shapes
        ]
        if any(self._prefixes):  # the prefix left out after "order" ("order 1051" for #1051): its digits
            alike.append(r"\border\s+(?:number\s+|no\.?\s*)?(?P<digits>\d{3,})\b")
        return re.compile("|".join(f"(?:{pattern})" for pattern in alike), re.IGNORECASE)

    def starts_with(self, template: str, otherwise: str) -> str:
        """`template` with {prefix} filled in when numbers have one, else `otherwise`."""
        return template.format(prefix=self.prefix) if self.prefix else otherwise

    @property
    def json_schema_pattern(self) -> str:
        """The exact shapes for a JSON Schema `pattern`, which matches anywhere unless anchored."""
        return f"^(?:{self.exact.pattern})$"

    def _fits(self, number: str) -> str | None:
        for form in (number, number.upper(), number.lower()):
            if len(form) <= MAX_LENGTH and self.exact.fullmatch(form):
                return form
        return None

    def canonical(self, text: str) -> str | None:
        """The number as the store writes it, when `text` is one number of one of its shapes written any
        way; else None."""
        text = text.strip()
        for shape in self._shapes:
            if (match := shape.loose.fullmatch(text)) and (number := shape.canonical(match)):
                return number
        return None

    def forms(self, text: str) -> list[str]:
        """Every number `text` may be, one per shape that reads it (the store's shape now first): with
        several shops, "1104" is WooCommerce's 1104 and, its "#" left out, Shopify's #1104; and "#1104"
        is Shopify's, or WooCommerce's 1104 written after a "#". The text itself when none reads it."""
        text = text.strip()
        found = []
        for shape in self._shapes:
            if (match := shape.loose.fullmatch(text)) and (number := shape.canonical(match)):
                found.append(number)
        written = _prefix_of(text)
        digits = text[len(written) :]
        if digits.isdigit() and (written in self._prefixes or written in ("", "#")):
            found.extend(number for prefix in self._prefixes if (number := self._fits(prefix + digits)))
        return list(dict.fromkeys(found)) or [text]

    def key(self, text: str) -> str:
        """The number as the store writes it, or the text as given when it is not one (to be refused)."""
        return self.canonical(text) or text.strip()

    def _candidates(self, text: str) -> list[_Mention]:
        # (mention, its shape's place: the store's shape now first)
        found: list[tuple[_Mention, float]] = []
        for place, shape in enumerate(self._shapes):
            for match in shape.loose.finditer(text):
                if match.group(0).isdigit() and (
                    _IN_A_FIGURE_BEFORE_RE.search(text, 0, match.start())
                    or _IN_A_FIGURE_AFTER_RE.match(text, match.end())
                ):
                    continue  # the cents of "$5.00", the 120 of "$120.00"
                if number := shape.canonical(match):
                    found.append(
                        (_Mention(match.start(), match.end(), number, match.group(0).isdigit()), place)
                    )
        # Digits read with a shop's prefix left out ("order 1050" for #1050) come after what a shop's own
        # shape reads as written (another shop's 1050), before a former shape's reading.
        shops = len(dict.fromkeys((self.pattern, *(pattern for pattern, _ in self.others))))
        for prefix in self._prefixes:
            if not prefix:
                continue
            for match in _DIGITS_RE.finditer(text):
                if number := self._fits(prefix + match.group(0)):
                    found.append((_Mention(match.start(), match.end(), number, bare=True), shops - 0.5))
        # Where two overlap, the one starting first, then the longest, then the store's shape now.
        found.sort(key=lambda pair: (pair[0].start, -pair[0].end, pair[1]))
        kept: list[_Mention] = []
        for mention, _ in found:
            if not kept or mention.start >= kept[-1].end:
                kept.append(mention)
        return kept

    def _mentions(self, text: str, *, anywhere: bool = False) -> list[_Mention]:
        """The numbers in `text` that are surely orders' (see the module's docstring); `anywhere`, every
        number of a shape (a reply's, which names only orders' numbers)."""
        sure: list[_Mention] = []
        candidates = self._candidates(text)
        for mention in candidates:
            if text[mention.start] == "#" and _OTHER_SIGN_RE.search(
                text[max(0, mention.start - 40) : mention.start + 1]
            ):
                continue  # "apt #3020"
            if mention.bare and not anywhere:
                before = text[max(0, mention.start - 40) : mention.start]
                listed = sure and _LIST_RE.fullmatch(text[sure[-1].end : mention.start])
                rest = text[: mention.start] + text[mention.end :]
                alone = len(candidates) == 1 and _ALONE_RE.fullmatch(rest)
                cued = _ORDER_CUE_RE.search(before) and not (
                    _ORDERING_RE.search(before) or _OTHER_SIGN_RE.search(before)
                )
                if not (listed or alone or (cued and not _COUNTED_RE.match(text, mention.end))):
                    continue
            elif mention.bare and anywhere and not mention.number.isdigit():
                continue  # a prefix left out is a customer's way of writing, never a reply's
            sure.append(mention)
        return sure

    def unsure(self, text: str) -> tuple[str, str] | None:
        """The one number in a customer's `text` that may be an order's though nothing says so ("where is
        1050?"): (as written, as the store writes it), to ask the customer about; None when the text
        names an order, or has more than one number (an address, a phone number), or its one number is
        a count, an amount, what is bought ("can I order 1984?"), or said to be something else ("my
        zip is 94103", "apt #302")."""
        candidates = self._candidates(text)
        if len(candidates) != 1 or self._mentions(text) or len(_ANY_DIGITS_RE.findall(text)) != 1:
            return None
        [mention] = candidates
        before = text[max(0, mention.start - 40) : mention.start + (text[mention.start] == "#")]
        if (
            _ORDERING_RE.search(before)
            or _OTHER_SIGN_RE.search(before)
            or _SAID_OTHER_RE.search(before)
            or (_YEAR_RE.search(before) and _A_YEAR_RE.fullmatch(text[mention.start : mention.end]))
            or _COUNTED_RE.match(text, mention.end)
            or _STREET_AFTER_RE.match(text, mention.end)
        ):
            return None
        return text[mention.start : mention.end], mention.number

    def mentions(self, text: str, *, anywhere: bool = False) -> list[str]:
        """The numbers written in running text, as the store writes them, in order: a customer's where
        their words say so; `anywhere`, every number of a shape (in a reply)."""
        return [mention.number for mention in self._mentions(text, anywhere=anywhere)]

    def last_mention(self, text: str) -> str | None:
        numbers = self.mentions(text)
        return numbers[-1] if numbers else None

    def replace(self, replacement: str, text: str, *, anywhere: bool = False) -> str:
        """`text` with every number in it replaced (for reading the words around it; `anywhere`, every
        number of a shape, for redaction and for replies)."""
        for mention in reversed(self._mentions(text, anywhere=anywhere)):
            text = text[: mention.start] + replacement + text[mention.end :]
        return text


# How long a process keeps the shops' shapes before reading them again (a shop saved in this process is
# read at once): another worker's new shop is known within this.
RELOAD_SECONDS = 5.0
_held: tuple[float, OrderNumbering] | None = None


@functools.lru_cache(maxsize=16)
def numbering_of(
    pattern: str, example: str, former: tuple[str, ...], others: tuple[tuple[str, str], ...]
) -> OrderNumbering:
    """One numbering per set of shapes, its expressions compiled once."""
    return OrderNumbering(pattern, example, former, others)


def _no_shops() -> tuple[tuple[str, str], ...]:
    return ()


# Every shop's (pattern, example), oldest shop first: orders.models says how they are read
# (order_numbering_reads).
_shop_shapes: Callable[[], tuple[tuple[str, str], ...]] = _no_shops


def order_numbering_reads(shop_shapes: Callable[[], tuple[tuple[str, str], ...]]) -> None:
    """Where the shops' shapes come from (orders.models, which imports this module)."""
    global _shop_shapes
    _shop_shapes = shop_shapes
    order_numbering_forget()


def order_numbering() -> OrderNumbering:
    """The shapes of the store's order numbers now: BOOKLY_ORDER_NUMBER_PATTERN's (a new shop's) first,
    every shop's (orders.Shop), and BOOKLY_ORDER_NUMBER_FORMER_PATTERNS."""
    global _held
    now = time.monotonic()
    if _held is None or now - _held[0] > RELOAD_SECONDS:
        default = (settings.BOOKLY_ORDER_NUMBER_PATTERN, settings.BOOKLY_ORDER_NUMBER_EXAMPLE)
        former = tuple(settings.BOOKLY_ORDER_NUMBER_FORMER_PATTERNS)
        try:
            shops = _shop_shapes()
        except DatabaseError:
            # Before the migrations, or the database away for a moment: the shapes last read (never
            # kept as read, so the next use tries again), else the settings' alone.
            return _held[1] if _held is not None else numbering_of(*default, former, ())
        others = tuple(shape for shape in dict.fromkeys(shops) if shape[0] != default[0])
        _held = (now, numbering_of(*default, former, others))
    return _held[1]


def order_numbering_forget() -> None:
    """Read the shops' shapes again at the next use (a shop was saved)."""
    global _held
    _held = None


def per_numbering(build: Callable[[OrderNumbering], T]) -> Callable[[], T]:
    """What `build` makes of the store's numbering now, made again only when the shapes change: for what
    a module would otherwise build once when imported (an expression naming order numbers)."""
    held: list = [None, None]

    def current() -> T:
        numbering = order_numbering()
        if held[0] is not numbering:
            held[:] = [numbering, build(numbering)]
        return held[1]

    return current


# Where a pattern written before the store's shapes are known says "an order number, as written in
# running text" (numbered_re puts the numbering's mention_pattern there).
ORDER_MENTION = "<order-number>"


def numbered_re(pattern: str, flags: int = 0) -> Callable[[], re.Pattern]:
    """`pattern`, its ORDER_MENTION the store's numbers now, compiled (again when the shapes change)."""
    return per_numbering(
        lambda numbering: re.compile(pattern.replace(ORDER_MENTION, numbering.mention_pattern), flags)
    )


# What ORDER_NUMBERS answers for: OrderNumbering's public attributes. Any other name a tool probes for
# (pytest looks for its fixture marker on every name a test module imports) is no attribute, and reads
# no database: a read while pytest collects opened PostgreSQL's pool on the database before the test one.
_NUMBERING_NAMES = frozenset(
    name
    for name in (*dir(OrderNumbering), *(field.name for field in fields(OrderNumbering)))
    if not name.startswith("_")
)


class _StoreNumbering:
    """ORDER_NUMBERS: the store's numbering now (order_numbering), attribute by attribute. Read when used,
    never when a module is imported: a shop's shape is the database's."""

    def __getattr__(self, name: str) -> Any:
        if name not in _NUMBERING_NAMES:
            raise AttributeError(name)
        return getattr(order_numbering(), name)


# Typed as what it stands in for.
ORDER_NUMBERS = cast(OrderNumbering, _StoreNumbering())


def shop_shape_problem(pattern: str, example: str) -> str | None:
    """Why a shop's number shape cannot be used, in words; None when it can (the settings' own checks of
    BOOKLY_ORDER_NUMBER_PATTERN, for a shape staff give)."""
    if pattern.startswith("^") or pattern.endswith("$"):
        return "The shape is matched whole: leave out ^ and $."
    try:
        shape = re.compile(pattern)
        re.compile(rf"(?<![\w-])(?:{pattern})(?![\w-])")
    except re.error as error:
        return f"The shape is not a regular expression without inline flags ({error})."
    if shape.fullmatch(""):
        return "The shape must not match an empty number."
    if len(example) > MAX_LENGTH or not shape.fullmatch(example):
        return f"The example must be a number of the shape, of at most {MAX_LENGTH} characters."
    return None


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

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OrderNumberValidator)
