"""A question only the FAQ answers costs one model call: the customer reads the FAQ's own words, as the
tool found them, and the validator still reads them. Anything more goes back to the model. Run against
each provider."""

import pytest

from policies.tests.factories import PolicyEntryFactory
from support.assistant.validator import FALLBACK_REPLY
from support.insight.traces import ReplySource
from support.llm.protocol import policy_quote
from support.models import TurnTrace
from support.testing.messages_stub import message, text, tool_use

SARAH = {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com"}
NEVER_SENT = message(text("The model was asked to write this, which a quoted answer never needs."))


@pytest.fixture
def shipping():
    return PolicyEntryFactory(
        topic="shipping_costs",
        title="Shipping costs",
        text="Standard shipping is free on orders over $35. Below that it costs $4.99.",
    )


def test_a_question_only_the_faq_answers_is_its_words_after_one_model_call(model_api, customer, shipping):
    model_api.reset(message(tool_use("lookup_policy", {"topic": "shipping_costs"})), NEVER_SENT)
    response = customer.send("How much is shipping?").json()

    assert response["reply"] == policy_quote(title=shipping.title, text=shipping.text)
    assert len(model_api.requests) == 1
    trace = TurnTrace.objects.get()
    assert trace.reply_source == ReplySource.FAQ
    assert response["votable"] is True  # whether the FAQ's answer helped is what staff want to know

    # The next turn's request holds the call, its result and the answer, in the provider's own order.
    model_api.reset(message(text("You're welcome!")))
    customer.send("Thanks")
    history = model_api.sent[0]["messages"]
    assert [block["type"] for block in history[1]["content"]] == ["tool_use"]
    assert history[2]["content"][0]["type"] == "tool_result"
    assert history[3] == {"role": "assistant", "content": [{"type": "text", "text": response["reply"]}]}


def test_two_topics_asked_together_are_both_quoted(model_api, customer, shipping):
    returns = PolicyEntryFactory.create(
        topic="returns_window", title="Returns", text="You have 30 days to return."
    )
    model_api.reset(
        message(
            tool_use("lookup_policy", {"topic": "shipping_costs"}),
            tool_use("lookup_policy", {"topic": "returns_window"}),
        ),
        NEVER_SENT,
    )
    reply = customer.send("Shipping costs and returns?").json()["reply"]
    assert reply == "\n\n".join(
        policy_quote(title=entry.title, text=entry.text) for entry in (shipping, returns)
    )
    assert len(model_api.requests) == 1


def test_the_validator_reads_a_quoted_answer_too(model_api, customer):
    """A FAQ answer staff wrote in markdown (the admin asks for plain text) is not shown as it is."""
    PolicyEntryFactory(topic="gift_cards", title="Gift cards", text="Gift cards **never** expire.")
    model_api.reset(message(tool_use("lookup_policy", {"topic": "gift_cards"})), NEVER_SENT)
    assert customer.send("Do gift cards expire?").json()["reply"] == FALLBACK_REPLY
    assert "markdown" in TurnTrace.objects.get().violations


def test_an_answer_whose_first_sentence_states_an_orders_status_is_read_under_its_title(model_api, customer):
    """ "Cancellation fee: Cancelling an order that has not shipped yet is free." is staff's sentence under
    its title, not a claim about an order no tool looked up."""
    fee = PolicyEntryFactory.create(
        topic="cancellation_fee",
        title="Cancellation fee",
        text="Cancelling an order that has not shipped yet is free. Once an order has shipped it can no "
        "longer be cancelled.",
    )
    model_api.reset(message(tool_use("lookup_policy", {"topic": "cancellation_fee"})), NEVER_SENT)
    reply = customer.send("Do you penalise customers who cancel?").json()["reply"]
    assert reply == policy_quote(title=fee.title, text=fee.text)
    assert TurnTrace.objects.get().violations == []


def test_a_one_sentence_answer_under_its_title_is_on_topic(model_api, customer):
    """ "Gift cards: Gift cards never expire." names no store subject the validator knows; it is the FAQ's
    answer all the same, not a sentence about something else."""
    cards = PolicyEntryFactory.create(topic="gift_cards", title="Gift cards", text="Gift cards never expire.")
    model_api.reset(message(tool_use("lookup_policy", {"topic": "gift_cards"})), NEVER_SENT)
    reply = customer.send("Do they run out?").json()["reply"]
    assert reply == policy_quote(title=cards.title, text=cards.text)
    assert TurnTrace.objects.get().violations == []


def test_only_the_whole_opening_under_the_title_is_the_faqs(model_api, customer):
    """A title's words are quotable only as the answer's opening: "Your order has shipped." cut from the
    title "Your order has shipped" is a status claim like any other."""
    PolicyEntryFactory(
        topic="shipped", title="Your order has shipped", text="Tracking arrives by email within a day."
    )
    model_api.reset(
        message(tool_use("lookup_policy", {"topic": "shipped"})), message(text("Your order has shipped."))
    )
    customer.send("About BK-10042: what is your policy on tracking?")
    assert "claim_without_lookup" in TurnTrace.objects.get().violations


@pytest.mark.parametrize(
    ("first_step", "written"),
    [
        # Something else asked in the same message: the model answers both.
        (
            message(tool_use("lookup_policy", {"topic": "shipping_costs"}), tool_use("lookup_order", SARAH)),
            "Order BK-10042 was delivered. Standard shipping is free on orders over $35.",
        ),
        # A topic that does not exist: the model says so, and offers a person.
        (
            message(tool_use("lookup_policy", {"topic": "gift_wrapping"})),
            "I don't have a store policy on gift wrapping. Shall I pass this to our support team?",
        ),
    ],
    ids=["with another tool", "topic not found"],
)
def test_anything_more_than_the_faq_goes_back_to_the_model(
    model_api, customer, shipping, demo_data, first_step, written
):
    model_api.reset(first_step, message(text(written)))
    reply = customer.send("Shipping and gift wrap? BK-10042 sarah.chen@example.com").json()["reply"]
    assert reply == written
    assert len(model_api.requests) == 2


def test_a_message_naming_an_order_goes_back_to_the_model_even_for_a_policy_alone(
    model_api, customer, shipping, demo_data
):
    """A weaker model may look up the policy first and the order later: the message says there is more."""
    written = "Standard shipping is free on orders over $35."
    model_api.reset(message(tool_use("lookup_policy", {"topic": "shipping_costs"})), message(text(written)))
    assert customer.send("Was shipping free for BK-10042?").json()["reply"] == written
    assert len(model_api.requests) == 2


def test_a_policy_looked_up_after_another_step_is_written_by_the_model(
    model_api, customer, shipping, demo_data
):
    written = "Order BK-10042 was delivered; shipping is free on orders over $35."
    model_api.reset(
        message(tool_use("lookup_order", SARAH)),
        message(tool_use("lookup_policy", {"topic": "shipping_costs"})),
        message(text(written)),
    )
    assert customer.send("Was BK-10042 (sarah.chen@example.com) shipped free?").json()["reply"] == written
    assert len(model_api.requests) == 3
