import json

import pytest

from support.assistant.claims import ToolResult
from support.assistant.outcomes import STUCK_REPLY, TOO_LONG_REPLY, TURN_LIMIT_REPLY
from support.assistant.prompts import REFUSAL_TEMPLATE
from support.assistant.validator import FALLBACK_REPLY, reply_validate

ORDER_RESULT = ToolResult(
    "lookup_order",
    json.dumps(
        {
            "order_id": "BK-10042",
            "status": "delivered",
            "delivered_on": "2026-03-30",
            "tracking_number": "1Z999AA10123456784",
            "total": "36.98",
        }
    ),
)
SAID = ["Where is BK-10042? my email is sarah.chen@example.com"]


def codes(reply, customer_message="Where is my order?", said=SAID, results=(ORDER_RESULT,)):
    return reply_validate(
        reply=reply, customer_message=customer_message, customer_words=said, tool_results=list(results)
    ).violations


@pytest.mark.parametrize(
    "reply",
    [
        "Your order BK-10042 was delivered on 2026-03-30. Tracking number: 1Z999AA10123456784.",
        "The order total was $36.98.",
        "The order total was 36.98 USD.",
        "Order bk-10042 was delivered.",
        "Please check your spam folder for the password_reset email about your order.",
        "Your return policy question: I can look that up for you.",
        REFUSAL_TEMPLATE.format(topic="the weather"),
        REFUSAL_TEMPLATE.format(topic="book recommendations")
        + " I can help with an order, a return or a policy.",
        STUCK_REPLY,
        TOO_LONG_REPLY,
        TURN_LIMIT_REPLY,
        FALLBACK_REPLY,
    ],
)
def test_grounded_plain_on_topic_replies_pass(reply):
    assert codes(reply) == ()


def test_the_refusal_with_a_typographic_apostrophe_passes():
    assert codes(REFUSAL_TEMPLATE.format(topic="jokes").replace("'", "\u2019")) == ()


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        ("Your order BK-10043 was delivered.", "ungrounded_order_number"),
        ("Your order BK 99999 was delivered.", "ungrounded_order_number"),
        ("Your order was delivered on 2026-03-31.", "ungrounded_date"),
        ("Your return RMA-AB12CD34 is open.", "ungrounded_rma_number"),
        ("We emailed james.murphy@example.com about your order.", "ungrounded_email"),
        ("Your order total was $99.99.", "ungrounded_amount"),
        ("Your order total was R$ 99.99.", "ungrounded_amount"),
        ("Your order total was ₹1,299.", "ungrounded_amount"),
        ("Your order total was 99.99 EUR.", "ungrounded_amount"),
        ("Your order is **delivered**.", "markdown"),
        ("Your order is *delivered*.", "markdown"),
        ("Your order is _delivered_.", "markdown"),
        ("# Order status\nDelivered.", "markdown"),
        ("Your order items:\n- The Goldfinch\n- Sapiens", "markdown"),
        ("Your order items:\n1. The Goldfinch\n2. Sapiens", "markdown"),
        ("See [your order](https://example.com) for details.", "markdown"),
        ("Run `track BK-10042` for your order.", "markdown"),
        ("The capital of France is Paris.", "off_topic"),
        ("Here is a poem about the sea: waves roll in.", "off_topic"),
        (
            REFUSAL_TEMPLATE.format(topic="the weather") + " But it is sunny in Paris today.",
            "off_topic_after_refusal",
        ),
        ("   ", "empty_reply"),
    ],
)
def test_each_violation_is_caught(reply, code):
    assert code in codes(reply)


def test_grounding_spans_the_whole_conversation_not_only_this_turn():
    # The date came from a tool result two turns ago: a follow-up may repeat it.
    assert codes("It was delivered on 2026-03-30 for your order.", said=["when exactly?"]) == ()


def test_the_customers_own_words_ground_an_order_number():
    assert (
        codes(
            "I can look up order BK-55555 once I have the email address.",
            said=["Where is BK-55555?"],
            results=(),
        )
        == ()
    )


def test_a_pleasantry_may_answer_a_pleasantry_without_task_words():
    assert codes("You're welcome! Have a great day.", customer_message="Thanks so much!") == ()


def test_a_pleasantry_may_not_carry_an_off_topic_answer():
    assert "off_topic" in codes(
        "Hello! The capital of France is Paris.", customer_message="what's the capital of France?"
    )


def test_the_fallback_contains_no_identifiers():
    assert codes(FALLBACK_REPLY, said=[], results=()) == ()


GIFT_WRAPPING = json.dumps(
    {
        "topic": "gift_wrapping",
        "title": "Gift wrapping",
        "text": "We gift-wrap any book with a handwritten card.",
    }
)


def test_quoting_a_faq_answer_is_on_topic_whatever_staff_wrote_it_about():
    """A topic staff added may use none of the task words; its answer, quoted, is still in scope."""
    reply = "We gift-wrap any book with a handwritten card."
    assert codes(reply, "Do you gift wrap?", results=(ToolResult("lookup_policy", GIFT_WRAPPING),)) == ()
    assert codes(reply, "Do you gift wrap?", results=()) == ("off_topic",)


# An order the shop sent in two parcels: the first delivered, the second on its way, one book to come.
PARCELS_RESULT = ToolResult(
    "lookup_order",
    json.dumps(
        {
            "order_id": "BK-10042",
            "status": "shipped",
            "tracking_number": "1Z6789000000000001",
            "items": [{"title": "The Hobbit"}, {"title": "Dune"}, {"title": "Emma"}],
            "shipments": [
                {"items": ["The Hobbit"], "carrier": "UPS", "tracking_number": "1Z2345000000000001",
                 "shipped_on": "2026-04-02", "delivered_on": "2026-04-04"},
                {"items": ["Dune"], "carrier": "UPS", "tracking_number": "1Z6789000000000001",
                 "shipped_on": "2026-04-09", "delivered_on": None},
            ],
            "not_shipped": ["Emma"],
        }
    ),
)  # fmt: skip


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        ("Parcel 1 (The Hobbit) was shipped on 2026-04-02 with UPS, tracking number 1Z2345000000000001, "
         "and delivered on 2026-04-04.", None),
        ("Parcel 2 (Dune) was shipped on 2026-04-09 with UPS, tracking number 1Z6789000000000001.", None),
        ("Parcel 2 (Dune) was delivered on 2026-04-04.", "status_not_in_result"),  # that was parcel 1
        ("Parcel 3 (Emma) was shipped.", "status_not_in_result"),  # no third parcel
        ("Your order BK-10042 was delivered on 2026-04-04.", "status_not_in_result"),  # one parcel was
        # Each clause after "parcel N" is that parcel's; one naming the order is the order's.
        ("Parcel 1 (The Hobbit) was delivered on 2026-04-04, and parcel 2 (Dune) was delivered too.",
         "status_not_in_result"),
        ("Parcel 1 was delivered; your order BK-10042 has been delivered.", "status_not_in_result"),
        ("Parcel 1 (Emma) was delivered on 2026-04-04.", "title_not_in_parcel"),
        ("Parcel 1 (The Hobbit) was delivered, and parcel 2 (Dune) was shipped.", None),
    ],
)  # fmt: skip
def test_a_parcel_s_state_is_that_parcel_s(reply, code):
    found = codes(reply, results=(PARCELS_RESULT,))
    assert (code in found) if code else found == ()


def test_a_refund_the_shop_made_grounds_its_amount_and_no_other():
    refunded = json.loads(PARCELS_RESULT.content) | {
        "refunds": [{"amount": "209.00", "refunded_on": "2016-06-20"}]
    }
    result = ToolResult("lookup_order", json.dumps(refunded))
    assert codes("The store refunded $209.00 on 2016-06-20.", results=(result,)) == ()
    assert "amount_not_for_order" in codes(
        "The store refunded $209.00 on 2016-06-20.", results=(PARCELS_RESULT,)
    )
