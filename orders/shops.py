"""The shops whose orders Bookly answers for (Shop). Nothing to set up: the demo, file imports and tests
use the store's own shop; a platform's shop is made when its first signed delivery names it, and the
store API's when its first key is made."""

from django.db import IntegrityError, transaction

from orders.models import OWN_SHOP_NAME, OrderSource, Shop, own_shop

# A name a new shop takes when its address says nothing (a platform that sent none).
_UNNAMED = {
    OrderSource.API: "Store API shop",
    OrderSource.SHOPIFY: "Shopify shop",
    OrderSource.WOOCOMMERCE: "WooCommerce shop",
}


def shop_own() -> Shop:
    """The shop orders belong to when nothing says which: the demo's, a file import's."""
    return Shop.objects.get(pk=own_shop())


def shop_of_platform(*, platform: OrderSource, address: str = "") -> Shop:
    """The platform's shop at `address` (as the connector writes it). The platform's shop whose address
    is not known yet (made before shops had one, or by a delivery that named none; one at most, by
    shop_address_unique) takes it; else a new shop, named after its address, is made."""
    platform = OrderSource(platform)
    if platform == OrderSource.FIXTURE:
        return shop_own()
    for _ in range(2):  # a second delivery making the same shop at the same moment: take that one
        try:
            with transaction.atomic():
                shop = Shop.objects.select_for_update().filter(platform=platform, address=address).first()
                if shop is not None:
                    return shop
                unknown = Shop.objects.select_for_update().filter(platform=platform, address="").first()
                if address and unknown is not None:
                    unknown.address = address
                    unknown.save(update_fields=["address"])
                    return unknown
                return Shop.objects.create(
                    platform=platform, address=address, name=_free_name(platform, address)
                )
        except IntegrityError:
            continue
    return Shop.objects.get(platform=platform, address=address)


def _free_name(platform: OrderSource, address: str) -> str:
    """The shop's address ("books.myshopify.com", "https://books.example") or its platform's word, made
    unique with a count ("Shopify shop 2")."""
    base = (address.removeprefix("https://").removeprefix("http://") or _UNNAMED[platform])[:90]
    name, count = base, 1
    while name == OWN_SHOP_NAME or Shop.objects.filter(name=name).exists():
        count += 1
        name = f"{base} {count}"
    return name
