"""The shops whose orders Bookly answers for (Shop). Nothing to set up: the demo, file imports and store
API keys use our own shop while it is the only one (shop_named); a platform's shop is made when its
first signed delivery names it; a second store API shop is added in admin."""

import re
from collections.abc import Collection
from urllib.parse import urlsplit

from django.db import IntegrityError, transaction

from orders.models import OWN_SHOP_NAME, OrderSource, Shop, column_length, own_shop

_MAX_ADDRESS = column_length(Shop, "address")
# An email address or a link in a customer's words.
_ADDRESSES_RE = re.compile(r"\S+@\S+|\bhttps?://\S+", re.IGNORECASE)
# A host name: labels of letters, digits and hyphens, at least two ("books.myshopify.com").
_HOST_RE = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+")

# A name a new shop takes when its address says nothing (a platform that sent none).
_UNNAMED = {
    OrderSource.API: "Store API shop",
    OrderSource.SHOPIFY: "Shopify shop",
    OrderSource.WOOCOMMERCE: "WooCommerce shop",
}


def shop_own() -> Shop:
    """The shop orders belong to when nothing says which: the demo's, a file import's."""
    return Shop.objects.get(pk=own_shop())


def shop_address(*, platform: str, named: str) -> str:
    """A shop's address as it is kept: Shopify's domain in lower case; WooCommerce's site address with
    its scheme and host in lower case, its port and path, and no trailing slash (a site may live under a
    path). Blank when `named` is none (a delivery that named no shop, or too long to be one)."""
    named = named.strip()
    if not named or len(named) > _MAX_ADDRESS:
        return ""
    if platform == OrderSource.SHOPIFY:
        # The shop's domain alone ("https://Books.myshopify.com/admin" typed in admin is that domain).
        host = (urlsplit(named if "//" in named else f"//{named}").hostname or "").rstrip(".")
        return host if _HOST_RE.fullmatch(host) else ""
    try:
        url = urlsplit(named)
        port = f":{url.port}" if url.port else ""
    except ValueError:  # a port that is no number
        return ""
    if url.scheme.lower() not in ("http", "https") or not url.hostname:
        return ""
    return f"{url.scheme.lower()}://{url.hostname}{port}{url.path}".rstrip("/")


def shop_named(*, name: str | None) -> Shop:
    """The shop an import or a new store API key is for (`--shop`): the one of that name; when none is
    named, our own while it is the only shop. ShopNotSaid, in words naming the shops, otherwise."""
    shops = list(Shop.objects.all()[:2])
    names = ", ".join(Shop.objects.values_list("name", flat=True))
    if name:
        try:
            return Shop.objects.get(name=name)
        except Shop.DoesNotExist:
            raise ShopNotSaid(f"No shop is named {name!r}. The shops: {names}.") from None
    if len(shops) > 1:
        raise ShopNotSaid(f"There are several shops: say which with --shop ({names}).")
    return shops[0] if shops else shop_own()


class ShopNotSaid(Exception):
    """No shop, or no one shop, is named (the message says which there are)."""


def shop_of_platform(*, platform: OrderSource, address: str = "") -> Shop:
    """The platform's shop at `address` (shop_address's). The platform's shop whose address is not known
    yet (made before shops had one, or by a delivery that named none; one at most, by
    shop_address_unique) takes it while it is the platform's only shop (a store that connected one shop
    before shops were); else a new shop, named after its address, is made."""
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
                others = Shop.objects.filter(platform=platform).exclude(address="")
                # While it is the platform's only shop.
                if unknown is not None and not others.exists() and address:
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


def shop_writes_back_set(*, shop: Shop, writes_back: bool | None) -> None:
    """Whether changes of the shop's orders are made in the shop first, as its own connection says
    (None: it has none, and the settings say so of its platform)."""
    with transaction.atomic():
        Shop.objects.filter(pk=shop.pk).update(writes_back=writes_back)
    shop.writes_back = writes_back


def shop_named_in(*, text: str, shops: Collection[Shop]) -> Shop | None:
    """The one of `shops` the customer's words name (its name, or its address's host, as whole words:
    "the Books US one"); None when they name none or more than one."""
    # Not from an email address or a link the customer gave ("books.fan@example.com" names no shop).
    words = f" {_plain(_ADDRESSES_RE.sub(' ', text))} "
    named: dict[Shop, str] = {}
    for shop in shops:
        address = urlsplit(shop.address if "//" in shop.address else f"//{shop.address}").hostname
        for said in filter(None, (shop.name, address)):
            if f" {_plain(said)} " in words and len(_plain(said)) > len(named.get(shop, "")):
                named[shop] = _plain(said)
    # "Books US" names Books US, not also Books: the longest name said, when the others are said only
    # within it ("Books, not Books Outlet" names both: none).
    longest = max(named.items(), key=lambda item: len(item[1]), default=None)
    if longest is None or list(named.values()).count(longest[1]) > 1:
        return None  # none, or two shops' names read alike
    rest = words.replace(f" {longest[1]} ", " ")
    if any(f" {said} " in rest for shop, said in named.items() if shop != longest[0]):
        return None
    return longest[0]


def _plain(text: str) -> str:
    """Lower case, with every run of what is no letter or digit one space."""
    return " ".join(re.findall(r"[^\W_]+", text.casefold()))
