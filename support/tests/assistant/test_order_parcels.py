"""An order the shop ships in parts, as the lookup tells it: each parcel, and what is still to come."""

import pytest

from orders.inbound import ORDER_EXAMPLE
from orders.intake import incoming_order_clean, order_upsert
from orders.models import OrderSource
from orders.shops import shop_own
from support.assistant.capabilities.order_status import order_summary

EMMA = {"line_number": 2, "title": "Emma", "unit_price": "12.99", "quantity": 2}
PARCEL = {
    "carrier": "UPS",
    "tracking_number": "1Z999AA10123456784",
    "lines": [{"line_number": 1, "quantity": 1}],
}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("refunds", "to_come"),
    [
        ([], ["2 copies of Emma"]),
        ([{"amount": "12.99", "lines": [{"line_number": 2, "quantity": 1}]}], ["Emma"]),  # one out of print
        ([{"amount": "25.98", "lines": [{"line_number": 2, "quantity": 2}]}], []),
        ([{"amount": "5.00"}], ["2 copies of Emma"]),  # money back for no line
    ],
)
def test_what_is_still_to_come_is_neither_sent_nor_refunded(refunds, to_come):
    data = {
        **ORDER_EXAMPLE,
        "items": [*ORDER_EXAMPLE["items"], EMMA],
        "shipments": [PARCEL],
        "refunds": refunds,
    }
    order, _ = order_upsert(
        incoming=incoming_order_clean(number="BK-20418", data=data), source=OrderSource.API, shop=shop_own()
    )
    summary = order_summary(order)
    assert [parcel["items"] for parcel in summary["shipments"]] == [["Dune"]]
    assert summary["not_shipped"] == to_come


def test_a_detail_asked_after_a_lookup_stays_on_that_order_and_a_lost_parcel_is_still_reported(
    customer, demo_data
):
    """The demo's order in two parcels: "the tracking number?" and "and the other parcel?" after it was
    looked up are its status again (not "what is the order number?", not a parcel reported lost)."""
    first = customer.send("where is my order? BK-10117 daniel.wright@example.com").json()["reply"]
    assert "Parcel 2 (Dune)" in first

    for follow_up in ("what's the tracking number?", "and the other parcel?"):
        assert customer.send(follow_up).json()["reply"] == first

    reported = customer.send("the other parcel never arrived").json()["reply"]
    assert "I've reported this as case" in reported
