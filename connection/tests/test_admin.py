import re

import pytest
from cryptography.fernet import Fernet
from django.contrib.auth.models import Permission
from standardwebhooks.webhooks import Webhook

from connection.models import (
    DeliveryStatus,
    ShopConnection,
    ShopEvent,
    ShopEventOutcome,
    ShopWrite,
    StoreApiKey,
    WebhookDelivery,
    WebhookEndpoint,
)
from orders.models import OrderSource, Shop
from orders.services import order_cancel, order_change_shop_failed
from orders.shops import shop_of_platform, shop_own
from orders.tests.factories import OrderFactory

pytestmark = pytest.mark.django_db


def test_a_superuser_makes_a_key_shown_once_and_it_opens_the_store_api(superuser_client, client):
    api_shop = shop_of_platform(platform=OrderSource.API)
    response = superuser_client.post(
        "/admin/connection/storeapikey/add/", {"name": "Our shop", "shop": api_shop.pk}, follow=True
    )
    shown = re.search(r"The API key for Our shop is: (\S+)\. ", response.content.decode())
    assert shown, "the key is shown in the message after saving"
    key = shown.group(1)
    listed = superuser_client.get("/admin/connection/storeapikey/").content.decode()
    assert key not in listed and StoreApiKey.objects.get().prefix in listed
    assert client.get("/api/store/v1/orders", headers={"authorization": f"Bearer {key}"}).status_code == 200


def test_support_staff_never_see_store_api_keys(staff_client):
    StoreApiKey.objects.create_key(name="Our shop", shop=shop_own())
    assert staff_client.get("/admin/connection/storeapikey/").status_code == 403
    assert "Store API keys" not in staff_client.get("/admin/").content.decode()


def test_a_superuser_adds_an_endpoint_its_secret_shown_once_and_verifying_its_events(
    superuser_client, receiver, django_capture_on_commit_callbacks
):
    response = superuser_client.post(
        "/admin/connection/webhookendpoint/add/",
        {
            "url": receiver.url,
            "event_types": ["order.cancelled"],
            "description": "Warehouse",
            "is_active": "on",
        },
        follow=True,
    )
    shown = re.search(r"shown only now: <code>(whsec_[A-Za-z0-9+/=]+)</code>", response.content.decode())
    assert shown, "the secret is shown in the message after saving"
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.event_types == ["order.cancelled"]
    assert (
        shown.group(1)
        not in superuser_client.get(
            f"/admin/connection/webhookendpoint/{endpoint.pk}/change/"
        ).content.decode()
    )
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order=OrderFactory.create())
    (request,) = receiver.received
    assert Webhook(shown.group(1)).verify(request.body, request.headers)["type"] == "order.cancelled"


def test_an_endpoint_reaching_into_bookly_s_network_is_refused_in_the_form(superuser_client, settings):
    settings.BOOKLY_WEBHOOKS_ALLOW_PRIVATE_URLS = False
    page = superuser_client.post(
        "/admin/connection/webhookendpoint/add/", {"url": "http://169.254.169.254/latest", "is_active": "on"}
    )
    assert page.status_code == 200 and "loopback, private or link-local" in page.content.decode()
    assert not WebhookEndpoint.objects.exists()


def test_the_delivery_log_shows_the_receiver_s_answer_and_sends_a_failed_one_again(
    superuser_client, endpoint, receiver, django_capture_on_commit_callbacks
):
    receiver.answers = [500]
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order=OrderFactory.create())
    delivery = WebhookDelivery.objects.get()
    WebhookDelivery.objects.filter(pk=delivery.pk).update(status=DeliveryStatus.FAILED)
    listed = superuser_client.get("/admin/connection/webhookdelivery/?status__exact=failed").content.decode()
    assert "order.cancelled" in listed and ">500<" in listed
    detail = superuser_client.get(f"/admin/connection/webhookdelivery/{delivery.pk}/change/").content.decode()
    assert "receiver says no" in detail and "&quot;order.cancelled&quot;" in detail
    endpoints = superuser_client.get("/admin/connection/webhookendpoint/").content.decode()
    assert f"endpoint__id__exact={endpoint.pk}&amp;status__exact=failed" in endpoints

    response = superuser_client.post(
        "/admin/connection/webhookdelivery/",
        {"action": "send_again", "_selected_action": [delivery.pk]},
        follow=True,
    )
    assert "1 delivery sent again." in response.content.decode()
    delivery.refresh_from_db()
    assert (delivery.status, len(receiver.received)) == (DeliveryStatus.DELIVERED, 2)


def test_support_staff_never_see_webhooks(staff_client, endpoint):
    assert staff_client.get("/admin/connection/webhookendpoint/").status_code == 403
    assert staff_client.get("/admin/connection/webhookdelivery/").status_code == 403


def test_a_secret_shown_once_never_travels_in_a_cookie(superuser_client, receiver):
    response = superuser_client.post(
        "/admin/connection/webhookendpoint/add/", {"url": receiver.url, "is_active": "on"}
    )
    assert response.status_code == 302 and WebhookEndpoint.objects.exists()
    assert "messages" not in response.cookies  # signed and compressed there, but readable by anyone


def test_an_operator_reads_what_shopify_sent_and_why_the_intake_refused_it(superuser_client):
    event = ShopEvent.objects.create(
        platform="shopify",
        delivery_id="d-1",
        topic="orders/create",
        body={"name": "#1001"},
        outcome=ShopEventOutcome.REFUSED,
        order_number="#1001",
        detail="number must look like BK-10042",
    )
    listed = superuser_client.get("/admin/connection/shopevent/?outcome__exact=refused").content.decode()
    assert "#1001" in listed and "number must look like BK-10042" in listed
    detail = superuser_client.get(f"/admin/connection/shopevent/{event.pk}/change/")
    assert detail.status_code == 200 and "orders/create" in detail.content.decode()
    assert superuser_client.post(f"/admin/connection/shopevent/{event.pk}/delete/").status_code == 403


def test_support_staff_never_see_what_shop_platforms_send(staff_client):
    assert staff_client.get("/admin/connection/shopevent/").status_code == 403


@pytest.fixture
def shop_not_made(settings):
    """BK-61001's cancellation refused by Shopify, BK-61002's waiting for it, BK-61003 Bookly's own."""
    settings.BOOKLY_CHANGES_THROUGH_SHOP = ["shopify"]
    refused = OrderFactory.create(number="BK-61001", source="shopify", shop_order_id="450789469")
    OrderFactory.create(number="BK-61003")
    order_cancel(order=OrderFactory.create(number="BK-61002", source="shopify", shop_order_id="450789470"))
    change = order_cancel(order=refused)
    order_change_shop_failed(change_id=change.pk, answer="422: Cannot cancel a fulfilled order")
    return ShopWrite.objects.create(change=change, platform="shopify", attempts=1, outcome="refused",
                                    answer="422: Cannot cancel a fulfilled order")  # fmt: skip


def test_staff_follow_up_a_change_the_shop_did_not_make_from_the_order(staff_client, shop_not_made):
    """The customer was told only that the store was asked: staff find the order, and what the shop
    said, to follow it up."""
    listed = staff_client.get("/admin/orders/order/?shop_change=shop_failed").content.decode()
    assert "BK-61001" in listed and "BK-61002" not in listed and "BK-61003" not in listed
    listed = staff_client.get("/admin/orders/order/?shop_change=awaiting_shop").content.decode()
    assert "BK-61002" in listed and "BK-61001" not in listed
    order = shop_not_made.change.order
    page = staff_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert "The shop did not make it: 422: Cannot cancel a fulfilled order" in page
    assert "450789469" in page  # the shop's own id, to find it there
    assert staff_client.get("/admin/connection/shopwrite/").status_code == 403


def test_an_operator_reads_each_write_to_the_shop(superuser_client, shop_not_made):
    listed = superuser_client.get("/admin/connection/shopwrite/?outcome__exact=refused").content.decode()
    assert "BK-61001" in listed and "Cannot cancel a fulfilled order" in listed
    assert superuser_client.get(f"/admin/connection/shopwrite/{shop_not_made.pk}/change/").status_code == 200
    assert superuser_client.post(f"/admin/connection/shopwrite/{shop_not_made.pk}/delete/").status_code == 403


def _shop_form(**fields) -> dict:
    """The shop's page as posted, with its connection (one form)."""
    base = {
        "name": "Books US",
        "number_pattern": "BK-[0-9]{4,6}",
        "number_example": "BK-10042",
        "currency": "USD",
    }
    management = {
        "connection-TOTAL_FORMS": "1",
        "connection-MAX_NUM_FORMS": "1",
        "connection-MIN_NUM_FORMS": "0",
    }
    return {**base, **management, **fields}


def test_a_superuser_connects_a_second_shop_with_its_own_keys_never_shown_again(superuser_client):
    added = superuser_client.post(
        "/admin/orders/shop/add/",
        _shop_form(
            platform="shopify", address=" Books-US.myshopify.com ", **{"connection-INITIAL_FORMS": "0"},
            **{"connection-0-webhook_secret": "shpss_us_app", "connection-0-access_token": "shpat_us_token",
               "connection-0-write_back": "on"},
        ),
    )  # fmt: skip
    assert added.status_code == 302
    shop = Shop.objects.get(address="books-us.myshopify.com")
    own = ShopConnection.objects.get(shop=shop)
    assert (own.webhook_secret, own.access_token, shop.writes_back) == (
        "shpss_us_app",
        "shpat_us_token",
        True,
    )

    page = superuser_client.get(f"/admin/orders/shop/{shop.pk}/change/").content.decode()
    assert "shpss_us_app" not in page and "shpat_us_token" not in page
    assert page.count("Set: blank keeps it") == 2

    kept = superuser_client.post(
        f"/admin/orders/shop/{shop.pk}/change/",
        _shop_form(
            **{"connection-INITIAL_FORMS": "1", "connection-0-id": own.pk, "connection-0-shop": shop.pk,
               "connection-0-access_token": "shpat_new", "connection-0-write_back": "on"},
        ),
    )  # fmt: skip
    assert kept.status_code == 302
    own.refresh_from_db()
    assert (own.webhook_secret, own.access_token) == ("shpss_us_app", "shpat_new")

    assert "consumer_key" not in page  # a Shopify shop's page asks for Shopify's keys alone
    refused = superuser_client.post(
        "/admin/orders/shop/add/",
        _shop_form(
            name="Books Site", platform="woocommerce", address="https://books.example",
            **{"connection-INITIAL_FORMS": "0", "connection-0-access_token": "shpat_wrong"},
        ),
    )  # fmt: skip
    assert "A WooCommerce shop has no such key." in refused.content.decode()
    assert not Shop.objects.filter(name="Books Site").exists()


def test_staff_never_see_a_shops_connection_even_given_its_view_permission(staff_client, staff_user):
    shop = shop_of_platform(platform=OrderSource.SHOPIFY, address="books-us.myshopify.com")
    ShopConnection.objects.create(shop=shop, webhook_secret="shpss_us_app")
    staff_user.user_permissions.add(Permission.objects.get(codename="view_shopconnection"))
    page = staff_client.get(f"/admin/orders/shop/{shop.pk}/change/").content.decode()
    assert "books-us.myshopify.com" in page and "webhook_secret" not in page and "shpss_us_app" not in page


def test_credentials_no_key_here_opens_are_typed_again_whole_or_not_saved(superuser_client):
    """As read when the key they were saved with is gone: Fernet tokens no key here opens."""
    shop = shop_of_platform(platform=OrderSource.SHOPIFY, address="books-us.myshopify.com")
    own = ShopConnection.objects.create(shop=shop, webhook_secret="shpss_us", access_token="shpat_us")
    foreign = Fernet(Fernet.generate_key())
    ShopConnection.objects.filter(pk=own.pk).update(
        webhook_secret=foreign.encrypt(b"shpss_us").decode(),
        access_token=foreign.encrypt(b"shpat_us").decode(),
    )

    def posted(**typed):
        fields = {f"connection-0-{name}": value for name, value in typed.items()}
        return superuser_client.post(
            f"/admin/orders/shop/{shop.pk}/change/",
            _shop_form(**{"connection-INITIAL_FORMS": "1", "connection-0-id": own.pk,
                          "connection-0-shop": shop.pk, **fields}),
        )  # fmt: skip

    assert "cannot be read with this DJANGO_SECRET_KEY" in posted(access_token="shpat_new").content.decode()
    assert posted(access_token="shpat_new", webhook_secret="shpss_new").status_code == 302
    own.refresh_from_db()
    assert (own.webhook_secret, own.access_token) == ("shpss_new", "shpat_new")


def test_a_keys_shop_is_never_moved_once_it_is_made(superuser_client):
    """Moved, a key would reach another shop's orders unseen by the backend that holds it."""
    key, _ = StoreApiKey.objects.create_key(name="Backend", shop=shop_own())
    assert isinstance(key, StoreApiKey)  # the library's manager says only "a key"
    other = shop_of_platform(platform=OrderSource.API)
    answer = superuser_client.post(
        f"/admin/connection/storeapikey/{key.pk}/change/", {"name": "Backend", "shop": other.pk}
    )
    key.refresh_from_db()
    assert answer.status_code == 302 and key.shop == shop_own()
