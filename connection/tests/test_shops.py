"""Several shops in one Bookly: a business with two Shopify shops and a WooCommerce site, connected at
once. Each delivery is kept for the shop it names, each shop's order of a number is its own, each customer
finds their own order, and a shop's store API key reaches its orders alone."""

import base64
import hashlib
import hmac
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from connection.models import ShopEvent, ShopEventOutcome
from connection.tests.test_shopify_webhooks import SHOPIFY
from connection.tests.test_woocommerce_webhooks import BRAZIL
from orders.models import Order, OrderSource, Shop
from orders.selectors import order_get_for_customer

pytestmark = pytest.mark.django_db

SHOPIFY_SECRET = "shpss_several_shops"
WOOCOMMERCE_SECRET = "wc-several-shops"
NUMBER = "BK-11001"
# Two Shopify shops of one app (one secret signs both), a WooCommerce site under a path.
AU, US = "books-au.myshopify.com", "books-us.myshopify.com"
SITE = "https://Books.Example/store/"


@pytest.fixture(autouse=True)
def connected(settings):
    settings.SHOPIFY_WEBHOOK_SECRET = SHOPIFY_SECRET
    settings.WOOCOMMERCE_WEBHOOK_SECRET = WOOCOMMERCE_SECRET


def _signed(body: bytes, secret: str) -> str:
    return base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest()).decode()


def _from_shopify(client, capture, *, domain: str, email: str, order_id: int, delivery: str, name=NUMBER):
    body = json.dumps({**SHOPIFY, "name": name, "email": email, "id": order_id}).encode()
    headers = {
        "X-Shopify-Topic": "orders/create",
        "X-Shopify-Webhook-Id": delivery,
        "X-Shopify-Hmac-Sha256": _signed(body, SHOPIFY_SECRET),
        "X-Shopify-Shop-Domain": domain,
    }
    with capture(execute=True):
        return client.post(
            "/connect/shopify/webhooks", body, content_type="application/json", headers=headers
        )


def _from_woocommerce(client, capture, *, email: str):
    body = json.dumps({**BRAZIL, "number": NUMBER, "billing": {**BRAZIL["billing"], "email": email}}).encode()
    headers = {
        "X-WC-Webhook-Topic": "order.created",
        "X-WC-Webhook-Delivery-ID": "wc-1",
        "X-WC-Webhook-Signature": _signed(body, WOOCOMMERCE_SECRET),
        "X-WC-Webhook-Source": SITE,
    }
    with capture(execute=True):
        return client.post(
            "/connect/woocommerce/webhooks", body, content_type="application/json", headers=headers
        )


@pytest.fixture
def three_shops(client, django_capture_on_commit_callbacks):
    """One order numbered BK-11001 in each of the three shops, each another customer's."""
    capture = django_capture_on_commit_callbacks
    answers = [
        _from_shopify(client, capture, domain=AU, email="ana@example.com", order_id=1, delivery="au-1"),
        _from_shopify(client, capture, domain=US, email="bob@example.com", order_id=1, delivery="us-1"),
        _from_woocommerce(client, capture, email="joao@example.com"),
    ]
    assert [answer.status_code for answer in answers] == [200, 200, 200]
    return {shop.address: shop for shop in Shop.objects.exclude(platform=OrderSource.FIXTURE)}


def test_each_shop_keeps_its_own_order_of_one_number_and_each_customer_finds_theirs(three_shops):
    assert set(three_shops) == {AU, US, "https://books.example/store"}
    assert {shop.name for shop in three_shops.values()} == {AU, US, "books.example/store"}
    assert set(ShopEvent.objects.values_list("outcome", flat=True)) == {ShopEventOutcome.CREATED}
    orders = Order.objects.filter(number=NUMBER)
    assert sorted((order.shop.address, order.customer_email, order.source) for order in orders) == [
        (AU, "ana@example.com", "shopify"),
        (US, "bob@example.com", "shopify"),
        ("https://books.example/store", "joao@example.com", "woocommerce"),
    ]
    for email, address in [("ana@example.com", AU), ("bob@example.com", US)]:
        assert order_get_for_customer(order_number="bk 11001", email=email).shop.address == address
    assert order_get_for_customer(order_number=NUMBER, email="mallory@example.com") is None


def test_a_shops_next_delivery_updates_its_own_order_and_no_other(
    three_shops, client, django_capture_on_commit_callbacks
):
    _from_shopify(
        client,
        django_capture_on_commit_callbacks,
        domain=US,
        email="bob.new@example.com",
        order_id=1,
        delivery="us-2",
    )
    assert sorted(Order.objects.filter(number=NUMBER).values_list("customer_email", flat=True)) == [
        "ana@example.com",
        "bob.new@example.com",
        "joao@example.com",
    ]


def _key_of(shop: Shop) -> Client:
    out = StringIO()
    call_command("store_api_key", "create", "Backend", "--shop", shop.name, stdout=out, stderr=StringIO())
    return Client(headers={"authorization": f"Bearer {out.getvalue().strip()}"})


def test_a_shops_key_reaches_its_own_orders_alone(three_shops):
    au, us = _key_of(three_shops[AU]), _key_of(three_shops[US])
    assert au.get(f"/api/store/v1/orders/{NUMBER}").json()["customer_email"] == "ana@example.com"
    assert us.get(f"/api/store/v1/orders/{NUMBER}").json()["customer_email"] == "bob@example.com"
    assert [order["customer_email"] for order in au.get("/api/store/v1/orders").json()["results"]] == [
        "ana@example.com"
    ]
    api = _key_of(Shop.objects.get(platform=OrderSource.FIXTURE))
    answer = api.get(f"/api/store/v1/orders/{NUMBER}")
    assert (answer.status_code, answer.json()["error"]["code"]) == (404, "not_found")


def test_only_the_listed_shops_deliveries_are_taken_and_a_delivery_sent_again_makes_no_shop(
    client, settings, django_capture_on_commit_callbacks
):
    """A signature proves the secret, not the shop the headers name: sites typing one secret, or one app
    in several shops, sign each other's deliveries."""
    capture = django_capture_on_commit_callbacks
    settings.SHOPIFY_SHOP_DOMAIN = f"{AU} {US}"
    settings.WOOCOMMERCE_WEBHOOK_SOURCES = "https://books.example/store"
    assert (
        _from_shopify(
            client, capture, domain=US, email="bob@example.com", order_id=1, delivery="s-1"
        ).status_code
        == 200
    )
    assert _from_woocommerce(client, capture, email="joao@example.com").status_code == 200
    refused = _from_shopify(
        client, capture, domain="evil.myshopify.com", email="e@example.com", order_id=2, delivery="s-2"
    )
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "another_shop")
    settings.WOOCOMMERCE_WEBHOOK_SOURCES = "https://other.example"
    assert _from_woocommerce(client, capture, email="joao@example.com").status_code == 403
    shops = set(Shop.objects.exclude(platform=OrderSource.FIXTURE).values_list("address", flat=True))

    settings.SHOPIFY_SHOP_DOMAIN = ""  # any shop's again: the same delivery sent again names another
    again = _from_shopify(
        client, capture, domain="evil.myshopify.com", email="e@example.com", order_id=1, delivery="s-1"
    )

    assert (again.status_code, again.json()["duplicate"]) == (200, True)
    assert shops == {US, "https://books.example/store"}
    assert set(Shop.objects.exclude(platform=OrderSource.FIXTURE).values_list("address", flat=True)) == shops


def test_a_new_shops_orders_refused_for_their_shape_are_taken_once_staff_set_its_shape(
    client, django_capture_on_commit_callbacks
):
    """A new shop takes BOOKLY_ORDER_NUMBER_PATTERN's shape (BK- here); Shopify's #1104 is refused for
    its number alone, kept as such, and applied when staff give the shop its shape: not lost."""
    capture = django_capture_on_commit_callbacks
    _from_shopify(
        client, capture, domain=AU, email="ana@example.com", order_id=1, delivery="s-1", name="#1104"
    )
    event = ShopEvent.objects.get()
    assert (event.outcome, Order.objects.filter(number="#1104").exists()) == (
        ShopEventOutcome.OTHER_SHAPE,
        False,
    )

    shop = Shop.objects.get(address=AU)
    shop.number_pattern, shop.number_example = "#[0-9]{4,}", "#1001"
    with capture(execute=True):
        shop.save()

    event.refresh_from_db()
    assert event.outcome == ShopEventOutcome.CREATED
    assert Order.objects.get(number="#1104").shop == shop
