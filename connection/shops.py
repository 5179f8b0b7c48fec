"""Which shop a platform's delivery is for, and which shop the configured platform credentials reach.

A delivery names its shop: Shopify's `X-Shopify-Shop-Domain` ("books.myshopify.com"), WooCommerce's
`X-WC-Webhook-Source` (the site's address, "https://books.example/"). Orders are kept per shop, so two
shops' #1001 are two orders. The Admin API token and the REST API key (SHOPIFY_*, WOOCOMMERCE_*) are one
shop's each: only that shop's orders are read by `shop_sync` and written back to."""

import httpx2 as httpx
from django.conf import settings

from connection.models import ShopPlatform
from orders.models import OrderSource, Shop
from orders.shops import shop_of_platform

# The platform's orders' source, which is also its shops' platform.
_SOURCE = {ShopPlatform.SHOPIFY: OrderSource.SHOPIFY, ShopPlatform.WOOCOMMERCE: OrderSource.WOOCOMMERCE}
_MAX_ADDRESS = Shop._meta.get_field("address").max_length


def shop_address(*, platform: str, named: str) -> str:
    """A shop's address as it is kept: Shopify's domain in lower case; WooCommerce's site address with
    its scheme and host in lower case and no trailing slash (a site may live under a path). Blank when
    `named` is none (a delivery that named no shop, or too long to be one)."""
    named = named.strip()
    if not named or len(named) > _MAX_ADDRESS:
        return ""
    if platform == ShopPlatform.SHOPIFY:
        return named.lower()
    try:
        url = httpx.URL(named)
    except httpx.InvalidURL:
        return ""
    if url.scheme not in ("http", "https") or not url.host:
        return ""
    port = f":{url.port}" if url.port else ""
    return f"{url.scheme}://{url.host}{port}{url.path}".rstrip("/")


def shop_of_delivery(*, platform: str, named: str) -> Shop:
    """The shop a verified delivery is for, made when it is the first of a new shop."""
    return shop_of_platform(platform=_SOURCE[platform], address=shop_address(platform=platform, named=named))


def connected_shop(*, platform: str) -> Shop | None:
    """The shop the platform's configured credentials reach (SHOPIFY_SHOP_DOMAIN, WOOCOMMERCE_URL), made
    when it has no order yet. Without its address (Shopify through SHOPIFY_ADMIN_API_URL alone): the
    platform's one shop; None when it has several, which the credentials cannot be told apart for."""
    named = settings.SHOPIFY_SHOP_DOMAIN if platform == ShopPlatform.SHOPIFY else settings.WOOCOMMERCE_URL
    if address := shop_address(platform=platform, named=named):
        return shop_of_platform(platform=_SOURCE[platform], address=address)
    shops = list(Shop.objects.filter(platform=_SOURCE[platform])[:2])
    if len(shops) > 1:
        return None
    return shops[0] if shops else shop_of_platform(platform=_SOURCE[platform])
