"""Per-turn traces: written with each turn from real turns through the SDK, free of the customer's text."""

import json

import pytest

from orders.models import ReturnRecord
from support.insight.traces import arguments_shape
from support.models import ModelCall, TurnTrace
from support.testing.messages_stub import ErrorReply, message, text, tool_use

SARAH = {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com"}
pytestmark = pytest.mark.usefixtures("demo_data")


def test_a_lookup_turn_is_traced_with_its_tool_call_and_times(claude, customer):
    claude.reset(message(tool_use("lookup_order", SARAH)), message(text("Order BK-10042 was delivered.")))
    customer.send("Where is BK-10042? sarah.chen@example.com")

    trace = TurnTrace.objects.get()
    assert (trace.turn, trace.outcome, trace.reply_source, trace.violations) == (1, "answered", "model", [])
    [call] = trace.tool_calls
    assert call["tool"] == "lookup_order" and call["result"] == "ok"
    assert call["arguments"] == {"order_id": "BK-10042", "customer_email": "<email>"}
    assert trace.model_ms == sum(ModelCall.objects.filter(turn=1).values_list("duration_ms", flat=True))
    assert trace.total_ms >= trace.model_ms


def test_a_rejected_reply_is_traced_with_the_validators_codes(claude, customer):
    claude.reset(message(text("Your order BK-55555 has shipped.")))
    customer.send("Where is my order?")

    trace = TurnTrace.objects.get()
    assert (trace.outcome, trace.reply_source) == ("fallback", "fallback")
    assert "ungrounded_order_number" in trace.violations


def test_a_failed_turn_is_traced_with_what_failed(claude, customer):
    claude.reset(message(tool_use("lookup_order", SARAH)), *[ErrorReply(529, "overloaded_error")] * 2)
    assert customer.send("Where is BK-10042? sarah.chen@example.com").status_code == 503

    trace = TurnTrace.objects.get()
    assert (trace.outcome, trace.reply_source, trace.error) == ("error", "", "ModelUnavailable")
    assert [call["tool"] for call in trace.tool_calls] == ["lookup_order"]


@pytest.mark.usefixtures("return_checked")
def test_a_receipt_told_because_the_model_failed_says_so(claude, customer):
    reason = "It arrived damaged, call 555-0100"
    claude.reset(
        message(tool_use("initiate_return", {**SARAH, "reason": reason})),
        *[ErrorReply(529, "overloaded_error")] * 2,
    )
    customer.send("Yes please, it arrived damaged")

    trace = TurnTrace.objects.get(turn=2)
    assert (trace.outcome, trace.reply_source) == ("answered", "receipt")
    assert ReturnRecord.objects.get().rma_number  # the return the receipt tells
    stored = json.dumps(trace.tool_calls)
    assert "555-0100" not in stored and "sarah.chen" not in stored
    assert trace.tool_calls[0]["arguments"]["reason"] == f"<text, {len(reason)} chars>"


def test_a_handover_is_traced_with_its_reason(claude, customer):
    claude.reset(
        message(tool_use("hand_off_to_person", {"reason": "customer_asked", "summary": "Wants a person"})),
        message(text("Someone will help.")),
    )
    customer.send("I want to talk to a human")

    trace = TurnTrace.objects.get()
    assert (trace.outcome, trace.reply_source, trace.handoff_reason) == (
        "handed_off",
        "fixed",
        "customer_asked",
    )


@pytest.mark.parametrize(
    ("arguments", "shape"),
    [
        ({"order_id": "BK-10042"}, {"order_id": "BK-10042"}),
        ({"order_id": "my order is 42"}, {"order_id": "<text, 14 chars>"}),  # not a code: not kept
        ({"topic": "returns"}, {"topic": "returns"}),
        ({"reason": "returns"}, {"reason": "<text, 7 chars>"}),  # a code only where a code belongs
        ({"customer_email": "a@b.co"}, {"customer_email": "<email>"}),
        ({"item_titles": ["Dune", 3, None]}, {"item_titles": ["<text, 4 chars>", 3, None]}),
        ({"Sarah Chen, 12 Elm St": True}, {"<name>": True}),  # a model can put anything in a name
        ({"nested": {"note": "x@y.org"}}, {"nested": {"note": "<email>"}}),
    ],
)
def test_tool_arguments_keep_only_their_shape(arguments, shape):
    assert arguments_shape(arguments) == shape
