"""WooCommerce's webhooks in: its ping answered, each delivery signed as WooCommerce signs it, kept once,
applied through the order intake on the task queue (synchronous in tests)."""

import base64
import hashlib
import hmac
import json
from datetime import date
from pathlib import Path

import pytest

from connection.models import ShopEvent, ShopEventOutcome
from connection.tasks import deliveries_sweep_task
from connection.woocommerce.delivered import woocommerce_orders_delivered
from connection.woocommerce.orders import woocommerce_order
from orders.models import Order, OrderSource, Shipment
from orders.selectors import EligibilityCode, order_return_eligibility

SECRET = "wc-secret-0123456789"
# WooCommerce's documented order from Brazil, from a shop whose order numbers carry the prefix "BK-1"
# (a numbering extension's setting): the tests' store writes its numbers so.
BRAZIL = {
    **json.loads((Path(__file__).with_name("platforms") / "woocommerce_order_br.json").read_text()),
    "number": "BK-10723",
}
URL = "/connect/woocommerce/webhooks"

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def connected(settings):
    settings.WOOCOMMERCE_WEBHOOK_SECRET = SECRET


def signed(body: bytes, secret: str = SECRET) -> str:
    return base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest()).decode()


def deliver(
    client, capture, payload: dict, *, topic="order.created", delivery="101", signature=None, body=None
):
    body = body if body is not None else json.dumps(payload).encode()
    headers = {
        "X-WC-Webhook-Topic": topic,
        "X-WC-Webhook-Resource": topic.split(".")[0],
        "X-WC-Webhook-Event": topic.split(".")[-1],
        "X-WC-Webhook-Delivery-ID": delivery,
        "X-WC-Webhook-Signature": signature if signature is not None else signed(body),
        "X-WC-Webhook-Source": "https://shop.example.com/",
    }
    with capture(execute=True):
        return client.post(URL, body, content_type="application/json", headers=headers)


def test_the_documented_order_from_brazil_is_kept_and_applied(client, django_capture_on_commit_callbacks):
    answer = deliver(client, django_capture_on_commit_callbacks, BRAZIL)

    assert answer.status_code == 200 and answer.json() == {"received": "101", "duplicate": False}
    order = Order.objects.get(number="BK-10723")
    assert (order.source, order.status, order.ship_country, str(order.total)) == (
        OrderSource.WOOCOMMERCE,
        "delivered",  # completed in 2017: delivered WOOCOMMERCE_DELIVERED_AFTER_DAYS days after
        "BR",
        "39.00",
    )
    again = deliver(client, django_capture_on_commit_callbacks, BRAZIL)  # the same delivery, sent again
    assert again.json()["duplicate"] is True and ShopEvent.objects.count() == 1


def test_a_tampered_body_is_refused_and_nothing_kept(client, django_capture_on_commit_callbacks):
    body = json.dumps(BRAZIL).encode()
    tampered = body.replace(b'"39.00"', b'"0.01"')
    answer = deliver(
        client, django_capture_on_commit_callbacks, BRAZIL, body=tampered, signature=signed(body)
    )
    assert (answer.status_code, answer.json()["error"]["code"]) == (401, "invalid_signature")
    assert not ShopEvent.objects.exists() and not Order.objects.exists()


def test_the_ping_when_a_webhook_is_saved_is_answered_and_a_deletion_kept_but_not_applied(
    client, django_capture_on_commit_callbacks
):
    ping = client.post(URL, b"webhook_id=42", content_type="application/x-www-form-urlencoded")
    assert ping.status_code == 200 and not ShopEvent.objects.exists()
    deliver(client, django_capture_on_commit_callbacks, BRAZIL)
    deleted = deliver(
        client, django_capture_on_commit_callbacks, {"id": 723}, topic="order.deleted", delivery="102"
    )
    assert deleted.status_code == 200
    assert ShopEvent.objects.get(topic="order.deleted").outcome == ShopEventOutcome.IGNORED
    assert Order.objects.filter(number="BK-10723").exists()  # the shop's deletion removes nothing here


def test_a_forged_ping_with_a_wrong_signature_is_refused(client):
    forged = client.post(
        URL,
        b"webhook_id=42",
        content_type="application/x-www-form-urlencoded",
        headers={"X-WC-Webhook-Signature": "x"},
    )
    assert forged.status_code == 401


def test_two_orders_sent_within_one_second_under_one_delivery_id_are_both_applied(
    client, django_capture_on_commit_callbacks
):
    """WooCommerce's delivery id is its webhook's id hashed with the second: a bulk change shares it."""
    other = {**BRAZIL, "number": "BK-10724", "id": 724}
    first = deliver(client, django_capture_on_commit_callbacks, BRAZIL, delivery="same-second")
    second = deliver(client, django_capture_on_commit_callbacks, other, delivery="same-second")

    assert (first.json()["duplicate"], second.json()["duplicate"]) == (False, False)
    assert set(Order.objects.values_list("number", flat=True)) == {"BK-10723", "BK-10724"}


def test_a_completed_order_counts_as_delivered_when_its_day_comes_and_can_then_be_returned(
    client, django_capture_on_commit_callbacks, settings
):
    """Completed two days ago: shipped; five days later (the store's 7 days), delivered by the sweep, and
    its return window open."""
    settings.BOOKLY_TODAY = date(2017, 3, 23)
    deliver(client, django_capture_on_commit_callbacks, BRAZIL)
    order = Order.objects.get(number="BK-10723")
    assert (order.status, order.shipments.get().shipped_on) == ("shipped", date(2017, 3, 21))

    deliveries_sweep_task()
    assert Order.objects.get(number="BK-10723").status == "shipped"  # its day has not come
    settings.BOOKLY_TODAY = date(2017, 3, 28)
    deliveries_sweep_task()

    order = Order.objects.get(number="BK-10723")
    assert (order.status, order.delivered_on, order.shipments.get().delivered_on) == (
        "delivered", date(2017, 3, 28), date(2017, 3, 28)
    )  # fmt: skip
    assert order_return_eligibility(order=order, today=date(2017, 3, 28)).code == EligibilityCode.ELIGIBLE


def test_the_delivered_sweep_reads_the_orders_once_a_store_day(
    client, django_capture_on_commit_callbacks, settings
):
    settings.BOOKLY_TODAY = date(2017, 3, 23)
    deliver(client, django_capture_on_commit_callbacks, BRAZIL)  # completed 2017-03-21: due on 03-28
    assert woocommerce_orders_delivered(today=date(2017, 3, 27)) == 0  # read that day: none due
    assert woocommerce_orders_delivered(today=date(2017, 3, 27)) == 0
    Shipment.objects.update(shipped_on=date(2017, 3, 19))  # now due on 03-26, but that day was read
    assert woocommerce_orders_delivered(today=date(2017, 3, 27)) == 0
    assert woocommerce_orders_delivered(today=date(2017, 3, 28)) == 1


def taken_before_its_parcel(number: str) -> Order:
    """The order as Bookly took a completed one before the reader gave it its parcel (7a3bebd): shipped,
    with no parcel on file."""
    order = Order.objects.get(number=number)
    order.shipments.all().delete()
    Order.objects.filter(pk=order.pk).update(status="shipped", delivered_on=None)
    return order


def test_a_completed_order_taken_before_its_parcel_was_read_is_delivered_by_the_sweep_on_its_day(
    client, django_capture_on_commit_callbacks, settings
):
    """Completed (and its shop's version last changed) on 2017-03-21, partly refunded as WooCommerce's
    documented order is: the sweep makes its parcel and delivers it 7 days later, as the reader would."""
    settings.BOOKLY_TODAY = date(2017, 3, 23)
    deliver(client, django_capture_on_commit_callbacks, BRAZIL)
    order = taken_before_its_parcel("BK-10723")

    assert woocommerce_orders_delivered(today=date(2017, 3, 27)) == 0  # its day has not come
    assert not order.shipments.exists()
    settings.BOOKLY_TODAY = date(2017, 3, 28)
    deliveries_sweep_task()

    order = Order.objects.get(number="BK-10723")
    parcel = order.shipments.get()
    assert (order.status, order.delivered_on, parcel.shipped_on, parcel.delivered_on) == (
        "delivered", date(2017, 3, 28), date(2017, 3, 21), date(2017, 3, 28)
    )  # fmt: skip
    read = woocommerce_order(BRAZIL)[1]["shipments"][0]  # the parcel the reader makes of it now
    assert [
        {"line_number": line.item.line_number, "quantity": line.quantity} for line in parcel.lines.all()
    ] == (read["lines"])
    assert order_return_eligibility(order=order, today=date(2017, 3, 28)).code == EligibilityCode.ELIGIBLE


@pytest.mark.parametrize(
    "sent",
    [
        # Refunded after it was completed: shipped and never delivered (its money went back).
        {**BRAZIL, "status": "refunded", "refunds": [{"id": 726, "refund": "", "total": "-39.00"}]},
        # Nothing to ship (a download): no address, no shipping method.
        {**BRAZIL, "shipping": {}, "shipping_lines": []},
    ],
    ids=["refunded-in-full", "nothing-ships"],
)
def test_an_order_without_a_parcel_that_is_no_completed_delivery_is_never_delivered_by_the_sweep(
    client, django_capture_on_commit_callbacks, settings, sent
):
    settings.BOOKLY_TODAY = date(2017, 3, 23)
    deliver(client, django_capture_on_commit_callbacks, sent)
    taken_before_its_parcel("BK-10723")

    assert woocommerce_orders_delivered(today=date(2018, 3, 28)) == 0
    order = Order.objects.get(number="BK-10723")
    assert (order.status, order.delivered_on, order.shipments.exists()) == ("shipped", None, False)
