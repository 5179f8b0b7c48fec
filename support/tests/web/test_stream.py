"""A turn as server-sent events: each step as it starts, then the reply in the JSON API's shape."""

import json
import threading

import pytest
from django.db import connections
from django.http import StreamingHttpResponse

from orders.models import ReturnRecord
from support.assistant.turn import TurnResult
from support.testing.chat_client import ChatClient
from support.testing.messages_stub import ErrorReply, message, text, tool_use
from support.web.stream import turn_events

SARAH = {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com"}
# The turn runs in a thread of its own, with its own database connection: it must see committed data.
# serialized_rollback, as every transactional test here: the migrations' rows are put back afterwards
# as they were (a plain flush re-creates the content types under new ids, and the next test that
# restores the migrations' rows would collide with them).
pytestmark = [
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.usefixtures("demo_data"),
]


def streamed(customer: ChatClient, words: str) -> list[tuple[str, dict]]:
    """Send as the page does with JavaScript, and read the events as they come."""
    response = customer.http.post(
        "/api/chat",
        json.dumps({"message": words}),
        content_type="application/json",
        headers={"X-CSRFToken": customer.csrf_token(), "Accept": "text/event-stream"},
    )
    assert response.status_code == 200 and response["Content-Type"] == "text/event-stream"
    assert isinstance(response, StreamingHttpResponse)
    events = []
    for chunk in response.getvalue().decode().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines() if not line.startswith(":"))
        if lines:
            events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_each_step_of_a_return_is_said_as_it_starts_then_the_reply(claude, customer):
    claude.reset(
        message(tool_use("check_return_eligibility", SARAH)),
        message(text("Order BK-10042 can be returned. Shall I start the return?")),
    )
    first = streamed(customer, "I want to return BK-10042, sarah.chen@example.com")
    claude.reset(message(tool_use("initiate_return", {**SARAH, "reason": "Damaged"})), message(text("Done.")))
    second = streamed(customer, "Yes please")

    assert [event for event in first if event[0] == "progress"] == [
        ("progress", {"status": "Checking whether order BK-10042 can be returned…"}),
        ("progress", {"status": "Writing the answer…"}),
    ]
    name, data = first[-1]
    assert (name, data["status"]) == ("reply", 200)
    assert data["body"]["reply"] == "Order BK-10042 can be returned. Shall I start the return?"
    assert data["body"]["turn"] == 1 and data["body"]["votable"] is True
    assert second[0] == ("progress", {"status": "Starting your return for order BK-10042…"})
    assert ReturnRecord.objects.get().rma_number in second[-1][1]["body"]["reply"]


def test_an_order_number_the_customer_did_not_type_is_never_shown(claude, customer):
    claude.reset(message(tool_use("lookup_order", SARAH)), message(text("Which order do you mean?")))
    events = streamed(customer, "Where is my order? sarah.chen@example.com")
    assert events[0] == ("progress", {"status": "Looking up your order…"})


def test_a_failed_turn_ends_the_stream_with_the_apis_error(claude, customer):
    claude.reset(*[ErrorReply(529, "overloaded_error")] * 2)
    [*_, (name, data)] = streamed(customer, "Where is my order?")
    assert name == "reply" and data["status"] == 503
    assert data["body"]["error"] == "model_unavailable" and data["body"]["retry_after"]
    # The message was kept, and the session points at its conversation.
    assert customer.transcript().json()["messages"][0]["text"] == "Where is my order?"


def test_a_message_that_cannot_be_sent_is_refused_before_any_stream(claude, customer):
    customer.transcript()
    response = customer.http.post(
        "/api/chat",
        json.dumps({"message": "   "}),
        content_type="application/json",
        headers={"X-CSRFToken": customer.token, "Accept": "text/event-stream"},
    )
    assert response.status_code == 400 and response.json()["error"] == "invalid_message"
    assert claude.requests == []


def test_the_request_gives_back_its_database_connection_while_the_turn_runs():
    """Else every streamed turn holds two connections, and a pool of ten runs dry at ten customers."""
    connection = connections["default"]
    if connection.vendor == "sqlite":
        pytest.skip("an in-memory SQLite test database is never closed; PostgreSQL shows it")
    ReturnRecord.objects.exists()  # this thread has a connection now
    waiting = threading.Event()

    def take_turn(progress):
        progress("Working on it…")
        waiting.wait(timeout=5)
        return TurnResult(reply="Done.", offline=True, turn=1)

    events = turn_events(take_turn=take_turn, answer=lambda outcome: {"status": 200, "body": {}}, lost={})
    assert next(events).startswith(b"event: progress")
    assert connection.connection is None  # while the turn runs
    waiting.set()
    assert list(events)[-1].startswith(b"event: reply")
