"""A sign-out that arrives while a turn runs: the turn's answer is for the customer who was signed in,
who may no longer be at the browser, so it is neither stored on the ended conversation nor sent back.

The model's answer is held in the Messages API stub while the store's page signs the customer out on
another request (its own client, the same session cookie), as the widget does on a store page that
calls signIn(null) mid-answer."""

import json
import time
from collections.abc import Callable

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.db import transaction
from django.http import StreamingHttpResponse
from django.urls import reverse

from orders.models import Order, ReturnRecord
from store.clock import store_today
from support.conversations.identity import customer_signature, session_sign_out
from support.conversations.selectors import SIGNED_IN_SESSION_KEY, signing_secret_fingerprint
from support.conversations.services import (
    ConversationEnded,
    NewMessage,
    conversation_return_create,
    conversation_turn_abandon,
    conversation_turn_begin,
    conversation_turn_keep,
    session_handle,
)
from support.models import Conversation, ConversationMessage, MessageRole, TurnTrace
from support.testing.chat_client import ChatClient
from support.testing.messages_stub import ErrorReply, message, text, tool_use
from support.web.page import DRAFT_SESSION_KEY

# The turn runs the model call (and so the sign-out) in other threads, each with its own database
# connection: they must see committed data. serialized_rollback as in web/test_stream.py.
pytestmark = [
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.usefixtures("demo_data"),
]

SECRET = "a-store-secret-of-thirty-two-characters-or-more"
SARAH = "sarah.chen@example.com"
SARAHS_RETURN = {"order_id": "BK-10042", "customer_email": SARAH}


@pytest.fixture
def sarah(settings, customer) -> ChatClient:
    """Sarah, signed in by the store, at the widget."""
    settings.BOOKLY_CUSTOMER_SIGNING_SECRET = SECRET
    timestamp = int(time.time())
    signature = customer_signature(secret=SECRET, email=SARAH, timestamp=timestamp)
    assert customer.sign_in({"email": SARAH, "time": timestamp, "signature": signature}).json()["signed_in"]
    return customer


@pytest.fixture
def signed_out_meanwhile(sarah) -> Callable[[dict], Callable[[dict], dict]]:
    """A stub reply that, while the model "thinks", lets the store's page sign Sarah out on a request of
    its own (same session cookie, another client and thread), then answers with `reply`."""

    def held(reply: dict) -> Callable[[dict], dict]:
        def answer(request: dict) -> dict:
            page = ChatClient()
            for name, cookie in sarah.http.cookies.items():
                page.http.cookies[name] = cookie.value
            page.token = sarah.token
            response = page.http.post("/api/chat/sign-out", headers={"X-CSRFToken": page.token})
            assert response.json() == {"signed_in": False, "conversation_ended": True}
            return reply

        return answer

    return held


@pytest.fixture
def signing_session(settings):
    """A session the store signed Sarah in on."""
    settings.BOOKLY_CUSTOMER_SIGNING_SECRET = SECRET
    store = SessionStore()
    store[SIGNED_IN_SESSION_KEY] = {"email": SARAH, "secret": signing_secret_fingerprint()}
    store.create()
    return store


def _words(words: str) -> NewMessage:
    return NewMessage(MessageRole.USER, [{"type": "text", "text": words}], words)


def streamed(customer: ChatClient, words: str) -> tuple[str, dict]:
    """Send as the widget does, and return everything the stream said and its reply event."""
    response = customer.http.post(
        "/api/chat",
        json.dumps({"message": words}),
        content_type="application/json",
        headers={"X-CSRFToken": customer.csrf_token(), "Accept": "text/event-stream"},
    )
    assert isinstance(response, StreamingHttpResponse)
    said = b"".join(response.streaming_content).decode()
    reply = [chunk for chunk in said.split("\n\n") if chunk.startswith("event: reply")][-1]
    return said, json.loads(reply.split("data: ", 1)[1])


def test_an_answer_written_for_the_signed_out_customer_is_neither_stored_nor_shown(
    claude, sarah, signed_out_meanwhile
):
    claude.reset(
        message(tool_use("list_recent_orders", {})),
        signed_out_meanwhile(message(text("Your recent orders: BK-10042 (delivered), BK-10043."))),
    )
    said, reply = streamed(sarah, "Where is my order?")

    assert reply["status"] == 409 and reply["body"]["error"] == "conversation_ended"
    assert "BK-100" not in said and SARAH not in said
    ended = Conversation.objects.get(ended_at__isnull=False)
    # Her words stay for staff, as asked (not set aside as if they had broken the turn); no answer.
    stored = list(ConversationMessage.objects.filter(conversation=ended).values_list("role", "set_aside"))
    assert stored == [(MessageRole.USER, False)]
    assert ended.lease_token is None  # free, for staff and retention; nobody can take an ended one
    assert TurnTrace.objects.get(conversation=ended).error == "ConversationEnded"
    assert sarah.transcript().json()["messages"] == []


@pytest.mark.parametrize(
    ("signed_out_on", "returned"),
    [(0, False), (1, True)],
    ids=["before-the-return-was-made", "after-the-return-was-made"],
)
def test_a_return_stands_only_if_made_before_the_sign_out_and_is_told_to_no_one_after(
    claude, sarah, signed_out_meanwhile, signed_out_on, returned
):
    claude.reset(
        message(tool_use("check_return_eligibility", SARAHS_RETURN)),
        message(text("Order BK-10042 can be returned. Shall I start the return?")),
    )
    assert sarah.send("I want to return BK-10042").status_code == 200
    replies = [
        message(tool_use("initiate_return", {**SARAHS_RETURN, "reason": "Damaged"})),
        message(text("Done: your return is started and the label is on its way.")),
    ]
    replies[signed_out_on] = signed_out_meanwhile(replies[signed_out_on])
    claude.reset(*replies)
    said, reply = streamed(sarah, "Yes please")

    assert reply["status"] == 409 and reply["body"]["error"] == "conversation_ended"
    assert "RMA-" not in said and "BK-100" not in json.dumps(reply)
    # The step's line ("Starting the return for order BK-10042…") went out only while she was signed in.
    assert ("BK-10042" in said) == returned
    ended = Conversation.objects.get(ended_at__isnull=False)
    made = ReturnRecord.objects.filter(order__number="BK-10042")
    # Asked for by Sarah while signed in, the return is hers and stays; the step that made it (with its
    # receipt) is kept on her conversation for staff. After the sign-out, it is not made at all.
    assert made.exists() == returned
    assert ended.returns.exists() == returned
    kept = ConversationMessage.objects.filter(conversation=ended, turn=2).values_list("content", flat=True)
    assert any("RMA-" in json.dumps(content) for content in kept) == returned
    assert not ConversationMessage.objects.filter(
        conversation=ended, role=MessageRole.ASSISTANT, turn=2
    ).exclude(visible_text="")


def test_a_write_whose_conversation_ended_before_it_committed_is_not_made(signing_session):
    """The last moment a sign-out can come first: between the tool's write and its commit. The step is
    kept in the write's own transaction, which then undoes the write."""
    order = Order.objects.get(number="BK-10042")
    conversation = Conversation.objects.create(
        session_handle=session_handle(session_key=signing_session.session_key), signed_in_email=SARAH
    )
    lease, _ = conversation_turn_begin(
        session=signing_session, conversation=conversation, customer_message=_words("Yes please")
    )
    assert session_sign_out(session=signing_session)

    with pytest.raises(ConversationEnded), transaction.atomic():
        conversation_return_create(
            conversation=conversation, order=order, reason="Damaged", items=None, today=store_today()
        )
        conversation_turn_keep(lease=lease, messages=[_words("the tool step")], first=lease.next_position)
    assert not ReturnRecord.objects.filter(order=order).exists()
    assert ConversationMessage.objects.filter(conversation=conversation).count() == 1
    conversation_turn_abandon(lease=lease, model_calls=[])


@pytest.mark.parametrize("path", ["page", "api"])
def test_a_turn_answered_after_the_sign_out_does_not_sign_the_customer_back_in(
    claude, sarah, signed_out_meanwhile, path
):
    """The turn's request read the session before the sign-out: saving that copy (with the unsent words,
    or the once-a-minute renewal) would undo it."""
    session = SessionStore(session_key=sarah.http.cookies["sessionid"].value)
    # bookly.middleware.SessionLifetimeMiddleware.SEEN_KEY (support may not import bookly): the renewal is
    # due, so the turn's request changes its copy of the session and would save it.
    session["_bookly_seen_at"] = 0
    session.save()
    claude.reset(signed_out_meanwhile(message(text("Your recent orders: BK-10042."))))
    if path == "page":
        response = sarah.http.post(
            reverse("support:chat_send"),
            {"message": "Where has my parcel got to?"},
            headers={"X-CSRFToken": sarah.token},
        )
        assert response.status_code == 409 and "This conversation ended" in response.content.decode()
        assert "Where has my parcel got to?" not in response.content.decode()
    else:
        assert sarah.send("Where has my parcel got to?").json()["error"] == "conversation_ended"
    stored = SessionStore(session_key=sarah.http.cookies["sessionid"].value).load()
    assert SIGNED_IN_SESSION_KEY not in stored and DRAFT_SESSION_KEY not in stored


def test_a_turn_that_fails_after_the_sign_out_does_not_sign_the_customer_back_in(
    claude, sarah, signed_out_meanwhile
):
    """The model fails (overloaded) after the store signed Sarah out: the page keeps unsent words in the
    session, which must not write back the request's copy, sign-in included, nor keep her words."""
    claude.reset(signed_out_meanwhile(ErrorReply(529, "overloaded_error")))
    response = sarah.http.post(
        reverse("support:chat_send"),
        {"message": "Where has my parcel got to?"},
        headers={"X-CSRFToken": sarah.token},
    )
    assert response.status_code == 302
    stored = SessionStore(session_key=sarah.http.cookies["sessionid"].value).load()
    assert SIGNED_IN_SESSION_KEY not in stored and DRAFT_SESSION_KEY not in stored
