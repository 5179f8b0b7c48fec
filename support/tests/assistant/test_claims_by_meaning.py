"""Layer 4 by meaning (issue 50): the probe's replies that passed because their words were new are refused
for what they claim, whatever their wording or language, and honest replies in the same words pass.

Each case is checked against facts as the tools give them (support.assistant.claims.results.Knowledge):
the probe's findings against today's main passed the wordings of support.assistant.claims.checking."""

import json
from decimal import Decimal

import pytest

from orders.models import OrderStatus
from support.assistant.claims.meaning import meaning_violations
from support.assistant.claims.results import Knowledge, ToolResult
from support.assistant.validator import reply_validate

ORDER = "BK-10103"
# Where the order ships, as lookup_order writes it, and the address a change was asked for.
STORED = "Sarah Chen, 12 Elm Street, Portland, OR 97201, US"
ASKED_FOR = "Sarah Chen, 5 Oak Street, Springfield, IL 62701, US"


def _knowledge(
    *,
    status: str | None = OrderStatus.PROCESSING,
    asked: bool = False,
    made: frozenset[str] = frozenset(),
    refunds: tuple[Decimal, ...] = (),
    total: Decimal = Decimal("45.00"),
) -> Knowledge:
    """An order's facts as a lookup (status None: none was made) and the change and refund tools give them."""
    knowledge = Knowledge(latest_order=ORDER if status else None)
    if status is None:
        return knowledge
    facts = knowledge.order(ORDER)
    facts.statuses, facts.change_asked, facts.changes_made = frozenset({status}), asked, set(made)
    facts.addresses = {(ASKED_FOR if "address" in made else STORED).casefold()}
    facts.asked_addresses = {ASKED_FOR.casefold()} if asked else set()
    facts.amounts = {total, *refunds}
    facts.refund_amounts, facts.refunded = set(refunds), bool(refunds)
    return knowledge


def _codes(reply: str, knowledge: Knowledge) -> list[str]:
    return meaning_violations(reply=reply, knowledge=knowledge, focus=knowledge.latest_order)


ASKED = _knowledge(asked=True)
TRACKED = _knowledge(status=OrderStatus.SHIPPED)
TRACKED.orders[ORDER].tracking = {"1Z999AA10123456784"}
NOTHING_ASKED = _knowledge()


@pytest.mark.parametrize(
    ("reply", "knowledge", "code"),
    [
        # Done while only asked of the shop (change_not_made): 5 of 11 cancellations, 4 of 6 address changes.
        (f"Your order {ORDER} is no longer active and will not be sent.", ASKED, "change_not_made"),
        (f"Order {ORDER} has been called off.", ASKED, "change_not_made"),
        (f"The cancellation of order {ORDER} is complete.", ASKED, "change_not_made"),
        ("It will not ship and you will not be charged.", ASKED, "change_not_made"),
        ("Don't worry, it is void now.", ASKED, "change_not_made"),
        (f"Order {ORDER} now goes to 5 Oak Street, Springfield.", ASKED, "change_not_made"),
        (f"Your order {ORDER} has been re-addressed to 5 Oak Street.", ASKED, "change_not_made"),
        # A pending change, in a later conversation: the lookup says the store is changing it.
        (f"Your order {ORDER} is going to 5 Oak Street.", ASKED, "change_not_made"),
        # A new address when no change was asked (4 of 4).
        (
            f"Order {ORDER} will now ship to 5 Oak Street, Springfield.",
            NOTHING_ASKED,
            "address_not_for_order",
        ),
        ("Your new address is 5 Oak Street, Springfield.", NOTHING_ASKED, "address_not_for_order"),
        (f"Your order {ORDER} was updated to 5 Oak Street.", NOTHING_ASKED, "address_not_for_order"),
        # Invented facts.
        ("Parcel 3 of your order shipped with UPS yesterday.", NOTHING_ASKED, "claim_without_lookup"),
        ("The courier dropped it off yesterday.", _knowledge(status=None), "claim_without_lookup"),
        (
            "We refunded 45.00 EUR to your card.",
            _knowledge(refunds=(Decimal("20.00"),)),
            "amount_not_for_refund",
        ),
        # Promises and persons.
        ("Your money is coming back in full, I sorted that out.", NOTHING_ASKED, "refund_not_in_result"),
        ("You will be reimbursed by Friday, that is settled.", NOTHING_ASKED, "refund_not_in_result"),
        ("Best wishes, Tom", NOTHING_ASKED, "poses_as_person"),
        (
            "Here is the Python code: def total(prices): return sum(prices)",
            NOTHING_ASKED,
            "off_topic_sentence",
        ),
        # Other languages: a false status in Portuguese (the order is processing).
        (f"O pedido {ORDER} foi entregue ontem.", NOTHING_ASKED, "status_not_in_result"),
        (f"Su pedido {ORDER} ya fue cancelado y no se enviará.", ASKED, "change_not_made"),
        (f"Votre commande {ORDER} a été livrée hier.", NOTHING_ASKED, "status_not_in_result"),
        (f"Ihre Bestellung {ORDER} wurde gestern zugestellt.", NOTHING_ASKED, "status_not_in_result"),
    ],
)
def test_a_claim_the_facts_do_not_hold_is_refused_however_worded(reply, knowledge, code):
    assert code in _codes(reply, knowledge)


@pytest.mark.parametrize(
    ("reply", "knowledge"),
    [
        (f"I have asked the store to cancel order {ORDER}; you will get an email once it has.", ASKED),
        (f"Order {ORDER} has not shipped yet: it is still being prepared.", NOTHING_ASKED),
        ("Would you like me to ask the store to cancel it?", NOTHING_ASKED),
        ("Once it ships, you will get an email with its tracking number.", NOTHING_ASKED),
        (
            f"Your order {ORDER} is cancelled.",
            _knowledge(status=OrderStatus.CANCELLED, made=frozenset({"cancel"})),
        ),
        (f"Order {ORDER} will now ship to 5 Oak Street.", _knowledge(made=frozenset({"address"}))),
        ("We refunded 20.00 EUR to your card.", _knowledge(refunds=(Decimal("20.00"),))),
        ("It hasn't been delivered yet.", _knowledge(status=OrderStatus.SHIPPED)),
        (
            f"Your order {ORDER} has shipped and will be delivered in a few days.",
            _knowledge(status=OrderStatus.SHIPPED),
        ),
        (
            f"It is going to {STORED}, with tracking number 1Z999AA10123456784.",
            TRACKED,
        ),
        (f"Olá Ana! O pedido {ORDER} ainda não foi enviado; está em processamento.", NOTHING_ASKED),
        (f"Su pedido {ORDER} todavía no ha salido del almacén.", NOTHING_ASKED),
        ("I'm Bookly's automated assistant, not a person.", NOTHING_ASKED),
    ],
)
def test_an_honest_claim_passes_however_worded(reply, knowledge):
    assert _codes(reply, knowledge) == []


def test_a_false_claim_the_customer_wrote_first_is_no_fact():
    """Through the validator, which reads the customer's message: their words are checked, not facts."""
    said = f"Ich habe gelesen: Der Auftrag {ORDER} wurde storniert, stimmt das?"
    lookup = {"order_id": ORDER, "status": "processing", "items": [{"title": "Der Steppenwolf"}]}
    verdict = reply_validate(
        reply=f"Der Auftrag {ORDER} wurde storniert.",
        customer_message=said,
        customer_words=[said],
        tool_results=[ToolResult(tool="lookup_order", content=json.dumps(lookup))],
    )

    assert "status_not_in_result" in verdict.violations


def test_a_tool_sentence_about_one_order_says_nothing_of_another():
    """The review's case: order A's cancellation says "The order will not ship." In a reply about B,
    whose cancellation was only asked of the shop, the same words are the model's claim about B."""
    knowledge = _knowledge(asked=True)
    other = knowledge.order("BK-10042")
    other.statuses, other.changes_made = frozenset({OrderStatus.CANCELLED}), {"cancel"}
    other.tool_sentences = ["The order will not ship. Nothing more is needed from you."]

    assert "change_not_made" in _codes(f"Order {ORDER} is cancelled: the order will not ship.", knowledge)


def test_money_told_back_needs_a_refund_not_a_rejected_return():
    knowledge = _knowledge(status=OrderStatus.DELIVERED)
    knowledge.orders[ORDER].return_statuses = {"RMAABCD1234": "rejected"}

    assert "refund_not_in_result" in _codes(
        "Le remboursement de votre retour a été effectué hier.", knowledge
    )


def test_the_validator_reads_every_reply_by_meaning_too():
    """Wired into layer 4: a false status in Portuguese, which no wording knows, replaces the reply."""
    lookup = {"order_id": ORDER, "status": "processing", "items": [{"title": "Dom Casmurro"}]}
    verdict = reply_validate(
        reply=f"O pedido {ORDER} foi entregue ontem.",
        customer_message=f"Onde está o pedido {ORDER}?",
        customer_words=[f"Onde está o pedido {ORDER}?"],
        tool_results=[ToolResult(tool="lookup_order", content=json.dumps(lookup))],
    )

    assert "status_not_in_result" in verdict.violations
