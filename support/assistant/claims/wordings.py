"""What a sentence claims, read from fixed lists of wordings (an order's status, a return's progress,
return eligibility), and which order each clause of a sentence is about (its segments).
"""

import re
from dataclasses import dataclass

from orders.models import OrderStatus, ReturnStatus
from orders.numbers import ORDER_NUMBERS
from support.assistant.claims.text import _CLAUSE_SPLIT_RE, _clause_before, _has_title, order_number

_P, _S, _D, _C = OrderStatus.PROCESSING, OrderStatus.SHIPPED, OrderStatus.DELIVERED, OrderStatus.CANCELLED


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


@dataclass(frozen=True)
class _Segment:
    """Part of a sentence, attributed to one order (or to none)."""

    order: str | None
    text: str


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
