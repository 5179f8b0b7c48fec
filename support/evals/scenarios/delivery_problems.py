"""Delivery problems (never came, late, damaged, wrong or missing books): cases for staff, who then answer;
a refund asked for is a return, an order not shipped yet is offered a person."""

from support.evals.runner import Exchange, Scenario
from support.evals.scenarios.helpers import (
    JAMES,
    MARIA,
    SARAH,
    SARAHS_BOOKS,
    STRANGER,
    check,
    hand_off,
    lookup,
    report,
)

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "problem_delivered_but_never_received_in_one_message",
        turns=(
            Exchange(
                f"my package says delivered but i never got it. BK-10042 {SARAH}",
                reply_contains=("case", "never arrived", "carrier", "support team"),
                reply_excludes=("The status of order",),
            ),
            Exchange("so what do i do now? it's not here"),  # a person answers now: the model stays quiet
        ),
        tools=(report("BK-10042", SARAH, "not_arrived"),),
        cases={"BK-10042": (("not_arrived", SARAHS_BOOKS),)},
        status="waiting",
    ),
    Scenario(
        "problem_not_here_after_the_status_said_delivered",
        turns=(
            Exchange(f"where is my order BK-10042? {SARAH}", reply_contains=("delivered",)),
            Exchange("so what do i do now? it's not here", reply_contains=("case", "never arrived")),
        ),
        tools=(lookup("BK-10042", SARAH), report("BK-10042", SARAH, "not_arrived")),
        cases={"BK-10042": (("not_arrived", SARAHS_BOOKS),)},
        status="waiting",
    ),
    Scenario(
        "problem_late_told_after_a_lookup_is_that_orders",
        turns=(
            Exchange(f"status of BK-10042 please, {SARAH}", reply_contains=("delivered",)),
            Exchange(
                "but i only got it last week, it was late!",
                reply_contains=("case", "arrived late"),
                reply_excludes=("order number?", "can't help"),
            ),
        ),
        tools=(lookup("BK-10042", SARAH), report("BK-10042", SARAH, "late")),
        cases={"BK-10042": (("late", SARAHS_BOOKS),)},
        status="waiting",
    ),
    Scenario(
        "problem_damaged_asks_for_the_order_then_which_book",
        turns=(
            Exchange("the book arrived damaged", reply_contains=("report", "order number")),
            Exchange("BK-10042", reply_contains=("email",)),
            Exchange(SARAH, reply_contains=("Which of the books", "The Goldfinch and Sapiens")),
            Exchange("the goldfinch", reply_contains=("case", "arrived damaged (The Goldfinch)", "photo")),
        ),
        tools=(
            report("BK-10042", SARAH, "damaged"),
            report("BK-10042", SARAH, "damaged", ("The Goldfinch",)),
        ),
        cases={"BK-10042": (("damaged", ("The Goldfinch",)),)},
        status="waiting",
    ),
    Scenario(
        "problem_wrong_book_of_a_one_book_order_needs_no_title",
        turns=(
            Exchange(
                f"you sent me the wrong book, i ordered The Midnight Library. BK-9871 {MARIA}",
                reply_contains=("case", "wrong item sent (The Midnight Library)", "keep the book"),
            ),
        ),
        tools=(report("BK-9871", MARIA, "wrong_item"),),
        cases={"BK-9871": (("wrong_item", ("The Midnight Library",)),)},
        status="waiting",
    ),
    Scenario(
        "problem_a_book_missing_from_the_parcel",
        turns=(
            Exchange(
                f"one of the books was missing from the box. BK-10042 {SARAH}",
                reply_contains=("Which of the books",),
            ),
            Exchange("Sapiens", reply_contains=("case", "missing from the parcel (Sapiens)")),
        ),
        tools=(
            report("BK-10042", SARAH, "missing_item"),
            report("BK-10042", SARAH, "missing_item", ("Sapiens",)),
        ),
        cases={"BK-10042": (("missing_item", ("Sapiens",)),)},
        status="waiting",
    ),
    Scenario(
        "problem_both_books_damaged",
        turns=(
            Exchange(f"my books came damaged, water everywhere. BK-10042 {SARAH}", reply_contains=("Which",)),
            Exchange("both of them", reply_contains=("case", "The Goldfinch and Sapiens")),
        ),
        tools=(report("BK-10042", SARAH, "damaged"), report("BK-10042", SARAH, "damaged", SARAHS_BOOKS)),
        cases={"BK-10042": (("damaged", SARAHS_BOOKS),)},
        status="waiting",
    ),
    Scenario(
        "problem_stolen_parcel_of_a_shipped_order",
        turns=(
            Exchange(
                f"my package was stolen off my porch, BK-10089, {JAMES}",
                reply_contains=("case", "never arrived", "support team"),
            ),
        ),
        tools=(report("BK-10089", JAMES, "not_arrived"),),
        cases={"BK-10089": (("not_arrived", ("Project Hail Mary",)),)},
        status="waiting",
    ),
    Scenario(
        "problem_with_an_order_not_yet_shipped_offers_a_person",
        turns=(
            Exchange(
                f"my book came damaged BK-10103 {SARAH}", reply_contains=("not shipped yet", "support team?")
            ),
            Exchange("yes please", reply_contains=("support team",)),
        ),
        tools=(report("BK-10103", SARAH, "damaged"), hand_off("needs_staff")),
        status="waiting",
    ),
    Scenario(
        "problem_damaged_with_a_refund_asked_for_is_a_return",
        turns=(
            Exchange(
                f"the cover of my book is torn and i want a refund. BK-10042 {SARAH}",
                reply_contains=("can be returned", "yes or no"),
                reply_excludes=("case",),
            ),
        ),
        tools=(check("BK-10042", SARAH),),
    ),
    Scenario(
        "problem_with_the_wrong_email_opens_no_case",
        turns=(
            Exchange(
                f"my parcel says delivered but it never came. BK-10042 {STRANGER}",
                reply_contains=("couldn't find an order",),
                reply_excludes=("case",),
            ),
        ),
        tools=(report("BK-10042", STRANGER, "not_arrived"),),
    ),
)
