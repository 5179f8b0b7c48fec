"""An order, with its shipping address (in its own fields) and its items."""

from decimal import Decimal

from django.core.validators import MinValueValidator
from django.db import models
from django.db.models.functions import Length
from django.db.models.lookups import Exact
from django.utils import timezone

from orders.models.shop import CURRENCY_CODE_LENGTH, OrderSource, Shop, own_shop, store_currency
from orders.numbers import MAX_LENGTH as ORDER_NUMBER_MAX_LENGTH
from orders.numbers import OrderNumberValidator
from store.categories import ItemCategory


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


class OrderManager(models.Manager["Order"]):
    def get_by_natural_key(self, number: str) -> "Order":
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

    def __str__(self) -> str:
        return self.number

    def natural_key(self) -> tuple[str]:
        return (self.number,)


class OrderItemManager(models.Manager["OrderItem"]):
    def get_by_natural_key(self, order_number: str, line_number: int) -> "OrderItem":
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

    def __str__(self) -> str:
        return f"{self.title} ({self.order.number})"

    def natural_key(self) -> tuple[str, int]:
        return (*self.order.natural_key(), self.line_number)

    # Django's own way to name the fixtures loaded first: an attribute of the method, which mypy does not
    # allow on a function.
    natural_key.dependencies = ["orders.order"]  # type: ignore[attr-defined]

    @property
    def line_total(self) -> Decimal:
        return self.unit_price * self.quantity
