"""Checking a reply's claims as read by meaning (support.assistant.claims.reader) against the turn's facts.

The wordings of support.assistant.claims.checking catch the claims they know; these catch the same kinds
worded any other way, in any language the reader learnt: each sentence's order state, change, refund and
parcel claims are checked against the latest successful tool results for the order it is about (the one
it names, else the one in focus), and a persona or off-topic content is refused outright. A sentence the
tools said themselves (a FAQ answer, a change's own sentence) or the customer said first claims nothing of
ours.
"""

import re

from orders.models import OrderStatus, ReturnStatus
from orders.numbers import ORDER_NUMBERS
from orders.patterns import AMOUNT_MENTION_RE
from orders.selectors import change_not_made_sentences
from support.assistant.claims.checking import mentions_order_facts
from support.assistant.claims.reader import SentenceClaims, claim_reader
from support.assistant.claims.results import Knowledge, OrderFacts
from support.assistant.claims.text import _has_title, amounts_in, sentences_of
from support.assistant.understanding.sentences import ModelFileError

# A return that ended without a refund.
_RETURNS_ENDED = frozenset({ReturnStatus.REJECTED, ReturnStatus.CANCELLED})
# What each state the reader reads is true of.
_STATES = {
    # "It will be delivered tomorrow" reads as delivered too: a shipped order is not held against it (the
    # wordings tell "was delivered" of a shipped order).
    "delivered": {OrderStatus.DELIVERED, OrderStatus.SHIPPED},
    # "It has shipped" is true of a delivered order too; "it is on its way" is not, which only the wordings
    # tell apart (support.assistant.claims.checking).
    "shipped": {OrderStatus.SHIPPED, OrderStatus.DELIVERED},
    "processing": {OrderStatus.PROCESSING},
    "cancelled": {OrderStatus.CANCELLED},
    "not_delivered": {OrderStatus.SHIPPED, OrderStatus.PROCESSING},
}
# How much surer than "nothing of it" a claim must be read to be checked: a claim read where there is none
# would replace an honest reply (`manage.py run_evals --claims` shows precision and recall at it).
SURE = 0.3


def _normal(text: str) -> str:
    return " ".join(text.split()).strip(" .!").casefold()


def meaning_violations(*, reply: str, knowledge: Knowledge, focus: str | None) -> list[str]:
    """The codes of the reply's claims, read by meaning, that no tool result for their order supports.
    (The customer's words are no fact: a claim the customer wrote first is checked like any other.)"""
    ours = [*knowledge.quotable]
    ours += [sentence for number in knowledge.orders for sentence in change_not_made_sentences(number=number)]
    owners = knowledge.titles_owned()
    # Each sentence with the order it is about (the one it names, else the one in focus) and the orders it
    # names; a question asks (the wordings read what a sentence states before its question); the tools'
    # words for that order and our fixed words are not the model's.
    about: list[tuple[str, str | None, set[str]]] = []
    for sentence in sentences_of(reply):
        named = [
            next((form for form in ORDER_NUMBERS.forms(number) if form in knowledge.orders), number)
            for number in ORDER_NUMBERS.mentions(sentence)
        ]
        focus = named[-1] if named else focus
        if sentence.rstrip().endswith("?"):
            continue
        facts = knowledge.orders.get(focus) if focus else None
        # The order's own words: what its tools wrote, and the address it ships to as stored.
        own = [*facts.tool_sentences, *facts.addresses] if facts else []
        quotable = [_normal(text) for text in [*ours, *own] if text]
        if any(_normal(sentence) in text for text in quotable):
            continue
        rest = _unquoted(sentence, quotable)
        if len(rest.split()) >= 2:
            orders = set(named) | {owner for title, owner in owners.items() if _has_title(sentence, title)}
            about.append((rest, focus, orders))
    try:
        read = claim_reader().read([sentence for sentence, _, _ in about], sure=SURE)
    except ModelFileError:
        return []  # the sentence model is not installed (logged when the model was built): wordings only
    found: list[str] = []
    for (sentence, order, orders), claims in zip(about, read, strict=True):
        facts = knowledge.orders.get(order) if order else None
        # A sentence about several orders ("BK-10042 was delivered and BK-10089 is on its way"), by their
        # numbers or their books: its state must be one of theirs (the wordings read it order by order).
        others = (
            [knowledge.orders[other] for other in orders if other in knowledge.orders]
            if len(orders) > 1
            else []
        )
        for code in _sentence_violations(
            sentence, claims, facts, others=others, about_order=mentions_order_facts(sentence, knowledge)
        ):
            if code not in found:
                found.append(code)
    return found


def _unquoted(sentence: str, quotable: list[str]) -> str:
    """The sentence without the tools' words it quotes ("Our team's reason: <staff's words>")."""
    rest = _normal(sentence)
    for text in quotable:
        if len(text.split()) >= 4 and text in rest:
            rest = rest.replace(text, " ")
    return rest if rest != _normal(sentence) else sentence


def _sentence_violations(
    sentence: str,
    claims: SentenceClaims,
    facts: OrderFacts | None,
    *,
    others: list[OrderFacts],
    about_order: bool,
) -> list[str]:
    """`others`: the orders a sentence about several names (its state may be any one's); `about_order`: it
    names an order's facts (a title, a tracking number), so it is on topic however it reads."""
    values = claims.values
    found = []
    if values["person"] == "true":
        found.append("poses_as_person")
    if values["offtopic"] == "true" and not about_order:
        found.append("off_topic_sentence")
    state, change, refund = values["order_state"], values["change"], values["refund"]
    if state == "cancelled" and facts is not None and facts.change_asked:
        found.append("change_not_made")  # "it will not ship": asked of the shop, not made
    elif state != "none" and not claims.claims("parcel"):  # a parcel's state is not the order's
        if facts is None or facts.statuses is None:
            found.append("claim_without_lookup")
        elif not any(_holds(state, order) for order in others or [facts]):
            found.append("status_not_in_result")
    if change in ("cancel_made", "address_made"):
        made = "cancel" if change == "cancel_made" else "address"
        if facts is not None and facts.change_asked:
            found.append("change_not_made")  # asked of the shop, not made
        elif facts is None or not (
            made in facts.changes_made or (made == "cancel" and facts.statuses == {OrderStatus.CANCELLED})
        ):
            found.append("change_not_in_result")
    elif change != "none" and (facts is None or not facts.change_asked):
        found.append("change_not_in_result")  # "I have asked the store" with no change asked
    if refund == "made" and (facts is None or not facts.refunded):
        found.append("refund_not_in_result")  # money back, where no tool said any came back
    elif refund == "promised" and (facts is None or not (facts.refunded or _return_going(facts))):
        found.append("refund_not_in_result")
    elif (
        refund == "made"
        and facts is not None
        and any(amount not in facts.refund_amounts for amount in amounts_in(sentence))
    ):
        found.append("amount_not_for_refund")  # the order's total told as what came back
    if claims.claims("parcel") and (facts is None or not (facts.parcels or facts.tracking)):
        found.append("claim_without_lookup")
    if claims.claims("address") and facts is not None and facts.addresses:
        found += _address_violations(sentence, change, facts)
    return found


def _holds(state: str, facts: OrderFacts) -> bool:
    """Whether the order's state (or, for an order in parcels, a part's) is the one claimed."""
    if facts.statuses is None:
        return False
    return facts.statuses <= _STATES[state] or bool(facts.parcels and _of_a_part(state, facts))


def _return_going(facts: OrderFacts) -> bool:
    """Whether the order has a return on its way to a refund (not rejected nor cancelled)."""
    return any(status not in _RETURNS_ENDED for status in facts.return_statuses.values())


def _of_a_part(state: str, facts: OrderFacts) -> bool:
    """Whether the state is one of a part of an order shipped in parcels: a parcel's, or still to come."""
    return state in ("processing", "not_delivered") or any(
        parcel in _STATES[state] for parcel in facts.parcels.values()
    )


def _any_held(numbers: set[str], addresses: set[str]) -> bool:
    """Whether a number of the sentence is one of an address's (a sentence may hold others: a tracking
    number, a count of parcels or days)."""
    return any(numbers & set(_NUMBER_RE.findall(address)) for address in addresses)


# The numbers of an address (a house, a postcode) as a sentence writes them.
_NUMBER_RE = re.compile(r"\d+")


def _address_violations(sentence: str, change: str, facts: OrderFacts) -> list[str]:
    """An address the sentence says the order goes to must be where it ships, by its numbers (a house
    number, a postcode); one only asked for may be named as asked, never as where it goes."""
    numbers = set(
        _NUMBER_RE.findall(ORDER_NUMBERS.look_alike_re.sub(" ", AMOUNT_MENTION_RE.sub(" ", sentence)))
    )
    if not numbers:
        return []  # "your home in Leeds": no number to hold against the address

    if _any_held(numbers, facts.addresses) or (
        change == "address_asked" and _any_held(numbers, facts.asked_addresses)
    ):
        return []
    return [
        "change_not_made"
        if facts.change_asked and _any_held(numbers, facts.asked_addresses)
        else "address_not_for_order"
    ]
