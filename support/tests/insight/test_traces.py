"""Per-turn traces: written with each turn from real turns through the SDK, free of the customer's text."""

import json
import uuid

import pytest

import support.assistant.turn as turn_module
from orders.models import ReturnRecord
from support.assistant.capabilities.registry import TOOL_ARGUMENT_NAMES
from support.conversations.services import TurnInProgress
from support.insight.traces import arguments_shape
from support.models import Conversation, ModelCall, TurnTrace
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
def test_a_receipt_told_because_the_model_failed_says_so(model_api, customer):
    reason = "It arrived damaged, call 555-0100"
    model_api.reset(
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
        (
            {"item_titles": ["Dune", 5550100, None, True]},
            {"item_titles": ["<text, 4 chars>", "<number>", None, True]},
        ),
        (
            {"Sarah Chen, 12 Elm St": True, "sarah_chen": 1},
            {"<name>": "<number>"},
        ),  # only the tools' own names
        ({"reason": {"note": "x@y.org"}}, {"reason": {"<name>": "<email>"}}),
        ({"item_titles": ["x"] * 30}, {"item_titles": ["<text, 1 chars>"] * 20}),
        # A code is kept only when it is all code: what a model wrote after one is not.
        ({"order_id": "BK-10042<script>" + "x" * 500}, {"order_id": "<text, 516 chars>"}),
        ({"order_id": "BK-10042\n"}, {"order_id": "<text, 9 chars>"}),
    ],
)
def test_tool_arguments_keep_only_their_shape(arguments, shape):
    assert arguments_shape(arguments=arguments, names=TOOL_ARGUMENT_NAMES) == shape


def test_a_turn_that_lost_its_conversation_at_commit_leaves_one_trace_saying_so(
    claude, customer, monkeypatch
):
    commit = turn_module.conversation_turn_commit

    def after_another_turn_took_over(**arguments):
        Conversation.objects.update(lease_token=uuid.uuid4())  # the lease lapsed and was taken meanwhile
        return commit(**arguments)

    monkeypatch.setattr(turn_module, "conversation_turn_commit", after_another_turn_took_over)
    claude.reset(message(text("What is the order number? It starts with BK-.")))
    assert customer.send("Where is my order?").status_code == 409

    trace = TurnTrace.objects.get()
    assert (trace.outcome, trace.error) == ("error", TurnInProgress.__name__)


def test_no_trace_while_a_person_answers(claude, customer):
    customer.handoff()
    customer.send("Are you there?")
    assert not TurnTrace.objects.exists()
    assert claude.requests == []
