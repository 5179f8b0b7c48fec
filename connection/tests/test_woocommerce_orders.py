"""WooCommerce's own orders, as its REST API documentation has them (one in the United States, one in
Brazil), read into the intake's shape and taken by the intake as every order is."""

import copy
import json
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from connection.woocommerce.orders import woocommerce_order
from orders.intake import OrderRefused, incoming_order_clean

PLATFORMS = Path(__file__).with_name("platforms")
US = json.loads((PLATFORMS / "woocommerce_order_us.json").read_text())
BRAZIL = json.loads((PLATFORMS / "woocommerce_order_br.json").read_text())


def taken(payload: dict, number: str):
    read_number, data = woocommerce_order(payload)
    assert read_number == number  # as customers see it; the tests' store writes BK- numbers
    return incoming_order_clean(number="BK-10727", data=data)


def test_the_documented_order_in_the_united_states_is_taken_as_it_is():
    order = taken(US, "727")
    assert (order.customer_name, order.customer_email, order.status) == (
        "John Doe",
        "john.doe@example.com",
        "processing",
    )
    assert (order.ordered_on.isoformat(), order.total, order.currency) == (
        "2017-03-22",
        Decimal("29.35"),
        "USD",
    )
    assert order.address.one_line() == "John Doe, 969 Market, San Francisco, CA 94103"
    assert [(item.line_number, item.title, item.unit_price, item.quantity) for item in order.items] == [
        (1, "Woo Single #1", Decimal("3.00"), 2),
        (2, "Ship Your Idea \u2013 Color: Black, Size: M Test", Decimal("12.00"), 1),
    ]
    assert order.updated_at.isoformat() == "2017-03-22T19:28:08+00:00"


def test_the_documented_order_in_brazil_is_taken_completed_and_delivered_its_days_after(settings):
    order = taken(BRAZIL, "723")  # completed on 2017-03-21, long before today
    assert (order.customer_name, order.status, order.total) == ("João Silva", "delivered", Decimal("39.00"))
    assert (order.delivered_on, [(parcel.shipped_on, parcel.delivered_on) for parcel in order.shipments]) == (
        date(2017, 3, 28), [(date(2017, 3, 21), date(2017, 3, 28))]
    )  # fmt: skip
    settings.WOOCOMMERCE_DELIVERED_AFTER_DAYS = 0  # the store presumes no delivery
    assert taken(BRAZIL, "723").status == "shipped"
    assert order.address.one_line() == "João Silva, Av. Brasil, 432, Rio de Janeiro-RJ, 12345-000, Brazil"


def test_tracking_from_the_shipment_tracking_extension_and_the_statuses_read_as_documented():
    tracked = copy.deepcopy(BRAZIL)
    tracked["meta_data"].append(
        {
            "id": 1,
            "key": "_wc_shipment_tracking_items",
            "value": [
                {
                    "tracking_provider": "Correios",
                    "tracking_number": "LB000000001BR",
                    "date_shipped": "1490054400",
                },
                {
                    "tracking_provider": "Correios",
                    "tracking_number": "LB000000002BR",
                    "date_shipped": "1490140800",
                },
            ],
        }
    )
    order = taken(tracked, "723")
    assert (order.tracking_number, order.carrier) == ("LB000000002BR", "Correios")
    assert taken({**US, "status": "cancelled"}, "727").status == "cancelled"
    assert taken({**US, "status": "on-hold"}, "727").status == "processing"
    assert taken({**US, "status": "refunded"}, "727").status == "cancelled"  # never completed
    # Refunded after it left: shipped, never delivered (its return window would refund it twice).
    assert taken({**BRAZIL, "status": "refunded"}, "723").status == "shipped"


@pytest.mark.parametrize(("missing", "field"), [("total", "total"), ("date_created", "ordered_on")])
def test_what_woocommerce_left_out_is_named_by_the_intake(missing, field):
    _, data = woocommerce_order({**US, missing: None})
    with pytest.raises(OrderRefused) as refused:
        incoming_order_clean(number="BK-10727", data=data)
    assert [problem["field"] for problem in refused.value.problems] == [field]


def test_the_documented_refunds_of_the_order_in_brazil_are_kept_as_amounts():
    order = taken(BRAZIL, "723")
    assert [(refund.amount, refund.refunded_on, refund.lines) for refund in order.refunds] == [
        (Decimal("10.00"), None, ()),
        (Decimal("9.00"), None, ()),
    ]


def test_an_order_with_nothing_to_ship_is_of_lines_that_do_not_ship():
    """Like the real WooCommerce 9.8 order of an event ticket: no shipping method, no address."""
    empty = {name: "" for name in US["shipping"]}
    ticket = taken({**US, "shipping": empty, "shipping_lines": []}, "727")
    assert ticket.address is None and not any(item.requires_shipping for item in ticket.items)
    assert all(item.requires_shipping for item in taken(US, "727").items)


def test_the_shops_discounts_are_read_from_discount_total():
    assert taken({**US, "discount_total": "4.50"}, US["number"]).discount_total == Decimal("4.50")


def test_a_real_order_from_a_shop_showing_three_decimals_is_taken_in_cents():
    """A real WooCommerce 7.8 webhook's order (platforms/woocommerce_order_webhook.json): its shop shows
    three decimals, so it writes "2.000" and "0.000"; the intake takes cents. Nothing else is rounded."""
    real = json.loads((PLATFORMS / "woocommerce_order_webhook.json").read_text())
    order = taken(real, "17")
    assert (order.total, order.discount_total, order.currency) == (Decimal("2.00"), Decimal("0.00"), "USD")
    assert taken({**real, "refunds": [{"id": 1, "reason": "", "total": "-1.000"}]}, "17").refunds[
        0
    ].amount == Decimal("1.00")
    _, data = woocommerce_order({**real, "total": "2.005"})  # a third decimal that is not zero: refused
    with pytest.raises(OrderRefused) as refused:
        incoming_order_clean(number="BK-10727", data=data)
    assert [problem["field"] for problem in refused.value.problems] == ["total"]
