"""Order status: an order looked up by its number and the email on it (what it tells, what a wrong email or
number does not), and asking for them."""

from support.evals.runner import Exchange, Scenario
from support.evals.scenarios.helpers import JAMES, SARAH, STRANGER, lookup

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "status_asks_number_then_email",
        turns=(
            Exchange("Where is my order?", reply_contains=("order number",)),
            Exchange("It's BK-10089", reply_contains=("email",)),
            Exchange(JAMES, reply_contains=("shipped", "1Z999AA10987654321")),
        ),
        tools=(lookup("BK-10089", JAMES),),
    ),
    Scenario(
        "status_all_details_at_once",
        turns=(Exchange(f"What's the status of BK-10089? My email is {JAMES}", reply_contains=("shipped",)),),
        tools=(lookup("BK-10089", JAMES),),
    ),
    Scenario(
        "status_delivered_order",
        turns=(Exchange(f"Has order BK-10042 arrived? {SARAH}", reply_contains=("delivered", "2026-03-30")),),
        tools=(lookup("BK-10042", SARAH),),
    ),
    Scenario(
        "status_processing_order_has_no_tracking_yet",
        turns=(Exchange(f"Where is BK-10103? {SARAH}", reply_contains=("processing",)),),
        tools=(lookup("BK-10103", SARAH),),
    ),
    Scenario(
        "status_email_in_other_case_and_spaces",
        turns=(
            Exchange(
                "Track bk-10089 please, email:   James.Murphy@Example.COM  ", reply_contains=("shipped",)
            ),
        ),
        tools=(lookup("BK-10089", JAMES),),
    ),
    Scenario(
        "two_orders_my_order_with_email_only_asks_for_the_number",
        turns=(
            Exchange(f"Where's my order? My email is {SARAH}", reply_contains=("order number",)),
            Exchange("BK-10103", reply_contains=("processing",)),
        ),
        tools=(lookup("BK-10103", SARAH),),
    ),
    Scenario(
        "no_order_number_is_not_looked_up_by_email",
        turns=(
            Exchange(
                f"I don't know my order number, can you find my orders with my email {SARAH}?",
                reply_contains=("BK-",),
                reply_excludes=("BK-10042", "BK-10103"),
            ),
        ),
        tools=(),
    ),
    Scenario(
        "wrong_email_reveals_nothing",
        turns=(
            Exchange(
                f"Where is BK-10042? My email is {JAMES}",
                reply_excludes=("delivered", "Goldfinch", "Sarah", "1Z999"),
            ),
        ),
        tools=(lookup("BK-10042", JAMES),),
    ),
    Scenario(
        "missing_order_answers_like_a_wrong_email",
        turns=(Exchange(f"Status of BK-99999 for {JAMES}?", reply_excludes=("shipped", "delivered")),),
        tools=(lookup("BK-99999", JAMES),),
    ),
    Scenario(
        "status_answers_the_order_date_tracking_number_and_items_asked_for",
        turns=(
            Exchange(
                f"When was BK-10042 ordered, what's its tracking number and which books are in it? {SARAH}",
                reply_contains=("2026-03-25", "1Z999AA10123456784", "The Goldfinch", "Sapiens"),
            ),
        ),
        tools=(lookup("BK-10042", SARAH),),
    ),
    Scenario(
        "wrong_email_then_the_right_one_is_looked_up_again",
        turns=(
            Exchange(
                f"Where is order BK-10042? Email: {STRANGER}", reply_excludes=("delivered", "Goldfinch")
            ),
            Exchange(f"Sorry, it's {SARAH}", reply_contains=("delivered",)),
        ),
        tools=(lookup("BK-10042", STRANGER), lookup("BK-10042", SARAH)),
    ),
    Scenario(
        "malformed_order_number_is_asked_for_again",
        turns=(
            Exchange(f"Track my order BK-123 please, {SARAH}", reply_contains=("order number",)),
            Exchange("Sorry, it's BK-10103", reply_contains=("processing",)),
        ),
        tools=(lookup("BK-10103", SARAH),),
        # The offline model tries the number it was given and is told it is malformed.
        tools_alternatives=((lookup("BK-123", SARAH), lookup("BK-10103", SARAH)),),
    ),
    Scenario(
        "no_order_number_mid_flow_is_told_where_to_find_it",
        turns=(
            Exchange("Where is my order?", reply_contains=("order number",)),
            Exchange(
                "I don't know my order number, can you find it with my email?",
                reply_contains=("confirmation email",),
            ),
        ),
        tools=(),
    ),
    Scenario(
        "address_of_an_order_is_told_only_after_verification",
        turns=(
            Exchange(f"Where is BK-10103 going? {JAMES}", reply_excludes=("Maple",)),
            Exchange(f"Sorry, my email is {SARAH}", reply_contains=("418 Maple Avenue",)),
        ),
        tools=(lookup("BK-10103", JAMES), lookup("BK-10103", SARAH)),
    ),
    Scenario(
        "unclear_answers_to_the_order_number_question_ask_for_it_again",
        turns=(
            Exchange("Where is my order?", reply_contains=("order number", "BK-")),
            Exchange("hmm", reply_contains=("order number",)),
            Exchange("It's my order from last week", reply_contains=("order number",)),
            Exchange("BK-10089", reply_contains=("email",)),
            Exchange(JAMES, reply_contains=("shipped",)),
        ),
        tools=(lookup("BK-10089", JAMES),),
    ),
    Scenario(
        "order_number_alone_then_status_is_looked_up",
        turns=(
            Exchange("BK-10042"),
            Exchange("The status please", reply_contains=("email",)),
            Exchange(SARAH, reply_contains=("delivered",)),
        ),
        tools=(lookup("BK-10042", SARAH),),
    ),
)
