"""Shopify's webhook signature: X-Shopify-Hmac-Sha256, the base64 HMAC-SHA256 of the raw body keyed with
the app's client secret, compared in constant time."""

import base64
import hashlib
import hmac


def shopify_signature_valid(*, body: bytes, signature: str, secret: str) -> bool:
    expected = base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest()).decode()
    return hmac.compare_digest(expected, signature)
