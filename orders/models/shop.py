"""The shops whose orders Bookly answers for, and where orders come from (OrderSource)."""

import re
from typing import Any

from babel.numbers import get_currency_precision, list_currencies
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone
from django_countries import countries

from orders.numbers import MAX_LENGTH as ORDER_NUMBER_MAX_LENGTH
from orders.numbers import (
    OrderNumbering,
    numbering_of,
    order_numbering_forget,
    order_numbering_reads,
    shop_shape_problem,
)

CURRENCY_CODE_LENGTH = 3  # ISO 4217: "USD", "BRL", "INR"


def store_currency() -> str:
    """The currency of an order whose shop does not say (settings.BOOKLY_STORE_CURRENCY)."""
    return settings.BOOKLY_STORE_CURRENCY


class OrderSource(models.TextChoices):
    """Where an order came from: the demo fixture (or a test), a file import, the shop through the store
    API, or a shop platform's own webhooks. The store API and each platform keep the orders they created
    (orders.intake refuses another's version); an imported or demo order is taken over by the next."""

    FIXTURE = "fixture", "Fixture"
    IMPORT = "import", "File import"
    API = "api", "Store API"
    SHOPIFY = "shopify", "Shopify"
    WOOCOMMERCE = "woocommerce", "WooCommerce"


def store_number_pattern() -> str:
    """A new shop's order number shape: the store's (BOOKLY_ORDER_NUMBER_PATTERN)."""
    return settings.BOOKLY_ORDER_NUMBER_PATTERN


def store_number_example() -> str:
    return settings.BOOKLY_ORDER_NUMBER_EXAMPLE


# A shop's list of countries (Shop.address_change_countries) as kept: ISO 3166 codes a space apart, or *.
_COUNTRY_CODES_RE = re.compile(r"(?:\*|[A-Z]{2}(?: [A-Z]{2})*)?")


def _country_codes(written: str) -> list[str]:
    """The codes of a list as staff type it ("gb, ie"), upper case, in order, each once."""
    return list(dict.fromkeys(code for code in re.split(r"[\s,;]+", written.upper()) if code))


# The name of the shop orders belong to when nothing says which: the demo's, a file import's, a test's.
OWN_SHOP_NAME = "Our shop"
# What a shop's orders may come from (a file import goes into a shop of any of these).
SHOP_PLATFORMS = [OrderSource.FIXTURE, OrderSource.API, OrderSource.SHOPIFY, OrderSource.WOOCOMMERCE]


class Shop(models.Model):
    """One shop whose orders Bookly answers for. A business may connect several (a Shopify and a
    WooCommerce shop, or two Shopify shops): each order is one shop's, its number unique within that shop
    only, and a shop's store API keys and webhooks reach its own orders alone. A platform's shop is known
    by its address there (orders.shops makes it when its first signed delivery comes)."""

    name = models.CharField(max_length=100, unique=True)
    # Where its orders come from: a platform's webhooks, the store API, or Bookly itself (the demo, file
    # imports: OrderSource.FIXTURE).
    platform = models.CharField(
        max_length=20,
        choices=[(value, label) for value, label in OrderSource.choices if value in SHOP_PLATFORMS],
    )
    # The shape of its order numbers (orders.numbers: a regular expression a number matches whole) and
    # one number of it; a new shop's are BOOKLY_ORDER_NUMBER_PATTERN's and _EXAMPLE's. Each shop keeps its
    # own: the demo's BK-10042, a Shopify shop's #1001, a WooCommerce shop's 727.
    number_pattern = models.CharField(
        "order number shape", max_length=200, default=store_number_pattern,
        help_text="A regular expression an order number matches whole, e.g. #[0-9]{4,} or [0-9]+.",
    )  # fmt: skip
    number_example = models.CharField(
        "an order number of that shape", max_length=ORDER_NUMBER_MAX_LENGTH, default=store_number_example
    )
    # Its address on the platform, as its connector writes it: Shopify's
    # "example.myshopify.com", WooCommerce's site address ("https://books.example"); blank otherwise.
    address = models.CharField(max_length=200, blank=True)
    # What its orders' amounts are in when the shop does not say (a store API's, an import's); a
    # platform's orders always say. A new shop's is BOOKLY_STORE_CURRENCY.
    currency = models.CharField(
        max_length=CURRENCY_CODE_LENGTH, default=store_currency,
        help_text="What its orders' amounts are in when they do not say (store API, imports): an ISO 4217 "
        "code like USD, EUR or BRL.",
    )  # fmt: skip
    # Where this shop ships an unshipped order re-addressed abroad (besides the order's own country): its
    # own list, as its shipping zones differ from another shop's; blank, BOOKLY_ADDRESS_CHANGE_COUNTRIES.
    address_change_countries = models.CharField(
        "other countries an order may be re-addressed to", max_length=200, blank=True,
        help_text="ISO 3166 codes, e.g. GB IE, or * for any country. Blank: the store's setting "
        "(BOOKLY_ADDRESS_CHANGE_COUNTRIES). Any other country needs your team.",
    )  # fmt: skip
    # Whether a change asked in Bookly of this shop's orders is made in the shop first. Unset: as the
    # settings say for its platform (settings.BOOKLY_CHANGES_THROUGH_SHOP); set by the shop's own
    # connection, when it has one (a key of its own, which may write or only read).
    writes_back = models.BooleanField(null=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(platform__in=SHOP_PLATFORMS), name="shop_platform_valid"
            ),
            models.UniqueConstraint(fields=["platform", "address"], name="shop_address_unique"),
        ]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        super().save(*args, **kwargs)
        order_numbering_forget()  # the store's shapes are read again at their next use

    def clean(self) -> None:
        if problem := shop_shape_problem(self.number_pattern, self.number_example):
            raise ValidationError({"number_pattern": problem})
        codes = _country_codes(self.address_change_countries)
        self.address_change_countries = "*" if "*" in codes else " ".join(codes)
        unknown = [code for code in codes if code != "*" and code not in countries]
        if unknown or not _COUNTRY_CODES_RE.fullmatch(self.address_change_countries):
            hint = " (the United Kingdom's is GB)" if "UK" in unknown else ""
            said = f"ISO 3166 country codes separated by spaces (GB IE), or *{hint}."
            raise ValidationError({"address_change_countries": said})
        self.currency = self.currency.strip().upper()
        if self.currency not in list_currencies() or get_currency_precision(self.currency) > 2:
            raise ValidationError(
                {"currency": "An ISO 4217 code of a currency with cents or none: USD, EUR, BRL."}
            )
        if self.pk is None:
            return
        shape = self.numbering.exact
        numbers = self.orders.values_list("number", flat=True).iterator(chunk_size=5000)
        if unfound := next((number for number in numbers if not shape.fullmatch(number)), None):
            raise ValidationError(
                {"number_pattern": f"The shop's order {unfound} does not have this shape: customers would no "
                 "longer find it. Keep the shape it has in BOOKLY_ORDER_NUMBER_FORMER_PATTERNS."}
            )  # fmt: skip

    def countries_readdressed_to(self) -> frozenset[str]:
        """The countries besides an order's own that its orders may be re-addressed to ("*": any): the
        shop's own list, else the store's (settings.BOOKLY_ADDRESS_CHANGE_COUNTRIES)."""
        own = frozenset(_country_codes(self.address_change_countries))
        return own or settings.BOOKLY_ADDRESS_CHANGE_COUNTRIES

    @property
    def numbering(self) -> OrderNumbering:
        """This shop's own shape (and those the store's numbers had before)."""
        former = tuple(settings.BOOKLY_ORDER_NUMBER_FORMER_PATTERNS)
        return numbering_of(self.number_pattern, self.number_example, former, ())


def _shop_shapes() -> tuple[tuple[str, str], ...]:
    return tuple(Shop.objects.order_by("pk").values_list("number_pattern", "number_example"))


order_numbering_reads(_shop_shapes)


def own_shop() -> int:
    """The primary key of the shop orders belong to when nothing says which (Order.shop's default)."""
    # Its key alone, read first: a migration that remakes the order table asks for this default while
    # the shop table may lack fields added since (our own shop was made by orders 0022).
    own = Shop.objects.filter(platform=OrderSource.FIXTURE, address="").values_list("pk", flat=True)
    if (pk := own.first()) is not None:
        return pk
    shop, _ = Shop.objects.get_or_create(
        platform=OrderSource.FIXTURE, address="", defaults={"name": OWN_SHOP_NAME}
    )
    return shop.pk
