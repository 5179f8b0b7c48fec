"""A business with a Shopify shop (#1001, #1002, …) and a WooCommerce site (727, 728, …) in one Bookly
(issue 49, finding 7): each shop's webhooks fill its own orders, each in its shop's shape, and each
customer who writes "order 1104" is answered about their own order, whichever shop it is in."""

import base64
import copy
import hashlib
import hmac
import json
from pathlib import Path

import pytest

from orders.models import Order, OrderSource
from orders.shops import shop_of_platform
from support.assistant.understanding.wording import ask_order_number
from support.testing.chat_client import ChatClient

SHOPIFY_SECRET = "shpss_two_shops"
WOOCOMMERCE_SECRET = "wc-two-shops"
PLATFORMS = Path(__file__).resolve().parents[2] / "connection" / "tests" / "platforms"

pytestmark = pytest.mark.django_db


def _signed(body: bytes, secret: str) -> str:
    return base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest()).decode()


@pytest.fixture
def two_shops(client, settings, django_capture_on_commit_callbacks):
    settings.SHOPIFY_WEBHOOK_SECRET = SHOPIFY_SECRET
    settings.WOOCOMMERCE_WEBHOOK_SECRET = WOOCOMMERCE_SECRET
    # Each shop's own shape, as staff set it in admin (Shops).
    for platform, address, pattern, example in [
        (OrderSource.SHOPIFY, "books.myshopify.com", "#[0-9]{4,}", "#1001"),
        (OrderSource.WOOCOMMERCE, "https://books.example", "[0-9]{3,}", "727"),
    ]:
        shop = shop_of_platform(platform=platform, address=address)
        shop.number_pattern, shop.number_example = pattern, example
        shop.save()

    shopify = copy.deepcopy(json.loads((PLATFORMS / "shopify_order.json").read_text())["order"])
    shopify.update(name="#1104", email="ana@example.com", updated_at="2026-04-10T11:00:00-05:00")
    woocommerce = json.loads((PLATFORMS / "woocommerce_order_br.json").read_text())
    woocommerce.update(number="1104", status="processing")
    deliveries = [
        ("/connect/shopify/webhooks", shopify, SHOPIFY_SECRET, {
            "X-Shopify-Topic": "orders/create", "X-Shopify-Webhook-Id": "s-1",
            "X-Shopify-Shop-Domain": "books.myshopify.com"}),
        ("/connect/woocommerce/webhooks", woocommerce, WOOCOMMERCE_SECRET, {
            "X-WC-Webhook-Topic": "order.created", "X-WC-Webhook-Delivery-ID": "w-1",
            "X-WC-Webhook-Source": "https://books.example/"}),
    ]  # fmt: skip
    for url, payload, secret, headers in deliveries:
        body = json.dumps(payload).encode()
        signature = "X-Shopify-Hmac-Sha256" if "shopify" in url else "X-WC-Webhook-Signature"
        with django_capture_on_commit_callbacks(execute=True):
            answer = client.post(
                url,
                body,
                content_type="application/json",
                headers={**headers, signature: _signed(body, secret)},
            )
        assert answer.status_code == 200


def test_each_shops_order_is_kept_in_its_shape_and_each_customer_answered_about_their_own(two_shops):
    assert sorted(Order.objects.values_list("shop__address", "number")) == [
        ("books.myshopify.com", "#1104"),
        ("https://books.example", "1104"),
    ]
    ana = ChatClient().send("where is my order 1104? ana@example.com").json()["reply"]
    joao = ChatClient().send("where is my order 1104? joao.silva@example.com").json()["reply"]
    assert "#1104" in ana and "IPod Nano" in ana
    assert "1104" in joao and "#1104" not in joao and "Woo" in joao


def test_customers_are_not_told_a_prefix_when_the_shops_numbers_start_differently(two_shops):
    asked = ask_order_number()
    assert "starts with" not in asked
    assert asked in ChatClient().send("where is my order?").json()["reply"]


def test_a_customer_with_an_order_of_one_number_in_both_shops_is_asked_which_and_answered_about_it(
    two_shops,
):
    """Ana bought at both shops: Shopify's #1104 and the site's 1104 are both hers. "Order 1104" is asked
    about, never guessed; the shop she names is the one answered, and the conversation stays on it."""
    Order.objects.filter(shop__address="https://books.example").update(customer_email="ana@example.com")
    chat = ChatClient()

    asked = chat.send("where is my order 1104? ana@example.com").json()["reply"]
    answered = chat.send("the one from books.example").json()["reply"]
    again = chat.send("where is my order 1104? ana@example.com").json()["reply"]

    assert "Which shop" in asked and "books.myshopify.com" in asked and "books.example" in asked
    assert "1104" in answered and "Woo" in answered and "IPod Nano" not in answered
    assert "Woo" in again and "Which shop" not in again
