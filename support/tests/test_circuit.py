"""While the provider is down, the built-in model answers at once; the provider is tried again after
a back-off. Through the customer's chat API, with the real SDK against the local Messages stub."""

import time

import pytest

from support.llm.circuit import circuit_open
from support.models import ModelCall
from support.testing.messages_stub import ErrorReply, message, text, tool_use
from support.testing.metric_counts import Counts

DOWN = [ErrorReply(529, "overloaded_error")] * 2  # a turn's call and its one retry


@pytest.fixture
def threshold(settings):
    settings.BOOKLY_MODEL_CIRCUIT_FAILURES = 2
    settings.BOOKLY_MODEL_CIRCUIT_SECONDS = 30


def _outage_opens_the_circuit(claude, customer):
    for _ in range(2):
        claude.reset(*DOWN)
        assert customer.send("Where is my order?").status_code == 503


def test_after_repeated_outages_the_built_in_model_answers_at_once_and_says_so(
    claude, customer, threshold, demo_data
):
    counts = Counts()
    _outage_opens_the_circuit(claude, customer)
    assert circuit_open()

    claude.reset()  # the provider is not called at all
    response = customer.send("Where is BK-10042? My email is sarah.chen@example.com")
    assert response.status_code == 200
    body = response.json()
    assert body["offline"] is True and "BK-10042" in body["reply"] and "delivered" in body["reply"]
    assert claude.requests == []
    assert counts.moved("bookly_turns_on_fallback_total") == 1
    assert ModelCall.objects.order_by("-id").first().offline  # staff see it in the trace


def test_one_outage_is_not_enough_and_a_success_forgets_it(claude, customer, threshold):
    claude.reset(*DOWN)
    assert customer.send("Where is my order?").status_code == 503
    claude.reset(message(text("What is the order number?")))
    assert customer.send("Where is my order?").status_code == 200
    claude.reset(*DOWN)
    assert customer.send("Where is my order?").status_code == 503
    assert not circuit_open()


def test_after_the_back_off_the_provider_is_tried_again(claude, customer, threshold, monkeypatch):
    _outage_opens_the_circuit(claude, customer)
    monkeypatch.setattr("support.llm.circuit._now", lambda: time.time() + 31)
    assert not circuit_open()
    # Still down: open again at once, for twice as long.
    claude.reset(*DOWN)
    assert customer.send("Where is my order?").status_code == 503
    assert circuit_open()
    monkeypatch.setattr("support.llm.circuit._now", lambda: time.time() + 200)
    claude.reset(message(text("What is the order number?")))
    response = customer.send("Where is my order?")
    assert response.json()["offline"] is False and len(claude.requests) == 1
    assert not circuit_open()


def test_a_turn_keeps_its_model_even_when_the_provider_fails_midway(claude, customer, threshold, demo_data):
    claude.reset(
        message(
            tool_use("lookup_order", {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com"})
        ),
        *DOWN,
    )
    response = customer.send("Where is BK-10042? My email is sarah.chen@example.com")
    assert response.status_code == 503  # never half Claude, half the built-in model
