"""News of a delivery problem already reported: the order's cases told as they stand after the email check,
never a second report and never a handover by themselves."""

from orders.models import DeliveryProblem, Order
from orders.services import delivery_case_open, delivery_case_resolve
from support.evals.runner import Exchange, Scenario
from support.evals.scenarios.helpers import JAMES, SARAH

# Sarah's earlier report: The Goldfinch of BK-10042 arrived damaged.
_REPORTED: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "BK-10042": (("damaged", ("The Goldfinch",)),)
}


def _lookup(order_id: str, email: str) -> tuple[str, dict]:
    return ("lookup_delivery_cases", {"order_id": order_id, "customer_email": email})


def _sarah_reported_a_damaged_book() -> None:
    order = Order.objects.get(number="BK-10042")
    delivery_case_open(
        order=order,
        problem=DeliveryProblem.DAMAGED,
        items=[order.items.get(title="The Goldfinch")],
        details="The cover is torn.",
    )


def _sarah_s_case_resolved() -> None:
    _sarah_reported_a_damaged_book()
    delivery_case_resolve(
        case=Order.objects.get(number="BK-10042").delivery_cases.get(),
        resolution="We sent you a new copy of The Goldfinch at no charge.",
        resolved_by=None,
    )


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "news_of_a_reported_problem_asks_for_the_email_then_tells_the_open_case",
        setup=_sarah_reported_a_damaged_book,
        turns=(
            Exchange(
                "What happened with the problem I reported on order BK-10042?",
                reply_contains=("email",),
                reply_excludes=("Goldfinch",),
            ),
            Exchange(SARAH, reply_contains=("The Goldfinch", "is open", "email you")),
        ),
        tools=(_lookup("BK-10042", SARAH),),
        cases=_REPORTED,
    ),
    Scenario(
        # What staff did is in the email they sent, never repeated: free text no tool vouches for.
        "news_of_a_resolved_case_says_staff_emailed_what_they_did",
        setup=_sarah_s_case_resolved,
        turns=(
            Exchange(
                f"Any news on my case for BK-10042? {SARAH}",
                reply_contains=("was resolved on", "emailed you what they did"),
                reply_excludes=("new copy",),
            ),
        ),
        tools=(_lookup("BK-10042", SARAH),),
        cases=_REPORTED,
    ),
    Scenario(
        "news_of_a_case_with_an_email_not_on_the_order_tells_nothing",
        setup=_sarah_reported_a_damaged_book,
        turns=(
            Exchange(
                f"Any news on my case for BK-10042? {JAMES}",
                reply_contains=("couldn't find an order",),
                reply_excludes=("Goldfinch", "damaged", "open"),
            ),
        ),
        tools=(_lookup("BK-10042", JAMES),),
        cases=_REPORTED,
    ),
)
