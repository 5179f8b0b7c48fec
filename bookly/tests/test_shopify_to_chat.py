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
PLATFORMS = Path(__file__).resolve().parents[2] / "connection" / "tests" / "platforms"


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
    body = json.dumps(order).encode()
    signature = base64.b64encode(hmac.new(SECRET.encode(), body, hashlib.sha256).digest()).decode()
    headers = {
        "X-Shopify-Topic": "orders/updated",
        "X-Shopify-Webhook-Id": "e2e-1",
        "X-Shopify-Hmac-Sha256": signature,
    }

    with django_capture_on_commit_callbacks(execute=True):
        assert (
            client.post(
                "/connect/shopify/webhooks", body, content_type="application/json", headers=headers
            ).status_code
            == 200
        )

    reply = ChatClient().send("where is order BK-11050? bob.norman@hostmail.com").json()["reply"]
    assert "BK-11050" in reply and "shipped" in reply and "1Z2345" in reply
