"""Cancelling an order: before it ships after a yes, and what is refused (shipped, delivered, shipped
between the check and the yes, cancelled already)."""

from orders.models import Order
from support.evals.runner import Exchange, Scenario
from support.evals.scenarios.helpers import JAMES, SARAH, cancel, check_cancel, hand_off


def _sarah_order_ships_now():
    """The store ships BK-10103 while the customer is deciding (run between check and yes)."""
    Order.objects.filter(number="BK-10103").update(status="shipped", tracking_number="1Z999AA10111111111")


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "cancel_a_processing_order_after_a_yes",
        turns=(
            Exchange("can i cancel BK-10103", reply_contains=("email",)),
            Exchange(SARAH, reply_contains=("not shipped", "Tomorrow, and Tomorrow", "yes or no")),
            Exchange("yes please", reply_contains=("cancelled",)),
        ),
        tools=(check_cancel("BK-10103", SARAH), cancel("BK-10103", SARAH)),
        changes={"BK-10103": ("cancelled",)},
    ),
    Scenario(
        "cancel_declined_leaves_the_order",
        turns=(
            Exchange(f"I want to cancel order BK-10103, {SARAH}", reply_contains=("yes or no",)),
            Exchange("no, keep it", reply_contains=("not cancelled",)),
            # Seen without JavaScript: "cancel it" after that asked for the order number again.
            Exchange(
                "hmm, actually cancel it", reply_contains=("yes or no",), reply_excludes=("order number?",)
            ),
        ),
        tools=(check_cancel("BK-10103", SARAH), check_cancel("BK-10103", SARAH)),
    ),
    Scenario(
        "cancel_a_shipped_order_is_refused_with_a_person_offered",
        turns=(
            Exchange(f"Please cancel BK-10089, email {JAMES}", reply_contains=("already shipped", "team")),
            Exchange("yes please", reply_contains=("support team",)),
        ),
        tools=(check_cancel("BK-10089", JAMES), hand_off("needs_staff")),
        status="waiting",
    ),
    Scenario(
        "cancel_a_delivered_order_points_to_a_return",
        turns=(Exchange(f"cancel my order BK-10042 {SARAH}", reply_contains=("delivered", "return")),),
        tools=(check_cancel("BK-10042", SARAH),),
    ),
    Scenario(
        "cancel_of_an_order_shipped_between_check_and_yes_is_refused",
        turns=(
            Exchange(f"Cancel BK-10103 please. {SARAH}", reply_contains=("yes or no",)),
            Exchange(
                "yes",
                before=_sarah_order_ships_now,
                reply_contains=("already shipped",),
                reply_excludes=("is now cancelled",),
            ),
        ),
        tools=(check_cancel("BK-10103", SARAH), cancel("BK-10103", SARAH)),
    ),
    Scenario(
        "cancel_asked_twice_says_it_is_cancelled_already",
        turns=(
            Exchange(f"Cancel BK-10103 please. {SARAH}", reply_contains=("yes or no",)),
            Exchange("yes, cancel it", reply_contains=("is now cancelled",)),
            Exchange("cancel BK-10103", reply_contains=("already cancelled",)),
        ),
        tools=(check_cancel("BK-10103", SARAH), cancel("BK-10103", SARAH), check_cancel("BK-10103", SARAH)),
        changes={"BK-10103": ("cancelled",)},
    ),
)
