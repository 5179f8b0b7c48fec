"""The offline model's parts, through its public interface: a hand-built history in, one reply out.

Whole conversations, with the real tools and the real turn service, are the
scenario suite's (support/evals/scenarios/). Here the tool results are
written by hand, so no test needs the database.
"""

import json
import time
from typing import Any

import pytest

from orders.selectors import ChangeCode, ProblemCode
from orders.services import ITEMS_NEEDED, ReturnRefusal
from support.assistant.builtin.model import OfflineModel
from support.assistant.capabilities.base import CODE_NEEDED
from support.assistant.capabilities.registry import TOOLS
from support.assistant.claims import ToolResult
from support.assistant.prompts import LONG_CONVERSATION_REMINDER, TURN_REMINDER
from support.assistant.understanding.wording import (
    ASK_EMAIL,
    ASK_WHICH_TASK,
    CHECK_TOO_SOON_REPLY,
    CHECKS_SPENT_REPLY,
    CODE_NEEDED_REPLY,
    CONFIRM_QUESTION,
    DECLINED_REPLY,
    GENERIC_ERROR_REPLY,
    GOODBYE_REPLY,
    GREETING_REPLY,
    NO_POLICY_REPLY,
    ORDER_NOT_FOUND_REPLY,
    THANKS_REPLY,
    Waiting,
    ask_order_number,
)
from support.assistant.validator import reply_validate
from support.llm.protocol import (
    FAQ_TOPICS_TAG,
    OFFER_PERSON,
    REFUSAL_TEMPLATE,
    FaqTopic,
    ToolError,
    faq_topic_line,
    staff_message_block_text,
)

SYSTEM = [{"type": "text", "text": "You are Bookly's support assistant."}]
SARAH = "sarah.chen@example.com"
JAMES = "james.murphy@example.com"

# Tool results in the shapes the tools give, with values from the demo data.
ORDER_BK_10042: dict[str, Any] = {
    "order_id": "BK-10042",
    "customer_name": "Sarah Chen",
    "status": "delivered",
    "ordered_on": "2026-03-25",
    "delivered_on": "2026-03-30",
    "tracking_number": "1Z999AA10123456784",
    "items": [
        {"title": "The Goldfinch", "author": "Donna Tartt", "quantity": 1, "unit_price": "16.99"},
        {"title": "Sapiens", "author": "Yuval Noah Harari", "quantity": 1, "unit_price": "19.99"},
    ],
    "total": "36.98",
}
ORDER_BK_10103: dict[str, Any] = {
    "order_id": "BK-10103",
    "customer_name": "Sarah Chen",
    "status": "processing",
    "ordered_on": "2026-04-13",
    "delivered_on": None,
    "tracking_number": None,
    "items": [{"title": "Tomorrow, and Tomorrow, and Tomorrow", "quantity": 2, "unit_price": "17.99"}],
    "total": "35.98",
}
POLICY_TERMS: dict[str, Any] = {
    "return_window_days": 30,
    "condition_requirements": "Items must be unread, undamaged and in their original packaging.",
    "refund_method": "the original payment method",
    "refund_timeline_business_days": 7,
    "not_returnable": ["Ebook", "Audiobook", "Gift card", "Personalized item"],
}
ELIGIBLE_BK_10042: dict[str, Any] = {
    "order_id": "BK-10042",
    "eligible": True,
    "reason": (
        "This order was delivered on 2026-03-30, within the 30-day return window, which ends on 2026-04-29."
    ),
    "delivered_on": "2026-03-30",
    "last_day_to_start_return": "2026-04-29",
    "items": [
        {"title": "The Goldfinch", "returnable": True, "reason": "This item can be returned."},
        {"title": "Sapiens", "returnable": True, "reason": "This item can be returned."},
    ],
    "policy": POLICY_TERMS,
}
WINDOW_PASSED_BK_9871: dict[str, Any] = {
    "order_id": "BK-9871",
    "eligible": False,
    "reason": (
        "Returns must be started within 30 days of delivery. This order was delivered on 2026-02-18, "
        "so the last day to start a return was 2026-03-20."
    ),
    "items": [{"title": "The Midnight Library", "returnable": False, "reason": "Outside the window."}],
    "policy": POLICY_TERMS,
}
NOT_DELIVERED_BK_10089: dict[str, Any] = {
    "order_id": "BK-10089",
    "eligible": False,
    "reason": "This order has not been delivered yet, so it cannot be returned.",
    "items": [{"title": "Project Hail Mary", "returnable": False, "reason": "Not delivered yet."}],
    "policy": POLICY_TERMS,
}
RETURN_STARTED_BK_10042: dict[str, Any] = {
    "rma_number": "RMA-20260415-0001",
    "order_id": "BK-10042",
    "status": "initiated",
    "items": ["The Goldfinch", "Sapiens"],
    "refund_method": "the original payment method",
    "refund_timeline_business_days": 7,
    "next_steps": "We will email a prepaid return label to the address on the order.",
}
SHIPPING_POLICY = {
    "topic": "shipping",
    "title": "Shipping options and times",
    "text": "Standard shipping is free on orders over $25 and takes 3 to 5 business days.",
}


def customer(*texts: str, reminder: str = TURN_REMINDER) -> dict:
    """A customer message as the turn service sends it: the words, then the reminder block."""
    blocks = [{"type": "text", "text": text} for text in texts]
    return {"role": "user", "content": [*blocks, {"type": "text", "text": reminder}]}


def assistant(text: str, waiting: Waiting | None = None) -> dict:
    """Our words as the turn sends them back: with the state the model recorded, what it waits for."""
    said = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    return {**said, "state": {"waiting_for": waiting}} if waiting else said


def replied(reply) -> dict:
    """The model's own reply as the next request carries it: its words and its state."""
    return {"role": "assistant", "content": reply.content, "state": reply.state}


def tool_round(
    name: str, arguments: dict, result: dict, *, tool_id: str = "toolu_offline_0001"
) -> list[dict]:
    """The model's tool call and the tool result that answers it."""
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id, "content": json.dumps(result)}
    if "error" in result:
        block["is_error"] = True
    return [
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": arguments}],
        },
        {"role": "user", "content": [block]},
    ]


def ask(messages: list[dict], *, system: list[dict] = SYSTEM):
    return OfflineModel().create(
        system=system, tools=TOOLS, messages=messages, deadline=time.monotonic() + 30
    )


def prompt_with_topics(*topics: FaqTopic) -> list[dict]:
    """A system prompt listing these FAQ topics, as the assistant writes it."""
    lines = "\n".join(faq_topic_line(topic) for topic in topics)
    return [
        {
            "type": "text",
            "text": f"Rules.\n<{FAQ_TOPICS_TAG}>\nlookup_policy keys:\n{lines}\n</{FAQ_TOPICS_TAG}>",
        }
    ]


DEMO_TOPICS = (
    FaqTopic("returns_overview", "Returns and refunds", ("How do returns work?", "Can I return a book?")),
    FaqTopic("shipping", "Shipping options and times", ("How long does shipping take?", "Is shipping free?")),
    FaqTopic(
        "password_reset", "Resetting your password", ("How do I reset my password?", "I forgot my password")
    ),
)
GIFT_WRAPPING = FaqTopic(
    "gift_wrapping", "Gift wrapping", ("Do you offer gift wrapping?", "Can you wrap a book as a present?")
)


def text_of(reply) -> str:
    assert reply.stop_reason == "end_turn"
    [block] = reply.content
    assert block["type"] == "text"
    return block["text"]


def tool_call_of(reply) -> tuple[str, dict]:
    assert reply.stop_reason == "tool_use"
    [block] = reply.content  # one tool call at a time
    assert block["type"] == "tool_use"
    return block["name"], block["input"]


def at_the_question(*said: str, answer: str, result: dict = ELIGIBLE_BK_10042) -> list[dict]:
    """A return conversation up to the customer's answer to the yes-or-no question."""
    messages = []
    for text in said:
        messages += [customer(text), assistant(ASK_EMAIL, Waiting.EMAIL)]
    arguments = {"order_id": result["order_id"], "customer_email": SARAH}
    messages[-1:] = tool_round("check_return_eligibility", arguments, result)
    return [
        *messages,
        assistant(f"Order {result['order_id']} can be returned. {CONFIRM_QUESTION}", Waiting.CONFIRM_RETURN),
        customer(answer),
    ]


# --- protocol ----------------------------------------------------------------------------------------


def test_reply_speaks_the_messages_api_shapes():
    reply = ask([customer(f"Where is BK-10042? {SARAH}")])

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


def test_tool_use_ids_are_unique_within_a_conversation():
    messages = [customer(f"Where is BK-10042? {SARAH}")]
    ids = []
    for result, next_request in [
        (ORDER_BK_10042, f"And BK-10103? {SARAH}"),
        (ORDER_BK_10103, f"I want to return BK-10042, {SARAH}"),
        (ELIGIBLE_BK_10042, None),
    ]:
        [call] = ask(messages).content
        ids.append(call["id"])
        messages += tool_round(call["name"], call["input"], result, tool_id=call["id"])
        if next_request:
            messages += [replied(ask(messages)), customer(next_request)]

    assert len(ids) == 3 and len(set(ids)) == 3


def test_same_messages_give_the_same_reply():
    messages = [customer(f"I want to return BK-10042, {SARAH}")]
    messages += tool_round(
        "check_return_eligibility", {"order_id": "BK-10042", "customer_email": SARAH}, ELIGIBLE_BK_10042
    )
    assert ask(messages) == ask(messages)


def test_merged_customer_messages_are_read_together():
    # A failed turn leaves two customer messages in a row; the turn service merges them into one.
    merged = customer("Where is my order BK-10089?", TURN_REMINDER, JAMES)
    assert tool_call_of(ask([merged])) == ("lookup_order", {"order_id": "BK-10089", "customer_email": JAMES})


@pytest.mark.parametrize("reminder", [TURN_REMINDER, LONG_CONVERSATION_REMINDER])
def test_reminder_blocks_are_not_read_as_customer_words(reminder):
    # The reminders speak of returns and policies: read as the customer's words, they would start a task.
    assert text_of(ask([customer("Hello!", reminder=reminder)])) == GREETING_REPLY


# --- what the customer asks --------------------------------------------------------------------------


def test_greeting_introduces_the_automated_assistant_and_its_three_tasks():
    reply = text_of(ask([customer("Hello!")]))
    assert reply == GREETING_REPLY
    assert "automated support assistant" in reply
    assert "order status" in reply and "returns" in reply and "policies" in reply


def test_thanks_is_answered_in_kind():
    assert (
        text_of(ask([customer("Hello!"), assistant(GREETING_REPLY), customer("thank you")])) == THANKS_REPLY
    )


@pytest.mark.parametrize(
    ("message", "topic"),
    [
        ("What's the weather like in Boston?", "the weather"),
        ("Can you give me a recipe for banana bread?", "recipes"),
        ("Can you recommend a good mystery novel?", "book recommendations"),
        ("Tell me a joke", "jokes"),
        ("Write a Python function to sort a list", "programming questions"),
        ("What is the capital of France?", "that request"),
    ],
)
def test_out_of_scope_gets_the_refusal_sentence_only(message, topic):
    assert text_of(ask([customer(message)])) == REFUSAL_TEMPLATE.format(topic=topic)


@pytest.mark.parametrize(
    ("message", "topic"),
    [
        ("The total on my invoice is wrong", "invoice corrections"),
        ("My card was declined at checkout", "payments"),
        ("How do I delete my account?", "accounts"),
        ("Can I add another book to my order?", "changing orders"),
        ("Do you sell gift cards?", "gift cards"),
    ],
)
def test_a_store_request_no_tool_serves_gets_the_refusal_and_a_person_offered(message, topic):
    assert text_of(ask([customer(message)])) == f"{REFUSAL_TEMPLATE.format(topic=topic)} {OFFER_PERSON}"


def test_yes_to_the_offer_hands_the_request_itself_to_staff():
    refused = "The total on my invoice is wrong"
    reply = ask([customer(refused), replied(ask([customer(refused)])), customer("yes please")])
    assert tool_call_of(reply) == ("hand_off_to_person", {"reason": "needs_staff", "summary": refused})


def test_a_complaint_goes_to_a_person_without_the_word_person():
    words = "This is unacceptable, the worst service I have ever had from a bookshop."
    assert tool_call_of(ask([customer(words)])) == (
        "hand_off_to_person",
        {"reason": "needs_staff", "summary": words},
    )


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
        ("What is your privacy policy?", "privacy"),
    ],
)
def test_policy_questions_look_up_their_topic(question, topic):
    assert tool_call_of(ask([customer(question)])) == ("lookup_policy", {"topic": topic})


@pytest.mark.parametrize(
    "message",
    [
        "can I talk to an agent?",
        "how to talk to an agent?",
        "could you help me contact customer service?",
        "I want to speak to a human",
        "agent",
        "Human please",
        "is there a live person I can chat with?",
        "Can I speak to your manager?",
        "I'd like to talk to a member of staff about my return",
        "put me through to customer care",
        "how can I reach your support team?",
        "I want to talk to one of your agents about BK-10042",
    ],
)
def test_asking_for_a_person_hands_the_conversation_over(message):
    name, arguments = tool_call_of(ask([customer(message)]))
    assert (name, arguments["reason"]) == ("hand_off_to_person", "customer_asked")
    assert arguments["summary"] == message


@pytest.mark.parametrize(
    "message",
    [
        "Are you a human?",
        "Are you a real person?",
        "I want to return a book someone gave me",
        "My parcel was delivered to the wrong person",
        "The agent at the post office lost it",
        "I see someone else's name on my order",
    ],
)
def test_mentioning_people_is_not_asking_for_one(message):
    reply = ask([customer(message)])
    assert not (reply.stop_reason == "tool_use" and reply.content[0]["name"] == "hand_off_to_person")


def test_after_the_handoff_it_tells_the_customer_what_the_tool_says():
    tell = "I've passed this conversation to our support team. A member of our team will join shortly."
    messages = [
        customer("Agent please"),
        *tool_round("hand_off_to_person", {"reason": "customer_asked"}, {"tell_the_customer": tell}),
    ]
    assert text_of(ask(messages)) == tell


def test_staff_messages_are_not_read_as_customer_words():
    said_by_staff = {"type": "text", "text": staff_message_block_text("Where is your order BK-10089?")}
    messages = [{"role": "user", "content": [said_by_staff, *customer("Thanks!")["content"]]}]
    assert text_of(ask(messages)) == THANKS_REPLY


def test_an_order_number_alone_asks_which_task():
    assert text_of(ask([customer("BK-10042")])).endswith(ASK_WHICH_TASK)


# --- the yes-or-no question before a return ----------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "arguments"),
    [
        (
            [f"I want to return a book from BK-10042 because it arrived damaged. {SARAH}"],
            {"reason": "it arrived damaged"},
        ),
        (["My book arrived damaged", "BK-10042", SARAH], {"reason": "My book arrived damaged"}),
        (
            ["I'd like to return order BK-10042 please, it arrived damaged", SARAH],
            {"reason": "I'd like to return order BK-10042 please, it arrived damaged"},
        ),
        (
            ["I'd like to return The Goldfinch", "It was BK-10042", SARAH],
            {"reason": "Not given", "item_titles": ["The Goldfinch"]},
        ),
    ],
    ids=["because_clause", "sentence_naming_a_problem", "order_number_kept", "title_named_no_reason"],
)
def test_yes_starts_the_return_with_the_customers_reason_and_chosen_titles(said, arguments):
    reply = ask(at_the_question(*said, answer="Yes please"))
    assert tool_call_of(reply) == (
        "initiate_return",
        {"order_id": "BK-10042", "customer_email": SARAH, **arguments},
    )


@pytest.mark.parametrize(
    ("answer", "instead"),
    [("yes, but I'd like to talk to a person first", "hand_off_to_person"), ("ok, where is my order?", None)],
)
def test_a_yes_with_another_request_is_not_a_go_ahead(answer, instead):
    reply = ask(at_the_question(f"I want to return BK-10042, {SARAH}", answer=answer))
    if instead:
        assert tool_call_of(reply)[0] == instead
    else:
        assert not (reply.stop_reason == "tool_use" and reply.content[0]["name"] == "initiate_return")


@pytest.mark.parametrize(
    "answer",
    [
        "ok, I don't want to return it anymore",
        "ok, maybe later",
        "ok bye",
        "sure, but first can you check BK-10103?",
    ],
)
def test_a_hesitant_yes_starts_nothing(answer):
    reply = ask(at_the_question(f"I want to return BK-10042, {SARAH}", answer=answer))
    assert text_of(reply) == DECLINED_REPLY


@pytest.mark.parametrize(
    "answer", ["yes, it's not what I ordered", "yes please, can you email me the label?"]
)
def test_a_yes_with_a_reason_or_a_question_about_it_starts_the_return(answer):
    reply = ask(at_the_question(f"I want to return BK-10042, {SARAH}", answer=answer))
    assert tool_call_of(reply)[0] == "initiate_return"


def test_a_no_that_asks_for_a_person_hands_over():
    reply = ask(at_the_question(f"I want to return BK-10042, {SARAH}", answer="no, let me talk to a human"))
    assert tool_call_of(reply)[0] == "hand_off_to_person"


def test_no_starts_nothing():
    reply = ask(at_the_question(f"I want to return BK-10042, {SARAH}", answer="No, thanks"))
    assert text_of(reply) == DECLINED_REPLY


def test_naming_other_titles_at_the_question_summarises_again():
    messages = at_the_question(f"I want to return BK-10042, {SARAH}", answer="Only Sapiens")
    summarised = ask(messages)
    summary = text_of(summarised)
    assert "I can start a return for Sapiens." in summary and summary.endswith(CONFIRM_QUESTION)

    reply = ask([*messages, replied(summarised), customer("go ahead")])
    assert tool_call_of(reply) == (
        "initiate_return",
        {"order_id": "BK-10042", "customer_email": SARAH, "reason": "Not given", "item_titles": ["Sapiens"]},
    )


# --- replies to tool results -------------------------------------------------------------------------


def test_order_result_gives_what_it_holds_and_nothing_more():
    messages = [customer(f"Where is BK-10103? {SARAH}")]
    messages += tool_round("lookup_order", {"order_id": "BK-10103", "customer_email": SARAH}, ORDER_BK_10103)
    reply = text_of(ask(messages))

    assert "The status of order BK-10103 is processing." in reply
    assert "2026-04-13" in reply and "2 copies of Tomorrow, and Tomorrow, and Tomorrow" in reply
    assert "tracking" not in reply and "delivered" not in reply


def test_eligible_result_is_summarised_and_ends_with_the_question():
    messages = [customer(f"I want to return BK-10042, {SARAH}")]
    messages += tool_round(
        "check_return_eligibility", {"order_id": "BK-10042", "customer_email": SARAH}, ELIGIBLE_BK_10042
    )
    summary = text_of(ask(messages))

    assert "I can start a return for The Goldfinch and Sapiens." in summary
    for value in (
        "BK-10042",
        POLICY_TERMS["condition_requirements"],
        "the original payment method",
        "7 business days",
    ):
        assert value in summary
    assert summary.endswith(CONFIRM_QUESTION)


@pytest.mark.parametrize("result", [WINDOW_PASSED_BK_9871, NOT_DELIVERED_BK_10089])
def test_ineligible_result_gives_the_reason_and_asks_nothing(result):
    messages = [customer(f"I want to return {result['order_id']}, {SARAH}")]
    messages += tool_round(
        "check_return_eligibility", {"order_id": result["order_id"], "customer_email": SARAH}, result
    )
    reply = text_of(ask(messages))

    assert f"I checked order {result['order_id']}, and it can't be returned." in reply
    assert result["reason"] in reply
    assert CONFIRM_QUESTION not in reply


def test_started_return_gives_the_rma_number_next_steps_and_refund():
    arguments = {"order_id": "BK-10042", "customer_email": SARAH, "reason": "Not given"}
    messages = at_the_question(f"I want to return BK-10042, {SARAH}", answer="yes")
    messages += tool_round(
        "initiate_return", arguments, RETURN_STARTED_BK_10042, tool_id="toolu_offline_0002"
    )
    reply = text_of(ask(messages))

    assert "RMA-20260415-0001" in reply and "The Goldfinch and Sapiens" in reply
    assert RETURN_STARTED_BK_10042["next_steps"] in reply
    assert "the original payment method within 7 business days" in reply


def test_policy_result_is_quoted_verbatim():
    messages = [
        customer("Do you ship to Canada?"),
        *tool_round("lookup_policy", {"topic": "shipping"}, SHIPPING_POLICY),
    ]
    assert SHIPPING_POLICY["text"] in text_of(ask(messages))


# Every error code a tool result can carry: (tool, more of the result, what the reply says).
# The `message` of most codes is written for the model and must not reach the customer.
MODEL_FACING = "Call check_return_eligibility for this order first."
ERROR_REPLIES: dict[str, tuple[str, dict[str, Any], str]] = {
    ToolError.UNKNOWN_TOOL: ("refund_order", {}, GENERIC_ERROR_REPLY),
    ToolError.INVALID_ARGUMENTS: (
        "initiate_return",
        {"problems": [{"field": "(other)"}]},
        GENERIC_ERROR_REPLY,
    ),
    ToolError.CALL_LIMIT_REACHED: ("lookup_order", {}, GENERIC_ERROR_REPLY),
    ToolError.TOO_MANY_TOOL_CALLS: ("lookup_order", {}, GENERIC_ERROR_REPLY),
    ToolError.TOO_MANY_FAILED_CHECKS: ("lookup_order", {}, CHECKS_SPENT_REPLY),
    ToolError.CHECK_TOO_SOON: ("lookup_order", {"retry_after_seconds": 2}, CHECK_TOO_SOON_REPLY),
    # Its words are grounded in the tool's own message about the code (what a lookup sends).
    ToolError.CODE_NEEDED: (
        "lookup_order",
        {"message": CODE_NEEDED[1].format(minutes=15)},
        CODE_NEEDED_REPLY,
    ),
    ToolError.ORDER_NOT_FOUND: ("lookup_order", {}, ORDER_NOT_FOUND_REPLY),
    ToolError.ELIGIBILITY_NOT_VERIFIED: (
        "initiate_return",
        {},
        "need to check that the order can be returned",
    ),
    ToolError.TOPIC_NOT_SUPPORTED: ("lookup_policy", {}, "don't have a published policy answer"),
    ToolError.NOT_SIGNED_IN: ("list_recent_orders", {}, "What is the order number?"),
    ReturnRefusal.REASON_REQUIRED: ("initiate_return", {}, "why you are returning the items"),
    ReturnRefusal.NOT_ELIGIBLE: (
        "initiate_return",
        {"message": "This order has not been delivered yet."},
        "I couldn't start that return. This order has not been delivered yet.",
    ),
    ReturnRefusal.ITEM_NOT_RETURNABLE: (
        "initiate_return",
        {"message": "This is an ebook, and ebooks cannot be returned."},
        "ebooks cannot be returned",
    ),
    ReturnRefusal.ITEM_NOT_IN_ORDER: (
        "initiate_return",
        {"order_titles": ["The Goldfinch", "Sapiens"]},
        "The items in this order are The Goldfinch and Sapiens.",
    ),
    ReturnRefusal.ALREADY_INITIATED: ("initiate_return", {}, "already part of an open return"),
    ToolError.CHECK_NOT_DONE: ("cancel_order", {}, "I need to check it first"),
    ToolError.WHICH_SHOP: (
        "lookup_order",
        {"order_id": "BK-10042", "shops": ["Books AU", "Books US"]},
        "You have an order BK-10042 with more than one of our shops. Which shop is it from: Books AU or "
        "Books US?",
    ),
    ToolError.NOT_CONFIRMED: (
        "cancel_order",
        {},
        "I haven't changed your order yet. Please reply yes or no.",
    ),
    ToolError.INVALID_ADDRESS: (
        "check_address_change",
        {
            "problems": [
                {"field": "new_address.zip", "problem": "must be a postal code in Australia, like 2060"},
                {"field": "new_address.to", "problem": "is required"},
            ]
        },
        "the recipient's name is required and the ZIP or postal code must be a postal code in Australia, "
        "like 2060",
    ),
    ChangeCode.SHIPPED: (
        "cancel_order",
        {"message": "This order has already shipped, so it can no longer be cancelled."},
        "I couldn't make that change. This order has already shipped, so it can no longer be cancelled.",
    ),
    ChangeCode.DELIVERED: (
        "change_shipping_address",
        {"message": "Delivered already."},
        "Delivered already.",
    ),
    ChangeCode.CANCELLED: ("change_shipping_address", {"message": "It is cancelled."}, "It is cancelled."),
    ChangeCode.AWAITING_SHOP: (
        "change_shipping_address",
        {"message": "The store is already cancelling it: you will get an email once it is cancelled."},
        "The store is already cancelling it: you will get an email once it is cancelled.",
    ),
    ChangeCode.OTHER_COUNTRY: (
        "check_address_change",
        {"message": "The store ships order BK-10042 within Australia; a change to Japan needs our team."},
        "The store ships order BK-10042 within Australia; a change to Japan needs our team. Would you like",
    ),
    ChangeCode.HAS_RETURNS: (
        "cancel_order",
        {"message": "This order has a return in progress or completed, so it can no longer be cancelled."},
        "I couldn't make that change. This order has a return in progress or completed, so it can no longer "
        "be cancelled.",
    ),
    ProblemCode.NOT_SHIPPED: (
        "report_delivery_problem",
        {"message": "This order has not shipped yet."},
        "This order has not shipped yet. Would you like me to pass this to a member of our support team?",
    ),
    ProblemCode.NOT_DELIVERED: ("report_delivery_problem", {"message": "On its way."}, "On its way."),
    ProblemCode.CANCELLED: ("report_delivery_problem", {"message": "It was cancelled."}, "It was cancelled."),
    ITEMS_NEEDED: (
        "report_delivery_problem",
        {"order_titles": ["The Goldfinch", "Sapiens"]},
        "Which of the books does this concern? The order has The Goldfinch and Sapiens.",
    ),
}


@pytest.mark.parametrize(
    "code",
    [
        *ToolError,
        *ReturnRefusal,
        *(code for code in ChangeCode if code != ChangeCode.ALLOWED),
        *(code for code in ProblemCode if code != ProblemCode.ALLOWED),
        ITEMS_NEEDED,
    ],
    ids=str,
)
def test_every_tool_error_gets_a_plain_sentence(code):
    tool, extra, expected = ERROR_REPLIES[code]
    said = f"Yes, BK-10042 {SARAH}"
    result = {"error": code, "message": MODEL_FACING, **extra}
    arguments = {"order_id": "BK-10042", "customer_email": SARAH}
    reply = text_of(ask([customer(said), *tool_round(tool, arguments, result)]))

    assert expected in reply
    assert MODEL_FACING not in reply
    verdict = reply_validate(
        reply=reply,
        customer_message=said,
        customer_words=[said],
        tool_results=[ToolResult(tool, json.dumps(result))],
    )
    assert verdict.ok, verdict.violations


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("order_id", "That order number doesn't look quite right. Order numbers start with BK-"),
        ("customer_email", "That email address doesn't look right."),
    ],
)
def test_a_malformed_order_number_or_email_is_asked_for_again(field, expected):
    result = {"error": ToolError.INVALID_ARGUMENTS, "message": MODEL_FACING, "problems": [{"field": field}]}
    messages = [customer(f"Track BK-123 for {SARAH}")]
    messages += tool_round("lookup_order", {"order_id": "BK-123", "customer_email": SARAH}, result)
    assert text_of(ask(messages)).startswith(expected)


# --- FAQ topics staff add ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "question",
    [
        "Do you offer gift wrapping?",
        "do u do giftwrapping",  # run together, and short
        "Could my books be gift wrapped?",
        "Can you wrap it as a present for my mum?",
        "<b>gift wrap</b>?",
    ],
)
def test_a_topic_staff_added_is_found_by_its_example_questions(question):
    reply = ask([customer(question)], system=prompt_with_topics(*DEMO_TOPICS, GIFT_WRAPPING))
    assert tool_call_of(reply) == ("lookup_policy", {"topic": "gift_wrapping"})


@pytest.mark.parametrize(
    ("question", "topic"),
    [
        ("How long does shipping take?", "shipping"),
        ("I forgot my password", "password_reset"),
        ("What is your gift wrapping policy?", "gift_wrapping"),
    ],
)
def test_the_built_in_topics_are_still_found_beside_it(question, topic):
    reply = ask([customer(question)], system=prompt_with_topics(*DEMO_TOPICS, GIFT_WRAPPING))
    assert tool_call_of(reply) == ("lookup_policy", {"topic": topic})


@pytest.mark.xfail(
    strict=True,
    reason="issue 37: the FAQ reader reads meaning (a sentence model), and a gift card payment is near gift "
    "wrapping in meaning when no gift card or payments topic is published; with one published, it wins",
)
def test_a_word_of_a_topic_is_not_enough_to_pick_it():
    """ "gift" alone is gift wrapping's, but a gift card payment is not about wrapping."""
    reply = ask(
        [customer("Can I pay with a gift card?")], system=prompt_with_topics(*DEMO_TOPICS, GIFT_WRAPPING)
    )
    assert not (reply.stop_reason == "tool_use" and reply.content[0]["name"] == "lookup_policy")


@pytest.mark.parametrize(
    "question",
    ["Do you offer student discounts?", "Is there a loyalty program?", "What is your privacy policy?"],
)
def test_a_store_question_no_topic_answers_gets_an_honest_answer_and_a_person_offered(question):
    assert text_of(ask([customer(question)], system=prompt_with_topics(*DEMO_TOPICS))) == NO_POLICY_REPLY


def test_yes_to_the_offer_passes_the_question_to_staff():
    messages = [
        customer("Do you offer student discounts?"),
        assistant(NO_POLICY_REPLY, Waiting.PASS_ON),
        customer("Yes please"),
    ]
    reply = ask(messages, system=prompt_with_topics(*DEMO_TOPICS))
    assert tool_call_of(reply) == (
        "hand_off_to_person",
        {"reason": "needs_staff", "summary": "Do you offer student discounts?"},
    )


def test_out_of_scope_requests_are_still_refused_not_offered_a_person():
    reply = ask([customer("Can you recommend a good thriller?")], system=prompt_with_topics(*DEMO_TOPICS))
    assert text_of(reply) == REFUSAL_TEMPLATE.format(topic="book recommendations")


# --- respelling never turns a word into another the rules look for ----------------------------------


def test_a_plain_no_declines_the_return():
    reply = ask(at_the_question(f"I want to return BK-10042, {SARAH}", answer="No."))
    assert text_of(reply) == DECLINED_REPLY


@pytest.mark.parametrize(
    ("words", "wrongly"),
    [
        ("I think you sent me the wrong book", THANKS_REPLY),  # think is not thank
        ("can you pass this on to your team", "password"),  # pass is not password
        ("Any chance my order will arrive by Friday?", "changing orders"),  # chance is not change
        ("I went shopping for a gift", "shipping"),  # shopping is not shipping
    ],
)
def test_everyday_words_keep_their_meaning(words, wrongly):
    reply = ask([customer(words)], system=prompt_with_topics(*DEMO_TOPICS))
    assert wrongly not in json.dumps(reply.content)


# --- what a message asks for: the phrasings decide when they are clear, the rules when not ------------


@pytest.mark.parametrize(
    ("words", "tool", "arguments"),
    [
        ("the reset link is not working for me", "lookup_policy", {"topic": "password_reset"}),
        ("I have got to reset my key", "lookup_policy", {"topic": "password_reset"}),
        ("problems with forgotten passwords", "lookup_policy", {"topic": "password_reset"}),
        ("I really don't want a bot", "hand_off_to_person", None),
    ],
)
def test_wording_no_rule_knows_goes_where_typical_phrasings_like_it_go(words, tool, arguments):
    name, given = tool_call_of(ask([customer(words)], system=prompt_with_topics(*DEMO_TOPICS)))
    assert name == tool and (arguments is None or given == arguments)


@pytest.mark.parametrize(
    ("words", "problem"),
    [
        ("the courier left it on the step and now it has vanished", "not_arrived"),
        ("opened the parcel and the spine is cracked right down the middle", "damaged"),
        ("this is a cookbook, my order was a thriller", "wrong_item"),
        ("the box only had the first volume, the second one wasn't there", "missing_item"),
        ("it came four days after the party it was meant for", "late"),
    ],
)
def test_a_delivery_problem_no_rule_knows_is_reported_as_typical_phrasings_say(words, problem):
    said = f"{words}. BK-10042 {SARAH}"
    name, given = tool_call_of(ask([customer(said)], system=prompt_with_topics(*DEMO_TOPICS)))
    assert (name, given["problem"]) == ("report_delivery_problem", problem)


@pytest.mark.parametrize(
    "words",
    [
        "how many pages is war and peace",  # a question about the world, not about one's parcel
        "the book came with a torn cover, I want my money back",  # a return asked for
        "the book I got has water stains and the pages are stuck together, I'd like to send it back",
        # Seen in review: each opened a case (and handed the customer over) for an everyday request.
        "Sorry, I gave you the wrong order number. It's BK-10042, where is it?",
        "I received the wrong order confirmation for BK-10042",
        "The tracking link for my order is broken",
        "Is the gift card defective?",
        "It was a late birthday present, has BK-10042 shipped yet?",
        "Last time my order was late, so where is BK-10042 now?",
        "I only got one confirmation email",
        "Tracking says delivered, not sure what day though",
    ],
)
def test_what_only_sounds_like_a_delivery_problem_is_not_reported(words):
    reply = ask([customer(f"{words} {SARAH}")], system=prompt_with_topics(*DEMO_TOPICS))
    assert "report_delivery_problem" not in json.dumps(reply.content)
    assert "report it to our team" not in json.dumps(reply.content)


@pytest.mark.parametrize(
    "words",
    [
        "purple elephants dancing quietly",
        "T$AA",  # a letter no phrasing uses as a word ("can't" is read whole)
        "pasxvs",  # random letters that begin as "password" does
        "OR",  # a small word the phrasings use everywhere tells nothing
        "who's this?",  # nor do small words with an apostrophe
    ],
)
def test_wording_like_no_typical_phrasing_is_not_guessed(words):
    reply = ask([customer(words)], system=prompt_with_topics(*DEMO_TOPICS))
    assert text_of(reply) == REFUSAL_TEMPLATE.format(topic="that request")


@pytest.mark.parametrize(
    ("words", "topic"),
    [
        ("i need to change my password and also update my shipping address", "password_reset"),
        ("what's the refund policy on preorders? also where's my order BK-10200", "returns_overview"),
        ("Do you ship to Alaska? And how do I change my account email?", "shipping"),
    ],
)
def test_of_two_requests_in_one_message_the_first_is_answered(words, topic):
    reply = ask([customer(words)], system=prompt_with_topics(*DEMO_TOPICS))
    assert tool_call_of(reply) == ("lookup_policy", {"topic": topic})


@pytest.mark.parametrize(
    ("words", "reply"),
    [("hiya", GREETING_REPLY), ("alright, bye then", GOODBYE_REPLY), ("signing off", GOODBYE_REPLY)],
)
def test_a_few_words_of_small_talk_stay_small_talk(words, reply):
    """The phrasings know few greetings beside all they know of what is out of scope."""
    assert text_of(ask([customer(words)], system=prompt_with_topics(*DEMO_TOPICS))) == reply


def test_a_greeting_before_a_request_is_not_all_it_says():
    reply = ask([customer("Hey there, could you put my account on hold for a month?")])
    assert text_of(reply) == f"{REFUSAL_TEMPLATE.format(topic='accounts')} {OFFER_PERSON}"


def test_a_first_message_with_an_order_number_is_read_for_what_it_asks():
    """Only an answer to a question is an order's details and a word or two; a first message asks."""
    reply = ask([customer("add copies to BK-10042")], system=prompt_with_topics(*DEMO_TOPICS))
    assert text_of(reply) == f"{REFUSAL_TEMPLATE.format(topic='that request')} {OFFER_PERSON}"


@pytest.mark.parametrize(
    ("taken_down", "question"),
    [("shipping", "How much does delivery cost?"), ("returns_overview", "how long do refunds take")],
)
def test_a_built_in_topic_staff_took_down_is_not_looked_up_nor_another_given(taken_down, question):
    published = [topic for topic in DEMO_TOPICS if topic.key != taken_down]
    reply = ask([customer(question)], system=prompt_with_topics(*published))
    assert text_of(reply) == NO_POLICY_REPLY


@pytest.mark.parametrize(
    "answer",
    [
        f"The order number is BK-10042 and the email is {SARAH}",
        f"order number BK-10042 and the email on the order is {SARAH}",
    ],
)
def test_an_answer_worded_as_a_sentence_answers_the_question_and_keeps_the_task(answer):
    messages = [
        customer("I want to return a book"),
        assistant(f"I can help with a return. {ask_order_number()}", Waiting.ORDER_NUMBER),
        customer(answer),
    ]
    assert tool_call_of(ask(messages, system=prompt_with_topics(*DEMO_TOPICS))) == (
        "check_return_eligibility",
        {"order_id": "BK-10042", "customer_email": SARAH},
    )


@pytest.mark.parametrize(
    ("words", "tool"),
    [
        # Order details the model did not ask for come with their own request ...
        (f"BK-10103 came with a coffee stain, I don't want it {SARAH}", "check_return_eligibility"),
        # ... or, with none, belong to the task under way.
        ("BK-10103 as well", "lookup_order"),
    ],
)
def test_another_order_after_a_status_answer_is_read_for_its_own_task(words, tool):
    looked_up = tool_round("lookup_order", {"order_id": "BK-10042", "customer_email": SARAH}, ORDER_BK_10042)
    messages = [
        customer(f"where is BK-10042? {SARAH}"),
        *looked_up,
        assistant("Order BK-10042 was delivered."),
        customer(words),
    ]
    assert tool_call_of(ask(messages, system=prompt_with_topics(*DEMO_TOPICS))) == (
        tool,
        {"order_id": "BK-10103", "customer_email": SARAH},
    )


def test_a_first_message_giving_an_order_number_is_not_missing_one():
    reply = ask([customer("The order number is BK-10042")], system=prompt_with_topics(*DEMO_TOPICS))
    assert ASK_WHICH_TASK in text_of(reply)


@pytest.mark.parametrize(
    "words",
    [
        "I want a refund. Also get me a manager now",
        "password reset isn't working, connect me with a human",
        "my order hasn't arrived, call me",
    ],
)
def test_asking_for_a_person_is_never_outweighed(words):
    name, _ = tool_call_of(ask([customer(words)], system=prompt_with_topics(*DEMO_TOPICS)))
    assert name == "hand_off_to_person"


@pytest.mark.parametrize(
    "words",
    ["Will the courier call me before delivering my order?", "update: my order still hasn't arrived"],
)
def test_words_that_only_sound_like_another_request_leave_the_order_question_asked(words):
    reply = ask([customer(words)], system=prompt_with_topics(*DEMO_TOPICS))
    assert ask_order_number() in text_of(reply)


@pytest.mark.parametrize(
    "words", ["I got the new edition and it's damaged, I want a refund", "iwanttoreturn my order"]
)
def test_a_return_asked_among_other_words_is_a_return(words):
    reply = ask([customer(words)], system=prompt_with_topics(*DEMO_TOPICS))
    assert text_of(reply).startswith("I can help with a return.")


def test_a_cancellation_with_a_refund_is_a_cancellation_not_a_return():
    reply = ask([customer(f"I want to cancel order BK-10042 and get a refund, {SARAH}")])
    assert tool_call_of(reply) == (
        "check_cancellation",
        {"order_id": "BK-10042", "customer_email": SARAH},
    )


def test_an_update_on_an_order_is_not_a_change_to_it():
    reply = ask([customer("Could I get an update on order BK-10042?")])
    assert "email" in text_of(reply)  # the status task asks for the email on the order


LOOKED_UP_DELIVERED = {
    "order_id": "BK-10042",
    "status": "delivered",
    "delivered_on": "2026-03-30",
    "items": [],
}


@pytest.mark.parametrize(
    ("words", "reported"),
    [
        ("so what do i do now? it's not here", True),
        ("never mind, I got it", False),
        ("I didn't get the confirmation email though", False),
        ("I haven't received the refund yet", False),
        ("it's not here. BK-10103 is the one I mean", False),  # another order named: not this one's
    ],
)
def test_not_received_after_a_lookup_that_said_delivered_reports_only_the_parcel(words, reported):
    lookup = {"order_id": "BK-10042", "customer_email": SARAH}
    history = [
        customer(f"where is BK-10042? {SARAH}"),
        *tool_round("lookup_order", lookup, LOOKED_UP_DELIVERED),
    ]
    reply = ask([*history, assistant("The status of order BK-10042 is delivered."), customer(words)])
    assert ("report_delivery_problem" in json.dumps(reply.content)) is reported
