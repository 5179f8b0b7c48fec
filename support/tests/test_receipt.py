"""The receipt capability: an order's receipt emailed to the address on the order, after the email check,
through the email outbox; the customer is told so in one sentence."""

import json

import pytest

from orders.models import CustomerEmail
from support.testing.messages_stub import message, text, tool_use

SARAH = "sarah.chen@example.com"
SARAHS_ORDER = {"order_id": "BK-10042", "customer_email": SARAH}

pytestmark = pytest.mark.usefixtures("demo_data")


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
    again = customer.send(f"please send the receipt for BK-10042 again, {SARAH}").json()["reply"]
    assert "a moment ago" in again
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
