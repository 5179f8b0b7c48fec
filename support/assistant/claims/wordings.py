"""What a sentence claims, read from the fixed lists of wordings the capabilities own (an order's
status, a return's progress, return eligibility: `Capability.claims`), and which order each clause of a
sentence is about (its segments).
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass

from orders.numbers import ORDER_MENTION, ORDER_NUMBERS, numbered_re, per_numbering
from support.assistant.capabilities.registry import CAPABILITIES
from support.assistant.claims.text import _CLAUSE_SPLIT_RE, _clause_before, _has_title, order_number


def _compiled(wordings: Iterable[tuple[str, object]]) -> list[tuple[re.Pattern, object]]:
    return [(re.compile(pattern, re.I), value) for pattern, value in wordings]


# Each capability's wordings (`Capability.claims`: order_status.py the status, returns.py a return's
# progress and eligibility), in the registry's order.
_STATUS_RES = per_numbering(
    lambda numbering: _compiled(
        (pattern.replace(ORDER_MENTION, numbering.mention_pattern), statuses)
        for capability in CAPABILITIES
        for pattern, statuses in capability.claims.statuses
    )
)
_RETURN_RES = _compiled(
    wording for capability in CAPABILITIES for wording in capability.claims.return_progress
)
_ELIGIBLE_RES = _compiled(wording for capability in CAPABILITIES for wording in capability.claims.eligibility)

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
_ORDER_SUBJECT_RE = numbered_re(
    rf"(?:\b(?:it|its|they|them|this|that|these|those|both|all|everything|your|order)\b|{ORDER_MENTION})",
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
        for match, statuses, clause in _wordings_in(text, _STATUS_RES())
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
    claims: list[tuple[str, str | None]] = []
    for match, claim, clause in _wordings_in(text, _ELIGIBLE_RES):
        if _CONDITIONAL_RE.search(clause):
            continue
        after = text[match.end() : match.end() + 60]
        named = [title for title in titles if _has_title(clause + " " + after, title)]
        if named:
            claims += [(claim, title) for title in named]
        elif _ORDER_SUBJECT_RE().search(clause + " " + after[:12]):
            claims.append((claim, None))
    return claims


def segments_of(
    sentence: str,
    focus: str | None,
    titles: dict[str, str] | None = None,
    known: frozenset[str] = frozenset(),
) -> list[_Segment]:
    """The sentence's clauses, each attributed to the order it names (by number, else by a title
    only that order has, from `titles`), else to the nearest order the sentence names before it
    (or, failing that, after it: "The Goldfinch (order BK-10042) ..."). A sentence that names no
    order is one segment, attributed to the order in focus. Bare digits name an order only when it is
    one of the turn's (`known`) or the clause says "order" or "#": a shop whose numbers are digits has
    house numbers and postcodes in its addresses too ("Av. Brasil, 432")."""
    clauses = [clause for clause in _CLAUSE_SPLIT_RE.split(sentence) if clause.strip()]
    named = [_order_named(clause, titles or {}, known) for clause in clauses]
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


_ORDER_CUE_RE = re.compile(r"\border\b|#", re.IGNORECASE)


def _order_named(clause: str, titles: dict[str, str], known: frozenset[str]) -> str | None:
    number = order_number(clause)
    if number and (not number.isdigit() or number in known or _ORDER_CUE_RE.search(clause)):
        return number
    return next((order for title, order in titles.items() if _has_title(clause, title)), None)


_LISTING_WORDS = frozenset({"both", "order", "orders", "your", "the", "also", "either", "yes", "no"})


def _only_names_an_order(clause: str) -> bool:
    rest = ORDER_NUMBERS.replace("", clause, anywhere=True)
    return all(word.casefold() in _LISTING_WORDS for word in re.findall(r"[\w']+", rest))
