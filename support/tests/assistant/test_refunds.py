"""Refund questions about an order, with the built-in model: answered from the order's record (each
refund in the customer's currency, its day and books; the returns whose refund is to come), never with
the return policy; how refunds work stays the FAQ's."""

import json
from datetime import date

import pytest

from orders.models import Refund, RefundLine, ReturnStatus
from orders.tests.factories import OrderFactory, OrderItemFactory, ReturnRecordFactory
from support.assistant.claims import ToolResult
from support.assistant.validator import reply_validate
from support.conversations.models import ConversationMessage

ROSA = "rosa.perez@example.com"


@pytest.fixture
def order_paid_in_euros(db):
    """Like the real order #1104: paid in euros in a shop that keeps dollars, part of it refunded."""
    order = OrderFactory.create(number="BK-21104", customer_email=ROSA, total="115.90", currency="EUR",
                                shop_total="124.36", shop_currency="USD", delivered=True,
                                ordered_on=date(2026, 3, 1), delivered_on=date(2026, 3, 5))  # fmt: skip
    dry = OrderItemFactory.create(order=order, line_number=1, title="The Dry", unit_price="20.00")
    OrderItemFactory(order=order, line_number=2, title="Force of Nature", unit_price="95.90")
    refund = Refund.objects.create(order=order, number=1, amount="20.00", refunded_on=date(2026, 3, 9))
    RefundLine.objects.create(refund=refund, item=dry, quantity=1)
    return order


@pytest.mark.parametrize(
    "question",
    [
        f"Was I refunded for order BK-21104? {ROSA}",
        f"did I get my money back for BK-21104 {ROSA}",
        f"How much did I get back on BK-21104? {ROSA}",
    ],
)
def test_a_refund_is_told_from_the_order_in_the_customers_currency(customer, order_paid_in_euros, question):
    reply = customer.send(question).json()["reply"]

    assert "The store refunded €20.00 on 2026-03-09, for The Dry." in reply
    assert "$" not in reply  # the shop's dollars are staff's


@pytest.mark.parametrize(
    "question",
    [
        f"How much did I pay for order BK-21104? {ROSA}",
        f"what was my order total? BK-21104 {ROSA}",
        f"How much was I charged for BK-21104? {ROSA}",
    ],
)
def test_what_an_order_came_to_is_told_in_the_currency_paid_with_what_came_back(
    customer, order_paid_in_euros, question
):
    reply = customer.send(question).json()["reply"]

    assert "Order BK-21104 came to €115.90. The store refunded €20.00 on 2026-03-09" in reply
    assert "$" not in reply and "payments" not in reply


def test_a_total_asked_of_a_voided_order_says_it_was_not_charged_and_a_part_of_it_is_no_total(
    customer, order_paid_in_euros
):
    order_paid_in_euros.payment_voided = True
    order_paid_in_euros.save(update_fields=["payment_voided"])
    voided = customer.send(f"How much did I pay for order BK-21104? {ROSA}").json()["reply"]
    shipping = customer.send(f"How much did I pay for shipping on order BK-21104? {ROSA}").json()["reply"]

    assert "came to €115.90. Its payment was voided" in voided and "not charged" in voided
    assert "came to" not in shipping


def test_without_a_refund_yet_it_says_so_and_the_return_whose_refund_is_to_come(
    customer, order_paid_in_euros
):
    order_paid_in_euros.refunds.all().delete()
    ReturnRecordFactory(order=order_paid_in_euros, rma_number="RMA-T0001104", status=ReturnStatus.RECEIVED)

    reply = customer.send(f"Have I been refunded for BK-21104? {ROSA}").json()["reply"]

    assert "Order BK-21104 has no refund on record yet." in reply
    assert "Return RMA-T0001104 is received: its refund is made once the store has received" in reply


def test_how_refunds_work_is_still_the_faqs(customer, demo_data):
    reply = customer.send("How long do refunds take?").json()["reply"]
    assert "refund on record" not in reply and "refund" in reply.lower()  # the FAQ's answer


@pytest.mark.parametrize(
    ("reply", "violation"),
    [
        ("You were refunded €50.00 on 2026-03-09.", "amount_not_for_order"),
        ("You were refunded $20.00 on 2026-03-09.", "amount_currency_not_for_order"),
        ("You were refunded €20.00 on 2026-03-19.", "date_not_for_order"),
        ("Yes, you were refunded €115.90 in full.", "amount_not_for_order"),  # the order's total
    ],
)
def test_a_refund_the_lookup_did_not_give_is_refused_by_the_validator(reply, violation):
    said = f"Was I refunded for BK-21104? {ROSA}"
    result = {"order_id": "BK-21104", "currency": "EUR", "order_total": "115.90", "refunded_total": "20.00",
              "refunds": [{"amount": "20.00", "refunded_on": "2026-03-09", "items": ["The Dry"]}],
              "returns": []}  # fmt: skip
    results = [ToolResult("lookup_refunds", json.dumps(result))]

    def verdict(reply):
        return reply_validate(reply=reply, customer_message=said, customer_words=[said], tool_results=results)

    assert verdict("The store refunded €20.00 on 2026-03-09, for The Dry.").ok
    assert violation in verdict(reply).violations


def test_a_return_refunded_here_is_told_as_refunded_not_as_no_refund(customer, order_paid_in_euros):
    order_paid_in_euros.refunds.all().delete()  # an imported order: the shop's record lists none
    ReturnRecordFactory(order=order_paid_in_euros, rma_number="RMA-T0001105", status=ReturnStatus.REFUNDED)

    reply = customer.send(f"Was I refunded for BK-21104? {ROSA}").json()["reply"]

    assert "Return RMA-T0001105 for this order is refunded." in reply and "no refund on record" not in reply


def test_a_refund_asked_for_is_no_lookup_of_refunds_made(customer, order_paid_in_euros):
    reply = customer.send(f"My order BK-21104 never arrived, I want to be refunded. {ROSA}").json()["reply"]
    assert "no refund on record" not in reply and not reply.startswith("The store refunded")


@pytest.mark.parametrize(
    ("words", "tool"),
    [
        # Of two tasks asked for in their own words, the one asked first: where the words stand in the
        # message decides, never the order the capabilities are listed in.
        (f"Was I refunded for BK-21104? Also send me the receipt. {ROSA}", "lookup_refunds"),
        (f"Send me the receipt for BK-21104, and was I refunded? {ROSA}", "email_receipt"),
        # A report mentioned before the question is no request for news of it.
        (f"I reported a problem with BK-21104 last week, was I refunded? {ROSA}", "lookup_refunds"),
    ],
)
def test_of_two_tasks_in_their_own_words_the_one_asked_first_is_done(
    customer, order_paid_in_euros, words, tool
):
    customer.send(words)
    calls = [
        block["name"]
        for message in ConversationMessage.objects.order_by("position")
        for block in message.content
        if block["type"] == "tool_use"
    ]
    assert calls[:1] == [tool]
