"""An order of lines nothing is shipped of (a download, an ebook, an event ticket), with the built-in
model: told as complete, never as shipped or in a parcel; in an order shipped in parts, a digital line
is never "still to come"."""

from datetime import date

import pytest

from orders.models import OrderStatus, Shipment, ShipmentLine
from orders.tests.factories import OrderFactory, OrderItemFactory

LENA = "lena.fischer@example.com"


@pytest.fixture
def ebook_order(db):
    order = OrderFactory(number="BK-21200", customer_email=LENA, status=OrderStatus.SHIPPED,
                         ordered_on=date(2026, 4, 1), tracking_number="", ship_line1="")  # fmt: skip
    OrderItemFactory(order=order, line_number=1, title="Dune", requires_shipping=False)
    return order


def test_an_order_of_digital_items_is_told_complete_and_never_shipped(customer, ebook_order):
    reply = customer.send(f"Where is my order BK-21200? {LENA}").json()["reply"]

    assert reply.startswith(
        "Order BK-21200 is complete. Nothing in this order is shipped: its items are digital"
    )
    assert "status of order" not in reply and "parcel" not in reply


def test_a_digital_line_of_an_order_in_parcels_is_never_still_to_come(customer, ebook_order):
    paper = OrderItemFactory.create(order=ebook_order, line_number=2, title="Emma")
    OrderItemFactory(order=ebook_order, line_number=3, title="Atlas")
    shipment = Shipment.objects.create(
        order=ebook_order, number=1, carrier="UPS", shipped_on=date(2026, 4, 2)
    )
    ShipmentLine.objects.create(shipment=shipment, item=paper, quantity=1)

    reply = customer.send(f"Where is my order BK-21200? {LENA}").json()["reply"]

    assert "Still to come in another parcel: Atlas." in reply
    assert "Dune" not in reply.split("Still to come")[1]
