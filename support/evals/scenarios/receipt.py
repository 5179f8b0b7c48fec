"""Receipts: an order's receipt emailed to the address on the order after the email check; a receipt that is
wrong is staff's."""

from support.evals.runner import Scenario, Turn
from support.evals.scenarios.helpers import hand_off

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        # A receipt is emailed (the receipt capability); one that is wrong is staff's to put right.
        "a_wrong_invoice_is_refused_with_a_person_offered_and_yes_hands_it_over",
        turns=(
            Turn(
                "The total on my invoice for BK-10042 is wrong", reply_contains=("invoices", "support team")
            ),
            Turn("yes please", reply_contains=("passed this conversation",)),
        ),
        tools=(hand_off("needs_staff"),),
        status="waiting",
    ),
)
