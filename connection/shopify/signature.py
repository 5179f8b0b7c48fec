"""Shopify's webhook signature: X-Shopify-Hmac-Sha256, the base64 HMAC-SHA256 of the raw body keyed with
the app's client secret."""

from connection.signatures import base64_hmac_sha256_valid


def shopify_signature_valid(*, body: bytes, signature: str, secret: str) -> bool:
    return base64_hmac_sha256_valid(body=body, signature=signature, secret=secret)
