"""A Shopify order, as Shopify's own client fixture has it, read into the intake's shape and taken by
the intake as every order is."""

import copy
import json
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from connection.shopify.orders import shopify_order
from orders.intake import OrderRefused, incoming_order_clean

PLATFORMS = Path(__file__).with_name("platforms")
PAYLOAD = json.loads((PLATFORMS / "shopify_order.json").read_text())["order"]
# Shopify's documented fulfilment of this order: line 466157049 (the order's first line), UPS-shaped.
FULFILMENT = json.loads((PLATFORMS / "shopify_fulfillment.json").read_text())["fulfillment"]


def shopify(**fields) -> dict:
    payload = copy.deepcopy(PAYLOAD)
    payload.update(fields)
    return payload


def fulfilment(
    *, status="success", shipment_status=None, created_at, updated_at=None, tracking, line=0
) -> dict:
    """A fulfilment with Shopify's field names (the fixture's, with another state), of the order's
    line at index `line`."""
    line_item = {**FULFILMENT["line_items"][0], "id": PAYLOAD["line_items"][line]["id"]}
    return {**FULFILMENT, "status": status, "shipment_status": shipment_status, "created_at": created_at,
            "updated_at": updated_at or created_at, "tracking_number": tracking, "tracking_company": "UPS",
            "line_items": [line_item]}  # fmt: skip


def taken(payload: dict):
    number, data = shopify_order(payload)
    assert number == "#1001"  # the order's name as customers see it; the tests' store writes BK- numbers
    return incoming_order_clean(number="BK-11001", data=data)


def test_shopifys_own_order_is_taken_with_its_lines_amounts_currency_and_address():
    order = taken(PAYLOAD)  # its one fulfilment failed: nothing has left

    assert (order.customer_name, order.customer_email) == ("Bob Norman", "bob.norman@hostmail.com")
    assert (order.status, order.tracking_number, order.ordered_on.isoformat()) == (
        "processing",
        "",
        "2008-01-10",
    )
    assert (order.total, order.currency) == (Decimal("409.94"), "USD")
    assert order.address.one_line() == "Bob Norman, Chestnut Street 92, Louisville, KY 40202"
    assert [(item.line_number, item.title, item.unit_price, item.category) for item in order.items] == [
        (1, "IPod Nano - 8gb", Decimal("199.00"), ""),
        (2, "IPod Nano - 8gb", Decimal("199.00"), ""),
        (3, "IPod Nano - 8gb", Decimal("199.00"), ""),
    ]


def test_two_fulfilments_one_on_its_way_make_it_shipped_with_the_latest_tracking():
    shipped = [
        fulfilment(shipment_status="delivered", created_at="2008-01-11T09:00:00-05:00", tracking="1Z0001"),
        fulfilment(
            shipment_status="in_transit", created_at="2008-01-12T09:00:00-05:00", tracking="1Z0002", line=1
        ),
    ]
    order = taken(shopify(fulfillments=shipped, fulfillment_status="partial"))
    assert (order.status, order.tracking_number, order.carrier) == ("shipped", "1Z0002", "UPS")
    # Each parcel with its line, tracking and days; the third line has not left.
    parcels = [
        (
            parcel.tracking_number,
            [line.line_number for line in parcel.lines],
            parcel.shipped_on,
            parcel.delivered_on,
        )
        for parcel in order.shipments
    ]
    assert parcels == [
        ("1Z0001", [1], date(2008, 1, 11), date(2008, 1, 11)),
        ("1Z0002", [2], date(2008, 1, 12), None),
    ]


def test_shopifys_documented_fulfilment_is_a_parcel_with_its_tracking_address():
    sent = {**FULFILMENT, "status": "success"}  # documented as pending (not yet left): now it has
    order = taken(shopify(fulfillments=[sent], fulfillment_status="partial"))
    [parcel] = order.shipments
    assert (parcel.carrier, parcel.tracking_number, parcel.tracking_url) == (
        "null-company",
        "1Z2345",
        "http://www.google.com/search?q=1Z2345",
    )
    assert [(line.line_number, line.quantity) for line in parcel.lines] == [(1, 1)]
    assert not taken(shopify(fulfillments=[FULFILMENT])).shipments  # pending: nothing has left


def test_every_fulfilment_delivered_makes_it_delivered_on_the_last_ones_day():
    shipped = [
        fulfilment(shipment_status="delivered", created_at="2008-01-11T09:00:00-05:00",
                   updated_at="2008-01-14T10:00:00-05:00", tracking="1Z0001"),
        fulfilment(shipment_status="delivered", created_at="2008-01-12T09:00:00-05:00",
                   updated_at="2008-01-15T16:00:00-05:00", tracking="1Z0002", line=1),
    ]  # fmt: skip
    order = taken(shopify(fulfillments=shipped, fulfillment_status="fulfilled"))
    assert (order.status, order.delivered_on.isoformat()) == ("delivered", "2008-01-15")
    partly = taken(shopify(fulfillments=shipped, fulfillment_status="partial"))  # a line still to ship
    assert (partly.status, partly.delivered_on) == ("shipped", None)


def test_a_cancelled_order_an_edited_one_and_a_refund_read_as_shopify_says():
    assert taken(shopify(cancelled_at="2008-01-10T12:00:00-05:00")).status == "cancelled"
    lines = copy.deepcopy(PAYLOAD["line_items"])
    lines[1]["current_quantity"] = 0  # removed by an order edit: its line number stays taken
    edited = taken(shopify(line_items=lines, current_total_price="210.94"))
    assert [item.line_number for item in edited.items] == [1, 3]
    assert edited.total == Decimal("210.94")  # what the customer pays now, edits and refunds counted


def test_an_order_from_brazil_keeps_its_country_region_and_currency():
    address = {**PAYLOAD["shipping_address"], "address1": "Av. Paulista 1000", "city": "São Paulo",
               "province": "São Paulo", "province_code": "SP", "zip": "01310-100", "country": "Brazil",
               "country_code": "BR", "name": "Maria Souza"}  # fmt: skip
    order = taken(shopify(shipping_address=address, currency="BRL"))
    assert order.currency == "BRL"
    assert order.address.one_line() == "Maria Souza, Av. Paulista 1000, São Paulo-SP, 01310-100, Brazil"


@pytest.mark.parametrize(
    ("missing", "field"),
    [
        ("created_at", "ordered_on"),
        ("total_price", "total"),
        ("line_items", "items"),
    ],
)
def test_what_shopify_left_out_is_named_by_the_intake(missing, field):
    _, data = shopify_order(shopify(**{missing: None}))
    with pytest.raises(OrderRefused) as refused:
        incoming_order_clean(number="BK-11001", data=data)
    assert [problem["field"] for problem in refused.value.problems] == [field]


def test_an_order_shopify_has_no_email_for_is_taken_without_one():
    """A sale at the till (Shopify POS) may have none: kept, and nobody can verify it in the chat."""
    payload = shopify(email=None)
    payload["customer"] = {**payload["customer"], "email": None}
    _, data = shopify_order(payload)
    assert incoming_order_clean(number="BK-11001", data=data).customer_email == ""


def test_shopifys_documented_refund_is_kept_with_its_amount_day_reason_and_lines():
    refund = json.loads((PLATFORMS / "shopify_refund.json").read_text())["refund"]
    [kept] = taken(shopify(refunds=[refund])).refunds
    assert (kept.amount, kept.refunded_on, kept.reason) == (
        Decimal("209.00"),
        date(2016, 6, 20),
        "it broke during shipping",
    )
    assert [(line.line_number, line.quantity) for line in kept.lines] == [(3, 1), (1, 1)]


def _money(shop: str, paid: str) -> dict:
    """One of Shopify's money pairs: the shop's (USD here) and the customer's (EUR)."""
    return {"shop_money": {"amount": shop, "currency_code": "USD"},
            "presentment_money": {"amount": paid, "currency_code": "EUR"}}  # fmt: skip


def test_an_order_the_customer_paid_in_their_currency_is_told_in_it_and_keeps_the_shops_beside():
    """Like the real order #1104: a shop in USD, a customer who paid €115.90, €20.00 of it refunded."""
    lines = [{**line, "price_set": _money(line["price"], "183.50")} for line in PAYLOAD["line_items"]]
    refund = json.loads((PLATFORMS / "shopify_refund.json").read_text())["refund"]
    refund["transactions"] = [{**refund["transactions"][0], "amount": "20.00", "currency": "EUR"}]
    payload = shopify(presentment_currency="EUR", line_items=lines, current_total_price="124.36",
                      current_total_price_set=_money("124.36", "115.90"), refunds=[refund],
                      total_discounts="10.73", total_discounts_set=_money("10.73", "10.00"))  # fmt: skip

    order = taken(payload)

    assert (order.total, order.currency, order.discount_total) == (Decimal("115.90"), "EUR", Decimal("10.00"))
    assert (order.shop_total, order.shop_currency) == (Decimal("124.36"), "USD")
    assert {item.unit_price for item in order.items} == {Decimal("183.50")}
    assert [refund.amount for refund in order.refunds] == [Decimal("20.00")]
    # Without the customer's amounts for every line, the order is told in the shop's money, whole.
    lines[0] = {key: value for key, value in lines[0].items() if key != "price_set"}
    in_the_shops = taken({**payload, "line_items": lines})
    assert (in_the_shops.total, in_the_shops.currency, in_the_shops.shop_currency) == (
        Decimal("124.36"), "USD", ""
    )  # fmt: skip


def test_a_line_shopify_ships_nothing_of_is_kept_so():
    lines = copy.deepcopy(PAYLOAD["line_items"])
    lines[0]["requires_shipping"] = False  # a download
    assert [item.requires_shipping for item in taken(shopify(line_items=lines)).items] == [False, True, True]


def test_an_ebook_fulfilled_at_once_is_no_parcel_and_the_order_ships_with_its_books():
    """A mixed order: the ebook (line 1) fulfilled at once, no tracking; the paper books not yet."""
    lines = copy.deepcopy(PAYLOAD["line_items"])
    lines[0]["requires_shipping"] = False
    ebook = fulfilment(created_at="2008-01-10T12:00:00-05:00", tracking=None)
    order = taken(shopify(line_items=lines, fulfillments=[ebook], fulfillment_status="partial"))
    assert (order.status, order.shipments) == ("processing", ())

    books = fulfilment(shipment_status="delivered", created_at="2008-01-11T09:00:00-05:00",
                       updated_at="2008-01-14T10:00:00-05:00", tracking="1Z0001", line=1)  # fmt: skip
    books["line_items"] += [{**books["line_items"][0], "id": PAYLOAD["line_items"][2]["id"]}]
    delivered = taken(shopify(line_items=lines, fulfillments=[ebook, books], fulfillment_status="fulfilled"))
    assert (delivered.status, len(delivered.shipments)) == ("delivered", 1)


def test_a_voided_payment_and_the_discounts_are_read_as_shopify_says():
    """Shopify's test notification order: its payment authorised, then voided (never taken)."""
    order = taken(shopify(financial_status="voided", total_discounts="10.00"))
    assert (order.payment_voided, order.discount_total) == (True, Decimal("10.00"))
    paid = taken(shopify(financial_status="paid"))
    assert (paid.payment_voided, paid.discount_total) == (False, Decimal("0.00"))
