"""What a reply says about an order, sentence by sentence, and whether the tools said so for that order.

Token grounding (an order number or date that appears anywhere in the
conversation) lets three kinds of invented facts through: a status for an
order no tool returned, a status the lookup did not return, and one order's
date or amount given to another. So each sentence's claims are attributed to
the order it names (or the order in focus) and checked against the latest
successful tool results for that order:
- status, in its common wordings ("on its way", "has arrived", "not shipped yet");
- dates (ISO and written out; "delivered on" must be the delivery date), amounts,
  tracking numbers, item titles, RMA numbers and a return's progress;
- return eligibility ("it can be returned", "isn't eligible", "the window has
  closed"), of the order or of a named item.
Across the reply: refund timelines and methods, and counts of days, must be
ones a tool gave. Questions, conditionals ("once it has shipped …"), policy
wording without a subject that points at the order ("ebooks cannot be
returned") and sentences quoted from the tools' own words claim nothing.
Wordings are lists, tuned on tables of correct and invented replies
(support/tests/test_claims.py): a claim worded in a way no list knows passes.
"""

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from orders.models import (
    AMOUNT_MENTION_RE,
    ISO_DATE_MENTION_RE,
    RMA_NUMBER_MENTION_RE,
    OrderStatus,
    ReturnStatus,
)
from orders.numbers import ORDER_NUMBERS

_P, _S, _D, _C = OrderStatus.PROCESSING, OrderStatus.SHIPPED, OrderStatus.DELIVERED, OrderStatus.CANCELLED
_ORDER_STATUSES = frozenset(OrderStatus.values)


@dataclass(frozen=True)
class ToolResult:
    """One tool result of the conversation, as the model read it, with the arguments of its call."""

    tool: str
    content: str
    arguments: Mapping[str, Any] = field(default_factory=dict, compare=False)


@dataclass
class OrderFacts:
    """What successful tool results said about one order (the latest where it can change)."""

    statuses: frozenset[str] | None = None  # None: no tool said
    dates: set[date] = field(default_factory=set)
    amounts: set[Decimal] = field(default_factory=set)
    titles: set[str] = field(default_factory=set)  # casefolded
    tracking: set[str] = field(default_factory=set)
    rmas: set[str] = field(default_factory=set)
    return_statuses: dict[str, str] = field(default_factory=dict)  # by RMA number, the latest
    eligible: bool | None = None  # None: no eligibility check
    window_closed: bool = False  # the check said the return window has ended
    delivered_on: set[date] = field(default_factory=set)
    ordered_on: set[date] = field(default_factory=set)
    returnable: set[str] = field(default_factory=set)  # casefolded titles
    not_returnable: set[str] = field(default_factory=set)


@dataclass
class Knowledge:
    """Everything the conversation's tool results established, by order number."""

    orders: dict[str, OrderFacts] = field(default_factory=dict)
    policy_texts: list[str] = field(default_factory=list)
    # Words of the tools themselves (FAQ answers, the customer-facing message of a refusal): a
    # sentence quoting them claims nothing of its own.
    quotable: list[str] = field(default_factory=list)
    latest_order: str | None = None  # the order of the most recent successful result
    day_counts: set[int] = field(default_factory=set)  # "30-day window", "7 business days"
    refund_methods: list[str] = field(default_factory=list)  # as the tools word them
    refund_days: set[int] = field(default_factory=set)  # refund timelines, in business days

    def order(self, number: str) -> OrderFacts:
        return self.orders.setdefault(number, OrderFacts())

    def titles_owned(self) -> dict[str, str]:
        """Each title only one order of the conversation has, with that order."""
        owners: dict[str, set[str]] = {}
        for number, facts in self.orders.items():
            for title in facts.titles:
                owners.setdefault(title, set()).add(number)
        return {title: next(iter(orders)) for title, orders in owners.items() if len(orders) == 1}


# --- reading tool results ----------------------------------------------------------------------------


def order_number(text: str) -> str | None:
    """The canonical order number of a mention (any case, spacing, with or without the hyphen)."""
    return ORDER_NUMBERS.canonical(text) or next(iter(ORDER_NUMBERS.mentions(text)), None)


def _amount(value) -> Decimal | None:
    try:
        return Decimal(str(value).replace(",", "")).quantize(Decimal("0.01"))
    except (InvalidOperation, ValueError):
        return None


def knowledge_of(results: list[ToolResult], *, instructions: str = "") -> Knowledge:
    """Order facts from the successful tool results, oldest first; unreadable results are ignored.

    `instructions` is what the model is told in its system prompt (the return policy's window,
    refund method and timeline): terms a reply may state without a tool."""
    known = Knowledge()
    day_counts, refund_days, lowered = _terms_of(instructions)
    known.day_counts |= day_counts
    known.refund_days |= refund_days
    known.refund_methods.append(lowered)
    for result in results:
        try:
            data = json.loads(result.content)
        except (TypeError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        known.day_counts |= day_counts_in(result.content)
        known.day_counts |= {int(n) for n in re.findall(r'_days"\s*:\s*(\d+)', result.content)}
        known.refund_days |= {
            int(n) for n in re.findall(r'"refund_timeline_business_days"\s*:\s*(\d+)', result.content)
        }
        if "error" in data:
            known.quotable.append(str(data.get("message", "")))
            continue
        known.refund_methods += [
            m.casefold() for m in re.findall(r'"refund_method"\s*:\s*"([^"]*)"', result.content)
        ]
        if result.tool == "lookup_policy":
            known.policy_texts.append(str(data.get("text", "")))
            known.refund_methods.append(known.policy_texts[-1].casefold())
            known.refund_days |= {
                n
                for sentence in sentences_of(known.policy_texts[-1])
                if _REFUND_RE.search(sentence)
                for n in _business_days(sentence)
            }
            known.quotable.append(known.policy_texts[-1])
            continue
        if result.tool == "list_recent_orders":
            # A signed-in customer's orders, each as its own lookup's summary would state it.
            for listed in data.get("orders") or []:
                number = order_number(str(listed.get("order_id", ""))) if isinstance(listed, dict) else None
                if number is not None:
                    summary = {**listed, "items": listed.get("titles") or []}
                    try:
                        _read_order_result(known.order(number), result.tool, summary, json.dumps(listed))
                    except (TypeError, AttributeError, ValueError):
                        continue  # an odd shape: whatever was read before it stands
            continue
        number = order_number(str(data.get("order_id", "")))
        if number is None:
            continue
        try:
            _read_order_result(known.order(number), result.tool, data, result.content)
        except (TypeError, AttributeError, ValueError):
            continue  # an odd shape: whatever was read before it stands
        known.latest_order = number
    return known


@functools.lru_cache(maxsize=4)
def _terms_of(instructions: str) -> tuple[frozenset[int], frozenset[int], str]:
    """Day counts, refund timelines and the lowered text of the system prompt: read once per prompt
    (it changes only when staff edit the policy or the FAQ topics), not once per reply."""
    refund_days = {
        n
        for sentence in sentences_of(instructions)
        if _REFUND_RE.search(sentence)
        for n in _business_days(sentence)
    }
    return frozenset(day_counts_in(instructions)), frozenset(refund_days), instructions.casefold()


# The tools whose results give an order's status now: as "order_status" (the checks) or "status".
_CHECKS = frozenset({"check_return_eligibility", "check_cancellation", "check_address_change"})
_STATUS_TOOLS = _CHECKS | {"lookup_order", "list_recent_orders", "cancel_order", "change_shipping_address"}


def _read_order_result(facts: OrderFacts, tool: str, data: dict, raw: str) -> None:
    facts.dates |= {
        day for found in ISO_DATE_MENTION_RE.findall(raw) if (day := _iso_date(found)) is not None
    }
    for role in ("delivered_on", "ordered_on"):
        if (day := _iso_date(data.get(role))) is not None:
            getattr(facts, role).add(day)
    status = data.get("order_status" if tool in _CHECKS else "status")
    if tool in _STATUS_TOOLS and status in _ORDER_STATUSES:
        facts.statuses = frozenset({status})
    items = data.get("items") or []
    for item in items:
        title = item.get("title") if isinstance(item, dict) else item
        if isinstance(title, str):
            facts.titles.add(title.casefold())
        if isinstance(item, dict) and tool == "lookup_order":
            price, quantity = _amount(item.get("unit_price")), item.get("quantity") or 1
            if price is not None:
                facts.amounts |= {price, price * int(quantity)}
    for record in data.get("returns") or []:  # lookup_order's and check_return_eligibility's
        facts.rmas.add(_compact(str(record.get("rma_number", ""))))
        facts.return_statuses[_compact(str(record.get("rma_number", "")))] = record.get("status")
        facts.titles |= {str(title).casefold() for title in record.get("items") or []}
    if tool == "lookup_order":
        if (total := _amount(data.get("total"))) is not None:
            facts.amounts.add(total)
        if data.get("tracking_number"):
            facts.tracking.add(_compact(str(data["tracking_number"])))
    elif tool == "check_return_eligibility":
        facts.eligible = bool(data.get("eligible"))
        facts.window_closed = not facts.eligible and bool(data.get("last_day_to_start_return"))
        facts.returnable = {
            i["title"].casefold() for i in items if isinstance(i, dict) and i.get("returnable")
        }
        facts.not_returnable = {
            i["title"].casefold() for i in items if isinstance(i, dict) and not i.get("returnable")
        }
    elif tool == "initiate_return":
        facts.rmas.add(_compact(str(data.get("rma_number", ""))))
        facts.return_statuses[_compact(str(data.get("rma_number", "")))] = data.get("status")


def _iso_date(value) -> date | None:
    found = ISO_DATE_MENTION_RE.fullmatch(str(value))
    return _date(*found.group(0).split("-")) if found else None


def _date(year, month, day) -> date | None:
    try:
        return date(int(year), int(month), int(day))
    except ValueError:
        return None


def _compact(text: str) -> str:
    return re.sub(r"[\s-]", "", text).upper()


# --- reading a reply --------------------------------------------------------------------------------


# A status wording and the order statuses it is true of. Longer, negated wordings come first: the
# first that matches a stretch of text is the claim.
_NOT = r"(?:\bnot|n't|\bnever|\bno longer)"
# What a bare "shipped" or "arrived" is said of.
_SUBJECT = rf"(?:\b(?:it|they|order|parcel|package|books?|items?)|{ORDER_NUMBERS.mention_pattern})"
_STATUS_WORDINGS = [
    (rf"{_NOT}\s+(?:yet\s+)?(?:been\s+)?(?:shipped|dispatched|sent out)", {_P}),
    (r"\b(?:hasn't|has not|haven't|have not)\s+(?:yet\s+)?(?:shipped|left)", {_P}),
    (rf"{_NOT}\s+(?:yet\s+)?(?:been\s+)?delivered", {_P, _S}),
    (
        r"\b(?:hasn't|has not|haven't|have not|didn't|did not|never)\s+(?:yet\s+)?(?:been\s+)?"
        r"(?:arrived|arrive|come(?!\s+up)|got|gotten|get|received|receive|reached you)",
        {_P, _S},
    ),
    (
        rf"{_NOT}\s+(?:yet\s+|anymore\s+|any longer\s+)?"
        r"(?:in transit|on (?:its|their|the) way|out for delivery)",
        {_P, _D, _C},
    ),
    (r"\b(?:hasn't|has not|haven't|have not)\s+(?:yet\s+)?gone\s+out", {_P}),
    (r"\b(?:still\s+)?being\s+(?:processed|prepared|packed)", {_P}),
    (
        r"\b(?:was|were|got|has been|have been)\s+dropped\s+off|\breached\s+you\b",
        {_D},
    ),
    (r"\bleft\s+(?:our|the)\s+warehouse|\b(?:has|have)\s+gone\s+out", {_S, _D}),
    (_SUBJECT + r"\s+(?:is|are)\s+(?:now\s+)?in\s+the\s+mail\b", {_S}),
    (r"\b(?:is|are|still)\s+(?:still\s+)?(?:processing|in processing|being processed)", {_P}),
    (r"\b(?:was|were|has been|have been|is|got)\s+(?:cancell?ed)", {_C}),
    (r"\b(?:on (?:its|their|the) way|in transit|out for delivery|en route)", {_S}),
    (
        r"\b(?:has|have|was|were|has been|have been|got)\s+(?:already\s+)?(?:shipped|dispatched|sent out)",
        {_S, _D},
    ),
    (r"\bshipped on\b", {_S, _D}),
    (_SUBJECT + r"\s+(?:already\s+)?shipped\b", {_S, _D}),
    (_SUBJECT + r"\s+(?:already\s+)?arrived\b", {_D}),
    (r"\b(?:was|were|has been|have been|got|is|are)\s+(?:already\s+)?delivered", {_D}),
    (r"\bdelivered on\b", {_D}),
    (r"\b(?:has|have|had)\s+(?:already\s+)?arrived|\barrived on\b", {_D}),
    (r"\bstatus\b[^.;]{0,40}?\bis\s+(?:now\s+|currently\s+|still\s+)?[\"'\u201c]?(processing)\b", {_P}),
    (r"\bstatus\b[^.;]{0,40}?\bis\s+(?:now\s+|currently\s+|still\s+)?[\"'\u201c]?(shipped)\b", {_S}),
    (r"\bstatus\b[^.;]{0,40}?\bis\s+(?:now\s+|currently\s+|still\s+)?[\"'\u201c]?(delivered)\b", {_D}),
    (r"\bstatus\b[^.;]{0,40}?\bis\s+(?:now\s+|currently\s+|still\s+)?[\"'\u201c]?(cancell?ed)\b", {_C}),
]
_STATUS_RES = [(re.compile(pattern, re.I), frozenset(statuses)) for pattern, statuses in _STATUS_WORDINGS]

_I, _L, _R, _F = ReturnStatus.INITIATED, ReturnStatus.LABEL_SENT, ReturnStatus.RECEIVED, ReturnStatus.REFUNDED
# A return's status in words, and the return statuses it is true of (said in a clause about a return).
_RETURN_WORDINGS = [
    (r"\b(?:has|have|was|were|got)\s+(?:been\s+)?(?:rejected|declined|refused)", {ReturnStatus.REJECTED}),
    (r"\b(?:has|have|was|were|is)\s+(?:been\s+)?(?:cancell?ed|withdrawn)", {ReturnStatus.CANCELLED}),
    (r"\brefund\s+is\s+(?:being|now being)\s+processed", {_R}),
    (
        r"\brefund\s+(?:has been|was)\s+(?:issued|processed|sent|paid)|\b(?:has been|was|were)\s+refunded",
        {_F},
    ),
    (r"\b(?:we(?:'ve| have)?|has been|have been|was|were)\s+(?:now\s+)?received\b", {_R, _F}),
    (r"\blabel\s+(?:has been|was|is)\s+(?:already\s+)?(?:sent|emailed)", {_L, _R, _F}),
    (r"\b(?:has been|was|is)\s+(?:approved|accepted|authori[sz]ed)", {_L, _R, _F}),
    (r"\b(?:has been|was|is)\s+(?:started|opened|initiated|created|open)\b|\bhas\s+started\b", {_I, _L, _R}),
]
_RETURN_RES = [(re.compile(pattern, re.I), frozenset(statuses)) for pattern, statuses in _RETURN_WORDINGS]

_ELIGIBLE, _NOT_ELIGIBLE, _WINDOW_CLOSED = "eligible", "not_eligible", "window_closed"
_ELIGIBLE_WORDINGS = [
    (
        r"\bwindow\s+(?:has\s+)?(?:already\s+)?(?:closed|expired|passed|ended)|\boutside\s+the\s+return",
        _WINDOW_CLOSED,
    ),
    (r"\btoo late to (?:start a )?return", _WINDOW_CLOSED),
    (
        r"\b(?:can't|cannot|can not|couldn't|could not|won't be able to)\s+(?:still\s+)?be\s+returned",
        _NOT_ELIGIBLE,
    ),
    (r"\b(?:can't|cannot|can not)\s+return\b", _NOT_ELIGIBLE),
    (
        r"(?:\bnot|n't|\bno longer)\s+(?:(?:\w+ly|yet|currently|still|quite)\s+)?(?:eligible|returnable)",
        _NOT_ELIGIBLE,
    ),
    (r"\b(?:can|could)\s+(?:still\s+)?be\s+returned", _ELIGIBLE),
    (r"\b(?:you\s+)?can\s+(?:still\s+)?return\b", _ELIGIBLE),
    (r"\b(?:is|are)\s+(?:still\s+)?(?:eligible|returnable)\b|\beligible\s+for\s+(?:a\s+)?return", _ELIGIBLE),
    (r"\bwithin\s+the\s+(?:\d+-day\s+)?return\s+window", _ELIGIBLE),
]
_ELIGIBLE_RES = [(re.compile(pattern, re.I), claim) for pattern, claim in _ELIGIBLE_WORDINGS]

# Words that make what follows them, in the same clause, not a claim about now.
_CONDITIONAL_RE = re.compile(
    r"\b(?:once|when|whenever|after|if|as soon as|until|before|unless|whether|should|would|will|may|might|"
    r"check|checking|see if|find out|confirm)\b",
    re.IGNORECASE,
)
# A clause about a return, refund or label: its status words are not the order's.
_ABOUT_RETURN_RE = re.compile(r"\b(?:return|returns|refund|refunds|label|rma|exchange|replacement)\b", re.I)
# A clause about an email, a request or a message, or one repeating what the customer said ("sorry to
# hear it hasn't arrived"): its status words say nothing about the order.
_NOT_THE_ORDER_RE = re.compile(
    r"\b(?:e-?mail|request|message|link|confirmation|password|question|sorry to hear|you mentioned|"
    r"you said|you say|you've said|you wrote|you told)\b",
    re.I,
)
# What shows an eligibility claim is about this order or its items, not the policy in general.
_ORDER_SUBJECT_RE = re.compile(
    rf"(?:\b(?:it|its|they|them|this|that|these|those|both|all|everything|your|order)\b|"
    rf"{ORDER_NUMBERS.mention_pattern})",
    re.I,
)
# Where a sentence's clauses meet (a comma before a year belongs to its date).
_CLAUSE_SPLIT_RE = re.compile(
    r"[;:\u2014]|,(?=\s)(?!\s\d{4}\b)|\s(?:and|but|so|while|although|though|whereas)\s", re.IGNORECASE
)

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
# A tracking number: a long run of capitals and digits with at least one digit (not an order or RMA number).
_TRACKING_RE = re.compile(r"\b(?!RMA)(?=[A-Z0-9]*\d)[A-Z0-9]{10,34}\b")
_SENTENCE_RE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)")


@dataclass(frozen=True)
class _Segment:
    """Part of a sentence, attributed to one order (or to none)."""

    order: str | None
    text: str


def sentences_of(text: str) -> list[str]:
    # A full stop inside a number ($36.98) or after an initial does not end a sentence.
    guarded = re.sub(r"(?<=\d)\.(?=\d)", "\u2024", text)
    return [s.strip().replace("\u2024", ".") for s in _SENTENCE_RE.findall(guarded) if s.strip()]


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
    found = []
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
            parts = {name: int(value) for name, value in zip(order, match.groups(), strict=True)}
            if parts["month"] > 12 and order[0] == "month":
                parts["month"], parts["day"] = parts["day"], parts["month"]
            if 1 <= parts["month"] <= 12 and 1 <= parts["day"] <= 31:
                found.append(((parts["month"], parts["day"], parts["year"]), match.start()))
    return [
        (
            when,
            next((role for role, pattern in _DATE_ROLES if pattern.search(text[max(0, at - 40) : at])), None),
        )
        for when, at in found
    ]


def _wordings_in(text: str, wordings: list[tuple[re.Pattern, object]]):
    """(match, its value, the clause before it) for each wording found, earlier wordings first; a
    stretch of text one wording matched is not matched again."""
    taken: list[tuple[int, int]] = []
    for pattern, value in wordings:
        for match in pattern.finditer(text):
            if not any(match.start() < end and start < match.end() for start, end in taken):
                taken.append(match.span())
                yield match, value, _clause_before(text, match.start())


def status_claims(text: str) -> list[frozenset[str]]:
    """The statuses each status claim of the text is true of (a claim made in a conditional or in
    a clause about a return is none)."""
    return [
        statuses
        for match, statuses, clause in _wordings_in(text, _STATUS_RES)
        if not _CONDITIONAL_RE.search(clause)
        and not _ABOUT_RETURN_RE.search(clause + match.group(0))
        and not _NOT_THE_ORDER_RE.search(clause)
    ]


def return_claims(text: str) -> list[frozenset[str]]:
    """The return statuses each claim about a return's progress is true of."""
    return [
        statuses
        for match, statuses, clause in _wordings_in(text, _RETURN_RES)
        if not _CONDITIONAL_RE.search(clause) and _ABOUT_RETURN_RE.search(clause + match.group(0))
    ]


def eligibility_claims(text: str, titles: set[str]) -> list[tuple[str, str | None]]:
    """Each eligibility claim about this order or a named item: (eligible, not_eligible or
    window_closed; the item's title or None)."""
    claims = []
    for match, claim, clause in _wordings_in(text, _ELIGIBLE_RES):
        if _CONDITIONAL_RE.search(clause):
            continue
        after = text[match.end() : match.end() + 60]
        named = [title for title in titles if _has_title(clause + " " + after, title)]
        if named:
            claims += [(claim, title) for title in named]
        elif _ORDER_SUBJECT_RE.search(clause + " " + after[:12]):
            claims.append((claim, None))
    return claims


def _has_title(text: str, title: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(title)}(?!\w)", text, re.IGNORECASE) is not None


def _clause_before(text: str, position: int) -> str:
    before = text[:position]
    breaks = list(_CLAUSE_SPLIT_RE.finditer(before))
    return before[breaks[-1].end() :] if breaks else before


def segments_of(sentence: str, focus: str | None, titles: dict[str, str] | None = None) -> list[_Segment]:
    """The sentence's clauses, each attributed to the order it names (by number, else by a title
    only that order has, from `titles`), else to the nearest order the sentence names before it
    (or, failing that, after it: "The Goldfinch (order BK-10042) ..."). A sentence that names no
    order is one segment, attributed to the order in focus."""
    clauses = [clause for clause in _CLAUSE_SPLIT_RE.split(sentence) if clause.strip()]
    named = [_order_named(clause, titles or {}) for clause in clauses]
    if not any(named):
        return [_Segment(focus, sentence)]
    segments, carried = [], []
    for index, clause in enumerate(clauses):
        before = [order for order in named[: index + 1] if order]
        after = [order for order in named[index:] if order]
        order = before[-1] if before else after[0]
        if named[index] and index + 1 < len(clauses) and _only_names_an_order(clause):
            carried.append(order)  # "both BK-10042 and BK-10089 are …": what follows is said of each
            continue
        segments += [_Segment(other, clause) for other in carried if other != order]
        segments.append(_Segment(order, clause))
        carried = []
    return segments


def _order_named(clause: str, titles: dict[str, str]) -> str | None:
    if number := order_number(clause):
        return number
    return next((order for title, order in titles.items() if _has_title(clause, title)), None)


_LISTING_WORDS = frozenset({"both", "order", "orders", "your", "the", "also", "either", "yes", "no"})


def _only_names_an_order(clause: str) -> bool:
    rest = ORDER_NUMBERS.replace("", clause)
    return all(word.casefold() in _LISTING_WORDS for word in re.findall(r"[\w']+", rest))


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


def mentions_order_facts(text: str, knowledge: Knowledge) -> bool:
    """Whether the text names something a tool returned about an order: a title, tracking or RMA
    number, an amount or a date of one (a reply that does is about that order)."""
    every = knowledge.orders.values()
    return (
        any(_has_title(text, title) for facts in every for title in facts.titles)
        or any(_compact(found) in facts.tracking for found in tracking_in(text) for facts in every)
        or any(found in facts.rmas for found in rmas_in(text) for facts in every)
        or any(amount in facts.amounts for amount in amounts_in(text) for facts in every)
        or any(_date_known(found, facts.dates) for found in written_dates(text) for facts in every)
    )


def amounts_in(text: str) -> list[Decimal]:
    return [
        amount
        for match in AMOUNT_MENTION_RE.finditer(text)
        if (amount := _amount(match.group(1))) is not None
    ]


def tracking_in(text: str) -> list[str]:
    return [
        match.group(0)
        for match in _TRACKING_RE.finditer(text)
        if not RMA_NUMBER_MENTION_RE.fullmatch(match.group(0)) and not ORDER_NUMBERS.canonical(match.group(0))
    ]


def rmas_in(text: str) -> list[str]:
    return [_compact(match.group(0)) for match in RMA_NUMBER_MENTION_RE.finditer(text)]


# --- checking a reply --------------------------------------------------------------------------------


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip(" .!").casefold()


def _date_known(found: tuple[int, int, int | None], dates: set[date]) -> bool:
    month, day, year = found
    return any(d.month == month and d.day == day and (year is None or d.year == year) for d in dates)


@dataclass(frozen=True)
class _Said:
    """What a reply may repeat without a tool result: the customer's words and the published FAQ."""

    dates: list[tuple[int, int, int | None]]
    statuses: list[frozenset[str]]
    amounts: set[Decimal]
    policy_amounts: set[Decimal]
    titles: set[str]  # every title a tool returned in this conversation
    tracking: set[str]  # tracking-shaped tokens the customer wrote


def quotes_policy(reply: str, knowledge: Knowledge) -> bool:
    """Whether the reply quotes a FAQ answer a tool returned (a whole sentence of it): on topic, whatever
    the topic staff wrote it about."""
    texts = [_normal(text) for text in knowledge.policy_texts]
    return any(
        len(sentence) >= 20 and any(_normal(sentence) in text for text in texts)
        for sentence in sentences_of(reply)
    )


def claim_violations(*, reply: str, customer_message: str, knowledge: Knowledge) -> list[str]:
    """The codes of the reply's claims that no successful tool result for their order supports."""
    said = _Said(
        dates=written_dates(customer_message),
        statuses=status_claims(customer_message),
        amounts=set(amounts_in(customer_message)),
        policy_amounts={amount for text in knowledge.policy_texts for amount in amounts_in(text)},
        titles={title for facts in knowledge.orders.values() for title in facts.titles},
        tracking=set(tracking_in(customer_message)),
    )
    quotable = [_normal(text) for text in knowledge.quotable]
    focus = order_number(customer_message) or knowledge.latest_order
    violations: list[str] = []
    if day_counts_in(reply) - knowledge.day_counts - day_counts_in(customer_message):
        violations.append("ungrounded_day_count")  # a refund timeline or window no tool gave
    titles = knowledge.titles_owned()
    refund_days = {
        n for sentence in sentences_of(reply) if _REFUND_RE.search(sentence) for n in _business_days(sentence)
    }
    if refund_days - knowledge.refund_days - day_counts_in(customer_message):
        violations.append("refund_timeline_not_in_result")
    if any(method not in " ".join(knowledge.refund_methods) for method in refund_methods_in(reply)):
        violations.append("ungrounded_refund_method")
    for sentence in sentences_of(reply):
        segments = stated = segments_of(sentence, focus, titles)
        if any(_normal(sentence) in text for text in quotable):
            stated = []  # the tools' own words
        elif sentence.endswith("?"):
            # The question asks; what comes before it in the sentence ("It arrived; shall I …?") states.
            breaks = list(_CLAUSE_SPLIT_RE.finditer(sentence))
            stated = segments_of(sentence[: breaks[-1].start()], focus, titles) if breaks else []
        focus = segments[-1].order
        for segment in stated:
            facts = knowledge.orders.get(segment.order) if segment.order else None
            violations += _segment_violations(segment, facts, said)
    return violations


def _eligibility_holds(claim: str, title: str | None, facts: OrderFacts) -> bool:
    if claim == _WINDOW_CLOSED:
        return facts.window_closed
    if title is not None:
        return title in (facts.returnable if claim == _ELIGIBLE else facts.not_returnable)
    # "It can't be returned" is true of the order, or of one of its items the sentence points at.
    return facts.eligible if claim == _ELIGIBLE else (not facts.eligible or bool(facts.not_returnable))


def _segment_violations(segment: _Segment, facts: OrderFacts | None, said: _Said) -> list[str]:
    text, found = segment.text, []
    stated = status_claims(text)
    for statuses in stated:
        if facts is None or facts.statuses is None:
            if statuses not in said.statuses:  # the customer's own words may be repeated
                found.append("claim_without_lookup")
        elif not facts.statuses <= statuses:
            found.append("status_not_in_result")
    for claim, title in eligibility_claims(text, said.titles):
        if facts is None or facts.eligible is None:
            found.append("eligibility_not_checked")
        elif not _eligibility_holds(claim, title, facts):
            found.append("eligibility_not_in_result")
    for statuses in return_claims(text):
        named = set(rmas_in(text))
        known = facts.return_statuses if facts else {}
        about = [status for rma, status in known.items() if not named or rma in named]
        if not about:
            found.append("claim_without_lookup")
        elif not any(status in statuses for status in about):
            found.append("return_status_not_in_result")
    if segment.order is None:
        return found  # identifiers with no order to belong to: the token checks ground them
    states = bool(found) or bool(stated)
    for (month, day, year), role in _dates_with_roles(text):
        if not states and any((month, day) == (m, d) for m, d, _ in said.dates):
            continue  # the customer's own date, repeated ("April 30 would be too late")
        if facts is None:
            found.append("claim_without_lookup")
        elif not _date_known((month, day, year), getattr(facts, role) if role else facts.dates):
            found.append("date_not_for_order")
    for amount in amounts_in(text):
        if facts is None:
            if amount not in said.amounts | said.policy_amounts:
                found.append("claim_without_lookup")
        elif amount not in facts.amounts | said.policy_amounts:
            found.append("amount_not_for_order")
    for tracking in tracking_in(text):
        if tracking in said.tracking:
            continue  # the customer's own number (an ISBN, a phone number) repeated
        if facts is None:
            found.append("claim_without_lookup")
        elif _compact(tracking) not in facts.tracking:
            found.append("tracking_not_for_order")
    if facts is not None:
        if any(rma not in facts.rmas for rma in rmas_in(text)):
            found.append("rma_not_for_order")
        others = [
            title for title in said.titles - facts.titles if not any(title in own for own in facts.titles)
        ]
        if any(_has_title(text, title) for title in others):
            found.append("title_not_in_order")
    return found
