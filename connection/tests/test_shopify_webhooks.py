"""Shopify's webhooks in: signed as Shopify signs them, kept once, applied through the order intake on the
task queue (synchronous in tests), and the order then answered in the chat."""

import base64
import copy
import hashlib
import hmac
import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from connection.models import ShopEvent, ShopEventOutcome, ShopPlatform
from connection.shop_events import SHOP_EVENT_ATTEMPTS, shop_event_apply
from connection.shopify.orders import shopify_order
from connection.shops import shop_of_delivery
from connection.tasks import deliveries_sweep_task
from orders.models import Order, OrderChangeKind, OrderSource
from orders.tests.factories import OrderFactory

SECRET = "shpss_0123456789abcdef"
# Shopify's own order, from a shop whose order numbers carry its prefix "BK-" (Shopify's "order ID
# format" setting): the tests' store writes its numbers so.
SHOPIFY = {
    **json.loads((Path(__file__).with_name("platforms") / "shopify_order.json").read_text())["order"],
    "name": "BK-11001",
    "updated_at": "2026-04-10T11:00:00-05:00",
}
URL = "/connect/shopify/webhooks"
PAYLOAD_LINE = SHOPIFY["line_items"][0]

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def connected(settings):
    settings.SHOPIFY_WEBHOOK_SECRET = SECRET


@pytest.fixture
def client(client, django_capture_on_commit_callbacks):
    """Shopify's side: each delivery's work queued once its request commits, as in production."""

    class Shopify:
        def __getattr__(self, name):
            return getattr(client, name)

        def post(self, *args, **kwargs):
            with django_capture_on_commit_callbacks(execute=True):
                return client.post(*args, **kwargs)

    return Shopify()


def signed(body: bytes, secret: str = SECRET) -> str:
    return base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest()).decode()


SHOP_DOMAIN = "bookly-test.myshopify.com"


def deliver(client, payload: dict, *, topic="orders/create", delivery="d-1", signature=None, body=None):
    body = body if body is not None else json.dumps(payload).encode()
    headers = {
        "X-Shopify-Topic": topic,
        "X-Shopify-Webhook-Id": delivery,
        "X-Shopify-Hmac-Sha256": signature if signature is not None else signed(body),
        "X-Shopify-Shop-Domain": SHOP_DOMAIN,
    }
    return client.post(URL, body, content_type="application/json", headers=headers)


def test_an_order_shopify_sends_is_kept_and_applied_through_the_intake(client):
    answer = deliver(client, SHOPIFY)

    assert answer.status_code == 200 and answer.json() == {"received": "d-1", "duplicate": False}
    event = ShopEvent.objects.get()
    assert (event.outcome, event.order_number, event.applied_at is not None) == ("created", "BK-11001", True)
    order = Order.objects.get(number="BK-11001")
    assert (order.source, order.status, str(order.total), order.currency) == (
        OrderSource.SHOPIFY,
        "processing",
        "409.94",
        "USD",
    )
    # Shopify's own ids, for writing changes back: the order's and each line's.
    assert order.shop_order_id == "450789469"
    assert all(item.line_id for item in order.items.all())


def test_a_tampered_body_or_another_secret_is_refused_and_nothing_kept(client):
    body = json.dumps(SHOPIFY).encode()
    tampered = body.replace(b'"409.94"', b'"0.01"')
    assert deliver(client, SHOPIFY, body=tampered, signature=signed(body)).status_code == 401
    assert deliver(client, SHOPIFY, signature=signed(body, "another secret")).status_code == 401
    refused = deliver(client, SHOPIFY, signature="")
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "invalid_signature"
    assert not ShopEvent.objects.exists() and not Order.objects.exists()


def test_a_delivery_sent_again_is_applied_once(client):
    deliver(client, SHOPIFY)
    changed = {**SHOPIFY, "total_price": "1.00", "updated_at": "2026-04-11T11:00:00-05:00"}

    again = deliver(client, changed)  # the same delivery id: Shopify retrying, not a new version

    assert again.status_code == 200 and again.json()["duplicate"] is True
    assert ShopEvent.objects.count() == 1
    assert str(Order.objects.get().total) == "409.94"


def test_later_news_from_shopify_moves_the_order_and_an_older_version_is_refused_for_staff(client):
    deliver(client, SHOPIFY)
    fulfilment = {**SHOPIFY["fulfillments"][0], "status": "success", "tracking_company": "UPS"}
    shipped = {**SHOPIFY, "fulfillments": [fulfilment], "updated_at": "2026-04-11T11:00:00-05:00"}
    deliver(client, shipped, topic="orders/updated", delivery="d-2")
    order = Order.objects.get()
    assert (order.status, order.tracking_number, order.carrier) == ("shipped", "1Z2345", "UPS")

    deliver(client, SHOPIFY, topic="orders/updated", delivery="d-3")  # the first version, late

    stale = ShopEvent.objects.get(delivery_id="d-3")
    assert stale.outcome == ShopEventOutcome.CONFLICT and "older" in stale.detail
    assert Order.objects.get().status == "shipped"
    assert order.changes.filter(kind=OrderChangeKind.UPDATE_REFUSED).count() == 1


def test_an_order_the_intake_refuses_is_kept_with_each_problem_for_staff(client):
    payload = copy.deepcopy(SHOPIFY)
    payload["currency"] = "XYZ"
    deliver(client, {**payload, "name": "#1001"})
    event = ShopEvent.objects.get()
    assert event.outcome == ShopEventOutcome.REFUSED
    assert "number must look like BK-10042" in event.detail and "currency must be a currency" in event.detail
    assert not Order.objects.exists()


def test_a_topic_that_is_not_an_order_is_kept_and_ignored(client):
    assert deliver(client, {"id": 1, "email": "a@example.com"}, topic="customers/create").status_code == 200
    assert ShopEvent.objects.get().outcome == ShopEventOutcome.IGNORED


@pytest.mark.parametrize(
    ("body", "headers", "status", "code"),
    [
        (json.dumps(SHOPIFY).encode(), {"X-Shopify-Webhook-Id": "d" * 101}, 400, "invalid_headers"),
        (json.dumps(SHOPIFY).encode(), {"X-Shopify-Hmac-Sha256": "signé"}, 401, "invalid_signature"),
        (b"{not json", {}, 400, "invalid_json"),
        (b"[" * 100_000 + b"]" * 100_000, {}, 400, "invalid_json"),  # signed, nested past the parser
        (b'{"a": "' + b"x" * 3_000_000 + b'"}', {}, 413, "body_too_large"),
        (b"[1, 2]", {}, 400, "invalid_json"),
        (json.dumps(SHOPIFY).encode(), {"X-Shopify-Webhook-Id": ""}, 400, "invalid_headers"),
        (json.dumps(SHOPIFY).encode(), {"X-Shopify-Topic": ""}, 400, "invalid_headers"),
    ],
)
def test_odd_deliveries_get_a_clear_json_answer(client, body, headers, status, code):
    sent = {
        "X-Shopify-Topic": "orders/create",
        "X-Shopify-Webhook-Id": "d-9",
        "X-Shopify-Hmac-Sha256": signed(body),
        **headers,
    }
    answer = client.post(URL, body, content_type="application/json", headers=sent)
    assert (answer.status_code, answer.json()["error"]["code"]) == (status, code)
    assert not ShopEvent.objects.exists()


def test_another_shops_delivery_is_refused_when_the_store_names_its_own(client, settings):
    settings.SHOPIFY_SHOP_DOMAIN = "our-books.myshopify.com"
    refused = deliver(client, SHOPIFY)  # from bookly-test.myshopify.com, signed with the app's secret
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "another_shop")
    assert not ShopEvent.objects.exists()
    settings.SHOPIFY_SHOP_DOMAIN = "bookly-test.myshopify.com"
    assert deliver(client, SHOPIFY).status_code == 200


def test_not_connected_or_not_a_post_is_told_so(client, settings):
    not_a_post = client.get(URL)
    assert (not_a_post.status_code, not_a_post.json()["error"]["code"], not_a_post["Allow"]) == (
        405,
        "method_not_allowed",
        "POST",
    )
    settings.SHOPIFY_WEBHOOK_SECRET = ""
    answer = deliver(client, SHOPIFY)
    assert (answer.status_code, answer.json()["error"]["code"]) == (404, "not_connected")


def test_an_event_whose_task_was_lost_is_applied_by_the_sweep():
    event = ShopEvent.objects.create(
        platform="shopify",
        delivery_id="d-lost",
        topic="orders/create",
        body=SHOPIFY,
        received_at=timezone.now() - timedelta(minutes=2),
    )
    deliveries_sweep_task()
    event.refresh_from_db()
    assert event.outcome == ShopEventOutcome.CREATED and Order.objects.filter(number="BK-11001").exists()


def test_an_event_applied_is_never_applied_again(client):
    deliver(client, SHOPIFY)
    event = ShopEvent.objects.get()
    ShopEvent.objects.filter(pk=event.pk).update(body={**SHOPIFY, "total_price": "1.00"})

    again = shop_event_apply(event_id=event.pk)

    assert again.outcome == ShopEventOutcome.CREATED and str(Order.objects.get().total) == "409.94"


def test_an_error_of_ours_is_tried_again_by_the_sweep_and_recorded_on_the_last_attempt(client, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr("connection.shop_events.order_upsert", broken)
    deliver(client, SHOPIFY)  # the task fails: nothing recorded yet
    event = ShopEvent.objects.get()
    assert (event.outcome, event.applied_at) == (ShopEventOutcome.PENDING, None)
    for _ in range(SHOP_EVENT_ATTEMPTS):
        ShopEvent.objects.filter(pk=event.pk).update(received_at=timezone.now() - timedelta(minutes=2))
        deliveries_sweep_task()
    event.refresh_from_db()
    assert (event.outcome, event.detail, event.attempts) == (ShopEventOutcome.FAILED, "RuntimeError", 4)
    deliveries_sweep_task()  # no more attempts
    event.refresh_from_db()
    assert event.attempts == 4


def test_a_gift_card_line_is_never_returnable():
    lines = [{**PAYLOAD_LINE, "gift_card": True, "title": "Gift card"}, PAYLOAD_LINE]
    _, data = shopify_order({**SHOPIFY, "line_items": lines})
    assert [item.get("category", "") for item in data["items"]] == ["gift_card", ""]


@pytest.mark.parametrize("constant", [b"NaN", b"Infinity", b"-Infinity"])
def test_nan_or_infinity_in_a_signed_body_is_kept_and_refused_by_its_field(client, constant):
    body = json.dumps({**SHOPIFY, "total_price": 0, "current_total_price": 0}).encode()
    body = body.replace(b'"current_total_price": 0', b'"current_total_price": ' + constant)

    answer = deliver(client, SHOPIFY, body=body)

    event = ShopEvent.objects.get()
    assert answer.status_code == 200 and event.outcome == ShopEventOutcome.REFUSED
    assert event.detail.startswith("total ")
    assert not Order.objects.exists()


def test_an_order_of_another_shop_is_never_touched_the_shopify_shops_own_is_made(client):
    theirs = OrderFactory.create(number="BK-11001", source=OrderSource.API, customer_email="ana@example.com")

    deliver(client, SHOPIFY)

    ours = Order.objects.get(number="BK-11001", source=OrderSource.SHOPIFY)
    assert (ours.shop.platform, ours.shop_order_id) == (OrderSource.SHOPIFY, str(SHOPIFY["id"]))
    theirs.refresh_from_db()
    assert (theirs.source, theirs.customer_email, theirs.shop_order_id) == ("api", "ana@example.com", "")
    assert not theirs.changes.exists()


def test_an_order_that_came_from_elsewhere_into_the_shop_is_never_taken_over_and_the_refusal_is_kept(
    client,
):
    shop = shop_of_delivery(platform=ShopPlatform.SHOPIFY, named=SHOP_DOMAIN)
    theirs = OrderFactory.create(
        number="BK-11001", source=OrderSource.API, customer_email="ana@example.com", shop=shop
    )

    deliver(client, SHOPIFY)

    event = ShopEvent.objects.get()
    assert event.outcome == ShopEventOutcome.CONFLICT and "came from Store API" in event.detail
    theirs.refresh_from_db()
    assert (theirs.source, theirs.customer_email, theirs.shop_order_id) == ("api", "ana@example.com", "")
    assert theirs.changes.get(kind=OrderChangeKind.UPDATE_REFUSED).after["reason"] == "other_source"
