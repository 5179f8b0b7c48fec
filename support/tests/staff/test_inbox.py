"""The live inbox's server side: what the open inbox polls (the customers waiting, a version that moves
whenever a row would) and who may poll it. The polling page itself runs in web/test_browser.py."""

from datetime import timedelta

import pytest
from django.utils import timezone

from orders.models import DeliveryCase
from orders.services import delivery_case_resolve
from support.conversations.handoff import (
    conversation_assign,
    conversation_assign_to,
    conversation_close,
    conversation_hand_back,
    conversation_staff_reply,
)
from support.models import Conversation, ConversationStatus, StaffAvailability
from support.staff.selectors import inbox_state
from support.testing.chat_client import ChatClient
from support.testing.messages_stub import message, text

INBOX = "/admin/support/conversation/"
STATE = f"{INBOX}inbox/state/"


def _state(client) -> dict:
    response = client.get(STATE)
    assert response.status_code == 200
    return response.json()


@pytest.fixture
def answered(claude):
    claude.reset(*[message(text("I can help with orders.")) for _ in range(5)])
    return claude


def test_waiting_customers_longest_wait_first_with_who_they_are(staff_client, answered):
    first, second = ChatClient(), ChatClient()
    first.handoff()
    second.handoff({"email": "ann@example.com"})
    Conversation.objects.filter(customer_email="").update(handoff_at=timezone.now() - timedelta(minutes=5))
    earlier, later = Conversation.objects.order_by("handoff_at")
    waiting = _state(staff_client)["waiting"]
    assert [entry["id"] for entry in waiting] == [earlier.pk, later.pk]
    assert waiting[0]["customer"] == f"A visitor, conversation {earlier.pk}"
    assert waiting[1]["customer"] == f"ann@example.com, conversation {later.pk}"


def test_the_version_moves_with_every_change_a_row_would_show(staff_client, staff_user, customer, answered):
    versions = [_state(staff_client)["version"]]

    def moved() -> bool:
        versions.append(_state(staff_client)["version"])
        return versions[-1] != versions[-2]

    customer.send("Where is my order?")
    assert moved()  # a new conversation
    assert not moved()  # nothing happened
    customer.send("It is BK-10042")
    assert moved()  # a new message
    customer.handoff()
    assert moved()  # waiting
    conversation = Conversation.objects.get()
    conversation_assign(conversation=conversation, user=staff_user)
    assert moved()  # taken
    conversation_staff_reply(conversation=conversation, user=staff_user, text="Hello!")
    assert moved()
    conversation_hand_back(conversation=conversation, user=staff_user)
    assert moved()  # back with the assistant
    conversation_close(conversation=conversation, user=staff_user)
    assert moved()
    assert Conversation.objects.get().status == ConversationStatus.CLOSED


def test_a_customer_leaving_moves_the_version(staff_client, customer, answered):
    customer.handoff()
    before = _state(staff_client)["version"]
    customer.reset()  # "Start a new conversation": the waiting one is left
    assert _state(staff_client)["version"] != before
    assert _state(staff_client)["waiting"] == []


def test_polling_keeps_staff_available_only_while_they_use_the_page(
    staff_client, staff_user, customer, answered
):
    customer.send("Hello")
    conversation = Conversation.objects.get()
    staff_client.post(f"{INBOX}availability/", {"available": "yes"})
    almost_over = timezone.now() + timedelta(seconds=30)
    StaffAvailability.objects.filter(user=staff_user).update(available_until=almost_over)
    idle = {"HTTP_X_BOOKLY_POLL": "idle"}  # what the scripts send while nobody touches the page
    assert staff_client.get(STATE, **idle).json()["available"] is True
    staff_client.get(INBOX, **idle)  # the rows fetched again
    staff_client.get(f"{INBOX}{conversation.pk}/change/", **idle)  # a conversation's page, refreshed
    assert StaffAvailability.objects.get(user=staff_user).available_until == almost_over  # only watched
    staff_client.get(STATE, HTTP_X_BOOKLY_POLL="active")
    assert StaffAvailability.objects.get(user=staff_user).available_until > almost_over + timedelta(minutes=5)


def test_only_those_who_may_read_conversations_may_poll(client, django_user_model):
    assert client.get(STATE).status_code == 302  # to the login page
    django_user_model.objects.create_user(username="clerk", password="clerk-pass-1234", is_staff=True)
    client.post("/admin/login/", {"username": "clerk", "password": "clerk-pass-1234"})
    assert client.get(STATE).status_code == 403


def test_a_case_resolved_moves_the_version(staff_client, staff_user, customer, offline, demo_data):
    customer.send("wrong book in my box BK-9871 maria.gonzalez@example.com")  # the built-in model reports it
    before = _state(staff_client)["version"]
    delivery_case_resolve(
        case=DeliveryCase.objects.get(), resolution="A new copy left today.", resolved_by=staff_user
    )
    assert _state(staff_client)["version"] != before  # its row says "Case N (resolved)" now


def test_what_a_colleague_gave_is_told_apart_from_what_one_took(staff_user, colleague, answered):
    ChatClient().handoff()
    ChatClient().handoff()
    given, taken = Conversation.objects.order_by("pk")
    conversation_assign_to(conversation=given, user=staff_user, assignee=colleague, expected_assignee_id=None)
    conversation_assign(conversation=taken, user=colleague)
    state = inbox_state(user=colleague)
    assert (sorted(state.mine), state.given) == ([given.pk, taken.pk], [given.pk])
