"""The offline model: the everyday flows, driven through the real tools like the tool loop does."""

import json
import time

import pytest

from orders.models import ReturnRecord
from policies.models import PolicyEntry
from support.assistant.prompts import REFUSAL_TEMPLATE, TURN_REMINDER
from support.assistant.tools import TOOLS, ToolContext, tool_execute
from support.assistant.validator import reply_validate
from support.llm.offline import CONFIRM_QUESTION, OfflineModel
from support.models import Conversation

SYSTEM = [{"type": "text", "text": "You are Bookly's support assistant."}]
SARAH = "sarah.chen@example.com"


class Chat:
    """A conversation with the offline model, running its tool calls the way the tool loop does."""

    def __init__(self, conversation=None):
        self.model = OfflineModel()
        self.messages: list[dict] = []
        self.grounding: list[str] = []
        self.context = ToolContext(conversation=conversation, eligibility_verified=set())
        self.tool_calls: list[tuple[str, dict, dict]] = []

    def send(self, text: str) -> str:
        """One customer turn; returns the final reply, which must pass the validator."""
        self.messages.append(
            {
                "role": "user",
                "content": [{"type": "text", "text": text}, {"type": "text", "text": TURN_REMINDER}],
            }
        )
        self.grounding.append(text)
        calls_this_turn = 0
        while True:
            reply = self.model.create(
                system=SYSTEM, tools=TOOLS, messages=self.messages, deadline=time.monotonic() + 30
            )
            self.messages.append({"role": "assistant", "content": reply.content})
            if reply.stop_reason == "end_turn":
                final = " ".join(block["text"] for block in reply.content if block["type"] == "text")
                verdict = reply_validate(reply=final, customer_message=text, grounding=self.grounding)
                assert verdict.ok, (final, verdict.violations)
                return final
            assert reply.stop_reason == "tool_use"
            calls_this_turn += 1
            assert calls_this_turn <= 1, "the offline model calls at most one tool per turn"
            results = []
            for block in reply.content:
                outcome = tool_execute(name=block["name"], arguments=block["input"], context=self.context)
                self.tool_calls.append((block["name"], block["input"], outcome.result))
                results.append(outcome.as_block(block["id"]))
                self.grounding.append(results[-1]["content"])
            self.messages.append({"role": "user", "content": results})

    @property
    def tools_called(self) -> list[str]:
        return [name for name, _, _ in self.tool_calls]


@pytest.fixture
def chat(demo_data):
    return Chat(conversation=Conversation.objects.create())


def _history_with_result(tool: str, arguments: dict, result: dict, *, customer: str) -> list[dict]:
    """A history ending in one tool result, for replies to results the everyday flows rarely produce."""
    return [
        {"role": "user", "content": [{"type": "text", "text": customer}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": tool, "input": arguments}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": json.dumps(result),
                    "is_error": True,
                }
            ],
        },
    ]


# --- order status ----------------------------------------------------------------------------------


def test_order_status_asks_number_then_email_then_looks_up(chat):
    first = chat.send("Where is my order?")
    assert "order number" in first and "BK-" in first
    assert "email" in chat.send("It's bk-10042").lower()
    reply = chat.send(f"Sure, it's {SARAH}.")

    assert chat.tool_calls[0][:2] == ("lookup_order", {"order_id": "BK-10042", "customer_email": SARAH})
    for value in ("BK-10042", "delivered", "2026-03-25", "2026-03-30", "1Z999AA10123456784", "The Goldfinch"):
        assert value in reply
    assert "Sapiens" in reply


def test_order_number_and_email_at_once_looks_up_right_away(chat):
    reply = chat.send("Hi, what's the status of BK-10089? My email is james.murphy@example.com")
    assert chat.tools_called == ["lookup_order"]
    assert "shipped" in reply and "1Z999AA10987654321" in reply and "Project Hail Mary" in reply


def test_my_order_with_only_an_email_still_asks_for_the_order_number(chat):
    reply = chat.send(f"Where's my order? My email is {SARAH}")
    assert chat.tool_calls == []
    assert "order number" in reply
    # The email given earlier is kept: the number is all that was missing.
    reply = chat.send("BK-10103")
    assert chat.tools_called == ["lookup_order"]
    assert "BK-10103" in reply and "is processing" in reply and "tracking" not in reply


def test_order_not_found_asks_to_check_both_without_saying_which(chat):
    reply = chat.send("Where is order BK-10042? Email: someone.else@example.com")
    assert chat.tool_calls[0][2]["error"] == "order_not_found"
    assert "order number together with that email" in reply and "check both" in reply
    assert "delivered" not in reply


def test_a_retry_after_not_found_uses_the_corrected_email(chat):
    chat.send("Where is order BK-10042? Email: someone.else@example.com")
    reply = chat.send(SARAH)
    assert chat.tool_calls[-1][1] == {"order_id": "BK-10042", "customer_email": SARAH}
    assert "is delivered" in reply


def test_malformed_order_number_asks_again(chat):
    reply = chat.send(f"Track my order BK-123 please, {SARAH}")
    assert chat.tool_calls[0][2]["error"] == "invalid_arguments"
    assert "doesn't look quite right" in reply


def test_customer_without_an_order_number_is_told_where_to_find_it(chat):
    chat.send("Where is my order?")
    reply = chat.send("I don't know my order number, can you find it with my email?")
    assert chat.tool_calls == []
    assert "confirmation email" in reply


@pytest.mark.parametrize("answer", ["hmm", "it's my order from last week"])
def test_unclear_answer_to_a_question_repeats_the_question(chat, answer):
    chat.send("Where is my order?")
    reply = chat.send(answer)
    assert reply.startswith("Sorry, I didn't catch that.") and "order number" in reply


def test_order_number_alone_asks_which_task(chat):
    reply = chat.send("BK-10042")
    assert "status" in reply and "return" in reply
    chat.send("the status please")
    reply = chat.send(SARAH)
    assert chat.tool_calls[0][1]["order_id"] == "BK-10042"
    assert "is delivered" in reply


# --- returns ---------------------------------------------------------------------------------------


def _ask_to_return(chat, text=f"I want to return a book from BK-10042 because it arrived damaged. {SARAH}"):
    return chat.send(text)


def test_return_summary_asks_for_explicit_yes_or_no(chat):
    summary = _ask_to_return(chat)
    assert chat.tools_called == ["check_return_eligibility"]
    for value in ("BK-10042", "The Goldfinch", "Sapiens", "the original payment method", "7 business days"):
        assert value in summary
    assert summary.endswith(CONFIRM_QUESTION)


def test_yes_starts_the_return_and_gives_the_rma_number(chat):
    _ask_to_return(chat)
    reply = chat.send("Yes please")

    name, arguments, result = chat.tool_calls[-1]
    assert name == "initiate_return"
    assert arguments == {"order_id": "BK-10042", "customer_email": SARAH, "reason": "it arrived damaged"}
    assert result["rma_number"] in reply
    assert "prepaid return label" in reply and "7 business days" in reply
    record = ReturnRecord.objects.get(rma_number=result["rma_number"])
    assert record.reason == "it arrived damaged" and record.lines.count() == 2


def test_no_starts_nothing(chat):
    _ask_to_return(chat)
    reply = chat.send("No, thanks")
    assert chat.tools_called == ["check_return_eligibility"]
    assert "not started a return" in reply
    assert not ReturnRecord.objects.exists()


def test_return_collects_number_then_email_and_names_only_chosen_titles(chat):
    assert "order number" in chat.send("I'd like to return The Goldfinch")
    assert "email" in chat.send("It was BK-10042").lower()
    summary = chat.send(SARAH)
    assert "I can start a return for The Goldfinch." in summary

    chat.send("yep")
    name, arguments, result = chat.tool_calls[-1]
    assert name == "initiate_return"
    assert arguments["item_titles"] == ["The Goldfinch"] and arguments["reason"] == "Not given"
    assert result["items"] == ["The Goldfinch"]


def test_naming_other_titles_at_the_question_summarises_again(chat):
    _ask_to_return(chat)
    summary = chat.send("Only Sapiens")
    assert "I can start a return for Sapiens." in summary and summary.endswith(CONFIRM_QUESTION)
    chat.send("go ahead")
    assert chat.tool_calls[-1][1]["item_titles"] == ["Sapiens"]


@pytest.mark.parametrize(
    ("order_id", "email", "reason_words"),
    [
        ("BK-9871", "maria.gonzalez@example.com", "last day to start a return was 2026-03-20"),
        ("BK-10089", "james.murphy@example.com", "has not been delivered yet"),
    ],
)
def test_not_eligible_return_gives_the_reason(chat, order_id, email, reason_words):
    reply = chat.send(f"I want to return {order_id}, {email}")
    assert f"I checked order {order_id}, and it can't be returned." in reply
    assert reason_words in reply
    assert CONFIRM_QUESTION not in reply


def test_second_return_of_the_same_order_is_refused_by_the_check(chat):
    _ask_to_return(chat)
    chat.send("yes")
    reply = chat.send(f"I want to return BK-10042 {SARAH}")
    assert "already part of an open return" in reply


def test_switching_from_status_to_return_reuses_the_order_it_points_back_to(chat):
    chat.send(f"Where is BK-10042? {SARAH}")
    summary = chat.send("Great, can I return it?")
    assert chat.tool_calls[-1][:2] == (
        "check_return_eligibility",
        {"order_id": "BK-10042", "customer_email": SARAH},
    )
    assert summary.endswith(CONFIRM_QUESTION)


def test_a_problem_with_my_book_is_a_return(chat):
    reply = chat.send("My book arrived damaged")
    assert reply.startswith("I can help with a return.")
    chat.send("BK-10042")
    chat.send(SARAH)
    chat.send("yes")
    assert chat.tool_calls[-1][1]["reason"] == "My book arrived damaged"


def test_a_new_request_midway_wins(chat):
    chat.send("Where is my order?")
    reply = chat.send("Actually, I want to return something instead")
    assert reply.startswith("I can help with a return.") and "order number" in reply


def test_yes_without_a_pending_question_starts_nothing(chat):
    chat.send(f"Where is BK-10042? {SARAH}")
    chat.send("yes")
    assert chat.tools_called == ["lookup_order"]


# --- policies ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "topic"),
    [
        ("Do you ship to Canada?", "shipping"),
        ("How much is expedited shipping?", "shipping"),
        ("How long does delivery take?", "shipping"),
        ("I can't log into my account", "password_reset"),
        ("I forgot my password, how do I reset it?", "password_reset"),
        ("What is your return policy?", "returns_overview"),
        ("How do returns work?", "returns_overview"),
    ],
)
def test_policy_questions_quote_the_faq_verbatim(chat, question, topic):
    reply = chat.send(question)
    assert chat.tool_calls[0][:2] == ("lookup_policy", {"topic": topic})
    assert PolicyEntry.objects.get(topic=topic).text in reply


def test_unpublished_policy_topic_says_there_is_no_published_answer(chat):
    reply = chat.send("What is your privacy policy?")
    assert chat.tool_calls[0][1] == {"topic": "privacy"}
    assert "don't have a published policy answer" in reply


# --- out of scope and small talk ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "topic"),
    [
        ("What's the weather like in Boston?", "the weather"),
        ("Can you give me a recipe for banana bread?", "recipes"),
        ("Can you recommend a good mystery novel?", "book recommendations"),
        ("Tell me a joke", "jokes"),
        ("Write a Python function to sort a list", "programming questions"),
        ("Can I change my shipping address?", "changing or cancelling orders"),
        ("What is the capital of France?", "that request"),
    ],
)
def test_out_of_scope_gets_the_refusal_sentence_only(chat, message, topic):
    assert chat.send(message) == REFUSAL_TEMPLATE.format(topic=topic)
    assert chat.tool_calls == []


def test_greeting_and_thanks(chat):
    hello = chat.send("Hello!")
    assert "Bookly's automated support assistant" in hello
    assert "order status" in hello and "returns" in hello and "policies" in hello
    assert chat.send("thank you").startswith("You're welcome!")


# --- protocol ----------------------------------------------------------------------------------------


def test_reply_speaks_the_messages_api_shapes():
    messages = [{"role": "user", "content": [{"type": "text", "text": f"Where is BK-10042? {SARAH}"}]}]
    reply = OfflineModel().create(system=SYSTEM, tools=TOOLS, messages=messages, deadline=0)

    assert (reply.stop_reason, reply.model, reply.offline, reply.request_id) == (
        "tool_use",
        "bookly-offline",
        True,
        "",
    )
    assert reply.content == [
        {
            "type": "tool_use",
            "id": "toolu_offline_0001",
            "name": "lookup_order",
            "input": {"order_id": "BK-10042", "customer_email": SARAH},
        }
    ]
    assert set(reply.usage) == {
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    }
    assert reply.usage["input_tokens"] > reply.usage["output_tokens"] > 0


def test_tool_use_ids_are_unique_within_a_conversation(chat):
    chat.send(f"Where is BK-10042? {SARAH}")
    chat.send(f"And BK-10103? {SARAH}")
    _ask_to_return(chat)
    ids = [block["id"] for m in chat.messages for block in m["content"] if block["type"] == "tool_use"]
    assert len(ids) == 3 and len(set(ids)) == 3


def test_same_messages_give_the_same_reply(chat):
    _ask_to_return(chat)
    first = OfflineModel().create(system=SYSTEM, tools=TOOLS, messages=chat.messages[:-1], deadline=0)
    second = OfflineModel().create(system=SYSTEM, tools=TOOLS, messages=chat.messages[:-1], deadline=0)
    assert first == second
    assert first.content == chat.messages[-1]["content"]


def test_merged_customer_messages_are_read_together(demo_data):
    # A failed turn leaves two customer messages in a row; the history merges them into one.
    chat = Chat()
    chat.messages.append(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Where is my order BK-10089?"},
                {"type": "text", "text": TURN_REMINDER},
            ],
        }
    )
    reply = chat.send("james.murphy@example.com")
    assert chat.tools_called == ["lookup_order"] and "is shipped" in reply


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (
            {"error": "eligibility_not_verified", "message": "Call check_return_eligibility first."},
            "check that",
        ),
        ({"error": "already_initiated", "message": "x"}, "already part of an open return"),
        (
            {"error": "not_eligible", "message": "This order has not been delivered yet."},
            "not been delivered",
        ),
        (
            {"error": "item_not_returnable", "message": "This is an ebook, and ebooks cannot be returned."},
            "ebook",
        ),
        ({"error": "item_not_in_order", "message": "m", "order_titles": ["Sapiens"]}, "are Sapiens"),
        ({"error": "invalid_arguments", "message": "m", "problems": [{"field": "customer_email"}]}, "email"),
        ({"error": "call_limit_reached", "message": "Not run."}, "went wrong"),
    ],
)
def test_initiate_return_errors_get_a_plain_sentence(result, expected):
    arguments = {"order_id": "BK-10042", "customer_email": SARAH, "reason": "Not given"}
    messages = _history_with_result("initiate_return", arguments, result, customer=f"yes BK-10042 {SARAH}")
    reply = OfflineModel().create(system=SYSTEM, tools=TOOLS, messages=messages, deadline=0)

    assert reply.stop_reason == "end_turn"
    text = reply.content[0]["text"]
    assert expected in text
    assert "Call check_return_eligibility" not in text  # model-facing messages are not repeated
    verdict = reply_validate(reply=text, customer_message="yes", grounding=[f"yes BK-10042 {SARAH}"])
    assert verdict.ok, verdict.violations
