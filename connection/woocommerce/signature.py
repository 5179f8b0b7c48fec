"""WooCommerce's webhook signature: X-WC-Webhook-Signature, the base64 HMAC-SHA256 of the raw body keyed
with the webhook's secret, compared in constant time."""

import base64
import hashlib
import hmac


def woocommerce_signature_valid(*, body: bytes, signature: str, secret: str) -> bool:
    expected = base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest()).decode()
    return hmac.compare_digest(expected, signature)
