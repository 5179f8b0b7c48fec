"""Several shops in one Bookly: a business with two Shopify shops and a WooCommerce site, connected at
once. Each delivery is kept for the shop it names, each shop's order of a number is its own, each customer
finds their own order, and a shop's store API key reaches its orders alone."""

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass, field
from io import StringIO
from urllib.parse import urlsplit

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client

from connection.fields import SecretField
from connection.models import ShopConnection, ShopEvent, ShopEventOutcome
from connection.shop_events import _WHICH_SHOP, shop_event_apply
from connection.shops import CredentialsUnreadable, shop_key
from connection.tests.test_shopify_webhooks import SHOPIFY
from connection.tests.test_woocommerce_webhooks import BRAZIL
from orders.inbound import ORDER_EXAMPLE
from orders.models import Order, OrderChangeState, OrderSource, Shop
from orders.selectors import order_get_for_customer
from orders.services import order_cancel, order_changes_through_shop
from orders.shops import shop_of_platform
from orders.tests.factories import OrderFactory, ReturnRecordFactory

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


def _from_shopify(
    client,
    capture,
    *,
    domain: str,
    email: str,
    order_id: int,
    delivery: str,
    name=NUMBER,
    secret=SHOPIFY_SECRET,
):
    body = json.dumps({**SHOPIFY, "name": name, "email": email, "id": order_id}).encode()
    headers = {
        "X-Shopify-Topic": "orders/create",
        "X-Shopify-Webhook-Id": delivery,
        "X-Shopify-Hmac-Sha256": _signed(body, secret),
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
        found = order_get_for_customer(order_number="bk 11001", email=email)
        assert found is not None and found.shop.address == address
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


# --- Shops with their own app or key (ShopConnection) ---------------------------------------------------


@dataclass
class Platform:
    """A stand-in for one shop's API on 127.0.0.1: what it was asked (method, path, headers)."""

    url: str = ""
    asked: list[tuple[str, str, dict]] = field(default_factory=list)


@pytest.fixture
def platforms(json_api):
    """Two shops' APIs, each answering as Shopify's Admin API and WooCommerce's REST API document."""

    def serve() -> Platform:
        state = Platform()

        def answer(method, path, headers, body):
            state.asked.append((method, path, headers))
            path = urlsplit(path).path
            if path.endswith("/orders/count.json"):
                return 200, {"count": 0}, {}
            if path.endswith("/orders.json"):
                return 200, {"orders": []}, {}
            if path.endswith("/wp-json/wc/v3/orders"):
                return 200, [BRAZIL], {"X-WP-Total": "1", "X-WP-TotalPages": "1"}
            return 200, {"order": {"id": 1}}, {}

        state.url = json_api(answer)
        return state

    return serve(), serve()


def _own(shop: Shop, **credentials) -> ShopConnection:
    connection = ShopConnection(shop=shop, **credentials)
    connection.full_clean()
    connection.save()
    return connection


def test_a_shop_with_its_own_app_takes_deliveries_signed_with_its_own_secret_alone(
    client, settings, django_capture_on_commit_callbacks
):
    """Two Shopify shops, each with its own app: the settings' secret is AU's app's (and AU the settings'
    only shop), US's is kept in its connection. Each signs for its own shop; neither for the other."""
    capture = django_capture_on_commit_callbacks
    settings.SHOPIFY_SHOP_DOMAIN = AU
    _own(shop_of_platform(platform=OrderSource.SHOPIFY, address=US), webhook_secret="shpss_us_app")

    def delivered(domain, secret, delivery):
        answer = _from_shopify(
            client,
            capture,
            domain=domain,
            email="bob@example.com",
            order_id=7,
            delivery=delivery,
            secret=secret,
        )
        return answer.status_code

    assert delivered(US, "shpss_us_app", "us-1") == 200
    assert delivered(AU, SHOPIFY_SECRET, "au-1") == 200
    assert delivered(US, SHOPIFY_SECRET, "us-2") == 401  # AU's app signs nothing for US
    assert delivered(AU, "shpss_us_app", "au-2") == 401
    assert sorted(Order.objects.values_list("shop__address", flat=True)) == [AU, US]


def test_each_shop_is_written_back_and_read_with_its_own_key_at_its_own_address(
    platforms, settings, django_capture_on_commit_callbacks
):
    """The settings' token is AU's; US keeps its own token, address and write-back in its connection."""
    au_api, us_api = platforms
    settings.SHOPIFY_SHOP_DOMAIN = AU
    settings.SHOPIFY_ADMIN_ACCESS_TOKEN = "shpat_au"
    settings.SHOPIFY_ADMIN_API_URL = f"{au_api.url}/admin/api/2025-07"
    settings.BOOKLY_CHANGES_THROUGH_SHOP = ["shopify"]
    au = shop_of_platform(platform=OrderSource.SHOPIFY, address=AU)
    us = shop_of_platform(platform=OrderSource.SHOPIFY, address=US)
    _own(us, access_token="shpat_us", api_url=f"{us_api.url}/admin/api/2025-07", write_back=True)

    for shop, order_id in [(au, "111"), (us, "222")]:
        order = OrderFactory.create(shop=shop, source=OrderSource.SHOPIFY, shop_order_id=order_id)
        with django_capture_on_commit_callbacks(execute=True):
            change = order_cancel(order=order)
        change.refresh_from_db()
        assert change.state == OrderChangeState.MADE

    [(_, au_path, au_headers)] = [asked for asked in au_api.asked if asked[0] == "POST"]
    [(_, us_path, us_headers)] = [asked for asked in us_api.asked if asked[0] == "POST"]
    assert (au_path, au_headers["X-Shopify-Access-Token"]) == (
        "/admin/api/2025-07/orders/111/cancel.json",
        "shpat_au",
    )
    assert (us_path, us_headers["X-Shopify-Access-Token"]) == (
        "/admin/api/2025-07/orders/222/cancel.json",
        "shpat_us",
    )

    with pytest.raises(
        CommandError, match=rf"Several shops have a key here: say which with --shop \({AU}, {US}\)"
    ):
        call_command("shop_sync", "--since", "2026-01-01", "--no-progress")
    call_command("shop_sync", "--since", "2026-01-01", "--shop", US, "--no-progress", stdout=StringIO())
    assert {headers["X-Shopify-Access-Token"] for _, _, headers in us_api.asked} == {"shpat_us"}


def test_a_shops_own_connection_says_whether_its_changes_go_through_it(settings):
    """Unset, the settings say it of the platform; the shop's connection says it of the shop."""
    settings.BOOKLY_CHANGES_THROUGH_SHOP = []
    shop = shop_of_platform(platform=OrderSource.SHOPIFY, address=US)
    order = OrderFactory.create(shop=shop, source=OrderSource.SHOPIFY, shop_order_id="9")
    assert order_changes_through_shop(order=order) is False
    own = _own(shop, access_token="shpat_us", write_back=True)
    order.refresh_from_db()
    assert order_changes_through_shop(order=order) is True
    settings.BOOKLY_CHANGES_THROUGH_SHOP = ["shopify"]
    own.write_back = False
    own.save()
    order.refresh_from_db()
    assert order_changes_through_shop(order=order) is False
    own.delete()
    order.refresh_from_db()
    assert order_changes_through_shop(order=order) is True


def test_a_woocommerce_sites_own_key_reads_its_orders_into_it(platforms):
    """A second WooCommerce site with its own REST API key: shop_sync --shop reads it at its address."""
    _, site_api = platforms
    site = shop_of_platform(platform=OrderSource.WOOCOMMERCE, address=site_api.url)
    _own(site, consumer_key="ck_site", consumer_secret="cs_site")

    call_command(
        "shop_sync", "--since", "2026-01-01", "--shop", site.name, "--no-progress", stdout=StringIO()
    )

    [(_, path, headers)] = site_api.asked
    assert path.startswith("/wp-json/wc/v3/orders?")
    assert headers["Authorization"] == "Basic " + base64.b64encode(b"ck_site:cs_site").decode()
    assert Order.objects.get(number=BRAZIL["number"]).shop == site


@pytest.fixture
def us_connected(db):
    shop = shop_of_platform(platform=OrderSource.SHOPIFY, address=US)
    _own(shop, webhook_secret="shpss_us_app", access_token="shpat_us_token")
    return shop


def test_a_shops_credentials_are_kept_encrypted(us_connected):
    with connection.cursor() as cursor:
        cursor.execute("SELECT webhook_secret, access_token FROM connection_shopconnection")
        stored = cursor.fetchone()
    assert "shpss_us_app" not in stored[0] and "shpat_us_token" not in stored[1]


def test_credentials_the_secret_key_no_longer_opens_say_so_and_are_never_saved_again(
    us_connected, secret_key_changed, client, settings, django_capture_on_commit_callbacks
):
    with pytest.raises(CredentialsUnreadable, match="DJANGO_SECRET_KEY_FALLBACKS"):
        shop_key(shop=us_connected)
    answer = _from_shopify(
        client, django_capture_on_commit_callbacks, domain=US, email="b@example.com", order_id=1,
        delivery="us-1", secret="shpss_us_app",
    )  # fmt: skip
    assert (answer.status_code, answer.json()["error"]["code"]) == (503, "credentials_unreadable")
    own = ShopConnection.objects.get(shop=us_connected)
    # A token no key opens stops no delivery signed with the secret that is read (saved anew here).
    ShopConnection.objects.filter(pk=own.pk).update(webhook_secret="shpss_us_app")
    delivered = _from_shopify(
        client, django_capture_on_commit_callbacks, domain=US, email="b@example.com", order_id=2,
        delivery="us-2", secret="shpss_us_app",
    )  # fmt: skip
    assert delivered.status_code == 200
    own.write_back = True
    with pytest.raises(ValueError, match="cannot be read here"):
        own.save()  # encrypted once more, it would be lost for good

    settings.SECRET_KEY_FALLBACKS = [secret_key_changed.old]
    secret_key_changed.read_again()
    assert shop_key(shop=us_connected).token == "shpat_us_token"


def test_a_credential_read_while_a_form_is_cleaned_is_read_in_plain(us_connected, monkeypatch):
    """The library marks its field object while a form is cleaned; that object is every thread's, so a
    read meanwhile (another request) got the ciphertext. SecretField's clean() marks nothing."""
    read = []

    def validate(field, value, model_instance):
        read.append(ShopConnection.objects.get(shop=us_connected).webhook_secret)

    monkeypatch.setattr(SecretField, "validate", validate)
    ShopConnection._meta.get_field("webhook_secret").clean("shpss_typed", None)
    assert read == ["shpss_us_app"]


def test_a_shop_whose_address_is_not_known_gets_no_connection(db):
    shop = shop_of_platform(platform=OrderSource.SHOPIFY)
    with pytest.raises(ValidationError, match="address first"):
        ShopConnection(shop=shop, webhook_secret="shpss_x").full_clean()


def test_a_delivery_kept_before_shops_is_refused_while_the_platform_has_several_shops(three_shops):
    """Kept before shops were (no shop on it): with two Shopify shops and no address in the settings,
    whose it is cannot be told, so it is refused in words, never put in either shop."""
    event = ShopEvent.objects.create(
        platform="shopify", shop=None, delivery_id="before-shops", topic="orders/create",
        body={**SHOPIFY, "name": "BK-11002", "id": 2},
    )  # fmt: skip
    applied = shop_event_apply(event_id=event.pk)
    assert (applied.outcome, applied.detail) == (ShopEventOutcome.REFUSED, f"shop {_WHICH_SHOP}")
    assert not Order.objects.filter(number="BK-11002").exists()


def test_a_shops_key_reads_its_own_returns_alone(three_shops):
    theirs = ReturnRecordFactory.create(order=Order.objects.get(number=NUMBER, shop=three_shops[US]))
    au = _key_of(three_shops[AU])
    assert au.get(f"/api/store/v1/returns/{theirs.rma_number}").status_code == 404
    assert au.get("/api/store/v1/returns").json()["results"] == []
    us = _key_of(three_shops[US])
    assert [ret["rma_number"] for ret in us.get("/api/store/v1/returns").json()["results"]] == [
        theirs.rma_number
    ]


def test_an_order_of_a_woocommerce_site_no_key_here_reaches_is_never_sent_to_the_site_the_key_is_for(
    platforms, settings, django_capture_on_commit_callbacks
):
    ours, _ = platforms
    settings.WOOCOMMERCE_URL, settings.WOOCOMMERCE_CONSUMER_KEY = ours.url, "ck_ours"
    settings.WOOCOMMERCE_CONSUMER_SECRET = "cs_ours"
    settings.BOOKLY_CHANGES_THROUGH_SHOP = ["woocommerce"]
    shop_of_platform(platform=OrderSource.WOOCOMMERCE, address=ours.url)
    other = shop_of_platform(platform=OrderSource.WOOCOMMERCE, address="https://other.example")
    order = OrderFactory.create(shop=other, source=OrderSource.WOOCOMMERCE, shop_order_id="727")
    with django_capture_on_commit_callbacks(execute=True):
        change = order_cancel(order=order)
    change.refresh_from_db()
    assert change.state == OrderChangeState.SHOP_FAILED and "reaches other.example" in change.shop_answer
    assert ours.asked == []


def test_an_order_that_names_no_currency_is_in_its_shops(db):
    """A store API shop in euros: its backend's order without a currency is in euros, not the store's
    dollars; one whose shop_currency is that same currency is refused by its field."""
    shop = shop_of_platform(platform=OrderSource.API)
    shop.currency = "eur"
    shop.full_clean()
    shop.save()
    key = _key_of(shop)
    body = {name: value for name, value in ORDER_EXAMPLE.items() if name != "currency"}

    made = key.put("/api/store/v1/orders/BK-20001", body, content_type="application/json")
    refused = key.put(
        "/api/store/v1/orders/BK-20002", {**body, "shop_currency": "EUR", "shop_total": "10.00"},
        content_type="application/json",
    )  # fmt: skip

    assert (made.status_code, made.json()["currency"]) == (201, "EUR")
    assert Order.objects.get(number="BK-20001").currency == "EUR"
    assert refused.status_code == 400 and "shop_currency" in refused.content.decode()


def test_a_connection_writes_back_only_with_a_key_and_sends_it_only_over_https(db):
    shop = shop_of_platform(platform=OrderSource.SHOPIFY, address=US)
    with pytest.raises(ValidationError, match="add the key"):
        ShopConnection(shop=shop, webhook_secret="shpss_x", write_back=True).full_clean()
    with pytest.raises(ValidationError, match="https"):
        ShopConnection(shop=shop, access_token="shpat_x", api_url="http://proxy.example/admin").full_clean()
    ShopConnection(shop=shop, access_token="shpat_x", api_url="https://proxy.example/admin").full_clean()
