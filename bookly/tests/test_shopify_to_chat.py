"""The whole way from a shop platform to a customer: Shopify's webhook, signed as Shopify signs it, to the
order, to the chat's answer (the project wires the connection and the chat, so the test lives here)."""

import base64
import copy
import hashlib
import hmac
import json
from pathlib import Path

import pytest

from support.testing.chat_client import ChatClient

SECRET = "shpss_0123456789abcdef"
ROOT = Path(__file__).resolve().parents[2]
PLATFORMS = ROOT / "connection" / "tests" / "platforms"


def _delivered(client, capture, order: dict, *, topic: str, delivery: str) -> int:
    """Shopify's delivery of `order`, signed as Shopify signs it, its work run on commit: the status."""
    body = json.dumps(order).encode()
    signature = base64.b64encode(hmac.new(SECRET.encode(), body, hashlib.sha256).digest()).decode()
    headers = {"X-Shopify-Topic": topic, "X-Shopify-Webhook-Id": delivery, "X-Shopify-Hmac-Sha256": signature}
    with capture(execute=True):
        return client.post(
            "/connect/shopify/webhooks", body, content_type="application/json", headers=headers
        ).status_code


@pytest.mark.django_db
def test_an_order_in_brazil_from_shopify_is_answered_in_the_chat(
    client, settings, django_capture_on_commit_callbacks
):
    settings.SHOPIFY_WEBHOOK_SECRET = SECRET
    order = copy.deepcopy(json.loads((PLATFORMS / "shopify_order.json").read_text())["order"])
    order.update(
        name="BK-11050",
        currency="BRL",
        fulfillment_status="fulfilled",
        updated_at="2026-04-10T11:00:00-03:00",
    )
    order["shipping_address"].update(address1="Av. Paulista 1000", city="São Paulo", province_code="SP",
                                     zip="01310-100", country_code="BR", name="Maria Souza")  # fmt: skip
    order["fulfillments"][0].update(
        status="success", shipment_status="in_transit", tracking_company="Correios"
    )
    capture = django_capture_on_commit_callbacks
    assert _delivered(client, capture, order, topic="orders/updated", delivery="e2e-1") == 200

    reply = ChatClient().send("where is order BK-11050? bob.norman@hostmail.com").json()["reply"]
    assert "BK-11050" in reply and "shipped" in reply and "1Z2345" in reply


@pytest.mark.django_db
def test_an_order_shopify_ships_in_parts_is_answered_parcel_by_parcel(
    client, settings, django_capture_on_commit_callbacks
):
    """Shopify's documented order, fulfilment and refund: its first line delivered, its second on its way
    in another parcel, its third not yet sent, $209.00 refunded. The customer reads each parcel, what has
    not left and the refund."""
    settings.SHOPIFY_WEBHOOK_SECRET = SECRET
    order = copy.deepcopy(json.loads((PLATFORMS / "shopify_order.json").read_text())["order"])
    fulfilment = json.loads((PLATFORMS / "shopify_fulfillment.json").read_text())["fulfillment"]
    second_line = {**fulfilment["line_items"][0], "id": order["line_items"][1]["id"], "title": "Dune"}
    order["line_items"][0]["title"] = "The Hobbit"
    order["line_items"][1]["title"] = "Dune"
    order["line_items"][2]["title"] = "Emma"
    refund = json.loads((PLATFORMS / "shopify_refund.json").read_text())["refund"]
    # Its refund of The Hobbit's line (documented with Emma's too: Emma refunded would not be to come).
    refund["refund_line_items"] = [
        line for line in refund["refund_line_items"] if line["line_item_id"] == 466157049
    ]
    order.update(
        name="BK-11051",
        refunds=[refund],
        fulfillment_status="partial",
        updated_at="2026-04-10T11:00:00-04:00",
        fulfillments=[
            {**fulfilment, "status": "success", "shipment_status": "delivered",
             "created_at": "2026-04-02T10:00:00-04:00", "updated_at": "2026-04-04T15:00:00-04:00"},
            {**fulfilment, "id": 255858047, "status": "success", "shipment_status": "in_transit",
             "tracking_number": "1Z6789", "tracking_company": "UPS", "line_items": [second_line],
             "created_at": "2026-04-09T10:00:00-04:00", "updated_at": "2026-04-09T10:00:00-04:00"},
        ],
    )  # fmt: skip
    capture = django_capture_on_commit_callbacks
    assert _delivered(client, capture, order, topic="orders/updated", delivery="e2e-2") == 200

    reply = ChatClient().send("where is order BK-11051? bob.norman@hostmail.com").json()["reply"]
    assert (
        "Parcel 1 (The Hobbit) was shipped on 2026-04-02 with null-company, tracking number 1Z2345" in reply
    )
    assert "delivered on 2026-04-04" in reply
    assert "Parcel 2 (Dune) was shipped on 2026-04-09 with UPS, tracking number 1Z6789." in reply
    assert "Still to come in another parcel: Emma." in reply
    assert "The store refunded $209.00 on 2016-06-20, for The Hobbit." in reply


# In a fresh process with the platform's own number shape (ORDER_NUMBERS is read once per process): the
# platform's documented order, as its webhook delivers it, applied; then a customer asks for it by number
# as they write it, beside a street number and a ZIP code.
_PLATFORM_CONVERSATION = """
import json, os
from importlib import import_module
from django.conf import settings
from connection.shop_events import shop_event_apply, shop_event_receive
from connection.shops import shop_of_delivery
from support.assistant.turn import conversation_take_turn
platform, path, topic, number, email = json.loads(os.environ["PLATFORM_CASE"])
body = json.loads(open(path).read())
body = body.get("order", body)
if platform == "shopify":
    body.update(fulfillment_status="fulfilled")
    body["fulfillments"][0].update(status="success")
shop = shop_of_delivery(platform=platform, named="")
event, _ = shop_event_receive(platform=platform, shop=shop, delivery_id="d-1", topic=topic, body=body)
print("applied:", shop_event_apply(event_id=event.pk).outcome)
session = import_module(settings.SESSION_ENGINE).SessionStore()
session.create()
for text in [f"where is order {number}? I live at 969 Market St, San Francisco 94103", email]:
    print("reply:", conversation_take_turn(session=session, text=text).reply.replace(chr(10), " "))
"""


@pytest.mark.parametrize(
    ("platform", "fixture", "topic", "pattern", "example", "asked", "shown", "email", "status"),
    [
        ("shopify", "shopify_order.json", "orders/updated", "#[0-9]{4,}", "#1001", "1001", "#1001",
         "bob.norman@hostmail.com", "shipped"),
        ("woocommerce", "woocommerce_order_br.json", "order.updated", "[0-9]{3,}", "727", "723", "723",
         "joao.silva@example.com", "delivered"),  # "completed" in 2017: delivered its days after
    ],
)  # fmt: skip
@pytest.mark.multiprocess
def test_a_platform_s_own_order_number_is_read_as_its_customers_write_it(
    manage_py, platform, fixture, topic, pattern, example, asked, shown, email, status
):
    env = {
        "BOOKLY_TODAY": "2026-04-14",
        "BOOKLY_ORDER_NUMBER_PATTERN": pattern,
        "BOOKLY_ORDER_NUMBER_EXAMPLE": example,
    }
    assert manage_py("migrate", "-v0", env=env).returncode == 0
    env["PLATFORM_CASE"] = json.dumps([platform, str(PLATFORMS / fixture), topic, asked, email])
    result = manage_py("shell", "-c", _PLATFORM_CONVERSATION, env=env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "applied: created" in lines
    first, second = [line for line in lines if line.startswith("reply:")]
    assert "email" in first.lower()
    assert shown in second and status in second.lower()


@pytest.mark.django_db
def test_shopifys_test_notification_order_its_voided_payment_and_its_discount_are_told(
    client, settings, django_capture_on_commit_callbacks
):
    """Shopify's "send test notification" order (issue 49, finding 3): cancelled, its payment voided, a
    discount. "Was I charged?" is told the payment was voided; "why was I charged less?" the discount,
    each in the order's own amounts."""
    settings.SHOPIFY_WEBHOOK_SECRET = SECRET
    order = copy.deepcopy(json.loads((PLATFORMS / "shopify_order.json").read_text())["order"])
    order.update(
        name="BK-11060",
        financial_status="voided",
        cancelled_at="2026-04-10T12:00:00-05:00",
        cancel_reason="customer",
        total_discounts="10.00",
        updated_at="2026-04-10T12:00:00-05:00",
    )
    capture = django_capture_on_commit_callbacks
    assert _delivered(client, capture, order, topic="orders/cancelled", delivery="e2e-void") == 200

    chat = ChatClient()
    charged = chat.send("was I charged for order BK-11060? bob.norman@hostmail.com").json()["reply"]
    less = (
        ChatClient().send("why was I charged less on order BK-11060? bob.norman@hostmail.com").json()["reply"]
    )

    assert "voided" in charged and "not charged" in charged
    assert "$10.00" in less and "discount" in less
