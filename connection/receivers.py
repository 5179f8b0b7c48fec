"""Shop platforms' webhooks in, one address each: a delivery's signature checked as its platform signs it
(the platform's room says how), kept once by its delivery id, answered at once; its work goes to the
task queue (connection.shop_events). Shopify waits five seconds, retries, and drops a subscription that
keeps failing; WooCommerce disables a webhook after repeated failures."""

import hashlib
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from connection.models import ShopEvent, ShopPlatform
from connection.payloads import platform_json_loads
from connection.shop_events import shop_event_receive
from connection.shopify.signature import shopify_signature_valid
from connection.shops import (
    CredentialsUnreadable,
    delivery_allowed,
    delivery_secret,
    shop_known,
    shop_of_delivery,
)
from connection.woocommerce.signature import woocommerce_signature_valid

logger = logging.getLogger(__name__)

_MAX_ID = 100
# What WooCommerce posts, unsigned, when a webhook is saved: the address must answer 2xx to be kept.
_WOOCOMMERCE_PING_RE = re.compile(rb"webhook_id=\d{1,20}")


def _as_sent(delivery_id: str, body: bytes) -> str:
    """The delivery's id as the platform means it: Shopify's X-Shopify-Webhook-Id names one delivery
    (and its retries)."""
    return delivery_id


def _with_its_body(delivery_id: str, body: bytes) -> str:
    """WooCommerce's X-WC-Webhook-Delivery-ID is a hash of the webhook's id and the current second, so
    two deliveries of one webhook within a second (a bulk status change) share it: with the body, one
    delivery sent twice is still one, and two orders are two."""
    return hashlib.sha256(delivery_id.encode() + b"\n" + body).hexdigest()


@dataclass(frozen=True)
class _Platform:
    platform: str
    secret_setting: str
    signature_header: str
    delivery_header: str
    topic_header: str
    signature_valid: Callable[..., bool]
    delivery_key: Callable[[str, bytes], str]


_SHOPIFY = _Platform(
    ShopPlatform.SHOPIFY,
    "SHOPIFY_WEBHOOK_SECRET",
    "X-Shopify-Hmac-Sha256",
    "X-Shopify-Webhook-Id",
    "X-Shopify-Topic",
    shopify_signature_valid,
    _as_sent,
)
_WOOCOMMERCE = _Platform(
    ShopPlatform.WOOCOMMERCE,
    "WOOCOMMERCE_WEBHOOK_SECRET",
    "X-WC-Webhook-Signature",
    "X-WC-Webhook-Delivery-ID",
    "X-WC-Webhook-Topic",
    woocommerce_signature_valid,
    _with_its_body,
)


def _error(code: str, message: str, status: int) -> JsonResponse:
    return JsonResponse({"error": {"code": code, "message": message}}, status=status)


def _receive(request: HttpRequest, platform: _Platform, *, shop_named: str) -> JsonResponse:
    known = shop_known(platform=platform.platform, named=shop_named)
    try:
        secret, own = delivery_secret(platform=platform.platform, shop=known)
    except CredentialsUnreadable as error:
        logger.error("%s delivery not taken: %s", platform.platform, error)
        # 503: the platform sends it again, and it is taken once the operator set the key back.
        return _error("credentials_unreadable", "This shop's webhook secret cannot be read here now.", 503)
    label = ShopPlatform(platform.platform).label
    if not secret:
        return _error(
            "not_connected", f"This store is not connected to {label} ({platform.secret_setting}).", 404
        )
    if not own and not delivery_allowed(platform=platform.platform, named=shop_named):
        # An app installed in several shops signs every shop's deliveries with one secret.
        return _error("another_shop", "This store takes only its own shops' deliveries.", 403)
    try:
        body = request.body
    except RequestDataTooBig:
        return _error("body_too_large", "The body is too large for one order.", 413)
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
        payload = platform_json_loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):  # RecursionError: nested past the parser
        return _error("invalid_json", "The body is not JSON.", 400)
    if not isinstance(payload, dict):
        return _error("invalid_json", "The body is not a JSON object.", 400)
    key = platform.delivery_key(delivery_id, body)
    if ShopEvent.objects.filter(platform=platform.platform, delivery_id=key).exists():
        return JsonResponse({"received": delivery_id, "duplicate": True}, status=200)  # no shop made
    shop = shop_of_delivery(platform=platform.platform, named=shop_named)
    _, new = shop_event_receive(
        platform=platform.platform, shop=shop, delivery_id=key, topic=topic, body=payload
    )
    return JsonResponse({"received": delivery_id, "duplicate": not new}, status=200)


def _not_a_post() -> JsonResponse:
    answer = _error("method_not_allowed", "Webhooks are sent with POST.", 405)
    answer["Allow"] = "POST"
    return answer


@csrf_exempt
def shopify_webhook(request: HttpRequest) -> JsonResponse:
    if request.method != "POST":
        return _not_a_post()
    return _receive(request, _SHOPIFY, shop_named=request.headers.get("X-Shopify-Shop-Domain", ""))


@csrf_exempt
def woocommerce_webhook(request: HttpRequest) -> JsonResponse:
    if request.method != "POST":
        return _not_a_post()
    if _WOOCOMMERCE_PING_RE.fullmatch(request.body) and _WOOCOMMERCE.signature_header not in request.headers:
        return JsonResponse({"ping": True}, status=200)  # nothing kept, nothing done
    return _receive(request, _WOOCOMMERCE, shop_named=request.headers.get("X-WC-Webhook-Source", ""))
