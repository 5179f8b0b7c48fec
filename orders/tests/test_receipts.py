"""The receipt email: to the address on the order only, once within the hour, under the order's lock."""

from datetime import timedelta

import pytest
from django.utils import timezone

from orders.emails import MAX_ATTEMPTS, RECEIPT_RESEND_AFTER, order_receipt_email
from orders.models import CustomerEmail, Order
from orders.tests.factories import OrderFactory, OrderItemFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def order():
    order = OrderFactory.create(customer_email="ada@example.com", total="21.98")
    OrderItemFactory.create(order=order, title="Dune", quantity=2, unit_price="10.99")
    return order


def receipt(order: Order) -> tuple[CustomerEmail, bool]:
    """The order's receipt and whether it is new: there is one, the order having an email address."""
    email, new = order_receipt_email(order=order)
    assert email is not None
    return email, new


def test_the_receipt_goes_to_the_order_s_address_with_its_lines_and_total(order):
    email, new = receipt(order)
    assert new and email.to == "ada@example.com"
    assert "2 x Dune" in email.body and "$10.99 each, $21.98" in email.body and "Total: $21.98" in email.body


def test_the_receipt_says_the_orders_currency():
    order = OrderFactory.create(total="189.90", currency="BRL")
    OrderItemFactory.create(order=order, title="Dom Casmurro", quantity=1, unit_price="189.90")
    email, _ = receipt(order)
    assert "Dom Casmurro" in email.body and "R$189.90 each" in email.body and "Total: R$189.90" in email.body


def test_asked_again_within_the_hour_it_is_the_same_email(order):
    first, _ = receipt(order)
    again, new = receipt(order)
    assert (again.pk, new) == (first.pk, False)


def test_after_the_hour_or_once_the_server_refused_it_for_good_a_new_one_is_queued(order):
    first, _ = receipt(order)
    CustomerEmail.objects.filter(pk=first.pk).update(
        created_at=timezone.now() - RECEIPT_RESEND_AFTER - timedelta(minutes=1)
    )
    second, new = receipt(order)
    assert new and second.pk != first.pk
    CustomerEmail.objects.filter(pk=second.pk).update(attempts=MAX_ATTEMPTS)
    third, new = receipt(order)
    assert new and third.pk not in (first.pk, second.pk)


def test_the_check_and_the_queue_happen_under_the_order_s_row_lock(order, monkeypatch):
    """Two requests at once: the second waits for the first's commit, then finds its email."""
    locked = []
    real = Order.objects.select_for_update

    def recorded(*args, **kwargs):
        locked.append(True)
        return real(*args, **kwargs)

    monkeypatch.setattr(Order.objects, "select_for_update", recorded)
    order_receipt_email(order=order)
    assert locked == [True]
