"""What the store's events say of a change: who made it (the customer in which conversation, which
member of staff, or Bookly itself), why, and for returns each line's quantity and amount."""

from datetime import date
from decimal import Decimal

import pytest

from orders.models import (
    RETURN_REASON_NOT_GIVEN,
    DeliveryProblem,
    Event,
    EventType,
    OrderSource,
    Refund,
    RefundLine,
    ReturnStatus,
)
from orders.services import (
    delivery_case_open,
    delivery_case_resolve,
    order_cancel,
    order_change_shop_made,
    return_record_create,
    return_record_set_status,
)
from orders.tests.factories import OrderFactory, OrderItemFactory, delivered_order

TODAY = date(2026, 4, 14)
pytestmark = pytest.mark.django_db


def _data(event_type: EventType) -> dict:
    return Event.objects.filter(type=event_type).latest("id").data


def test_a_return_the_customer_started_says_so_with_its_conversation_lines_and_amounts():
    order = delivered_order(days_ago=3, today=TODAY)
    OrderItemFactory.create(order=order, line_number=2, title="Emma", unit_price=Decimal("7.50"), quantity=2)

    return_record_create(order=order, reason=RETURN_REASON_NOT_GIVEN, today=TODAY, conversation_id=41)

    data = _data(EventType.RETURN_CREATED)
    assert data["by"] == {"kind": "customer", "conversation_id": 41, "staff_member": None}
    told = data["return"]
    assert told["reason"] is None  # "not given" is no reason
    emma = next(line for line in told["items"] if line["title"] == "Emma")
    assert (emma["quantity"], emma["unit_price"], emma["refund_amount"]) == (2, "7.50", "15.00")
    lines = {item.line_number: item for item in order.items.all()}
    expected = sum(lines[line["line_number"]].unit_price * line["quantity"] for line in told["items"])
    assert told["refund_amount"] == str(expected)
    assert (told["currency"], told["customer_email"]) == (order.currency, order.customer_email)


def test_a_return_moved_by_staff_names_them_and_their_words(django_user_model):
    agent = django_user_model.objects.create_user(username="agent", is_staff=True)
    record = return_record_create(order=delivered_order(days_ago=3, today=TODAY), reason="Torn", today=TODAY)
    return_record_set_status(return_record=record, status=ReturnStatus.LABEL_SENT, changed_by=agent)

    data = _data(EventType.RETURN_STATUS_CHANGED)
    assert data["by"] == {"kind": "staff", "conversation_id": None, "staff_member": "agent"}
    case, _ = delivery_case_open(order=record.order, problem=DeliveryProblem.LATE, items=None, details="")
    delivery_case_resolve(case=case, resolution="Sorry: a voucher is on its way.", resolved_by=agent)
    assert _data(EventType.DELIVERY_CASE_RESOLVED)["by"]["staff_member"] == "agent"
    assert data["return"]["reason"] == "Torn"
    assert _data(EventType.RETURN_CREATED)["by"]["kind"] == "system"  # nobody: a script's return


def test_a_cancellation_the_shop_made_later_still_says_who_asked(settings):
    settings.BOOKLY_CHANGES_THROUGH_SHOP = [OrderSource.SHOPIFY]
    order = OrderFactory.create(source=OrderSource.SHOPIFY, shop_order_id="820982911946154508")
    OrderItemFactory.create(order=order)
    change = order_cancel(order=order, conversation_id=7)
    assert not Event.objects.filter(type=EventType.ORDER_CANCELLED).exists()  # only asked of the shop

    order_change_shop_made(change_id=change.pk)

    data = _data(EventType.ORDER_CANCELLED)
    assert data["by"] == {"kind": "customer", "conversation_id": 7, "staff_member": None}
    assert data["reason"] is None and data["order"]["status"] == "cancelled"


def test_what_the_shop_refunded_of_a_line_already_is_not_asked_to_be_refunded_again():
    order = delivered_order(days_ago=3, today=TODAY)
    emma = OrderItemFactory.create(
        order=order, line_number=2, title="Emma", unit_price=Decimal("7.50"), quantity=2
    )
    refund = Refund.objects.create(order=order, number=1, amount=Decimal("7.50"))
    RefundLine.objects.create(refund=refund, item=emma, quantity=1)

    return_record_create(order=order, reason="Torn", items=[emma], today=TODAY)

    (line,) = _data(EventType.RETURN_CREATED)["return"]["items"]
    assert (line["quantity"], line["shop_refunded_quantity"], line["refund_amount"]) == (2, 1, "7.50")
