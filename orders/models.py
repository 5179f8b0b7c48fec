import re
import secrets
from decimal import Decimal

from babel.numbers import get_currency_precision, list_currencies
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator, RegexValidator
from django.db import models
from django.db.models.functions import Length
from django.db.models.lookups import Exact
from django.utils import timezone

from orders.numbers import MAX_LENGTH as ORDER_NUMBER_MAX_LENGTH
from orders.numbers import (
    OrderNumbering,
    OrderNumberValidator,
    numbering_of,
    order_numbering_forget,
    order_numbering_reads,
    shop_shape_problem,
)
from store.categories import ItemCategory

# The shapes of Bookly's own identifiers, defined here once (the store's order numbers are the store's:
# orders.numbers). *_PATTERN is the exact shape (model validators, tool arguments and schemas);
# *_MENTION_RE finds one in running text, written the way people and models write it.
RMA_NUMBER_PATTERN = r"^RMA-[A-Z0-9]{8}$"
RMA_NUMBER_MENTION_RE = re.compile(r"\bRMA-?[A-Z0-9]{4,}\b", re.IGNORECASE)
RMA_NUMBER_LENGTH = 12
# A customer's email address in running text (the order's customer_email is an EmailField).
EMAIL_MENTION_RE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# A date as the store writes it (ISO 8601, "2026-04-01"): the shape the shop sends and replies name.
ISO_DATE_PATTERN = r"\d{4}-\d{2}-\d{2}"
ISO_DATE_MENTION_RE = re.compile(rf"\b{ISO_DATE_PATTERN}\b")
# An amount of money in running text, in any currency: after a sign ("$24.99", "R$ 1,200", "€5", "₹899")
# or a code ("USD 24.99"), or before a code ("24.99 BRL"). amount_mention_number reads its number. Codes
# that are English words a shouted reply may put before a number ("ALL 3 books") are left out.
_CURRENCY_CODES = "|".join(sorted(set(list_currencies()) - {"ALL", "TOP"}))
_AMOUNT_NUMBER = r"\d[\d,]*(?:\.\d{1,2})?"
AMOUNT_MENTION_RE = re.compile(
    # A code is a word of its own: never part of an identifier ("RMA-GBP12345", "RMA-7EUR1234").
    rf"(?:[A-Z]{{0,2}}\$|[€£¥₹₩₽₺₪₫₱₦]|(?<![\w-])(?:{_CURRENCY_CODES})(?![A-Za-z]))\s?({_AMOUNT_NUMBER})"
    # The number starts where no digit, comma or point is before it: tried at every digit of "1,1,1…",
    # a run of 4,000 characters would take seconds.
    rf"|(?<![\w,.-])({_AMOUNT_NUMBER})\s?(?:{_CURRENCY_CODES})(?![\w-])"
)


def amount_mention_number(match: re.Match) -> str:
    """The number of an amount AMOUNT_MENTION_RE found ("1,200" of "R$ 1,200")."""
    return match.group(1) or match.group(2)


# A US ZIP code, five digits or ZIP+4 (an address in the United States has one).
ZIP_CODE_PATTERN = r"^[0-9]{5}(?:-[0-9]{4})?$"
# Any other country's postal code: letters, digits, spaces and hyphens ("01310-100", "SW1A 1AA", "110001").
POSTAL_CODE_PATTERN = r"^[A-Z0-9](?:[A-Z0-9 -]{0,14}[A-Z0-9])?$"
CURRENCY_CODE_LENGTH = 3  # ISO 4217: "USD", "BRL", "INR"


def store_currency() -> str:
    """The currency of an order whose shop does not say (settings.BOOKLY_STORE_CURRENCY)."""
    return settings.BOOKLY_STORE_CURRENCY


class OrderStatus(models.TextChoices):
    PROCESSING = "processing", "Processing"
    SHIPPED = "shipped", "Shipped"
    DELIVERED = "delivered", "Delivered"
    CANCELLED = "cancelled", "Cancelled"


class UsState(models.TextChoices):
    """The 50 states and the District of Columbia, by their USPS codes: an address in the United States
    names one."""

    AL = "AL", "Alabama"
    AK = "AK", "Alaska"
    AZ = "AZ", "Arizona"
    AR = "AR", "Arkansas"
    CA = "CA", "California"
    CO = "CO", "Colorado"
    CT = "CT", "Connecticut"
    DE = "DE", "Delaware"
    DC = "DC", "District of Columbia"
    FL = "FL", "Florida"
    GA = "GA", "Georgia"
    HI = "HI", "Hawaii"
    ID = "ID", "Idaho"
    IL = "IL", "Illinois"
    IN = "IN", "Indiana"
    IA = "IA", "Iowa"
    KS = "KS", "Kansas"
    KY = "KY", "Kentucky"
    LA = "LA", "Louisiana"
    ME = "ME", "Maine"
    MD = "MD", "Maryland"
    MA = "MA", "Massachusetts"
    MI = "MI", "Michigan"
    MN = "MN", "Minnesota"
    MS = "MS", "Mississippi"
    MO = "MO", "Missouri"
    MT = "MT", "Montana"
    NE = "NE", "Nebraska"
    NV = "NV", "Nevada"
    NH = "NH", "New Hampshire"
    NJ = "NJ", "New Jersey"
    NM = "NM", "New Mexico"
    NY = "NY", "New York"
    NC = "NC", "North Carolina"
    ND = "ND", "North Dakota"
    OH = "OH", "Ohio"
    OK = "OK", "Oklahoma"
    OR = "OR", "Oregon"
    PA = "PA", "Pennsylvania"
    RI = "RI", "Rhode Island"
    SC = "SC", "South Carolina"
    SD = "SD", "South Dakota"
    TN = "TN", "Tennessee"
    TX = "TX", "Texas"
    UT = "UT", "Utah"
    VT = "VT", "Vermont"
    VA = "VA", "Virginia"
    WA = "WA", "Washington"
    WV = "WV", "West Virginia"
    WI = "WI", "Wisconsin"
    WY = "WY", "Wyoming"


class OrderChangeKind(models.TextChoices):
    CANCELLED = "cancelled", "Cancelled"
    ADDRESS_CHANGED = "address_changed", "Shipping address changed"
    # Not a change but one refused: the shop sent a version that would have undone what Bookly did
    # (orders.intake's rule); `after` holds what it sent and why it was refused.
    UPDATE_REFUSED = "update_refused", "Shop's update refused"
    # Staff forgot the shop's time of the version last taken (one a clock ahead of the shop's once set),
    # so that its next update is taken whatever its `updated_at`.
    SHOP_TIME_CLEARED = "shop_time_cleared", "Shop's next update accepted"


class OrderChangeState(models.TextChoices):
    """Whether a change is made. An order a shop platform keeps (settings.BOOKLY_CHANGES_THROUGH_SHOP) is
    changed in the shop first: the change waits for the shop, and only once the shop made it is it
    Bookly's too (the order changed, the customer's email sent). One the shop did not make is kept for
    staff, with what the shop said."""

    MADE = "made", "Made"
    AWAITING_SHOP = "awaiting_shop", "Waiting for the shop"
    SHOP_FAILED = "shop_failed", "The shop did not make it"


class ReturnStatus(models.TextChoices):
    INITIATED = "initiated", "Initiated"
    LABEL_SENT = "label_sent", "Label sent"
    RECEIVED = "received", "Received"
    REFUNDED = "refunded", "Refunded"
    REJECTED = "rejected", "Rejected"
    CANCELLED = "cancelled", "Cancelled"


# A return in one of these statuses no longer holds its items: they may be
# returned again. A refunded return keeps holding them (they came back).
RETURN_STATUSES_RELEASING_ITEMS = frozenset({ReturnStatus.REJECTED, ReturnStatus.CANCELLED})


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

    def __str__(self):
        return self.name

    def save(self, *args, **kwargs):
        super().save(*args, **kwargs)
        order_numbering_forget()  # the store's shapes are read again at their next use

    def clean(self):
        if problem := shop_shape_problem(self.number_pattern, self.number_example):
            raise ValidationError({"number_pattern": problem})
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


class OrderManager(models.Manager):
    def get_by_natural_key(self, number):
        # Fixtures (the demo's) are our own shop's: another shop may have an order of the same number.
        return self.get(shop_id=own_shop(), number=number)


class Order(models.Model):
    # Unique within its shop (order_number_unique_in_shop): two shops may both have a #1001.
    shop = models.ForeignKey(Shop, on_delete=models.PROTECT, related_name="orders", default=own_shop)
    number = models.CharField(max_length=ORDER_NUMBER_MAX_LENGTH, validators=[OrderNumberValidator()])
    customer_name = models.CharField(max_length=200)
    # Blank for an order the shop sent without one (a sale at the till): no customer can verify it in
    # the chat, and no email is written.
    customer_email = models.EmailField(blank=True)
    status = models.CharField(max_length=20, choices=OrderStatus.choices)
    ordered_on = models.DateField()
    delivered_on = models.DateField(null=True, blank=True)
    tracking_number = models.CharField(max_length=64, blank=True)
    carrier = models.CharField(max_length=40, blank=True)
    total = models.DecimalField(max_digits=10, decimal_places=2)
    # What every amount of the order is in (ISO 4217): the shop's, or the store's when it does not say.
    currency = models.CharField(max_length=CURRENCY_CODE_LENGTH, default=store_currency)
    # When the customer paid in another currency than the shop's (Shopify's presentment money), the
    # amounts above are the customer's, as they paid and read them; these are the shop's, for staff.
    shop_currency = models.CharField(
        "shop's currency", max_length=CURRENCY_CODE_LENGTH, blank=True, help_text="Blank: the same."
    )
    shop_total = models.DecimalField("total in the shop's currency", max_digits=10, decimal_places=2,
                                     null=True, blank=True)  # fmt: skip
    # What the shop took off the order's price (its discounts and codes together), in `currency`: why
    # the customer paid less than the books' prices. Zero when none, or the shop did not say.
    discount_total = models.DecimalField("discounts", max_digits=10, decimal_places=2, default=0)
    # The payment was authorised and then released, never taken (Shopify's `voided`): the customer was
    # not charged.
    payment_voided = models.BooleanField("payment voided", default=False)
    # Where the order ships (orders.addresses checks each field, by the country's rules). Blank only for
    # an order placed before addresses were kept.
    ship_to = models.CharField("recipient", max_length=100, blank=True)
    ship_line1 = models.CharField("address line 1", max_length=100, blank=True)
    ship_line2 = models.CharField("address line 2", max_length=100, blank=True)
    ship_city = models.CharField("city", max_length=60, blank=True)
    # In the United States, the state's USPS code; elsewhere the region, province or state as written.
    ship_state = models.CharField("state or region", max_length=60, blank=True)
    ship_zip = models.CharField("ZIP or postal code", max_length=16, blank=True)
    # ISO 3166 code (orders.addresses names it); blank only with no address.
    ship_country = models.CharField("country", max_length=2, blank=True)
    source = models.CharField(max_length=20, choices=OrderSource.choices, default=OrderSource.FIXTURE)
    # The shop platform's own id of the order (Shopify's and WooCommerce's `id`, not the number customers
    # see): what a change is written back to the shop by. Blank for an order no platform sent.
    shop_order_id = models.CharField("shop's order id", max_length=40, blank=True)
    # When the shop or Bookly last changed the order (the store API lists orders changed since a time).
    updated_at = models.DateTimeField(default=timezone.now, db_index=True)
    # The shop's own time of the version Bookly last took (its optional "updated_at"): an older version
    # is refused as stale. Empty while the shop has not sent one.
    shop_updated_at = models.DateTimeField("shop's time of the version taken", null=True, blank=True)

    objects = OrderManager()

    class Meta:
        ordering = ["-ordered_on", "number"]
        indexes = [models.Index(fields=["customer_email"]), models.Index(fields=["number"])]
        constraints = [
            models.UniqueConstraint(fields=["shop", "number"], name="order_number_unique_in_shop"),
            models.CheckConstraint(
                condition=models.Q(status__in=OrderStatus.values), name="order_status_valid"
            ),
            models.CheckConstraint(condition=models.Q(total__gte=0), name="order_total_not_negative"),
            models.CheckConstraint(
                condition=models.Q(discount_total__gte=0), name="order_discount_not_negative"
            ),
            models.CheckConstraint(
                condition=models.Q(status=OrderStatus.DELIVERED, delivered_on__isnull=False)
                | (~models.Q(status=OrderStatus.DELIVERED) & models.Q(delivered_on__isnull=True)),
                name="order_delivered_on_iff_delivered",
                violation_error_message="A delivered date is set exactly when the order is delivered.",
            ),
            models.CheckConstraint(
                condition=models.Q(delivered_on__isnull=True)
                | models.Q(delivered_on__gte=models.F("ordered_on")),
                name="order_delivered_after_ordered",
                violation_error_message="An order cannot be delivered before it was placed.",
            ),
            models.CheckConstraint(
                condition=~models.Q(status=OrderStatus.PROCESSING) | models.Q(tracking_number=""),
                name="order_processing_has_no_tracking",
                violation_error_message="An order still processing has no tracking number.",
            ),
            models.CheckConstraint(
                condition=models.Q(ship_state="")
                | ~models.Q(ship_country="US")
                | models.Q(ship_state__in=UsState.values),
                name="order_ship_state_valid",
                violation_error_message="An address in the United States names its state by its USPS code.",
            ),
            models.CheckConstraint(
                condition=Exact(Length("currency"), CURRENCY_CODE_LENGTH), name="order_currency_code"
            ),
            models.CheckConstraint(
                condition=models.Q(source__in=OrderSource.values), name="order_source_valid"
            ),
            models.CheckConstraint(
                condition=(models.Q(shop_currency="") & models.Q(shop_total__isnull=True))
                | (
                    Exact(Length("shop_currency"), CURRENCY_CODE_LENGTH)
                    & models.Q(shop_total__gte=0)
                    & ~models.Q(shop_currency=models.F("currency"))
                ),
                name="order_shop_money_whole",
                violation_error_message="The shop's currency and total are given together, in another "
                "currency than the order's.",
            ),
        ]

    def __str__(self):
        return self.number

    def natural_key(self):
        return (self.number,)


class OrderItemManager(models.Manager):
    def get_by_natural_key(self, order_number, line_number):
        return self.get(order__shop_id=own_shop(), order__number=order_number, line_number=line_number)


class OrderItem(models.Model):
    """One line of an order, with its own copy of what was sold and for how much."""

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="items")
    line_number = models.PositiveSmallIntegerField()
    title = models.CharField(max_length=300)
    author = models.CharField(max_length=200, blank=True)
    unit_price = models.DecimalField(
        max_digits=8, decimal_places=2, validators=[MinValueValidator(Decimal("0"))]
    )
    quantity = models.PositiveSmallIntegerField(default=1, validators=[MinValueValidator(1)])
    # Blank when the shop does not say (a real shop's products have no such kinds): returnable then.
    category = models.CharField(max_length=30, choices=ItemCategory.choices, blank=True)
    # The shop's own references for the line, when it sends them: its SKU, the variant sold ("Hardcover",
    # "Signed edition"), and its platform's id of the line (Shopify's and WooCommerce's line item `id`).
    sku = models.CharField("SKU", max_length=100, blank=True)
    variant = models.CharField(max_length=200, blank=True)
    line_id = models.CharField("shop's line id", max_length=40, blank=True)
    # Whether the line is sent in a parcel: a download, an ebook, an event ticket or a service is not
    # (Shopify's `requires_shipping: false`; a WooCommerce order with nothing to ship), and is never told
    # as shipped or as part of a parcel.
    requires_shipping = models.BooleanField(default=True)

    objects = OrderItemManager()

    class Meta:
        ordering = ["order", "line_number"]
        constraints = [
            models.UniqueConstraint(fields=["order", "line_number"], name="order_item_line_unique"),
            models.CheckConstraint(condition=models.Q(quantity__gte=1), name="order_item_quantity_positive"),
            models.CheckConstraint(
                condition=models.Q(unit_price__gte=0), name="order_item_price_not_negative"
            ),
            models.CheckConstraint(
                condition=models.Q(category="") | models.Q(category__in=ItemCategory.values),
                name="order_item_category_valid",
            ),
        ]

    def __str__(self):
        return f"{self.title} ({self.order.number})"

    def natural_key(self):
        return (*self.order.natural_key(), self.line_number)

    natural_key.dependencies = ["orders.order"]

    @property
    def line_total(self) -> Decimal:
        return self.unit_price * self.quantity


class LineCount(models.Model):
    """How many of one line of the order a part of it (a parcel, a refund) is for."""

    item = models.ForeignKey(OrderItem, on_delete=models.CASCADE, related_name="+")
    quantity = models.PositiveSmallIntegerField(validators=[MinValueValidator(1)])

    class Meta:
        abstract = True
        constraints = [
            models.CheckConstraint(condition=models.Q(quantity__gte=1), name="%(class)s_quantity_positive")
        ]

    def __str__(self):
        return f"{self.quantity} x {self.item.title}"


class OrderPartManager(models.Manager):
    """A parcel or a refund by its order's number and its own (so that a fixture loads it again in
    place)."""

    def get_by_natural_key(self, order_number, number):
        return self.get(order__shop_id=own_shop(), order__number=order_number, number=number)


class PartLineManager(models.Manager):
    """A parcel's or a refund's line by theirs and the order's line number."""

    def get_by_natural_key(self, order_number, number, line_number):
        part = self.model.PART
        return self.get(
            **{f"{part}__order__shop_id": own_shop(), f"{part}__order__number": order_number},
            **{f"{part}__number": number},
            item__line_number=line_number,
        )


class OrderPart(models.Model):
    """A part of an order the shop sends whole with each version of it (a parcel, a refund): its number
    there (1, 2, … in the order the shop sent them); each declares its `order` (its own related name)."""

    number = models.PositiveSmallIntegerField()

    objects = OrderPartManager()

    class Meta:
        abstract = True
        ordering = ["order", "number"]

    def natural_key(self):
        return (self.order.number, self.number)

    natural_key.dependencies = ["orders.order"]


class Shipment(OrderPart):
    """One parcel the shop sent (a Shopify fulfilment): the lines it holds and how many of each, its
    carrier and tracking, when it left and when it arrived, as the shop says. An order the shop ships in
    parts has several; the order's own tracking number is the latest one's. Replaced whole with each
    version of the order the shop sends."""

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="shipments")
    carrier = models.CharField(max_length=40, blank=True)
    tracking_number = models.CharField(max_length=64, blank=True)
    tracking_url = models.URLField(max_length=500, blank=True)
    shipped_on = models.DateField(null=True, blank=True)
    delivered_on = models.DateField(null=True, blank=True)

    class Meta(OrderPart.Meta):
        constraints = [
            models.UniqueConstraint(fields=["order", "number"], name="shipment_number_unique"),
            models.CheckConstraint(
                condition=models.Q(delivered_on__isnull=True)
                | models.Q(shipped_on__isnull=True)
                | models.Q(delivered_on__gte=models.F("shipped_on")),
                name="shipment_delivered_after_shipped",
            ),
        ]

    def __str__(self):
        return f"{self.order.number} parcel {self.number}"


class ShipmentLine(LineCount):
    """How many of one line of the order a parcel holds."""

    shipment = models.ForeignKey(Shipment, on_delete=models.CASCADE, related_name="lines")

    PART = "shipment"
    objects = PartLineManager()

    class Meta(LineCount.Meta):
        ordering = ["shipment", "item__line_number"]
        constraints = [
            *LineCount.Meta.constraints,
            models.UniqueConstraint(fields=["shipment", "item"], name="shipment_line_unique"),
        ]

    def natural_key(self):
        return (*self.shipment.natural_key(), self.item.line_number)

    natural_key.dependencies = ["orders.shipment", "orders.orderitem"]


class Refund(OrderPart):
    """Money the shop gave back on the order, as the shop records it (Shopify's and WooCommerce's
    refunds): how much, in the order's currency, when, why, and for which lines when it says. Replaced
    whole with each version of the order the shop sends; a return's refund made here is the return's."""

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="refunds")
    amount = models.DecimalField(
        max_digits=10, decimal_places=2, validators=[MinValueValidator(Decimal("0"))]
    )
    refunded_on = models.DateField(null=True, blank=True)
    reason = models.CharField(max_length=300, blank=True)

    class Meta(OrderPart.Meta):
        constraints = [
            models.UniqueConstraint(fields=["order", "number"], name="refund_number_unique"),
            models.CheckConstraint(condition=models.Q(amount__gte=0), name="refund_amount_not_negative"),
        ]

    def __str__(self):
        return f"{self.order.number} refund {self.number}"


class RefundLine(LineCount):
    """How many of one line of the order a refund was for."""

    refund = models.ForeignKey(Refund, on_delete=models.CASCADE, related_name="lines")

    PART = "refund"
    objects = PartLineManager()

    class Meta(LineCount.Meta):
        ordering = ["refund", "item__line_number"]
        constraints = [
            *LineCount.Meta.constraints,
            models.UniqueConstraint(fields=["refund", "item"], name="refund_line_unique"),
        ]

    def natural_key(self):
        return (*self.refund.natural_key(), self.item.line_number)

    natural_key.dependencies = ["orders.refund", "orders.orderitem"]


class OrderChange(models.Model):
    """One change to an order after it was placed: what, before and after, by whom, when.

    `changed_by` is the member of staff who made it; empty when the customer asked for it, then
    `conversation_id` is the chat's conversation they asked in (an id only: the domain knows nothing of
    conversations; the store's events say it).
    """

    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="changes")
    kind = models.CharField(max_length=20, choices=OrderChangeKind.choices)
    # {"status": …} for a cancellation; the address fields (ship_to … ship_zip) for an address change;
    # for a refused update, the order as Bookly kept it ({"status", "shop_updated_at"}) and what the shop
    # sent ({"status", "updated_at", "source", "reason", "message"}); for the shop's time cleared,
    # {"shop_updated_at": …} before and after.
    before = models.JSONField()
    after = models.JSONField()
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    changed_at = models.DateTimeField(auto_now_add=True)
    conversation_id = models.PositiveBigIntegerField(null=True, blank=True)
    state = models.CharField(max_length=20, choices=OrderChangeState.choices, default=OrderChangeState.MADE)
    # What the shop answered when it did not make the change (for staff), else blank.
    shop_answer = models.TextField(blank=True)

    class Meta:
        ordering = ["order", "changed_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(kind__in=OrderChangeKind.values), name="order_change_kind_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(state__in=OrderChangeState.values), name="order_change_state_valid"
            ),
            # Two confirmations at once (two tabs, the assistant and staff) cancel once; one the shop
            # did not make leaves the order to be cancelled again.
            models.UniqueConstraint(
                fields=["order"],
                condition=models.Q(kind=OrderChangeKind.CANCELLED)
                & ~models.Q(state=OrderChangeState.SHOP_FAILED),
                name="order_cancelled_once",
                violation_error_message="This order is already cancelled.",
            ),
        ]

    def __str__(self):
        return f"{self.order.number}: {self.get_kind_display().lower()}"


# A return's reason when the customer gave none (the chat starts a return without asking twice).
RETURN_REASON_NOT_GIVEN = "Not given"


class ReturnRecord(models.Model):
    """A return merchandise authorisation (RMA), as promised to the customer."""

    rma_number = models.CharField(
        "RMA number",
        max_length=RMA_NUMBER_LENGTH,
        unique=True,
        validators=[RegexValidator(RMA_NUMBER_PATTERN, "Use RMA- followed by 8 letters or digits.")],
    )
    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="returns")
    items = models.ManyToManyField(OrderItem, through="ReturnLine", related_name="returns")
    reason = models.TextField()
    status = models.CharField(max_length=20, choices=ReturnStatus.choices, default=ReturnStatus.INITIATED)
    refund_method = models.CharField(max_length=200)
    refund_timeline_business_days = models.PositiveSmallIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    # Who started it: a member of staff (from the order's admin page), or nobody for the customer
    # through the assistant, in the chat's conversation `conversation_id` (an id only: the domain knows
    # nothing of conversations; the store's events say it).
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    conversation_id = models.PositiveBigIntegerField(null=True, blank=True)
    # Why staff granted a return the policy would refuse (outside the window, an item never
    # returnable); empty for a return within the policy.
    exception_note = models.TextField(blank=True)
    # When its status last moved (the store API lists returns changed since a time).
    updated_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "return"
        permissions = [("grant_return_exception", "Can start a return the policy would refuse")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=ReturnStatus.values), name="return_status_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(rma_number__startswith="RMA-")
                & Exact(Length("rma_number"), RMA_NUMBER_LENGTH),
                name="return_rma_number_shape",
            ),
        ]

    def __str__(self):
        return self.rma_number

    @property
    def holds_items(self) -> bool:
        return self.status not in RETURN_STATUSES_RELEASING_ITEMS


class ReturnStatusChange(models.Model):
    """One move of a return to its next status: from what, to what, by whom, when."""

    return_record = models.ForeignKey(ReturnRecord, on_delete=models.CASCADE, related_name="status_changes")
    from_status = models.CharField(max_length=20, choices=ReturnStatus.choices)
    to_status = models.CharField(max_length=20, choices=ReturnStatus.choices)
    # The member of staff (empty for changes made by the system).
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    changed_at = models.DateTimeField(auto_now_add=True)
    # Why, in staff's words to the customer: required to reject or cancel a return.
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["return_record", "changed_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(to_status__in=ReturnStatus.values), name="return_change_status_valid"
            ),
            models.CheckConstraint(
                condition=~models.Q(from_status=models.F("to_status")), name="return_change_moves"
            ),
        ]

    def __str__(self):
        return f"{self.get_from_status_display()} to {self.get_to_status_display()}"


class ReturnLine(models.Model):
    """An order item inside a return.

    `holds_item` mirrors the return's status so that the database itself can
    refuse a second return of an item while the first one stands.
    """

    return_record = models.ForeignKey(ReturnRecord, on_delete=models.CASCADE, related_name="lines")
    order_item = models.ForeignKey(OrderItem, on_delete=models.PROTECT, related_name="return_lines")
    holds_item = models.BooleanField(default=True)

    class Meta:
        ordering = ["return_record", "order_item__line_number"]
        constraints = [
            models.UniqueConstraint(
                fields=["return_record", "order_item"], name="return_line_item_once_per_return"
            ),
            models.UniqueConstraint(
                fields=["order_item"],
                condition=models.Q(holds_item=True),
                name="return_line_item_in_one_open_return",
                violation_error_message="This item is already part of an open return.",
            ),
        ]

    def __str__(self):
        return f"{self.return_record.rma_number}: {self.order_item.title}"


class DeliveryProblem(models.TextChoices):
    """What went wrong with a delivery, as a customer reports it."""

    NOT_ARRIVED = "not_arrived", "Never arrived"
    DAMAGED = "damaged", "Arrived damaged"
    WRONG_ITEM = "wrong_item", "Wrong item sent"
    MISSING_ITEM = "missing_item", "Item missing from the parcel"
    LATE = "late", "Arrived late"


# Problems with particular books (which ones, the case says); the others concern the whole parcel.
ITEM_PROBLEMS = frozenset({DeliveryProblem.DAMAGED, DeliveryProblem.WRONG_ITEM, DeliveryProblem.MISSING_ITEM})


class CaseStatus(models.TextChoices):
    OPEN = "open", "Open"
    RESOLVED = "resolved", "Resolved"


class DeliveryCase(models.Model):
    """A problem with an order's delivery that the customer reported, for staff to resolve: what went
    wrong, with which items, in the customer's words; then what staff did about it (emailed to them)."""

    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="delivery_cases")
    problem = models.CharField(max_length=20, choices=DeliveryProblem.choices)
    items = models.ManyToManyField(OrderItem, related_name="delivery_cases", blank=True)
    details = models.TextField("the customer's words", blank=True)
    status = models.CharField(max_length=10, choices=CaseStatus.choices, default=CaseStatus.OPEN)
    created_at = models.DateTimeField(auto_now_add=True)
    # The chat's conversation the customer reported it in (an id only, for the store's events).
    conversation_id = models.PositiveBigIntegerField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # What staff did, in words to the customer (the resolution email carries them).
    resolution = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(problem__in=DeliveryProblem.values), name="delivery_case_problem_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(status__in=CaseStatus.values), name="delivery_case_status_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(status=CaseStatus.OPEN)
                | (models.Q(resolved_at__isnull=False) & ~models.Q(resolution="")),
                name="delivery_case_resolved_says_how",
            ),
            # The same problem reported twice (two tabs, asked again) is one case for staff.
            models.UniqueConstraint(
                fields=["order", "problem"],
                condition=models.Q(status=CaseStatus.OPEN),
                name="delivery_case_one_open_per_problem",
                violation_error_message="This problem is already reported for this order.",
            ),
        ]

    def __str__(self):
        return f"Case {self.pk}: {self.get_problem_display().lower()}"


class CustomerEmail(models.Model):
    """An email to a customer about their order or return, kept until it is sent (an outbox).

    Written in the same transaction as the change it tells of, so that a change is never made without
    its email, nor an email sent for a change that rolled back; sent once that transaction commits,
    and again by `manage.py send_customer_emails` while the mail server refuses it.
    """

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="emails")
    to = models.EmailField()
    subject = models.CharField(max_length=200)
    body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    # What went wrong the last time (the exception's class): never the server's words, which may hold
    # credentials or addresses.
    last_error = models.CharField(max_length=100, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["sent_at", "attempts"], name="customer_email_pending")]

    def __str__(self):
        return f"{self.subject} (to {self.to})"


class EventType(models.TextChoices):
    """What the store's systems hear of Bookly's changes (webhooks; the names are a contract)."""

    RETURN_CREATED = "return.created", "Return created"
    RETURN_STATUS_CHANGED = "return.status_changed", "Return status changed"
    ORDER_CANCELLED = "order.cancelled", "Order cancelled"
    ORDER_ADDRESS_CHANGED = "order.address_changed", "Order address changed"
    DELIVERY_CASE_OPENED = "delivery_case.opened", "Delivery case opened"
    DELIVERY_CASE_RESOLVED = "delivery_case.resolved", "Delivery case resolved"
    CONVERSATION_HANDED_OFF = "conversation.handed_off", "Conversation handed off"
    CONVERSATION_EMAIL_GIVEN = "conversation.email_given", "Email given in a waiting conversation"


def _event_id() -> str:
    return "evt_" + secrets.token_hex(12)


class Event(models.Model):
    """A change Bookly made, kept for the store's systems (an outbox): written in the same transaction
    as the change, so none is lost and none is told of a change that rolled back. `data` is the
    change as it was then; `dispatched_at` is set once each webhook endpoint has its delivery."""

    public_id = models.CharField(max_length=40, unique=True, default=_event_id, editable=False)
    type = models.CharField(max_length=40, choices=EventType.choices)
    # The shop of the order it is about: endpoints for another shop do not get it. Empty for an event
    # of no order's (a conversation handed over) or kept before shops were.
    shop = models.ForeignKey(Shop, on_delete=models.PROTECT, related_name="+", null=True, blank=True)
    data = models.JSONField()
    occurred_at = models.DateTimeField(default=timezone.now)
    dispatched_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(
                fields=["id"], condition=models.Q(dispatched_at__isnull=True), name="event_undispatched"
            )
        ]

    def __str__(self):
        return f"{self.type} {self.public_id}"
