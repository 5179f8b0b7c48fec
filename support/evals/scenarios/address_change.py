"""A new shipping address: asked for, read back whole before the yes, what the customer does not change
kept, a bad one asked again, a shipped order refused."""

from support.evals.runner import Exchange, Scenario
from support.evals.scenarios.helpers import (
    JAMES,
    NEW_HOME,
    NEW_HOME_TYPED,
    SARAH,
    change_address,
    check_address,
)

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "address_change_asks_for_the_address_then_reads_it_back",
        turns=(
            Exchange("i need to change the delivery address on my order", reply_contains=("order number",)),
            Exchange("BK-10103", reply_contains=("email",)),
            Exchange(SARAH, reply_contains=("new shipping address",)),
            Exchange(NEW_HOME_TYPED, reply_contains=("9 Lake Shore Drive", "418 Maple Avenue", "yes or no")),
            Exchange("yes", reply_contains=("will now ship to Sarah Chen, 9 Lake Shore Drive",)),
        ),
        tools=(check_address("BK-10103", SARAH, **NEW_HOME), change_address("BK-10103", SARAH)),
        changes={"BK-10103": ("address_changed",)},
    ),
    Scenario(
        "address_change_all_at_once_then_declined",
        turns=(
            Exchange(
                f"Please change the address for BK-10103 to {NEW_HOME_TYPED}. My email is {SARAH}",
                reply_contains=("yes or no",),
            ),
            Exchange("no, leave it", reply_contains=("not changed",)),
        ),
        tools=(check_address("BK-10103", SARAH, **NEW_HOME),),
    ),
    Scenario(
        # A real shop keeps the recipient on the order unless told otherwise; the whole address is read
        # back before the yes.
        "address_change_without_a_name_keeps_the_recipient",
        turns=(
            Exchange(
                f"I need BK-10103 to go to a new address. {SARAH}", reply_contains=("new shipping address",)
            ),
            Exchange(
                "The new address is 42 Elm Street, Springfield, IL 62704",
                reply_contains=("Sarah Chen, 42 Elm Street, Springfield, IL 62704", "yes or no"),
            ),
            Exchange("yes", reply_contains=("will now ship to Sarah Chen, 42 Elm Street",)),
        ),
        tools=(
            check_address(
                "BK-10103", SARAH, line1="42 Elm Street", city="Springfield", state="IL", zip="62704"
            ),
            change_address("BK-10103", SARAH),
        ),
        changes={"BK-10103": ("address_changed",)},
    ),
    Scenario(
        "address_change_with_a_bad_zip_asks_again",
        turns=(
            Exchange(
                f"change the shipping address of BK-10103, {SARAH}", reply_contains=("new shipping address",)
            ),
            Exchange("Sarah Chen, 9 Lake Shore Drive, Chicago, Ontario 60611", reply_contains=("state",)),
            Exchange("Sarah Chen, 9 Lake Shore Drive, Chicago, IL 60611", reply_contains=("yes or no",)),
        ),
        tools=(
            check_address(
                "BK-10103",
                SARAH,
                to="Sarah Chen",
                line1="9 Lake Shore Drive",
                city="Chicago",
                state="Ontario",
                zip="60611",
            ),
            check_address(
                "BK-10103",
                SARAH,
                to="Sarah Chen",
                line1="9 Lake Shore Drive",
                city="Chicago",
                state="IL",
                zip="60611",
            ),
        ),
    ),
    Scenario(
        "address_change_of_a_shipped_order_is_refused",
        turns=(
            Exchange(
                f"I moved! Can you send BK-10089 to James Murphy, 5 Pine Rd, Bangor, ME 04401? {JAMES}",
                reply_contains=("already shipped",),
            ),
        ),
        tools=(
            check_address(
                "BK-10089",
                JAMES,
                to="James Murphy",
                line1="5 Pine Rd",
                city="Bangor",
                state="ME",
                zip="04401",
            ),
        ),
    ),
)
