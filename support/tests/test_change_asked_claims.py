"""Layer 4 for a change only asked of the shop that keeps the order: the validator refuses any words of
it made, however a model words them, and lets through what says it was asked."""

import pytest

from support.assistant.claims.checking import claim_violations
from support.assistant.claims.results import Knowledge


def _knowledge(*, asked: bool, status: str = "processing") -> Knowledge:
    knowledge = Knowledge(latest_order="BK-10103")
    facts = knowledge.order("BK-10103")
    facts.statuses, facts.change_asked = frozenset({status}), asked
    return knowledge


@pytest.mark.parametrize(
    "reply",
    [
        "Your order BK-10103 has been successfully cancelled.",
        "Your order's been cancelled.",
        "I went ahead and cancelled it.",
        "Order BK-10103 cancelled.",
        "Your address for order BK-10103 was updated to 1 Main St.",
        "Order BK-10103 will ship to 1 Main St.",
        "The new address is saved.",
        "Your address has been updated, as you asked.",
        "Done.",
    ],
)
def test_a_change_only_asked_is_never_told_as_made(reply):
    assert "change_not_made" in claim_violations(
        reply=reply, customer_message="yes", knowledge=_knowledge(asked=True)
    )


@pytest.mark.parametrize(
    "reply",
    [
        "I have asked the store to cancel order BK-10103. You will get an email as soon as the store has "
        "cancelled it.",
        "I have asked the store to send order BK-10103 to Sarah Chen, 1 Main St. You will get an email as "
        "soon as the store has changed it.",
        "Once it has been changed you'll get an email.",
    ],
)
def test_a_change_told_as_asked_passes(reply):
    assert claim_violations(reply=reply, customer_message="yes", knowledge=_knowledge(asked=True)) == []


@pytest.mark.parametrize(
    "reply",
    [
        "Items that are cancelled are refunded.",
        "The copy of Dune that's cancelled was refunded.",
        "If I cancelled it, would you get a refund?",
    ],
)
def test_cancelled_said_of_something_else_than_the_order_is_no_claim_of_its_status(reply):
    assert (
        claim_violations(
            reply=reply, customer_message="yes", knowledge=_knowledge(asked=False, status="shipped")
        )
        == []
    )


def test_a_change_made_is_told_as_made():
    made = _knowledge(asked=False, status="cancelled")
    assert (
        claim_violations(reply="Your order's been cancelled.", customer_message="yes", knowledge=made) == []
    )
    assert claim_violations(
        reply="Your order's been cancelled.", customer_message="yes", knowledge=_knowledge(asked=False)
    ) == ["status_not_in_result"]
