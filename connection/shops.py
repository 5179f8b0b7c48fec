"""Which shop a platform's delivery is for, and which shop the configured platform credentials reach.

A delivery names its shop: Shopify's `X-Shopify-Shop-Domain` ("books.myshopify.com"), WooCommerce's
`X-WC-Webhook-Source` (the site's address, "https://books.example/"). Orders are kept per shop, so two
shops' #1001 are two orders. The Admin API token and the REST API key (SHOPIFY_*, WOOCOMMERCE_*) are one
shop's each: only that shop's orders are read by `shop_sync` and written back to."""

from django.conf import settings

from connection.models import ShopPlatform
from orders.models import OrderSource, Shop
from orders.shops import shop_address, shop_of_platform

# The platform's orders' source, which is also its shops' platform.
_SOURCE = {ShopPlatform.SHOPIFY: OrderSource.SHOPIFY, ShopPlatform.WOOCOMMERCE: OrderSource.WOOCOMMERCE}


def _addresses(setting: str, platform: str) -> list[str]:
    """A setting's shop addresses (separated by spaces), as shops keep them."""
    return [address for part in setting.split() if (address := shop_address(platform=platform, named=part))]


def delivery_allowed(*, platform: str, named: str) -> bool:
    """Whether a signed delivery naming this shop is taken: any shop's while the platform's list is empty
    (SHOPIFY_SHOP_DOMAIN, WOOCOMMERCE_WEBHOOK_SOURCES), else only a listed one's. A signature proves the
    secret, not the shop: an app in several shops, or sites typing one secret, sign each other's."""
    setting = (
        settings.SHOPIFY_SHOP_DOMAIN
        if platform == ShopPlatform.SHOPIFY
        else settings.WOOCOMMERCE_WEBHOOK_SOURCES
    )
    allowed = _addresses(setting, platform)
    return not allowed or shop_address(platform=platform, named=named) in allowed


def shop_of_delivery(*, platform: str, named: str) -> Shop:
    """The shop a verified delivery is for, made when it is the first of a new shop."""
    return shop_of_platform(platform=_SOURCE[platform], address=shop_address(platform=platform, named=named))


def connected_shop(*, platform: str) -> Shop | None:
    """The shop the platform's configured credentials reach (SHOPIFY_SHOP_DOMAIN, WOOCOMMERCE_URL), made
    when it has no order yet. Without its address (Shopify through SHOPIFY_ADMIN_API_URL alone): the
    platform's one shop; None when it has several, which the credentials cannot be told apart for."""
    named = settings.SHOPIFY_SHOP_DOMAIN if platform == ShopPlatform.SHOPIFY else settings.WOOCOMMERCE_URL
    if addresses := _addresses(named, platform):  # the first: several Shopify domains may be listed
        return shop_of_platform(platform=_SOURCE[platform], address=addresses[0])
    shops = list(Shop.objects.filter(platform=_SOURCE[platform])[:2])
    if len(shops) > 1:
        return None
    return shops[0] if shops else shop_of_platform(platform=_SOURCE[platform])
