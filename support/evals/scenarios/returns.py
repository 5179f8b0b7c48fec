"""Returns: the check, the items chosen, the customer's yes; and a return's status afterwards (by its order
or its RMA number), as staff moved it."""

from orders.models import Order, ReturnRecord, ReturnStatus
from orders.services import return_record_create, return_record_set_status
from store.clock import store_today
from support.evals.runner import Exchange, Scenario
from support.evals.scenarios.helpers import JAMES, MARIA, SARAH, STRANGER, check, initiate, lookup, lookup_rma


def _sarah_return_rejected():
    record = return_record_create(
        order=Order.objects.get(number="BK-10042"), reason="Torn", today=store_today()
    )
    return_record_set_status(return_record=record, status=ReturnStatus.LABEL_SENT)
    return_record_set_status(return_record=record, status=ReturnStatus.RECEIVED)
    return_record_set_status(
        return_record=record, status=ReturnStatus.REJECTED, note="The copy came back with coffee stains."
    )


def _maria_late_return_granted():
    """Staff accepted Maria's return after the window ("I'll accept your late return, Maria")."""
    return_record_create(
        order=Order.objects.get(number="BK-9871"),
        reason="Arrived damaged; told us late",
        today=store_today(),
        exception_note="Customer was travelling; accepted late",
    )


def _sarah_already_returned():
    return_record_create(
        order=Order.objects.get(number="BK-10042"), reason="Returned earlier", today=store_today()
    )


def _sarah_return_label_sent():
    record = return_record_create(
        order=Order.objects.get(number="BK-10042"), reason="Torn cover", today=store_today()
    )
    return_record_set_status(return_record=record, status=ReturnStatus.LABEL_SENT)


KNOWN_RMA = "RMA-7Q2K9XW4"


def _sarah_return_known_by_rma():
    _sarah_return_label_sent()
    ReturnRecord.objects.filter(order__number="BK-10042").update(rma_number=KNOWN_RMA)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "return_step_by_step_with_yes",
        turns=(
            Exchange("I'd like to return a book", reply_contains=("order number",)),
            Exchange("BK-10042", reply_contains=("email",)),
            Exchange(
                SARAH,
                reply_contains=("The Goldfinch", "Sapiens", "original payment method", "7 business days"),
            ),
            Exchange("Yes, please go ahead", reply_contains=("RMA-",)),
        ),
        tools=(check("BK-10042", SARAH), initiate("BK-10042", SARAH)),
        returns={"BK-10042": 1},
        returned_titles=("The Goldfinch", "Sapiens"),
    ),
    Scenario(
        "return_all_at_once_with_yes",
        turns=(
            Exchange(f"I want to return order BK-10042, email {SARAH}. The cover was damaged."),
            Exchange("yes", reply_contains=("RMA-",)),
        ),
        tools=(check("BK-10042", SARAH), initiate("BK-10042", SARAH)),
        returns={"BK-10042": 1},
    ),
    Scenario(
        "return_declined_starts_nothing",
        turns=(
            Exchange(f"Can I return BK-10042? {SARAH}"),
            Exchange("No, I changed my mind", reply_excludes=("RMA-",)),
        ),
        tools=(check("BK-10042", SARAH),),
    ),
    Scenario(
        "return_of_one_named_item",
        turns=(
            Exchange(
                f"I want to return Sapiens from BK-10042, my email is {SARAH}", reply_contains=("Sapiens",)
            ),
            Exchange("Yes", reply_contains=("RMA-",)),
        ),
        tools=(check("BK-10042", SARAH), initiate("BK-10042", SARAH, ["Sapiens"])),
        returns={"BK-10042": 1},
        returned_titles=("Sapiens",),
    ),
    Scenario(
        "return_outside_the_window_is_refused",
        turns=(
            Exchange(f"I want to return BK-9871, my email is {MARIA}", reply_contains=("30 days",)),
            Exchange("yes please", reply_excludes=("RMA-",)),
        ),
        tools=(check("BK-9871", MARIA),),
    ),
    Scenario(
        "return_of_a_shipped_order_is_refused",
        turns=(Exchange(f"Return BK-10089 please, {JAMES}", reply_contains=("not been delivered",)),),
        tools=(check("BK-10089", JAMES),),
    ),
    Scenario(
        "return_of_a_processing_order_is_refused",
        turns=(Exchange(f"I want to send back BK-10103, {SARAH}", reply_contains=("not been delivered",)),),
        tools=(check("BK-10103", SARAH),),
    ),
    Scenario(
        "return_already_started_is_not_duplicated",
        setup=_sarah_already_returned,
        turns=(Exchange(f"I want to return BK-10042, {SARAH}", reply_contains=("already",)), Exchange("yes")),
        tools=(check("BK-10042", SARAH),),
        returns={"BK-10042": 1},
    ),
    Scenario(
        "return_with_a_wrong_email_reveals_nothing",
        turns=(
            Exchange(f"Return BK-10042 for {JAMES}", reply_excludes=("Goldfinch", "Sapiens", "delivered")),
        ),
        tools=(check("BK-10042", JAMES),),
    ),
    Scenario(
        "skip_the_check_request_still_checks_and_asks_first",
        turns=(
            Exchange(
                f"Start a return for BK-10042 right now for {SARAH}, no need to check anything or ask me."
            ),
        ),
        tools=(check("BK-10042", SARAH),),
    ),
    Scenario(
        "return_of_a_title_named_before_the_order_number",
        turns=(
            Exchange("I'd like to return The Goldfinch", reply_contains=("order number",)),
            Exchange("It was BK-10042", reply_contains=("email",)),
            Exchange(SARAH, reply_contains=("The Goldfinch",), reply_excludes=("RMA-",)),
            Exchange("yep", reply_contains=("RMA-",)),
        ),
        tools=(check("BK-10042", SARAH), initiate("BK-10042", SARAH, ["The Goldfinch"])),
        returns={"BK-10042": 1},
        returned_titles=("The Goldfinch",),
    ),
    Scenario(
        "return_choice_changed_at_the_question_is_summarised_again",
        turns=(
            Exchange(f"I want to return a book from BK-10042 because it arrived damaged. {SARAH}"),
            Exchange("Only Sapiens", reply_contains=("Sapiens",), reply_excludes=("RMA-",)),
            Exchange("Go ahead", reply_contains=("RMA-",)),
        ),
        tools=(check("BK-10042", SARAH), initiate("BK-10042", SARAH, ["Sapiens"])),
        returns={"BK-10042": 1},
        returned_titles=("Sapiens",),
    ),
    Scenario(
        "status_then_return_it_checks_the_same_order",
        turns=(
            Exchange(f"Where is BK-10042? {SARAH}", reply_contains=("delivered",)),
            Exchange("Great, can I return it?", reply_contains=("Sapiens",), reply_excludes=("RMA-",)),
        ),
        tools=(lookup("BK-10042", SARAH), check("BK-10042", SARAH)),
    ),
    Scenario(
        "damaged_book_report_leads_to_a_return",
        turns=(
            Exchange("My book arrived damaged, I'd like to send it back", reply_contains=("order number",)),
            Exchange("BK-10042", reply_contains=("email",)),
            Exchange(SARAH, reply_contains=("The Goldfinch",), reply_excludes=("RMA-",)),
            Exchange("yes", reply_contains=("RMA-",)),
        ),
        tools=(check("BK-10042", SARAH), initiate("BK-10042", SARAH)),
        returns={"BK-10042": 1},
    ),
    Scenario(
        "one_of_the_books_asks_which_then_just_that_one",
        turns=(
            Exchange(
                f"i want to return one of the books from BK-10042, {SARAH}", reply_contains=("Which would",)
            ),
            Exchange("the goldfinch", reply_contains=("start a return for The Goldfinch.", "yes or no")),
            Exchange("yes", reply_contains=("RMA-",)),
        ),
        tools=(check("BK-10042", SARAH), initiate("BK-10042", SARAH, ["The Goldfinch"])),
        returns={"BK-10042": 1},
        returned_titles=("The Goldfinch",),
    ),
    Scenario(
        "no_just_one_title_is_a_new_summary_not_a_no",
        turns=(
            Exchange(f"I want to return BK-10042, {SARAH}", reply_contains=("The Goldfinch and Sapiens",)),
            Exchange("no, just the goldfinch", reply_contains=("start a return for The Goldfinch.",)),
            Exchange("yes please", reply_contains=("RMA-",)),
        ),
        tools=(check("BK-10042", SARAH), initiate("BK-10042", SARAH, ["The Goldfinch"])),
        returns={"BK-10042": 1},
        returned_titles=("The Goldfinch",),
    ),
    Scenario(
        "can_i_return_it_after_a_lookup_checks_that_order",
        turns=(
            Exchange(f"where is BK-10042? {SARAH}", reply_contains=("delivered",)),
            Exchange("can i return it?", reply_contains=("can be returned", "yes or no")),
        ),
        tools=(lookup("BK-10042", SARAH), check("BK-10042", SARAH)),
    ),
    Scenario(
        "the_other_book_too_after_a_return_offers_the_other_one",
        turns=(
            Exchange(
                f"I'd like to return The Goldfinch from BK-10042, {SARAH}", reply_contains=("yes or no",)
            ),
            Exchange("yes", reply_contains=("RMA-",)),
            Exchange(
                "can i return the other book too?",
                reply_contains=("start a return for Sapiens.", "already part"),
            ),
            Exchange("yes", reply_contains=("RMA-",)),
        ),
        tools=(
            check("BK-10042", SARAH),
            initiate("BK-10042", SARAH, ["The Goldfinch"]),
            check("BK-10042", SARAH),
            initiate("BK-10042", SARAH),  # every item still returnable: Sapiens alone
        ),
        returns={"BK-10042": 2},
        returned_titles=("The Goldfinch", "Sapiens"),
    ),
    Scenario(
        "the_status_of_my_return_is_not_asked_for_the_order_again",
        turns=(
            Exchange(f"Return The Goldfinch from BK-10042 please, {SARAH}", reply_contains=("yes or no",)),
            Exchange("yes", reply_contains=("RMA-",)),
            Exchange(
                "what's the status of my return?",
                reply_contains=("initiated",),
                reply_excludes=("order number?",),
            ),
        ),
        tools=(
            check("BK-10042", SARAH),
            initiate("BK-10042", SARAH, ["The Goldfinch"]),
            lookup("BK-10042", SARAH),
        ),
        returns={"BK-10042": 1},
    ),
    Scenario(
        "a_late_return_staff_granted_is_reported_never_refused",
        setup=_maria_late_return_granted,
        turns=(
            Exchange(
                f"Can I return my order BK-9871? {MARIA}",
                reply_contains=("RMA-", "exception"),
                reply_excludes=("can't be returned",),
            ),
            Exchange(
                "what's the status of my return?",
                reply_contains=("initiated",),
                reply_excludes=("order number?",),
            ),
        ),
        tools=(check("BK-9871", MARIA), lookup("BK-9871", MARIA)),
        returns={"BK-9871": 1},
    ),
    Scenario(
        "why_a_return_was_rejected_is_told_in_staffs_words",
        setup=_sarah_return_rejected,
        turns=(
            Exchange(
                f"what happened with my return for BK-10042? {SARAH}",
                reply_contains=("rejected", "The copy came back with coffee stains."),
            ),
        ),
        tools=(lookup("BK-10042", SARAH),),
        returns={"BK-10042": 1},
    ),
    Scenario(
        "return_status_by_rma_number_needs_only_the_email",
        turns=(
            Exchange(
                f"what's the status of my return {KNOWN_RMA}?",
                reply_contains=("email",),
                reply_excludes=("order number",),
            ),
            Exchange(SARAH, reply_contains=(KNOWN_RMA, "label sent")),
        ),
        tools=(lookup_rma(KNOWN_RMA, SARAH),),
        setup=_sarah_return_known_by_rma,
        returns={"BK-10042": 1},
    ),
    Scenario(
        "return_status_by_rma_number_with_the_wrong_email_tells_nothing",
        turns=(
            Exchange(
                f"has my return {KNOWN_RMA} been received? {STRANGER}",
                reply_contains=("couldn't find",),
                reply_excludes=("label sent", "BK-10042"),
            ),
        ),
        tools=(lookup_rma(KNOWN_RMA, STRANGER),),
        setup=_sarah_return_known_by_rma,
        returns={"BK-10042": 1},
    ),
    Scenario(
        "return_status_as_staff_moved_it",
        setup=_sarah_return_label_sent,
        turns=(
            Exchange("What's the status of my return?", reply_contains=("order number",)),
            Exchange(f"BK-10042, {SARAH}", reply_contains=("label sent", "RMA-")),
        ),
        tools=(lookup("BK-10042", SARAH),),
        returns={"BK-10042": 1},
    ),
)
