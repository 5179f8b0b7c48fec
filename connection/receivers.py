"""Shop platforms' webhooks in, one address each: a delivery's signature checked as its platform signs it
(the platform's room says how), kept once by its delivery id, answered at once; its work goes to the
task queue (connection.shop_events). Shopify waits five seconds, retries, and drops a subscription that
keeps failing; WooCommerce disables a webhook after repeated failures."""

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt

from connection.models import ShopPlatform
from connection.shop_events import shop_event_receive
from connection.shopify.signature import shopify_signature_valid
from connection.woocommerce.signature import woocommerce_signature_valid

_MAX_ID = 100
# What WooCommerce posts, unsigned, when a webhook is saved: the address must answer 2xx to be kept.
_WOOCOMMERCE_PING_RE = re.compile(rb"webhook_id=\d{1,20}")


@dataclass(frozen=True)
class _Platform:
    platform: str
    secret_setting: str
    signature_header: str
    delivery_header: str
    topic_header: str
    signature_valid: Callable[..., bool]


_SHOPIFY = _Platform(
    ShopPlatform.SHOPIFY,
    "SHOPIFY_WEBHOOK_SECRET",
    "X-Shopify-Hmac-Sha256",
    "X-Shopify-Webhook-Id",
    "X-Shopify-Topic",
    shopify_signature_valid,
)
_WOOCOMMERCE = _Platform(
    ShopPlatform.WOOCOMMERCE,
    "WOOCOMMERCE_WEBHOOK_SECRET",
    "X-WC-Webhook-Signature",
    "X-WC-Webhook-Delivery-ID",
    "X-WC-Webhook-Topic",
    woocommerce_signature_valid,
)


def _error(code: str, message: str, status: int) -> JsonResponse:
    return JsonResponse({"error": {"code": code, "message": message}}, status=status)


def _receive(request, platform: _Platform) -> JsonResponse:
    secret = getattr(settings, platform.secret_setting)
    label = ShopPlatform(platform.platform).label
    if not secret:
        return _error(
            "not_connected", f"This store is not connected to {label} ({platform.secret_setting}).", 404
        )
    body = request.body
    if not platform.signature_valid(
        body=body, signature=request.headers.get(platform.signature_header, ""), secret=secret
    ):
        return _error(
            "invalid_signature", f"The {platform.signature_header} signature does not match the body.", 401
        )
    delivery_id = request.headers.get(platform.delivery_header, "")
    topic = request.headers.get(platform.topic_header, "")
    if not delivery_id or len(delivery_id) > _MAX_ID or not topic or len(topic) > _MAX_ID:
        return _error(
            "invalid_headers", f"{platform.delivery_header} and {platform.topic_header} are required.", 400
        )
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return _error("invalid_json", "The body is not JSON.", 400)
    if not isinstance(payload, dict):
        return _error("invalid_json", "The body is not a JSON object.", 400)
    event, new = shop_event_receive(
        platform=platform.platform, delivery_id=delivery_id, topic=topic, body=payload
    )
    return JsonResponse({"received": event.delivery_id, "duplicate": not new}, status=200)


def _not_a_post() -> JsonResponse:
    answer = _error("method_not_allowed", "Webhooks are sent with POST.", 405)
    answer["Allow"] = "POST"
    return answer


@csrf_exempt
def shopify_webhook(request):
    if request.method != "POST":
        return _not_a_post()
    return _receive(request, _SHOPIFY)


@csrf_exempt
def woocommerce_webhook(request):
    if request.method != "POST":
        return _not_a_post()
    if _WOOCOMMERCE_PING_RE.fullmatch(request.body) and _WOOCOMMERCE.signature_header not in request.headers:
        return JsonResponse({"ping": True}, status=200)  # nothing kept, nothing done
    return _receive(request, _WOOCOMMERCE)
