"""What the customer reads, said once and in fitting words: the built-in model end to end through the
page's API, over the demo data."""

import pytest

from support.assistant.understanding.wording import DECLINE_REPLY, THANKS_REPLY

pytestmark = pytest.mark.usefixtures("demo_data", "offline")

SARAH = "sarah.chen@example.com"


def test_a_started_return_states_the_refund_once(customer):
    customer.send(f"I want to return BK-10042, {SARAH}")
    reply = customer.send("yes").json()["reply"]

    assert "RMA-" in reply
    assert reply.casefold().count("refund") == 1


@pytest.mark.parametrize("words", ["no thanks", "No thank you!", "nope, I'm good"])
def test_no_thanks_is_no_thank_you(customer, words):
    customer.send("How long does shipping take?")
    assert customer.send(words).json()["reply"] == DECLINE_REPLY


def test_thanks_is_still_welcome(customer):
    customer.send("How long does shipping take?")
    assert customer.send("thanks!").json()["reply"] == THANKS_REPLY
