"""Which shop a platform's delivery is for, and which shop the configured platform credentials reach.

A delivery names its shop: Shopify's `X-Shopify-Shop-Domain` ("books.myshopify.com"), WooCommerce's
`X-WC-Webhook-Source` (the site's address, "https://books.example/"). Orders are kept per shop, so two
shops' #1001 are two orders. The settings' credentials (SHOPIFY_*, WOOCOMMERCE_*) are one shop's each
(their webhook secret may sign for several shops of one app); a shop with its own app or key keeps them
in its connection (ShopConnection), and only its own open its deliveries, its list and its writes."""

from dataclasses import dataclass, field

from django.conf import settings

from connection.models import ShopConnection, ShopPlatform
from connection.platform_http import PlatformError, platform_address
from orders.models import OrderSource, Shop
from orders.shops import shop_address, shop_of_platform

_OWN = "the shop's connection (Shops > {shop} > Connection)"

# The platform's orders' source, which is also its shops' platform (by the platform's value: a ShopPlatform
# is its own value).
_SOURCE: dict[str, OrderSource] = {
    ShopPlatform.SHOPIFY: OrderSource.SHOPIFY,
    ShopPlatform.WOOCOMMERCE: OrderSource.WOOCOMMERCE,
}


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


class CredentialsUnreadable(PlatformError):
    """A shop's stored credentials that no key here opens: SECRET_KEY changed and the former one is not in
    SECRET_KEY_FALLBACKS."""

    def __init__(self, shop: Shop, fields: list[str]):
        super().__init__(
            f"{shop}'s stored {', '.join(fields)} cannot be read with this DJANGO_SECRET_KEY: put the key "
            "they were saved with in DJANGO_SECRET_KEY_FALLBACKS, or set them again on the shop's page",
            status=None,
        )


def shop_connection(*, shop: Shop | None, needs: tuple[str, ...]) -> ShopConnection | None:
    """The shop's own credentials, when it has them; CredentialsUnreadable when those it `needs` cannot
    be read (another unreadable one stops nothing it is not needed for)."""
    if shop is None or shop.pk is None:
        return None
    own = ShopConnection.objects.filter(shop=shop).select_related("shop").first()
    if own is not None and (unreadable := [name for name in own.unreadable() if name in needs]):
        raise CredentialsUnreadable(shop, unreadable)
    return own


def shop_known(*, platform: str, named: str) -> Shop | None:
    """The shop a delivery names, if Bookly has it already (none is made)."""
    address = shop_address(platform=platform, named=named)
    return Shop.objects.filter(platform=_SOURCE[platform], address=address).first() if address else None


def delivery_secret(*, platform: str, shop: Shop | None) -> tuple[str, bool]:
    """The secret a delivery for this shop (None: one not known yet) is signed with, and whether it is
    the shop's own. A shop with its own secret takes deliveries signed with it alone: another app's
    secret (the settings') signs nothing for it."""
    own = shop_connection(shop=shop, needs=("webhook_secret",))
    if own is not None and own.webhook_secret:
        return own.webhook_secret, True
    setting = (
        settings.SHOPIFY_WEBHOOK_SECRET
        if platform == ShopPlatform.SHOPIFY
        else settings.WOOCOMMERCE_WEBHOOK_SECRET
    )
    return setting, False


@dataclass(frozen=True)
class ShopKey:
    """What reaches one shop's API: its address (Shopify's Admin API base, WooCommerce's site) and key."""

    address: str
    # Never in a repr (a log line, a traceback's locals).
    token: str = field(default="", repr=False)  # Shopify's Admin API access token
    consumer_key: str = field(default="", repr=False)  # WooCommerce's REST API key
    consumer_secret: str = field(default="", repr=False)


def shop_key(*, shop: Shop) -> ShopKey:
    """The key Bookly reads and writes the shop's orders with: its connection's, else the settings' when
    they are for it (the shop they name, or the platform's only shop). PlatformError (status 400) when
    none reaches it: another shop's key would read or change another shop's order of the same id."""
    own = shop_connection(shop=shop, needs=("access_token", "consumer_key", "consumer_secret"))
    if shop.platform == OrderSource.SHOPIFY:
        if own is not None and own.access_token:
            base = own.api_url or f"https://{shop.address}/admin/api/{settings.SHOPIFY_API_VERSION}"
            where = _OWN.format(shop=shop)
            return ShopKey(
                platform_address(base, f"{where}: the API address"),
                token=own.access_token,
            )
        if settings.SHOPIFY_ADMIN_ACCESS_TOKEN and _settings_reach(ShopPlatform.SHOPIFY, shop):
            domain = next(iter(settings.SHOPIFY_SHOP_DOMAIN.split()), "")  # the first listed: the token's
            base = (
                settings.SHOPIFY_ADMIN_API_URL or f"https://{domain}/admin/api/{settings.SHOPIFY_API_VERSION}"
            )
            return ShopKey(
                platform_address(base, "SHOPIFY_ADMIN_API_URL"),
                token=settings.SHOPIFY_ADMIN_ACCESS_TOKEN,
            )
    elif shop.platform == OrderSource.WOOCOMMERCE:
        if own is not None and own.consumer_key and own.consumer_secret:
            where = _OWN.format(shop=shop)
            return ShopKey(
                platform_address(own.api_url or shop.address, f"{where}: the API address"),
                consumer_key=own.consumer_key,
                consumer_secret=own.consumer_secret,
            )
        configured = settings.WOOCOMMERCE_CONSUMER_KEY and settings.WOOCOMMERCE_CONSUMER_SECRET
        if configured and settings.WOOCOMMERCE_URL and _settings_reach(ShopPlatform.WOOCOMMERCE, shop):
            return ShopKey(
                platform_address(settings.WOOCOMMERCE_URL, "WOOCOMMERCE_URL"),
                consumer_key=settings.WOOCOMMERCE_CONSUMER_KEY,
                consumer_secret=settings.WOOCOMMERCE_CONSUMER_SECRET,
            )
    raise PlatformError(
        f"no {shop.get_platform_display()} key here reaches {shop}: set one on its page (Shops > {shop} > "
        "Connection); the one in the settings is another shop's",
        status=400,
    )


def _settings_reach(platform: str, shop: Shop) -> bool:
    """Whether the settings' key is for this shop (connected_shop's rule, making no shop)."""
    named = settings.SHOPIFY_SHOP_DOMAIN if platform == ShopPlatform.SHOPIFY else settings.WOOCOMMERCE_URL
    alone = list(Shop.objects.filter(platform=_SOURCE[platform]).values_list("pk", flat=True)[:2]) == [
        shop.pk
    ]
    if addresses := _addresses(named, platform):
        # The named shop, or the platform's only one whose address is not known yet (which it would take).
        return shop.address == addresses[0] or (not shop.address and alone)
    return alone


def settings_key_set(*, platform: str) -> bool:
    """Whether the settings hold a key for the platform (SHOPIFY_ADMIN_ACCESS_TOKEN with the shop's
    domain or API address; WOOCOMMERCE_URL with its key and secret)."""
    if platform == ShopPlatform.SHOPIFY:
        return bool(
            settings.SHOPIFY_ADMIN_ACCESS_TOKEN
            and (settings.SHOPIFY_SHOP_DOMAIN or settings.SHOPIFY_ADMIN_API_URL)
        )
    return bool(
        settings.WOOCOMMERCE_URL
        and settings.WOOCOMMERCE_CONSUMER_KEY
        and settings.WOOCOMMERCE_CONSUMER_SECRET
    )


def shops_with_key(*, platform: str | None = None) -> list[Shop]:
    """The shops a key here reads (shop_sync's), of one platform or both: those with their own, and the
    one the settings' key is for (made when it has no order yet)."""
    platforms = [platform] if platform else list(ShopPlatform.values)
    own = ShopConnection.objects.filter(shop__platform__in=platforms).select_related("shop")
    found = {connection.shop for connection in own if connection.has_api_key}
    for each in platforms:
        if settings_key_set(platform=each) and (shop := connected_shop(platform=each)) is not None:
            found.add(shop)
    return sorted(found, key=lambda shop: shop.name)
