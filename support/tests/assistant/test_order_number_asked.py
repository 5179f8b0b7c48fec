"""A number that may be an order's though nothing says so ("where is 10042?") is asked about by the
built-in model, never taken and never refused: "Is 10042 your order number?"; a yes looks it up."""

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("offline", "demo_data")

ASKED = "Is 10042 your order number?"
BLIND_SET = json.loads(
    (Path(__file__).parents[3] / "orders" / "tests" / "numbers_in_context.json").read_text()
)


def test_a_yes_takes_the_number_and_the_order_is_looked_up(customer):
    assert customer.send("where is 10042?").json()["reply"] == ASKED
    assert customer.send("yes").json()["reply"] == "Thanks. What is the email address on the order?"
    assert (
        "The status of order BK-10042 is delivered" in customer.send("sarah.chen@example.com").json()["reply"]
    )


def test_a_no_asks_for_the_number(customer):
    customer.send("where is 10042? sarah.chen@example.com")
    reply = customer.send("no").json()["reply"]
    assert "What is the order number?" in reply and "10042" not in reply


def test_a_yes_with_the_email_given_looks_it_up_at_once(customer):
    assert customer.send("can u check 10042 for me? sarah.chen@example.com").json()["reply"] == ASKED
    assert "The status of order BK-10042 is delivered" in customer.send("yes").json()["reply"]


@pytest.mark.parametrize(
    "text",
    [case["text"] for case in BLIND_SET if case["kind"] == "none" and "1984" not in case["text"]],
)
def test_a_street_number_zip_phone_amount_or_title_is_never_asked_about(customer, text):
    assert "your order number?" not in customer.send(text).json()["reply"]
