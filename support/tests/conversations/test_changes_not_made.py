"""A change the customer asked for in the chat that the shop keeping the order did not make (refused it,
or failed for good): the chat tells the customer before anything else about the order, once, with a
person offered: in their next message's reply, in a later conversation that looks the order up, or on
their open page the next time it asks for news. Staff see it with the shop's words."""

import json
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.timezone import localtime

from orders.models import Order, OrderChange, OrderStatus
from orders.services import order_change_shop_failed
from support.assistant.capabilities import cancellation
from support.conversations.not_made import changes_not_made_untold, conversation_not_made_message_add
from support.conversations.services import conversation_order_cancel
from support.models import Conversation, ConversationMessage, ConversationOrderChange, ConversationStatus
from support.testing.messages_stub import message, text, tool_use
from support.web.page import message_html

SARAH = "my email is sarah.chen@example.com"
NOT_MADE = "The store could not cancel order BK-10103."
HELP = "A member of our support team can help with it: just ask for a person."
OFFER = "Would you like me to pass this to a member of our support team?"


@pytest.fixture
def kept_by_shopify(demo_data, settings):
    """Sarah's order, as Shopify sent it, with write-back on: a change is asked of Shopify first."""
    settings.BOOKLY_CHANGES_THROUGH_SHOP = ["shopify"]
    Order.objects.filter(number="BK-10103").update(source="shopify", shop_order_id="450789469")


@pytest.fixture
def cancel_asked(offline, kept_by_shopify, customer):
    """Sarah asked the assistant to cancel BK-10103 and read that the store was asked."""
    customer.send(f"Please cancel my order BK-10103, {SARAH}")
    asked = customer.send("yes").json()
    assert asked["reply"].startswith("I have asked the store to cancel order BK-10103.")
    return asked


def _shop_refuses() -> None:
    """Shopify answers the write with 422 (connection.write_back: order_change_shop_failed)."""
    order_change_shop_failed(
        change_id=OrderChange.objects.get().pk, answer="422: Cannot cancel an order that has been fulfilled"
    )


@pytest.fixture
def refused_earlier(kept_by_shopify) -> Conversation:
    """Sarah asked to cancel BK-10103 in an earlier conversation (another session), and Shopify refused."""
    asked_in = Conversation.objects.create(session_handle="an earlier session")
    conversation_order_cancel(conversation=asked_in, order=Order.objects.get(number="BK-10103"))
    _shop_refuses()
    return asked_in


def test_the_next_message_is_told_first_and_once(cancel_asked, customer):
    _shop_refuses()

    told = customer.send("thanks!").json()["reply"]
    assert told.startswith(f"{NOT_MADE} {HELP}\n\n")
    assert "fulfilled" not in told  # the shop's words are for staff
    assert ConversationOrderChange.objects.get().customer_told_at is not None
    assert NOT_MADE not in customer.send("where is BK-10103?").json()["reply"]


def test_a_later_conversation_that_looks_the_order_up_is_told_first(offline, refused_earlier, customer):
    reply = customer.send(f"Where is my order BK-10103? {SARAH}").json()["reply"]
    assert reply.startswith(f"{NOT_MADE} {HELP}\n\nThe status of order BK-10103 is processing.")
    assert ConversationOrderChange.objects.get(conversation=refused_earlier).customer_told_at is not None


def test_an_open_page_is_told_when_it_next_asks_for_news(cancel_asked, customer):
    assert cancel_asked["awaiting_store"] is True  # the page asks for news while the store is asked
    assert customer.transcript().json()["awaiting_store"] is True
    _shop_refuses()

    news = customer.transcript().json()
    assert news["awaiting_store"] is False
    assert news["messages"][-1] == {
        "role": "assistant",
        "text": f"{NOT_MADE} {OFFER}",
        "at": news["messages"][-1]["at"],
    }  # its own message, taking no vote
    assert customer.transcript().json()["messages"] == news["messages"]  # told once
    # The turn after it tells nothing again; a yes to the person offered hands the conversation over.
    handed = customer.send("yes please").json()
    assert handed["status"] == ConversationStatus.WAITING and NOT_MADE not in handed["reply"]


def test_asked_again_the_check_says_the_last_attempt_failed(offline, refused_earlier, customer):
    reply = customer.send(f"Please cancel my order BK-10103, {SARAH}").json()["reply"]
    [result] = [
        json.loads(block["content"])
        for stored in ConversationMessage.objects.filter(role="user")
        for block in stored.content
        if block["type"] == "tool_result"
    ]
    assert (result["cancellable"], result["last_attempt_failed"]) == (True, NOT_MADE)
    # Said first, once (the turn does not say it again), before the same change is offered again.
    assert reply.startswith(
        f"{NOT_MADE} {HELP} Order BK-10103 has not shipped yet, so it can still be cancelled."
    )
    assert reply.count(NOT_MADE) == 1


def test_staff_see_it_on_the_conversation_with_the_shops_words(cancel_asked, customer, staff_client):
    _shop_refuses()
    customer.send("thanks!")
    conversation = Conversation.objects.get()

    page = staff_client.get(f"/admin/support/conversation/{conversation.pk}/change/").content.decode()
    assert "the shop did not make it: 422: Cannot cancel an order that has been fulfilled" in page
    assert "the customer was told in the chat" in page
    order = Order.objects.get(number="BK-10103")
    page = staff_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert "The shop did not make it: 422: Cannot cancel an order that has been fulfilled" in page
    told = ConversationOrderChange.objects.get().customer_told_at
    assert "Told in the chat" in page and date_format(localtime(told), "DATETIME_FORMAT") in page


def test_a_page_without_javascript_is_told_too(cancel_asked, customer):
    _shop_refuses()
    assert message_html(text=f"{NOT_MADE} {OFFER}") in customer.http.get("/").content.decode()


def test_while_a_turn_runs_the_page_is_not_told_the_turn_tells(cancel_asked, customer):
    _shop_refuses()
    Conversation.objects.update(
        lease_token=uuid.uuid4(), lease_expires_at=timezone.now() + timedelta(seconds=20)
    )

    news = customer.transcript().json()
    assert news["awaiting_store"] is True and NOT_MADE not in news["messages"][-1]["text"]


@pytest.mark.parametrize("since", ["asked again", "made by the shop"])
def test_a_change_not_made_is_no_news_once_the_order_moved_on(refused_earlier, since):
    order = Order.objects.get(number="BK-10103")
    if since == "asked again":
        conversation_order_cancel(conversation=refused_earlier, order=order)  # the shop is making it now
    else:
        Order.objects.filter(pk=order.pk).update(status=OrderStatus.CANCELLED)  # Shopify cancelled it itself

    assert changes_not_made_untold(conversation_id=refused_earlier.pk, order_ids=[order.pk]) == []


def test_two_pages_asking_at_once_are_told_once(refused_earlier):
    [change] = changes_not_made_untold(conversation_id=refused_earlier.pk)  # both read it untold

    told = [
        conversation_not_made_message_add(conversation=refused_earlier, text=NOT_MADE, links=change.links)
        for _tab in range(2)
    ]
    assert told == [True, False] and refused_earlier.messages.count() == 1


def test_told_first_whatever_the_model_writes(model_api, refused_earlier, customer):
    sarah = {"order_id": "BK-10103", "customer_email": "sarah.chen@example.com"}
    silent = "Order BK-10103 has not shipped yet, so it can still be cancelled. Shall I cancel it?"
    model_api.reset(message(tool_use("check_cancellation", sarah)), message(text(silent)))

    reply = customer.send("Can I cancel BK-10103? sarah.chen@example.com").json()["reply"]
    [result] = [json.loads(block["content"]) for block in model_api.sent[1]["messages"][-1]["content"]
                if block["type"] == "tool_result"]  # fmt: skip
    assert result["last_attempt_failed"] == NOT_MADE  # the model was told
    assert reply == f"{NOT_MADE} {HELP}\n\n{silent}"  # and said nothing of it: the customer reads it anyway


def test_refused_while_the_turn_that_asked_it_runs_it_is_told_after_the_ask(
    offline, kept_by_shopify, customer, monkeypatch
):
    customer.send(f"Please cancel my order BK-10103, {SARAH}")

    def asked_then_refused_at_once(**kwargs):
        change = conversation_order_cancel(**kwargs)
        _shop_refuses()  # before the reply is written: a queue worker faster than the model
        return change

    monkeypatch.setattr(cancellation, "conversation_order_cancel", asked_then_refused_at_once)
    assert customer.send("yes").json()["reply"] == (
        "I have asked the store to cancel order BK-10103. You will get an email as soon as the store has "
        f"cancelled it.\n\n{NOT_MADE} {HELP}"
    )
