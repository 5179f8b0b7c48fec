"""A change the shop that keeps the order did not make: what the customer reads of it (our fixed words,
from the kind of change and the order as it is now, never the shop's), and the check of the next change
of its kind, which says it first."""

import pytest

from orders.addresses import OrderAddress
from orders.models import CustomerEmail, Order, OrderChangeKind, OrderStatus, Shop
from orders.selectors import order_change_check, order_change_not_made_reason
from orders.services import order_cancel, order_change_shop_failed, order_shipping_address_change
from orders.tests.factories import OrderFactory

NEW_ADDRESS = OrderAddress(
    to="Ana Diaz", line1="12 Elm St", line2="", city="Springfield", state="IL", zip="62701", country="US"
)


@pytest.mark.parametrize(
    ("kind", "status", "said"),
    [
        (OrderChangeKind.CANCELLED, OrderStatus.PROCESSING, "The store could not cancel order BK-61001."),
        (
            OrderChangeKind.CANCELLED,
            OrderStatus.SHIPPED,
            "The store could not cancel order BK-61001: it has already been handed to the carrier.",
        ),
        (
            OrderChangeKind.ADDRESS_CHANGED,
            OrderStatus.PROCESSING,
            "The store could not change the shipping address of order BK-61001.",
        ),
        (
            OrderChangeKind.ADDRESS_CHANGED,
            OrderStatus.DELIVERED,
            "The store could not change the shipping address of order BK-61001: it has already been handed "
            "to the carrier.",
        ),
    ],
)
def test_a_change_not_made_is_said_by_its_kind_and_why_from_the_order_as_it_is(kind, status, said):
    assert (
        order_change_not_made_reason(order=Order(shop=Shop(), number="BK-61001", status=status), kind=kind)
        == said
    )


@pytest.fixture
def kept_by_shopify(settings, db):
    """An order Shopify keeps, with write-back on: a change is asked of Shopify first."""
    settings.BOOKLY_CHANGES_THROUGH_SHOP = ["shopify"]
    return OrderFactory.create(
        number="BK-61001", source="shopify", shop_order_id="450789469", ship_to="Ana Diaz",
        ship_line1="1 Main St", ship_city="Springfield", ship_state="IL", ship_zip="62701",
    )  # fmt: skip


def test_an_address_change_not_made_is_emailed_in_our_words(kept_by_shopify):
    change = order_shipping_address_change(order=kept_by_shopify, address=NEW_ADDRESS)
    Order.objects.filter(pk=kept_by_shopify.pk).update(status=OrderStatus.SHIPPED)  # the shop's webhook
    order_change_shop_failed(change_id=change.pk, answer="422: shipping_address cannot be changed")

    email = CustomerEmail.objects.get()
    assert email.subject == "The shipping address of your order BK-61001 could not be changed"
    assert (
        "The store could not change the shipping address of order BK-61001: it has already been handed to "
        "the carrier. A member of our team can help: reply to this email, or ask for a person in our chat."
    ) in email.body
    assert "422" not in email.body


def test_the_next_check_of_its_kind_says_the_last_attempt_failed(kept_by_shopify):
    order = kept_by_shopify
    order_change_shop_failed(change_id=order_cancel(order=order).pk, answer="422: Order is fulfilled")

    check = order_change_check(order=order, kind=OrderChangeKind.CANCELLED)
    assert check.allowed and check.last_attempt_failed == "The store could not cancel order BK-61001."
    # Of its kind only: a new address was never asked, so nothing failed for it.
    assert order_change_check(order=order, kind=OrderChangeKind.ADDRESS_CHANGED).last_attempt_failed == ""


def test_a_failure_asked_again_since_is_no_longer_the_last_attempt(kept_by_shopify):
    order = kept_by_shopify
    order_change_shop_failed(change_id=order_cancel(order=order).pk, answer="422: Order is fulfilled")
    order_cancel(order=order)  # asked again: the shop is making it now

    assert order_change_check(order=order, kind=OrderChangeKind.CANCELLED).last_attempt_failed == ""


def test_a_failure_the_shop_made_itself_since_is_no_failure_to_tell(kept_by_shopify):
    order = kept_by_shopify
    order_change_shop_failed(
        change_id=order_cancel(order=order).pk, answer="no answer (the attempt was stopped)"
    )
    Order.objects.filter(pk=order.pk).update(status=OrderStatus.CANCELLED)  # Shopify cancelled it after all
    order.refresh_from_db()

    check = order_change_check(order=order, kind=OrderChangeKind.CANCELLED)
    assert (check.reason, check.last_attempt_failed) == ("This order is already cancelled.", "")
