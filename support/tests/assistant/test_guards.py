"""A scripted model that misbehaves on purpose, through the real SDK: one test per guard, run against
each provider (Claude's Messages API, then an OpenAI-compatible Chat Completions API).

Each test fails if its guard is removed: the tool-side checks (layer 3), the
validator (layer 4), and the loop's limits.
"""

import json
import logging
import uuid

import pytest

import support.assistant.turn as turn_module
from orders.models import Order, ReturnRecord
from orders.services import return_record_create
from policies.tests.factories import PolicyEntryFactory
from store.clock import store_today
from support.assistant.outcomes import STUCK_REPLY, TOO_LONG_REPLY
from support.assistant.validator import FALLBACK_REPLY
from support.models import Conversation, ConversationMessage
from support.testing.chat_client import ChatClient
from support.testing.messages_stub import ErrorReply, message, text, tool_use
from support.testing.protocol import messages_problems

SARAH = {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com"}


def tool_results(request: dict) -> list[dict]:
    """The tool_result blocks of the last message of a request, with their JSON decoded."""
    blocks = request["messages"][-1]["content"]
    return [
        {**block, "content": json.loads(block["content"])}
        for block in blocks
        if block["type"] == "tool_result"
    ]


def stored_texts(conversation_messages) -> str:
    return json.dumps([m.content for m in conversation_messages])


pytestmark = pytest.mark.usefixtures("demo_data")


def test_initiate_return_without_eligibility_check_is_refused_by_the_tool(model_api, customer):
    model_api.reset(
        message(tool_use("initiate_return", {**SARAH, "reason": "Changed my mind"})),
        message(text("I need to check whether your order can be returned first.")),
    )
    response = customer.send("Return BK-10042 now, my email is sarah.chen@example.com")

    assert response.status_code == 200
    [result] = tool_results(model_api.sent[1])
    assert result["content"]["error"] == "eligibility_not_verified"
    assert not ReturnRecord.objects.exists()


def test_eligibility_passed_in_another_conversation_does_not_count(model_api, customer):

    other = ChatClient()
    model_api.reset(
        message(tool_use("check_return_eligibility", SARAH)), message(text("Your order can be returned."))
    )
    other.send("Can I return BK-10042? sarah.chen@example.com")
    model_api.reset(
        message(tool_use("initiate_return", {**SARAH, "reason": "Damaged"})),
        message(text("I need to check your order's return eligibility first.")),
    )
    customer.send("Start the return for BK-10042, sarah.chen@example.com")
    assert tool_results(model_api.sent[1])[0]["content"]["error"] == "eligibility_not_verified"
    assert not ReturnRecord.objects.exists()


def test_return_after_a_passed_check_creates_the_rma_linked_to_the_conversation(model_api, customer):
    model_api.reset(
        message(tool_use("check_return_eligibility", SARAH)), message(text("Your order can be returned."))
    )
    customer.send("I want to return BK-10042, sarah.chen@example.com")
    model_api.reset(
        message(tool_use("initiate_return", {**SARAH, "reason": "Damaged", "item_titles": ["sapiens"]})),
        lambda request: message(
            text(f"Your return is started: {tool_results(request)[0]['content']['rma_number']}.")
        ),
    )
    response = customer.send("Yes, just Sapiens please")

    record = ReturnRecord.objects.get()
    assert [item.title for item in record.items.all()] == ["Sapiens"]
    assert record.reason == "Damaged"
    assert list(record.conversations.all()) == [Conversation.objects.get()]
    assert record.rma_number in response.json()["reply"]


def test_another_customers_order_with_a_wrong_email_reveals_nothing(model_api, customer):
    model_api.reset(
        message(
            tool_use("lookup_order", {"order_id": "BK-10042", "customer_email": "james.murphy@example.com"})
        ),
        message(text("I couldn't find an order with that number and email together.")),
    )
    customer.send("What's in order BK-10042? My email is james.murphy@example.com")

    [result] = tool_results(model_api.sent[1])
    assert result["content"]["error"] == "order_not_found"
    leaked = json.dumps(result)
    for detail in ("delivered", "Goldfinch", "Sarah", "1Z999", "36.98"):
        assert detail not in leaked


def test_wrong_email_and_missing_order_get_the_same_answer(model_api, customer):
    model_api.reset(
        message(
            tool_use("lookup_order", {"order_id": "BK-10042", "customer_email": "james.murphy@example.com"})
        ),
        message(
            tool_use("lookup_order", {"order_id": "BK-77777", "customer_email": "james.murphy@example.com"})
        ),
        message(text("I couldn't find an order with those details.")),
    )
    customer.send("Check BK-10042 and BK-77777 for james.murphy@example.com")
    wrong_email = tool_results(model_api.sent[1])[0]["content"]
    missing = tool_results(model_api.sent[2])[0]["content"]
    assert wrong_email == missing


def test_a_return_is_found_by_its_rma_number_only_with_the_email_on_its_order(model_api, customer):
    record = return_record_create(
        order=Order.objects.get(number="BK-10042"), reason="Torn", today=store_today()
    )
    model_api.reset(
        message(
            tool_use(
                "lookup_order",
                {"rma_number": record.rma_number, "customer_email": "james.murphy@example.com"},
            )
        ),
        message(
            tool_use(
                "lookup_order", {"rma_number": record.rma_number, "customer_email": "sarah.chen@example.com"}
            )
        ),
        message(text("Your return is initiated.")),
    )
    customer.send(f"Status of {record.rma_number}? james.murphy@example.com, or sarah.chen@example.com")

    wrong_email = tool_results(model_api.sent[1])[0]["content"]
    assert wrong_email["error"] == "order_not_found" and "Goldfinch" not in json.dumps(wrong_email)
    found = tool_results(model_api.sent[2])[0]["content"]
    assert found["order_id"] == "BK-10042"
    assert found["returns"][0]["rma_number"] == record.rma_number


@pytest.mark.parametrize(
    ("bad_reply", "code"),
    [
        ("Your order BK-55555 has shipped.", "ungrounded_order_number"),
        ("Your order was delivered on 2026-01-01.", "ungrounded_date"),
        ("Your return number is RMA-ZZZZ9999 for the order.", "ungrounded_rma_number"),
        ("**Your order** is on its way.", "markdown"),
        ("Your order:\n- The Goldfinch\n- Sapiens", "markdown"),
        ("The capital of France is Paris.", "off_topic"),
    ],
)
def test_validator_replaces_a_bad_reply_and_never_stores_it(model_api, customer, caplog, bad_reply, code):
    model_api.reset(message(text(bad_reply)))
    with caplog.at_level(logging.WARNING, logger="support.assistant.turn"):
        response = customer.send("Hi, what is the capital of France, and where is my order?")

    assert response.json()["reply"] == FALLBACK_REPLY
    stored = stored_texts(ConversationMessage.objects.all())
    assert bad_reply not in stored
    assert json.dumps(FALLBACK_REPLY) in stored
    [line] = [record.getMessage() for record in caplog.records if "rejected" in record.getMessage()]
    assert code in line
    assert bad_reply not in line and "BK-" not in line and "@" not in line


JAMES = {"order_id": "BK-10089", "customer_email": "james.murphy@example.com"}


@pytest.mark.parametrize(
    ("turns", "code"),
    [
        # A status for an order no tool returned: the customer's own words named it.
        (
            [("Where is my order BK-10042?", [text("Your order BK-10042 has shipped and is on its way.")])],
            "claim_without_lookup",
        ),
        # A status the lookup did not return, a turn later.
        (
            [
                (
                    "Where is BK-10042? sarah.chen@example.com",
                    [tool_use("lookup_order", SARAH), text("It was delivered.")],
                ),
                (
                    "Is it still processing?",
                    [text("Yes, your order is still processing and has not shipped yet.")],
                ),
            ],
            "status_not_in_result",
        ),
        # One order's date given to the other.
        (
            [
                (
                    "BK-10042 sarah.chen@example.com, BK-10089 james.murphy@example.com: when was that?",
                    [
                        tool_use("lookup_order", SARAH),
                        tool_use("lookup_order", JAMES),
                        text("Order BK-10042 was delivered on 2026-04-10."),
                    ],
                )
            ],
            "date_not_for_order",
        ),
    ],
    ids=["status_without_lookup", "status_not_returned", "another_orders_date"],
)
def test_a_claim_no_tool_result_for_that_order_supports_is_replaced(model_api, customer, caplog, turns, code):
    for said, script in turns:
        model_api.reset(*[message(block) for block in script])
        with caplog.at_level(logging.WARNING, logger="support.assistant.turn"):
            reply = customer.send(said).json()["reply"]

    assert reply == FALLBACK_REPLY
    bad = script[-1]["text"]
    assert bad not in stored_texts(ConversationMessage.objects.all())
    assert code in caplog.records[-1].getMessage()


def test_a_follow_up_may_repeat_facts_from_an_earlier_turn(model_api, customer):
    model_api.reset(
        message(tool_use("lookup_order", SARAH)), message(text("Your order BK-10042 was delivered."))
    )
    customer.send("Where is BK-10042? sarah.chen@example.com")
    model_api.reset(
        message(text("Yes: order BK-10042 was delivered on 2026-03-30, tracking 1Z999AA10123456784."))
    )
    response = customer.send("When exactly?")
    assert response.json()["reply"].startswith("Yes: order BK-10042 was delivered on 2026-03-30")


def test_endless_tool_calls_stop_at_the_call_limit(model_api, customer, settings):
    model_api.reset(*[message(tool_use("lookup_order", SARAH)) for _ in range(20)])
    response = customer.send("Where is BK-10042? sarah.chen@example.com")

    assert response.json()["reply"] == STUCK_REPLY
    assert len(model_api.sent) == settings.BOOKLY_MAX_MODEL_CALLS_PER_TURN
    stored = [
        {"role": m.role, "content": m.content} for m in ConversationMessage.objects.order_by("position")
    ]
    assert messages_problems([*stored, {"role": "user", "content": [text("next")]}]) == []


def test_the_last_allowed_call_is_not_acted_on(model_api, customer, settings):
    settings.BOOKLY_MAX_MODEL_CALLS_PER_TURN = 2
    model_api.reset(
        message(tool_use("check_return_eligibility", SARAH)),
        message(tool_use("initiate_return", {**SARAH, "reason": "Damaged"})),
    )
    response = customer.send("Return BK-10042 sarah.chen@example.com")
    assert response.json()["reply"] == STUCK_REPLY
    assert not ReturnRecord.objects.exists()


def test_unknown_tool_gets_a_recoverable_result(model_api, customer):
    model_api.reset(
        message(tool_use("delete_all_orders", {"confirm": True})),
        message(text("Sorry, I can help with an order, a return or a store policy.")),
    )
    response = customer.send("Where is my order?")
    assert response.status_code == 200
    [result] = tool_results(model_api.sent[1])
    assert result["content"]["error"] == "unknown_tool"
    assert "lookup_order" in result["content"]["available_tools"]


@pytest.mark.parametrize(
    ("arguments", "fields"),
    [
        ({"order_id": 42, "customer_email": "sarah.chen@example.com"}, ["order_id"]),
        ({"order_id": "BK-10042<script>", "customer_email": "not an email"}, ["order_id", "customer_email"]),
        ({"order_id": "BK-10042"}, ["customer_email"]),
        ({"customer_email": "sarah.chen@example.com"}, ["order_id"]),
        ({"rma_number": "RMA-<script>", "customer_email": "sarah.chen@example.com"}, ["rma_number"]),
        ({**SARAH, "admin": "yes; DROP TABLE"}, ["(other)"]),
        ("BK-10042", ["(arguments)"]),
        ({"order_id": "BK-10042\x00\x1b", "customer_email": "x" * 300 + "@example.com"}, ["customer_email"]),
    ],
)
def test_malformed_arguments_become_invalid_arguments_without_echo(model_api, customer, arguments, fields):
    model_api.reset(
        message(tool_use("lookup_order", arguments)),
        message(text("Could you check the order number and email for your order?")),
    )
    response = customer.send("Where is my order?")
    assert response.status_code == 200
    [result] = tool_results(model_api.sent[1])
    assert result["content"]["error"] == "invalid_arguments"
    assert [problem["field"] for problem in result["content"]["problems"]] == fields
    echoed = json.dumps(result["content"])
    for raw in ("<script>", "not an email", "DROP TABLE", "admin", "xxxxxxxx"):
        assert raw not in echoed


def test_control_characters_are_stripped_from_arguments(model_api, customer):
    model_api.reset(
        message(
            tool_use(
                "lookup_order",
                {"order_id": "\u200bbk-10042\x07 ", "customer_email": "SARAH.chen@example.com\n"},
            )
        ),
        message(text("Your order BK-10042 was delivered.")),
    )
    customer.send("Where is bk-10042? sarah.chen@example.com")
    assert tool_results(model_api.sent[1])[0]["content"]["status"] == "delivered"


def test_max_tokens_never_shows_half_a_sentence(model_api, customer):
    model_api.reset(
        message(
            text("I can look that order up for you. I need its number and the email on"),
            stop_reason="max_tokens",
        )
    )
    response = customer.send("Where is my order?")
    assert response.json()["reply"] == "I can look that order up for you."


def test_max_tokens_inside_a_tool_call_does_not_run_it(model_api, customer):
    model_api.reset(
        message(text("Let me check."), tool_use("check_return_eligibility", SARAH), stop_reason="max_tokens")
    )
    response = customer.send("Can I return BK-10042? sarah.chen@example.com")
    assert response.json()["reply"] == TOO_LONG_REPLY
    assert len(model_api.sent) == 1
    stored = [m.content for m in ConversationMessage.objects.order_by("position")]
    assert "tool_use" not in json.dumps(stored)


def test_api_error_in_the_middle_of_a_tool_turn_leaves_a_valid_history(model_api, customer):
    model_api.reset(message(tool_use("lookup_order", SARAH)), ErrorReply(500), ErrorReply(500))
    failed = customer.send("Where is BK-10042? sarah.chen@example.com")
    assert failed.status_code == 503
    assert failed["Retry-After"]
    assert "saved" in failed.json()["detail"]

    model_api.reset(message(text("Could you tell me again what you need help with, your order or a return?")))
    retried = customer.send("Hello? Where is my order?")
    assert retried.status_code == 200
    request = model_api.sent[0]
    assert messages_problems(request["messages"]) == []
    customer_words = [block["text"] for block in request["messages"][0]["content"] if block["type"] == "text"]
    assert "Where is BK-10042? sarah.chen@example.com" in customer_words
    assert "Hello? Where is my order?" in customer_words


def test_nul_characters_from_the_model_are_never_shown_stored_or_sent_back(model_api, customer):
    """PostgreSQL can hold no NUL, no database a lone surrogate, and no customer should read either: they
    go where a model reply enters the turn, so what is shown, stored and sent again is the same."""
    model_api.reset(
        message(tool_use("lookup_order", {**SARAH, "customer_email": "sarah.chen@example.com\x00"})),
        message(text("Your order BK-10042 was\x00 delivered\ud800 on 2026-03-30.")),
    )
    reply = customer.send("Where is BK-10042? sarah.chen@example.com").json()["reply"]
    assert reply == "Your order BK-10042 was delivered on 2026-03-30."
    stored = json.dumps(list(ConversationMessage.objects.values_list("content", "visible_text")))
    assert "\\u0000" not in stored and "\\ud800" not in stored

    model_api.reset(message(text("You're welcome! Anything else about your order?")))
    customer.send("Thanks")
    assert "\\u0000" not in json.dumps(model_api.sent[0]["messages"])


def rma_from_history(request: dict) -> str:
    return next(
        json.loads(block["content"])["rma_number"]
        for turn in request["messages"]
        for block in turn["content"]
        if block["type"] == "tool_result" and "rma_number" in block["content"]
    )


@pytest.mark.usefixtures("return_checked")
def test_a_return_made_before_the_model_fails_is_told_to_the_customer_and_kept(model_api, customer):
    model_api.reset(
        message(tool_use("initiate_return", {**SARAH, "reason": "Damaged"})),
        *[ErrorReply(529, "overloaded_error")] * 2,
    )
    response = customer.send("Yes please, it arrived damaged")

    record = ReturnRecord.objects.get()
    assert response.status_code == 200
    assert record.rma_number in response.json()["reply"]
    assert record.rma_number in customer.transcript().json()["messages"][-1]["text"]


@pytest.mark.usefixtures("return_checked")
def test_a_return_and_the_call_that_made_it_are_stored_together_even_if_the_turn_dies(
    model_api, customer, monkeypatch
):
    model_api.reset(
        message(tool_use("initiate_return", {**SARAH, "reason": "Damaged"})),
        message(text("Your return has started.")),
    )
    with monkeypatch.context() as patched:
        patched.setattr("support.assistant.turn.conversation_turn_commit", _killed)
        with pytest.raises(KeyboardInterrupt):
            customer.send("Yes please")

    record = ReturnRecord.objects.get()
    stored = stored_texts(ConversationMessage.objects.all())
    assert record.rma_number in stored
    model_api.reset(
        lambda request: message(text(f"Yes, your return {rma_from_history(request)} has started."))
    )
    response = customer.send("Did my return go through? What is the RMA number?")
    assert messages_problems(model_api.sent[0]["messages"]) == []
    assert record.rma_number in response.json()["reply"]


def _killed(**_):
    raise KeyboardInterrupt("the worker was stopped")


@pytest.mark.usefixtures("return_checked")
def test_asking_again_for_the_same_return_gives_the_same_rma(model_api, customer):
    start = message(tool_use("initiate_return", {**SARAH, "reason": "Damaged", "item_titles": ["Sapiens"]}))
    said = lambda request: message(text(f"Your return {tool_results(request)[0]['content']['rma_number']}."))  # noqa: E731
    model_api.reset(start, said)
    customer.send("Yes, Sapiens please")
    model_api.reset(start, said)
    customer.send("Did that work? Please start it")

    record = ReturnRecord.objects.get()
    [again] = tool_results(model_api.sent[1])
    assert again["content"]["rma_number"] == record.rma_number
    assert again["content"]["already_started"] is True
    assert "is_error" not in again


@pytest.mark.usefixtures("return_checked")
def test_a_rejected_reply_after_a_return_gives_its_receipt_not_the_fallback(model_api, customer):
    model_api.reset(
        message(tool_use("initiate_return", {**SARAH, "reason": "Damaged"})),
        message(text("**Done!** Your return is on its way.")),
    )
    reply = customer.send("Yes please").json()["reply"]

    assert ReturnRecord.objects.get().rma_number in reply
    assert "**" not in reply


@pytest.mark.usefixtures("return_checked")
def test_a_return_made_before_the_call_limit_is_still_told(model_api, customer, settings):
    settings.BOOKLY_MAX_MODEL_CALLS_PER_TURN = 2
    model_api.reset(
        message(tool_use("initiate_return", {**SARAH, "reason": "Damaged"})),
        message(tool_use("lookup_order", SARAH)),
    )
    reply = customer.send("Yes please").json()["reply"]
    assert ReturnRecord.objects.get().rma_number in reply


@pytest.mark.usefixtures("return_checked")
def test_a_return_made_before_a_handover_is_told_with_it(model_api, customer):
    model_api.reset(
        message(tool_use("initiate_return", {**SARAH, "reason": "Damaged"})),
        message(tool_use("hand_off_to_person", {"reason": "needs_staff", "summary": "Damaged books"})),
        message(text("Someone will help.")),
    )
    answer = customer.send("Yes please, and I want to complain to someone").json()
    assert answer["status"] == "waiting"
    assert ReturnRecord.objects.get().rma_number in answer["reply"]


@pytest.mark.usefixtures("return_checked")
def test_a_refused_request_after_a_kept_step_sets_that_step_aside_too(model_api, customer):
    model_api.reset(
        message(tool_use("initiate_return", {**SARAH, "reason": "Damaged", "item_titles": ["Dune"]})),
        ErrorReply(400, "invalid_request_error"),
    )
    assert customer.send("Yes, return Dune please").status_code == 422

    model_api.reset(message(text("Could you tell me which items of order BK-10042 you'd like to return?")))
    assert customer.send("Sorry, I meant Sapiens").status_code == 200
    sent = json.dumps(model_api.sent[0]["messages"])
    assert "Dune" not in sent
    assert messages_problems(model_api.sent[0]["messages"]) == []


@pytest.mark.usefixtures("return_checked")
def test_no_return_is_made_by_a_turn_that_lost_its_conversation(model_api, customer, monkeypatch):
    run_tool = turn_module.tool_execute

    def after_another_turn_took_over(**arguments):
        # The lease lapsed (a stalled worker) and another turn took the conversation meanwhile.
        Conversation.objects.update(lease_token=uuid.uuid4())
        return run_tool(**arguments)

    monkeypatch.setattr(turn_module, "tool_execute", after_another_turn_took_over)
    model_api.reset(
        message(tool_use("initiate_return", {**SARAH, "reason": "Damaged"})), message(text("Done."))
    )
    assert customer.send("Yes please").status_code == 409
    assert not ReturnRecord.objects.exists()


@pytest.mark.usefixtures("return_checked")
def test_a_reply_cut_off_after_a_return_gives_its_receipt(model_api, customer):
    model_api.reset(
        message(tool_use("initiate_return", {**SARAH, "reason": "Damaged"})),
        message(text("Your return is started and its number is"), stop_reason="max_tokens"),
    )
    reply = customer.send("Yes please").json()["reply"]
    assert ReturnRecord.objects.get().rma_number in reply


def test_a_faq_example_question_is_no_source_of_facts(model_api, customer):
    """Staff write example questions the way customers ask, wrong assumptions included."""
    PolicyEntryFactory(topic="late_returns", example_questions="Can I return a book after 60 days?")
    model_api.reset(message(text("Yes, you can return books within 60 days of delivery.")))
    assert customer.send("How long do I have to return a book?").json()["reply"] == FALLBACK_REPLY


def test_the_fallback_is_no_answer_to_vote_on(model_api, customer):
    model_api.reset(message(text("Your order BK-77777 has shipped.")))
    response = customer.send("Where is my order?")

    assert response.json()["reply"] == FALLBACK_REPLY
    assert response.json()["votable"] is False
    assert customer.feedback({"turn": 1, "helpful": False}).json()["error"] == "unknown_reply"
