"""Layer 4 for a change only asked of the shop that keeps the order: the validator refuses any words of
it made, however a model words them, and lets through what says it was asked; and, once the store did not
make it, what says so (our fixed words, or a model's), never words of it made."""

import json

import pytest

from support.assistant.claims.checking import claim_violations
from support.assistant.claims.results import Knowledge, ToolResult
from support.assistant.validator import reply_validate


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


# --- A change the store did not make (the shop refused it, or failed for good) ---

_ASKED = {"order_id": "BK-10103", "status": "processing", "cancellation_asked": True,
          "next_steps": "You will get an email as soon as the store has cancelled it."}  # fmt: skip
_CHECKED_AGAIN = {
    "order_id": "BK-10103", "order_status": "processing", "cancellable": True,
    "reason": "This order has not shipped yet, so it can still be cancelled.",
    "items": [{"title": "Dune", "quantity": 1}],
    "last_attempt_failed": "The store could not cancel order BK-10103.",
}  # fmt: skip
_SHIPPED_SINCE = {
    "order_id": "BK-10103", "order_status": "shipped", "cancellable": False,
    "reason": "This order has already shipped, so it can no longer be cancelled. Once it arrives, you can "
    "ask for a return, or a member of our team can help.",
    "items": [{"title": "Dune", "quantity": 1}],
    "last_attempt_failed": "The store could not cancel order BK-10103: it has already been handed to the "
    "carrier.",
}  # fmt: skip
_HELP = "A member of our support team can help with it: just ask for a person."
_OFFER = "Would you like me to pass this to a member of our support team?"


def _validated(reply: str, *results: tuple[str, dict]) -> tuple[str, ...]:
    tool_results = [ToolResult(tool=tool, content=json.dumps(result)) for tool, result in results]
    return reply_validate(
        reply=reply, customer_message="any news?", customer_words=["any news?"], tool_results=tool_results
    ).violations


_ASKED_ONLY = [("cancel_order", _ASKED)]
_CHECKED = [("cancel_order", _ASKED), ("check_cancellation", _CHECKED_AGAIN)]
_SHIPPED = [("check_cancellation", _SHIPPED_SINCE)]


@pytest.mark.parametrize(
    ("reply", "results"),
    [
        # told by the turn, by the page, after the store was asked (the cancellation's result is the last)
        (f"The store could not cancel order BK-10103. {_HELP}\n\nIs there anything else?", _ASKED_ONLY),
        (f"The store could not cancel order BK-10103. {_OFFER}", _ASKED_ONLY),
        (f"The store could not change the shipping address of order BK-10103. {_OFFER}", _ASKED_ONLY),
        (
            f"The store could not cancel order BK-10103: it has already been handed to the carrier. {_HELP}",
            _ASKED_ONLY,
        ),
        # a model's own words for it, while the cancellation's result still says it was asked
        ("Sorry, your order BK-10103 wasn't cancelled: the store could not make the change.", _ASKED_ONLY),
        # the check of the same change asked again, as the built-in model and a model say it
        (
            f"The store could not cancel order BK-10103. {_HELP} Order BK-10103 has not shipped yet, so it "
            "can still be cancelled. It contains Dune. Would you like me to cancel this order?",
            _CHECKED,
        ),
        (
            f"{_SHIPPED_SINCE['last_attempt_failed']} I checked order BK-10103. {_SHIPPED_SINCE['reason']} "
            f"{_OFFER}",
            _SHIPPED,
        ),
    ],
)
def test_a_change_the_store_did_not_make_is_told_in_our_words(reply, results):
    assert _validated(reply, *results) == ()


@pytest.mark.parametrize(
    "reply",
    [
        "Good news: order BK-10103 has been cancelled.",
        "Your order is cancelled now.",
        "I've cancelled order BK-10103 for you.",
    ],
)
def test_a_change_the_store_did_not_make_is_never_told_as_made(reply):
    assert "status_not_in_result" in _validated(reply, *_CHECKED)
    assert "change_not_made" in _validated(reply, *_ASKED_ONLY)  # before the check: still only asked
