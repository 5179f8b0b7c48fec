"""Real orders the platforms sent, as published (connection/tests/platforms/README.md says where each one
comes from and under which licence), the whole way: the webhook, signed as the platform signs it, to the
order, to what the chat tells the customer. No payload is changed; what the customer is told is checked
against the payload's own values."""

import base64
import hashlib
import hmac
import json
from decimal import Decimal
from pathlib import Path

import pytest

from orders.models import Order, OrderSource
from orders.shops import shop_of_platform
from support.testing.chat_client import ChatClient

SHOPIFY_SECRET = "shpss_platform_samples"
WOOCOMMERCE_SECRET = "wc-platform-samples"
PLATFORMS = Path(__file__).resolve().parents[2] / "connection" / "tests" / "platforms"
# Each platform's shop, with its order numbers' own shape (set by staff in admin → Shops): Shopify's
# "#1001"; the WooCommerce shop's real order is number 17, so its numbers are of two digits or more.
SHOPS = {
    "shopify": (OrderSource.SHOPIFY, "samples.myshopify.com", "#[0-9]{4,}", "#1001"),
    "woocommerce": (OrderSource.WOOCOMMERCE, "https://samples.example", "[0-9]{2,}", "17"),
}

pytestmark = pytest.mark.django_db


def _sample(name: str) -> dict:
    body = json.loads((PLATFORMS / name).read_text())
    return body.get("order", body)


def _signed(body: bytes, secret: str) -> str:
    return base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest()).decode()


def _dollars(amount: str) -> str:
    return f"${Decimal(amount):,.2f}"


@pytest.fixture
def delivered(client, settings, django_capture_on_commit_callbacks):
    """The platform's delivery of `order`, signed as the platform signs it, to its shop (made with its
    numbers' shape), its work run on commit; the order made."""
    settings.SHOPIFY_WEBHOOK_SECRET = SHOPIFY_SECRET
    settings.WOOCOMMERCE_WEBHOOK_SECRET = WOOCOMMERCE_SECRET

    def deliver(platform: str, order: dict, *, topic: str) -> Order:
        source, address, pattern, example = SHOPS[platform]
        shop = shop_of_platform(platform=source, address=address)
        shop.number_pattern, shop.number_example = pattern, example
        shop.save()
        body = json.dumps(order).encode()
        url = f"/connect/{platform}/webhooks"
        if platform == "shopify":
            headers = {
                "X-Shopify-Topic": topic,
                "X-Shopify-Webhook-Id": f"sample-{order['id']}",
                "X-Shopify-Shop-Domain": address,
                "X-Shopify-Hmac-Sha256": _signed(body, SHOPIFY_SECRET),
            }
        else:
            headers = {
                "X-WC-Webhook-Topic": topic,
                "X-WC-Webhook-Resource": topic.split(".")[0],
                "X-WC-Webhook-Event": topic.split(".")[-1],
                "X-WC-Webhook-Delivery-ID": f"sample-{order['id']}",
                "X-WC-Webhook-Source": f"{address}/",
                "X-WC-Webhook-Signature": _signed(body, WOOCOMMERCE_SECRET),
            }
        with django_capture_on_commit_callbacks(execute=True):
            answer = client.post(url, body, content_type="application/json", headers=headers)
        assert answer.status_code == 200
        return Order.objects.get(shop=shop)

    return deliver


def test_a_real_shopify_order_in_australian_dollars_is_told_as_it_stands(delivered):
    """A development store's real orders/create (AUD), not fulfilled yet: the customer is told it is
    processing, with its line and the address it goes to; never shipped."""
    sample = _sample("shopify_order_aud.json")
    order = delivered("shopify", sample, topic="orders/create")
    line, address = sample["line_items"][0], sample["shipping_address"]

    reply = ChatClient().send(f"where is my order {sample['name']}? {sample['email']}").json()["reply"]

    # Its API version (2020) has no current_total_price: total_price is read.
    assert "current_total_price" not in sample
    assert (order.number, order.currency, order.total) == (
        sample["name"],
        sample["currency"],
        Decimal(sample["total_price"]),
    )
    assert f"order {sample['name']} is processing" in reply and "shipped" not in reply
    assert line["title"] in reply and address["city"] in reply and address["address1"] in reply


def test_a_real_shopify_order_paid_in_another_currency_than_the_shops_is_kept_in_the_customers(delivered):
    """The same store's real order paid in US dollars while the shop counts in Australian dollars: the
    order and its lines are in what the customer paid (Shopify's presentment_money), the shop's total
    kept beside them for staff; the customer is told the order as it stands."""
    sample = _sample("shopify_order_paid_in_usd.json")
    order = delivered("shopify", sample, topic="orders/create")
    paid, shop = sample["total_price_set"]["presentment_money"], sample["total_price_set"]["shop_money"]
    line = sample["line_items"][0]

    reply = ChatClient().send(f"where is my order {sample['name']}? {sample['email']}").json()["reply"]
    total = ChatClient().send(f"how much did I pay for order {sample['name']}? {sample['email']}").json()

    assert sample["presentment_currency"] != sample["currency"]
    assert f"came to {_dollars(paid['amount'])}" in total["reply"] and shop["amount"] not in total["reply"]
    assert (order.currency, order.total) == (paid["currency_code"], Decimal(paid["amount"]))
    assert (order.shop_currency, order.shop_total) == (shop["currency_code"], Decimal(shop["amount"]))
    assert [(item.title, item.unit_price) for item in order.items.all()] == [
        (line["title"], Decimal(line["price_set"]["presentment_money"]["amount"]))
    ]
    assert f"order {sample['name']} is processing" in reply and line["title"] in reply
    assert shop["amount"] not in reply and "AUD" not in reply


def test_shopifys_test_notification_is_told_cancelled_its_payment_voided_and_its_discount(delivered):
    """What "send test notification" sends for orders/create (#9999): cancelled, its payment voided, a
    discount. The customer is told it is cancelled, that they were not charged, and the discount."""
    sample = _sample("shopify_test_notification.json")
    delivered("shopify", sample, topic="orders/create")
    # A WooCommerce shop beside it, its numbers plain digits: "$5.00" names no order "00" of its.
    source, address, pattern, example = SHOPS["woocommerce"]
    site = shop_of_platform(platform=source, address=address)
    site.number_pattern, site.number_example = pattern, example
    site.save()
    asking = f"order {sample['name']}? {sample['email']}"

    status = ChatClient().send(f"where is my {asking}").json()["reply"]
    charged = ChatClient().send(f"was I charged for {asking}").json()["reply"]
    less = ChatClient().send(f"why was I charged less on {asking}").json()["reply"]

    assert (sample["cancelled_at"] is not None, sample["financial_status"]) == (True, "voided")
    assert f"order {sample['name']} is cancelled" in status and "shipped" not in status
    assert "voided" in charged and "not charged" in charged
    assert f"{_dollars(sample['total_discounts'])} off" in less and "discount" in less


def test_shopifys_order_of_two_failed_fulfilments_is_told_not_shipped(delivered):
    """Shopify's Ruby client's order whose two fulfilments failed (status "failure", tracking 1Z2345): no
    parcel left, so the customer is told it is processing, with both lines, and no tracking number."""
    sample = _sample("shopify_order_failed_fulfilments.json")
    order = delivered("shopify", sample, topic="orders/updated")
    failed = sample["fulfillments"]

    reply = ChatClient().send(f"where is my order {sample['name']}? {sample['email']}").json()["reply"]

    assert len(failed) == 2 and {fulfilment["status"] for fulfilment in failed} == {"failure"}
    assert (order.status, order.tracking_number, order.shipments.count()) == ("processing", "", 0)
    assert f"order {sample['name']} is processing" in reply and "shipped" not in reply
    assert all(line["title"] in reply for line in sample["line_items"])
    assert all(fulfilment["tracking_number"] not in reply for fulfilment in failed)


def test_a_real_woocommerce_webhook_from_a_shop_showing_three_decimals_is_answered(delivered):
    """A real WooCommerce 7.8 order.updated body: its shop shows three decimals ("2.000"), pending payment.
    The order is taken in cents and the customer is told it is processing, with its line."""
    sample = _sample("woocommerce_order_webhook.json")
    order = delivered("woocommerce", sample, topic="order.updated")
    line = sample["line_items"][0]

    reply = ChatClient().send(f"where is my order {sample['number']}? {sample['billing']['email']}")
    reply = reply.json()["reply"]

    assert (order.number, order.currency, order.total) == (
        sample["number"],
        sample["currency"],
        Decimal(sample["total"]),
    )
    assert f"order {sample['number']} is processing" in reply and "shipped" not in reply
    assert line["name"] in reply and sample["shipping"]["address_1"] in reply
