"""The benchmark's asyncio alternative runs the product's turn, guards and storage included.

Its figures in bench/README.md are only a comparison if it does the same work:
these tests drive it through Django's AsyncClient against the local Messages API
stub (the real AsyncAnthropic SDK; never the network).
"""

import asyncio

import pytest
from asgiref.sync import async_to_sync
from django.contrib.sessions.backends.db import SessionStore
from django.test import AsyncClient

from bench.asgi_alternative import conversation_take_turn_async
from orders.models import ReturnRecord
from support.models import Conversation, ConversationMessage
from support.testing.messages_stub import ErrorReply, message, text, tool_use
from support.tests.conftest import claude, messages_stub  # noqa: F401 - fixtures

pytestmark = [pytest.mark.usefixtures("demo_data"), pytest.mark.urls("bench.asgi_alternative")]

SARAH = {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com"}


@pytest.fixture
def send():
    client = AsyncClient()

    def send(words: str):
        return async_to_sync(client.post)("/api/chat", {"message": words}, content_type="application/json")

    return send


def test_a_whole_return_runs_through_the_products_turn(claude, send):  # noqa: F811
    claude.reset(
        message(tool_use("check_return_eligibility", SARAH)),
        message(text("Order BK-10042 can be returned. Shall I start the return?")),
    )
    assert send("I want to return BK-10042, sarah.chen@example.com").json()["turn"] == 1
    claude.reset(
        message(tool_use("initiate_return", {**SARAH, "reason": "Changed my mind"})),
        message(text("Your return has started.")),
    )
    answered = send("Yes please")

    assert answered.status_code == 200
    assert answered.json()["reply"] == "Your return has started."
    assert ReturnRecord.objects.get().order.number == "BK-10042"
    # The protocol guard of the product's tools holds here too: the same conversation's check.
    assert Conversation.objects.get().eligibility_verified == ["BK-10042"]


def test_a_return_without_an_eligibility_check_is_refused_as_in_the_product(claude, send):  # noqa: F811
    claude.reset(
        message(tool_use("initiate_return", {**SARAH, "reason": "Changed my mind"})),
        message(text("I need to check eligibility first.")),
    )
    assert send("Return BK-10042 now, sarah.chen@example.com").status_code == 200
    assert not ReturnRecord.objects.exists()
    assert "eligibility" in claude.requests[1]["messages"][-1]["content"][0]["content"]


def test_a_failed_model_call_keeps_the_message_and_frees_the_conversation(claude, send):  # noqa: F811
    claude.reset(ErrorReply(503), ErrorReply(503))
    failed = send("Where is my order?")

    assert failed.status_code == 503
    assert Conversation.objects.get().lease_token is None
    assert [m.visible_text for m in ConversationMessage.objects.all()] == ["Where is my order?"]
    claude.reset(message(text("What is your order number?")))
    assert send("Hello?").status_code == 200


def test_a_turn_cancelled_by_a_customer_hanging_up_releases_its_lease():
    class HungUpDuringTheModelCall:
        async def create(self, **request):
            raise asyncio.CancelledError

    session = SessionStore()
    session.create()
    with pytest.raises(BaseException) as cancelled:
        async_to_sync(conversation_take_turn_async)(
            session=session, text="Where is my order?", model=HungUpDuringTheModelCall()
        )

    assert "Cancelled" in type(cancelled.value).__name__
    conversation = Conversation.objects.get()
    assert conversation.lease_token is None
    assert [m.visible_text for m in ConversationMessage.objects.all()] == ["Where is my order?"]
