"""WooCommerce's webhook signature: X-WC-Webhook-Signature, the base64 HMAC-SHA256 of the raw body keyed
with the webhook's secret."""

from connection.signatures import base64_hmac_sha256_valid


def woocommerce_signature_valid(*, body: bytes, signature: str, secret: str) -> bool:
    return base64_hmac_sha256_valid(body=body, signature=signature, secret=secret)
