"""The signature Shopify and WooCommerce both put on a webhook: the base64 HMAC-SHA256 of the raw body,
keyed with a shared secret. Compared in constant time, as bytes (a header of any characters is an answer,
never an error)."""

import base64
import hashlib
import hmac


def base64_hmac_sha256_valid(*, body: bytes, signature: str, secret: str) -> bool:
    expected = base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest())
    return hmac.compare_digest(expected, signature.encode("utf-8", "surrogateescape"))
