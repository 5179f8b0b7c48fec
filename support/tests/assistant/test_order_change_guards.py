"""Cancelling an order and changing its address, guarded in the tools whatever the model does (layer 3):
a scripted model misbehaves on purpose, through the real SDK of each provider. One test per guard."""

import json

import pytest

from orders.models import Order, OrderChange, OrderChangeKind, OrderStatus
from support.models import ConversationMessage, ConversationOrderChange
from support.testing.messages_stub import ErrorReply, message, text, tool_use

SARAH_PROCESSING = {"order_id": "BK-10103", "customer_email": "sarah.chen@example.com"}
NEW_ADDRESS = {
    "to": "Sarah Chen",
    "line1": "9 Lake Shore Drive",
    "city": "Chicago",
    "state": "IL",
    "zip": "60611",
}

pytestmark = pytest.mark.usefixtures("demo_data")


def tool_results(request: dict) -> list[dict]:
    blocks = request["messages"][-1]["content"]
    return [json.loads(block["content"]) for block in blocks if block["type"] == "tool_result"]


def order() -> Order:
    return Order.objects.get(number="BK-10103")


@pytest.fixture
def cancel_checked(demo_data, model_api, customer):
    model_api.reset(
        message(tool_use("check_cancellation", SARAH_PROCESSING)),
        message(text("It has not shipped. Shall I cancel it?")),
    )
    customer.send("Can I cancel BK-10103? sarah.chen@example.com")


@pytest.fixture
def address_checked(demo_data, model_api, customer):
    model_api.reset(
        message(tool_use("check_address_change", {**SARAH_PROCESSING, "new_address": NEW_ADDRESS})),
        message(text("It would go to Sarah Chen, 9 Lake Shore Drive, Chicago, IL 60611. Shall I change it?")),
    )
    customer.send(
        "Send BK-10103 to Sarah Chen, 9 Lake Shore Drive, Chicago, IL 60611. sarah.chen@example.com"
    )


def test_cancel_without_a_check_is_refused(model_api, customer):
    model_api.reset(message(tool_use("cancel_order", SARAH_PROCESSING)), message(text("Let me check first.")))
    customer.send("yes cancel BK-10103, sarah.chen@example.com")

    assert tool_results(model_api.sent[1])[0]["error"] == "check_not_done"
    assert order().status == OrderStatus.PROCESSING


def test_cancel_in_the_turn_of_its_check_is_refused_the_customer_has_not_answered(model_api, customer):
    model_api.reset(
        message(tool_use("check_cancellation", SARAH_PROCESSING)),
        message(tool_use("cancel_order", SARAH_PROCESSING)),
        message(text("Shall I cancel it?")),
    )
    customer.send("yes, cancel BK-10103 sarah.chen@example.com")

    assert tool_results(model_api.sent[2])[0]["error"] == "not_confirmed"
    assert order().status == OrderStatus.PROCESSING


@pytest.mark.parametrize(
    "words", ["no wait", "hmm, maybe later", "don't cancel it", "what's your return policy?"]
)
@pytest.mark.usefixtures("cancel_checked")
def test_cancel_after_words_that_are_not_a_yes_is_refused(model_api, customer, words):
    model_api.reset(message(tool_use("cancel_order", SARAH_PROCESSING)), message(text("Okay.")))
    customer.send(words)

    assert tool_results(model_api.sent[1])[0]["error"] == "not_confirmed"
    assert order().status == OrderStatus.PROCESSING


@pytest.mark.usefixtures("cancel_checked")
def test_cancel_after_a_yes_cancels_records_and_links_the_change_to_the_conversation(model_api, customer):
    model_api.reset(
        message(tool_use("cancel_order", SARAH_PROCESSING)), message(text("Order BK-10103 is now cancelled."))
    )
    response = customer.send("yes please cancel it")

    assert response.json()["reply"] == "Order BK-10103 is now cancelled."
    change = OrderChange.objects.get()
    assert (change.kind, order().status) == (OrderChangeKind.CANCELLED, OrderStatus.CANCELLED)
    assert ConversationOrderChange.objects.get().order_change == change


@pytest.mark.usefixtures("cancel_checked")
def test_a_cancel_asked_again_changes_nothing_and_says_so(model_api, customer):
    model_api.reset(message(tool_use("cancel_order", SARAH_PROCESSING)), message(text("Cancelled.")))
    customer.send("yes")
    model_api.reset(
        message(tool_use("cancel_order", SARAH_PROCESSING)), message(text("It was already cancelled."))
    )
    customer.send("yes")

    assert tool_results(model_api.sent[1])[0]["already_cancelled"] is True
    assert OrderChange.objects.count() == 1


@pytest.mark.usefixtures("cancel_checked")
def test_an_order_shipped_between_the_check_and_the_yes_is_not_cancelled(model_api, customer):
    Order.objects.filter(number="BK-10103").update(
        status=OrderStatus.SHIPPED, tracking_number="1Z999AA10111111111"
    )
    model_api.reset(
        message(tool_use("cancel_order", SARAH_PROCESSING)), message(text("It has already shipped."))
    )
    customer.send("yes")

    result = tool_results(model_api.sent[1])[0]
    assert result["error"] == "already_shipped"
    assert "can no longer be cancelled" in result["message"]
    assert not OrderChange.objects.exists()


@pytest.mark.usefixtures("cancel_checked")
def test_a_cancel_made_before_the_model_fails_is_told_and_kept(model_api, customer):
    model_api.reset(
        message(tool_use("cancel_order", SARAH_PROCESSING)), *[ErrorReply(529, "overloaded_error")] * 2
    )
    response = customer.send("yes")

    assert response.status_code == 200
    assert response.json()["reply"].startswith("Order BK-10103 is cancelled.")
    assert order().status == OrderStatus.CANCELLED
    stored = json.dumps([m.content for m in ConversationMessage.objects.all()])
    assert "cancel_order" in stored  # the step that cancelled, committed with the cancellation


@pytest.mark.usefixtures("address_checked")
def test_the_address_written_is_the_one_read_back_and_confirmed(model_api, customer):
    model_api.reset(
        message(tool_use("change_shipping_address", SARAH_PROCESSING)),
        message(text("Done, it will go there.")),
    )
    customer.send("Yes, that's right")

    order_now = order()
    assert (order_now.ship_line1, order_now.ship_city, order_now.ship_zip) == (
        "9 Lake Shore Drive",
        "Chicago",
        "60611",
    )
    change = OrderChange.objects.get()
    assert change.before["line1"] == "418 Maple Avenue"
    assert change.after["line1"] == "9 Lake Shore Drive"


@pytest.mark.usefixtures("address_checked")
def test_a_yes_after_the_address_changed_writes_nothing_more(model_api, customer):
    """The write uses its check up: a second yes (a double submit, "yes!!") has nothing to agree to."""
    model_api.reset(message(tool_use("change_shipping_address", SARAH_PROCESSING)), message(text("Done.")))
    customer.send("yes")
    model_api.reset(message(tool_use("change_shipping_address", SARAH_PROCESSING)), message(text("Done.")))
    customer.send("yes")

    assert tool_results(model_api.sent[1])[0]["error"] == "check_not_done"
    assert OrderChange.objects.count() == 1


@pytest.mark.usefixtures("cancel_checked")
def test_a_check_that_fails_again_leaves_nothing_a_yes_could_confirm(model_api, customer):
    """Asked again after the order shipped, the check fails: the earlier pass no longer counts."""
    Order.objects.filter(number="BK-10103").update(
        status=OrderStatus.SHIPPED, tracking_number="1Z999AA10111111111"
    )
    model_api.reset(message(tool_use("check_cancellation", SARAH_PROCESSING)), message(text("It shipped.")))
    customer.send("can I still cancel it?")
    Order.objects.filter(number="BK-10103").update(status=OrderStatus.PROCESSING, tracking_number="")
    model_api.reset(message(tool_use("cancel_order", SARAH_PROCESSING)), message(text("Cancelled.")))
    customer.send("yes")

    assert tool_results(model_api.sent[1])[0]["error"] == "check_not_done"
    assert order().status == OrderStatus.PROCESSING


def test_an_address_change_without_its_check_is_refused(model_api, customer, cancel_checked):
    model_api.reset(message(tool_use("change_shipping_address", SARAH_PROCESSING)), message(text("Okay.")))
    customer.send("yes")  # to cancelling: no address was ever read back

    assert tool_results(model_api.sent[1])[0]["error"] == "check_not_done"
    assert order().ship_line1 == "418 Maple Avenue"


@pytest.mark.parametrize(
    ("fields", "problems"),
    [
        (
            {"line1": "9 Lake\x1b[2J Shore Drive"},
            [("new_address.line1", "must not contain control or invisible characters")],
        ),
        ({"city": "C" * 10_000}, [("new_address.city", "must be at most 60 characters")]),
        ({"state": "Ontario", "zip": "M5V 2T6"}, [("new_address.state", None), ("new_address.zip", None)]),
    ],
)
def test_a_malformed_address_is_named_by_field_without_echo_and_not_kept(
    model_api, customer, fields, problems
):
    model_api.reset(
        message(
            tool_use("check_address_change", {**SARAH_PROCESSING, "new_address": {**NEW_ADDRESS, **fields}})
        ),
        message(text("Some of that address is not right.")),
    )
    customer.send("Send BK-10103 elsewhere please, sarah.chen@example.com")
    [result] = tool_results(model_api.sent[1])
    model_api.reset(message(tool_use("change_shipping_address", SARAH_PROCESSING)), message(text("Okay.")))
    customer.send("yes")

    assert result["error"] == "invalid_address"
    named = [(problem["field"], problem["problem"]) for problem in result["problems"]]
    assert [field for field, _ in named] == [field for field, _ in problems]
    assert all(wanted in (None, said) for (_, said), (_, wanted) in zip(named, problems, strict=True))
    for value in fields.values():
        assert value[:12] not in json.dumps(result)  # problems are named, never echoed
    assert tool_results(model_api.sent[1])[0]["error"] == "check_not_done"
    assert order().ship_line1 == "418 Maple Avenue"


def test_an_address_in_another_country_is_refused_and_never_made_whatever_the_model_does(model_api, customer):
    london = {"to": "Sarah Chen", "line1": "221B Baker Street", "city": "London", "zip": "NW1 6XE",
              "country": "United Kingdom"}  # fmt: skip
    model_api.reset(
        message(tool_use("check_address_change", {**SARAH_PROCESSING, "new_address": london})),
        message(text("It would go to London. Shall I?")),
    )
    customer.send("Send BK-10103 to 221B Baker Street, London NW1 6XE, UK please, sarah.chen@example.com")
    [result] = tool_results(model_api.sent[1])
    model_api.reset(message(tool_use("change_shipping_address", SARAH_PROCESSING)), message(text("Done.")))
    customer.send("yes")

    assert (result["changeable"], result["ships_within"]) == (False, "the United States")
    assert result["reason"] == (
        "The store ships order BK-10103 within the United States; a change to the United Kingdom needs our "
        "team."
    )
    assert "new_address" not in result  # nothing read back as if it could be made
    assert tool_results(model_api.sent[1])[0]["error"] == "check_not_done"
    assert (order().ship_line1, order().ship_country) == ("418 Maple Avenue", "US")


def test_the_address_is_told_only_with_the_email_on_the_order(model_api, customer):
    model_api.reset(
        message(
            tool_use(
                "check_address_change",
                {
                    **SARAH_PROCESSING,
                    "customer_email": "james.murphy@example.com",
                    "new_address": NEW_ADDRESS,
                },
            )
        ),
        message(tool_use("lookup_order", {**SARAH_PROCESSING, "customer_email": "james.murphy@example.com"})),
        message(text("No order matches.")),
    )
    customer.send("Where does BK-10103 go? james.murphy@example.com")

    results = tool_results(model_api.sent[1]) + tool_results(model_api.sent[2])
    assert [result.get("error") for result in results] == ["order_not_found", "order_not_found"]
    assert "Maple" not in json.dumps(model_api.sent)


@pytest.mark.usefixtures("cancel_checked")
def test_a_cancellation_is_emailed_to_the_orders_address(
    model_api, customer, mailoutbox, django_capture_on_commit_callbacks
):
    model_api.reset(
        message(tool_use("cancel_order", SARAH_PROCESSING)), message(text("Order BK-10103 is now cancelled."))
    )
    with django_capture_on_commit_callbacks(execute=True):
        customer.send("yes, cancel it")

    [mail] = mailoutbox
    assert (mail.to, mail.subject) == (["sarah.chen@example.com"], "Your order BK-10103 is cancelled")


@pytest.fixture
def kept_by_shopify(demo_data, settings):
    """Sarah's order, as Shopify sent it, with write-back on: a change is asked of Shopify first."""
    settings.BOOKLY_CHANGES_THROUGH_SHOP = ["shopify"]
    Order.objects.filter(number="BK-10103").update(source="shopify", shop_order_id="450789469")


ASKED = (
    "I have asked the store to cancel order BK-10103. You will get an email as soon as the store has "
    "cancelled it."
)


@pytest.mark.usefixtures("kept_by_shopify", "cancel_checked")
@pytest.mark.parametrize("told", ["Order BK-10103 is now cancelled.", "Done, it's cancelled."])
def test_a_cancellation_its_shop_must_make_is_never_told_as_done(model_api, customer, mailoutbox, told):
    model_api.reset(message(tool_use("cancel_order", SARAH_PROCESSING)), message(text(told)))
    reply = customer.send("yes please cancel it").json()["reply"]

    result = tool_results(model_api.sent[1])[0]
    assert (result["cancellation_asked"], result["status"]) == (True, OrderStatus.PROCESSING)
    assert reply != told  # the validator's fallback, never stored
    assert told not in ConversationMessage.objects.values_list("content", flat=True)
    assert order().status == OrderStatus.PROCESSING and mailoutbox == []


@pytest.mark.usefixtures("kept_by_shopify", "cancel_checked")
def test_a_cancellation_its_shop_must_make_is_told_as_asked(model_api, customer):
    model_api.reset(message(tool_use("cancel_order", SARAH_PROCESSING)), message(text(ASKED)))
    assert customer.send("yes please cancel it").json()["reply"] == ASKED
    assert OrderChange.objects.get().state == "awaiting_shop"


@pytest.mark.usefixtures("kept_by_shopify", "address_checked")
@pytest.mark.parametrize(
    "told",
    ["Done. Order BK-10103 will now ship to Sarah Chen, 9 Lake Shore Drive, Chicago, IL 60611.",
     "I've updated the address.", "Your shipping address has been changed."],
)  # fmt: skip
def test_an_address_change_its_shop_must_make_is_never_told_as_done(model_api, customer, told):
    model_api.reset(message(tool_use("change_shipping_address", SARAH_PROCESSING)), message(text(told)))
    reply = customer.send("yes").json()["reply"]

    assert tool_results(model_api.sent[1])[0]["address_change_asked"] is True
    assert reply != told
    assert order().ship_line1 == "418 Maple Avenue"


@pytest.mark.usefixtures("address_checked")
def test_a_new_address_is_emailed_to_the_orders_address(
    model_api, customer, mailoutbox, django_capture_on_commit_callbacks
):
    model_api.reset(message(tool_use("change_shipping_address", SARAH_PROCESSING)), message(text("Done.")))
    with django_capture_on_commit_callbacks(execute=True):
        customer.send("yes")

    [mail] = mailoutbox
    assert "Sarah Chen, 9 Lake Shore Drive, Chicago, IL 60611" in mail.body


@pytest.mark.usefixtures("address_checked")
def test_a_check_from_further_back_is_no_question_a_later_yes_answers(model_api, customer):
    model_api.reset(message(text("Okay, I have not changed the address.")))
    customer.send("no, leave it")
    model_api.reset(message(tool_use("change_shipping_address", SARAH_PROCESSING)), message(text("Okay.")))
    customer.send("yes")  # to something else, two messages after the address was read back
    assert tool_results(model_api.sent[1])[0]["error"] == "not_confirmed"
    assert order().ship_line1 == "418 Maple Avenue"


def test_an_address_change_in_the_turn_of_its_check_is_refused(model_api, customer):
    model_api.reset(
        message(tool_use("check_address_change", {**SARAH_PROCESSING, "new_address": NEW_ADDRESS})),
        message(tool_use("change_shipping_address", SARAH_PROCESSING)),
        message(text("Shall I change it?")),
    )
    customer.send(
        "yes send BK-10103 to Sarah Chen, 9 Lake Shore Drive, Chicago, IL 60611, sarah.chen@example.com"
    )

    assert tool_results(model_api.sent[2])[0]["error"] == "not_confirmed"
    assert order().ship_line1 == "418 Maple Avenue"


@pytest.mark.usefixtures("address_checked")
def test_a_yes_with_a_correction_writes_nothing(model_api, customer):
    model_api.reset(message(tool_use("change_shipping_address", SARAH_PROCESSING)), message(text("Okay.")))
    customer.send("yes, but make it Apt 5")

    assert tool_results(model_api.sent[1])[0]["error"] == "not_confirmed"
    assert order().ship_line1 == "418 Maple Avenue"


def test_a_reply_about_a_new_address_or_a_cancellation_is_on_topic(model_api, customer):
    said = "Okay, I have not changed the address. Shall I cancel the order instead?"
    model_api.reset(message(text(said)))
    assert customer.send("no, leave the address as it is").json()["reply"] == said


@pytest.mark.usefixtures("offline", "kept_by_shopify")
def test_the_builtin_model_tells_a_change_its_shop_must_make_as_asked(customer):
    customer.send("Please cancel my order BK-10103, my email is sarah.chen@example.com")
    reply = customer.send("yes").json()["reply"]

    assert reply == ASKED
    assert order().status == OrderStatus.PROCESSING


@pytest.mark.usefixtures("offline", "kept_by_shopify")
def test_while_the_store_makes_it_the_order_is_told_as_it_is_with_the_change_coming(customer):
    customer.send("Please cancel my order BK-10103, my email is sarah.chen@example.com")
    customer.send("yes")
    reply = customer.send("where is BK-10103?").json()["reply"]

    assert "The status of order BK-10103 is processing." in reply
    assert reply.endswith(
        "The store is already cancelling this order: you will get an email as soon as it is cancelled."
    )


@pytest.mark.usefixtures("kept_by_shopify", "cancel_checked")
def test_a_lookup_after_the_change_was_asked_does_not_let_it_be_told_as_made(model_api, customer):
    model_api.reset(message(tool_use("cancel_order", SARAH_PROCESSING)), message(text(ASKED)))
    customer.send("yes")
    told = "Order BK-10103 is processing. It has been cancelled as you asked."
    model_api.reset(message(tool_use("lookup_order", SARAH_PROCESSING)), message(text(told)))
    assert customer.send("is it cancelled now?").json()["reply"] != told
