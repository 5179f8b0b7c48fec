"""Checking a reply: each sentence's claims against the facts of the order it is about, and refund
timelines, refund methods and counts of days against what the tools gave.
"""

import re
from dataclasses import dataclass
from decimal import Decimal

from orders.numbers import ORDER_MENTION, ORDER_NUMBERS, numbered_re
from support.assistant.capabilities.base import ELIGIBLE, WINDOW_CLOSED
from support.assistant.claims.dates import _date_known, _dates_with_roles, written_dates
from support.assistant.claims.results import Knowledge, OrderFacts
from support.assistant.claims.text import (
    _CLAUSE_SPLIT_RE,
    _REFUND_RE,
    _business_days,
    _compact,
    _has_title,
    amount_currencies_in,
    amounts_in,
    day_counts_in,
    refund_methods_in,
    rmas_in,
    sentences_of,
    tracking_in,
)
from support.assistant.claims.wordings import (
    _Segment,
    eligibility_claims,
    return_claims,
    segments_of,
    status_claims,
)


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


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip(" .!").casefold()


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
    openings = {_normal(opening) for opening in knowledge.policy_openings}
    return any(
        len(sentence) >= 20
        and (any(_normal(sentence) in text for text in texts) or _normal(sentence) in openings)
        for sentence in sentences_of(reply)
    )


def order_in_focus(customer_message: str, knowledge: Knowledge) -> str | None:
    """The order a reply's first sentence is about unless it names one: the one the customer's words
    name (where they say so: a street number is none), else the latest a tool found."""
    said_order = ORDER_NUMBERS.canonical(customer_message) or next(
        iter(ORDER_NUMBERS.mentions(customer_message)), None
    )
    if said_order is not None:  # "1104", found as one shop's #1104: the order the tool found
        said_order = next(
            (form for form in ORDER_NUMBERS.forms(said_order) if form in knowledge.orders), said_order
        )
    return said_order or knowledge.latest_order


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
    openings = {_normal(opening) for opening in knowledge.policy_openings}
    focus = order_in_focus(customer_message, knowledge)
    known = frozenset(knowledge.orders)
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
        segments = stated = segments_of(sentence, focus, titles, known)
        if any(_normal(sentence) in text for text in quotable) or _normal(sentence) in openings:
            stated = []  # the tools' own words
        elif sentence.endswith("?"):
            # The question asks; what comes before it in the sentence ("It arrived; shall I …?") states.
            breaks = list(_CLAUSE_SPLIT_RE.finditer(sentence))
            stated = segments_of(sentence[: breaks[-1].start()], focus, titles, known) if breaks else []
        focus = segments[-1].order
        if stated and _PARCEL_RE.search(sentence):
            order = stated[-1].order
            facts = knowledge.orders.get(order) if order else None
            violations += _parcel_sentence_violations(sentence, order, facts, said)
            continue
        for segment in stated:
            facts = knowledge.orders.get(segment.order) if segment.order else None
            violations += _segment_violations(segment, facts, said)
    return violations


def _parcel_sentence_violations(
    sentence: str, order: str | None, facts: OrderFacts | None, said
) -> list[str]:
    """A sentence about an order's parcels, clause by clause: a clause after "parcel N" (and naming no
    order) speaks of that parcel, its state and its books; any other clause of the order."""
    found: list[str] = []
    mentions = [(match.start(), int(match.group(1))) for match in _PARCEL_RE.finditer(sentence)]
    start = 0
    for cut in [*_CLAUSE_SPLIT_RE.finditer(sentence), None]:
        end = cut.start() if cut else len(sentence)
        clause = sentence[start:end]
        start = cut.end() if cut else end
        if not clause.strip():
            continue
        governing = [number for at, number in mentions if at < end]
        segment = _Segment(order, clause)
        if not governing or _ORDER_NAMED_RE().search(clause):
            found += _segment_violations(segment, facts, said)
            continue
        parcel = governing[-1]
        found += _segment_violations(segment, facts, said, parcel=parcel)
        if facts is not None and any(
            _has_title(clause, title) and title not in facts.parcel_items.get(parcel, set())
            for title in facts.titles
        ):
            found.append("title_not_in_parcel")
    return found


def _eligibility_holds(claim: str, title: str | None, facts: OrderFacts) -> bool:
    if claim == WINDOW_CLOSED:
        return facts.window_closed
    if title is not None:
        return title in (facts.returnable if claim == ELIGIBLE else facts.not_returnable)
    # "It can't be returned" is true of the order, or of one of its items the sentence points at.
    return bool(facts.eligible) if claim == ELIGIBLE else (not facts.eligible or bool(facts.not_returnable))


# A sentence about the parcels of an order shipped in parts ("Parcel 2 (Dune) was shipped …"): the status
# words after "parcel N" are that parcel's, unless their clause names the order.
_PARCEL_RE = re.compile(r"\bparcel (\d{1,3})\b", re.IGNORECASE)
_ORDER_NAMED_RE = numbered_re(rf"\border\b|{ORDER_MENTION}", re.IGNORECASE)


# While the shop that keeps the order has only been asked to make a change, any words of a change made
# ("cancelled", "updated", "saved", "will ship to", "Done.") are refused, however worded, unless the
# clause says it is asked or to come ("I have asked the store…", "as soon as it has changed it").
_MADE_CHANGE_RE = re.compile(
    r"^\W*(?:done|all set)\W*$|\b(?:cancell?ed|updated|changed|saved|amended|redirected)\b"
    r"|\b(?:will\s+)?(?:now\s+)?(?:ships?|shipping|be\s+(?:sent|shipped|delivered))\s+to\b",
    re.IGNORECASE,
)
# A change said not made ("it was not cancelled", "hasn't been changed") claims no change made.
_NOT_MADE_CHANGE_RE = re.compile(
    r"(?:\b(?:not|never)|n['\u2019]t)\s+(?:(?:yet|been|be|now|already)\s+){0,2}"
    r"(?:cancell?ed|updated|changed|saved|amended|redirected)\b",
    re.IGNORECASE,
)
_ASKED_FRAME_RE = re.compile(
    r"\b(?:(?:I|we)(?:['\u2019]ve|\s+have)?\s+(?:asked|requested)|ask(?:ed)?\s+(?:the\s+)?(?:store|shop)|"
    r"once|when|as soon as|after|until|if|whether|waiting)\b",
    re.IGNORECASE,
)


def _clauses(text: str) -> list[str]:
    return [clause for clause in _CLAUSE_SPLIT_RE.split(text) if clause.strip()] or [text]


def _segment_violations(
    segment: _Segment, facts: OrderFacts | None, said: _Said, *, parcel: int | None = None
) -> list[str]:
    text, found = segment.text, []
    stated = status_claims(text)
    if parcel is not None:
        for statuses in stated:
            if facts is None or not facts.parcels:
                found.append("claim_without_lookup")
            elif facts.parcels.get(parcel) not in statuses:
                found.append("status_not_in_result")
        stated = []
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
    if (
        facts is not None
        and facts.change_asked
        and any(
            _MADE_CHANGE_RE.search(_NOT_MADE_CHANGE_RE.sub(" ", clause))
            and not _ASKED_FRAME_RE.search(clause)
            for clause in _clauses(text)
        )
    ):
        found.append("change_not_made")
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
    for amount, currencies in amount_currencies_in(text):
        if facts is None:
            if amount not in said.amounts | said.policy_amounts:
                found.append("claim_without_lookup")
        elif amount not in facts.amounts | said.policy_amounts:
            found.append("amount_not_for_order")
        elif amount in facts.amounts and facts.currency and currencies and facts.currency not in currencies:
            found.append("amount_currency_not_for_order")  # the order's amount, in another currency
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
