"""The real anthropic SDK against the local Messages API stub: what is sent, and how errors map."""

import copy
import json
import time
from itertools import pairwise
from typing import get_args

import pytest
from anthropic.resources.messages.messages import DEPRECATED_MODELS
from anthropic.types.model_param import ModelParam

from policies.models import PolicyEntry, ReturnPolicy
from support.assistant import prompts
from support.assistant.capabilities.registry import CAPABILITIES
from support.assistant.configured import get_model
from support.assistant.prompts import LONG_CONVERSATION_REMINDER, TURN_REMINDER
from support.models import ModelCall
from support.testing.chat_client import ChatClient
from support.testing.messages_stub import ErrorReply, message, text, tool_use

pytestmark = pytest.mark.usefixtures("demo_data")

SARAH = {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com"}


def without_cache_control(value):
    """The request with every cache_control marker removed, to compare content alone."""
    value = copy.deepcopy(value)
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, dict):
            item.pop("cache_control", None)
            for block in item.get("content", []) if isinstance(item.get("content"), list) else []:
                block.pop("cache_control", None)
    return value


def count_breakpoints(request) -> int:
    return json.dumps(request).count('"cache_control"')


def test_default_model_is_a_current_sonnet_the_sdk_does_not_deprecate(settings):
    model = settings.DEFAULT_ANTHROPIC_MODEL
    assert "sonnet" in model
    assert model not in DEPRECATED_MODELS
    assert model in get_args(get_args(ModelParam)[0])


def test_request_carries_tools_system_and_three_cache_breakpoints(claude, customer, settings):
    claude.reset(message(text("Sure. What is the order number of your order?")))
    customer.send("Where is my order?")

    [request] = claude.requests
    assert request["model"] == settings.ANTHROPIC_MODEL
    # Every capability's tools, in the registry's order: what both providers are sent.
    assert [tool["name"] for tool in request["tools"]] == [
        tool.name for c in CAPABILITIES for tool in c.tools
    ]
    assert request["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert all("cache_control" not in tool for tool in request["tools"][:-1])
    assert request["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert request["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert count_breakpoints(request) == 3
    sent_key = claude.headers[0].get("x-api-key") or claude.headers[0].get("authorization", "")
    assert sent_key.endswith("sk-ant-test-not-a-key")


def test_system_prompt_is_structured_and_rendered_from_the_database(claude, customer):
    claude.reset(message(text("Sure. What is the order number of your order?")))
    customer.send("Where is my order?")
    system = claude.requests[0]["system"][0]["text"]
    for section in (
        "identity",
        "critical_rules",
        "scope",
        "return_policy",
        "faq_topics",
        "tool_rules",
        "clarifying_rules",
        "tone",
        "examples",
        "reminders",
    ):
        assert f"<{section}>" in system and f"</{section}>" in system
    assert "up to 30 days after delivery" in system
    assert "within 7 business days" in system
    assert "ebook, audiobook, gift card, personalized item" in system
    assert "- shipping: Shipping options and times" in system
    assert "so I can't help with <the topic>." in system


def test_reminder_travels_in_the_customers_message_and_gets_stronger_after_five_turns(claude, customer):
    for turn in range(1, 8):
        claude.reset(message(text("Could you tell me your order number?")))
        customer.send(f"Message {turn} about my order")
        last_user = claude.requests[0]["messages"][-1]["content"]
        assert last_user[0]["text"] == f"Message {turn} about my order"
        assert last_user[1]["text"] == (TURN_REMINDER if turn <= 5 else LONG_CONVERSATION_REMINDER)
        assert "reminder" not in claude.requests[0]["system"][0]["text"].split("<reminders>")[0].lower()


def test_prefix_is_stable_across_turns_so_the_cache_is_never_rewritten(claude, customer):
    requests = []
    for turn in range(1, 8):
        claude.reset(
            message(tool_use("lookup_policy", {"topic": "shipping"})), message(text("Shipping is free."))
        )
        customer.send(f"Turn {turn}: tell me the shipping policy")
        requests.extend(claude.requests)
    for earlier, later in pairwise(requests):
        assert later["tools"] == earlier["tools"]
        assert later["system"] == earlier["system"]
        sent_before = without_cache_control(earlier["messages"])
        assert without_cache_control(later["messages"])[: len(sent_before)] == sent_before


def test_tools_and_system_are_byte_identical_across_conversations(claude):

    bodies = []
    for _ in range(2):
        claude.reset(message(text("Sure. What is the order number of your order?")))
        ChatClient().send("Where is my order?")
        bodies.append(claude.requests[0])
    assert json.dumps(bodies[0]["tools"]) == json.dumps(bodies[1]["tools"])
    assert json.dumps(bodies[0]["system"]) == json.dumps(bodies[1]["system"])


@pytest.mark.parametrize("change", ["faq_title", "faq_unpublish", "policy"])
def test_system_prompt_changes_only_when_staff_change_faq_topics_or_policy(
    claude, customer, change, monkeypatch
):
    claude.reset(message(text("Sure. What is the order number of your order?")))
    customer.send("Where is my order?")
    before = claude.requests[0]["system"]

    PolicyEntry.objects.filter(topic="shipping").update(text="Edited text only")
    claude.reset(message(text("Sure. What is the order number of your order?")))
    customer.send("Where is my order?")
    assert claude.requests[0]["system"] == before

    if change == "faq_title":
        PolicyEntry.objects.filter(topic="shipping").update(title="Delivery")
    elif change == "faq_unpublish":
        PolicyEntry.objects.filter(topic="password_reset").update(is_published=False)
    else:
        ReturnPolicy.objects.update(window_days=45)
    # Each process keeps the rendered prompt a short while (two queries a turn saved) ...
    claude.reset(message(text("Sure. What is the order number of your order?")))
    customer.send("Where is my order?")
    assert claude.requests[0]["system"] == before

    # ... and no longer than SYSTEM_PROMPT_MAX_AGE_SECONDS.
    later = time.monotonic() + prompts.SYSTEM_PROMPT_MAX_AGE_SECONDS
    monkeypatch.setattr(prompts, "_clock", lambda: later)
    claude.reset(message(text("Sure. What is the order number of your order?")))
    customer.send("Where is my order?")
    assert claude.requests[0]["system"] != before


def test_several_tool_calls_in_one_response_are_answered_together(claude, customer):
    claude.reset(
        message(tool_use("lookup_order", SARAH), tool_use("lookup_policy", {"topic": "shipping"})),
        message(text("Your order BK-10042 was delivered, and shipping details are in our policy.")),
    )
    customer.send("Where is BK-10042 (sarah.chen@example.com) and how does shipping work?")
    answer = claude.requests[1]["messages"][-1]["content"]
    asked = claude.requests[1]["messages"][-2]["content"]
    assert [block["tool_use_id"] for block in answer] == [block["id"] for block in asked]


def test_usage_of_every_call_is_stored(claude, customer):
    usage = {
        "input_tokens": 50,
        "output_tokens": 7,
        "cache_read_input_tokens": 1500,
        "cache_creation_input_tokens": 300,
    }
    claude.reset(
        message(tool_use("lookup_order", SARAH), usage=usage),
        message(text("Order BK-10042 was delivered."), usage={**usage, "output_tokens": 9}),
    )
    customer.send("Where is BK-10042? sarah.chen@example.com")
    calls = list(ModelCall.objects.order_by("id"))
    assert [
        (c.input_tokens, c.output_tokens, c.cache_read_input_tokens, c.cache_creation_input_tokens)
        for c in calls
    ] == [(50, 7, 1500, 300), (50, 9, 1500, 300)]
    assert [c.stop_reason for c in calls] == ["tool_use", "end_turn"]
    assert calls[0].request_id == "req_stub_1"
    assert not calls[0].offline


@pytest.mark.parametrize(
    ("errors", "status", "attempts"),
    [
        ([ErrorReply(429, "rate_limit_error", headers={"retry-after": "1"})] * 2, 503, 2),
        ([ErrorReply(500)] * 2, 503, 2),
        ([ErrorReply(503)] * 2, 503, 2),
        ([ErrorReply(400, "invalid_request_error", message="secret internal detail")], 422, 1),
        ([ErrorReply(401, "authentication_error", message="invalid x-api-key")], 502, 1),
    ],
)
def test_api_errors_map_to_503_502_or_422(model_api, customer, errors, status, attempts):
    model_api.reset(*errors)
    response = customer.send("Where is my order?")
    assert response.status_code == status
    assert len(model_api.requests) == attempts
    body = response.json()
    assert (
        body["error"] == {503: "model_unavailable", 502: "model_error", 422: "message_not_processed"}[status]
    )
    assert "secret internal detail" not in json.dumps(body) and "x-api-key" not in json.dumps(body)
    if status == 503:
        assert int(response["Retry-After"]) >= 1


# What only one provider says: Claude is overloaded, and each one's way of saying no money is left
# (retrying cannot help, so it is not retried).
@pytest.mark.parametrize(
    ("provider", "errors", "attempts"),
    [
        ("claude", [ErrorReply(529, "overloaded_error")] * 2, 2),
        ("claude", [ErrorReply(429, "rate_limit_error", error_code="enforced_spend_limit_reached")], 1),
        (
            "claude",
            [ErrorReply(402, "billing_error", error_code="linked_organization_spend_limit_reached")],
            1,
        ),
        ("openai_model", [ErrorReply(429, "insufficient_quota", error_code="insufficient_quota")], 1),
    ],
)
def test_overload_is_retried_and_spend_limits_are_not(request, customer, provider, errors, attempts):
    stub = request.getfixturevalue(provider)
    stub.reset(*errors)
    response = customer.send("Where is my order?")
    assert response.status_code == 503
    assert len(stub.requests) == attempts


def test_a_retry_that_succeeds_is_invisible_to_the_customer(model_api, customer):
    model_api.reset(ErrorReply(500), message(text("What is the order number of your order?")))
    response = customer.send("Where is my order?")
    assert response.status_code == 200
    assert len(model_api.requests) == 2


def test_unreachable_api_is_503(model_api, customer):
    model_api.unreachable()
    response = customer.send("Where is my order?")
    assert response.status_code == 503


def test_timed_out_call_is_503(model_api, customer):
    model_api.configure(timeout_seconds=0.3, max_retries=0)

    def slow(request):
        time.sleep(1.0)
        return message(text("Too late."))

    model_api.reset(slow)
    response = customer.send("Where is my order?")
    assert response.status_code == 503


def test_one_client_per_process_and_configuration(claude, settings):
    first = get_model()
    assert get_model() is first
    settings.ANTHROPIC_MODEL = "claude-opus-5-5"
    assert get_model() is not first


def test_offline_model_answers_without_a_key(settings, customer):
    settings.BOOKLY_LLM = "auto"
    settings.ANTHROPIC_API_KEY = ""
    assert get_model().offline
    assert customer.transcript().json()["offline"] is True


def test_measured_cache_history_is_never_written_twice(claude, customer):
    """Through a simulated prompt cache: each call reads everything the previous call cached.

    A reminder placed inside `system` (or an earlier message that changes)
    would make a later call read only the tools and write the history again.
    """
    from support.testing.prompt_cache import PromptCache

    cache = PromptCache()
    for turn in range(1, 8):  # past 5 turns, so the stronger reminder is used too
        claude.reset(
            message(tool_use("lookup_policy", {"topic": "shipping"})), message(text("Shipping is free."))
        )
        claude.prompt_cache = cache
        customer.send(f"Turn {turn}: what does shipping cost?")
    usage = [
        (c.input_tokens, c.cache_creation_input_tokens, c.cache_read_input_tokens)
        for c in ModelCall.objects.order_by("id")
    ]
    assert usage[0][2] == 0 and usage[0][1] > 1024  # the first call writes tools + system
    for (_, wrote_before, read_before), (_, wrote, read) in pairwise(usage):
        assert read >= read_before + wrote_before
        assert wrote < 600  # only the newest messages, never the history again
