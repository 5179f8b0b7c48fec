"""The shop's order as it arrives, by a file import (a JSON Lines line, a CSV's rows) or the store API (the
body of PUT /orders/<number>): its shape and each field's rule, as pydantic models. orders.intake takes
a valid one as the order to apply.

Every problem is found at once and named by its field's path (`items[2].unit_price`,
`shipping_address.postal_code`) in words a person can act on, never echoing the value sent. The models'
validators are plain ones (pydantic converts nothing: "5" is no quantity, 12.5 no amount) and say each
problem themselves; `order_problems` reads pydantic's few errors of its own (a field missing, one
unknown, a list where an object belongs) in the same words.

The shape (the API's body; a JSON Lines line adds "number"):

    {"customer_name": "Ada Reader", "customer_email": "ada@example.com", "status": "shipped",
     "ordered_on": "2026-04-01", "delivered_on": null, "tracking_number": "1Z999AA10123456799",
     "carrier": "UPS", "total": "24.99", "currency": "USD",
     "shipping_address": {"country": "US", "name": "Ada Reader", "line1": "1 Main St", "line2": "",
                          "city": "Springfield", "region": "IL", "postal_code": "62701"},
     "items": [{"line_number": 1, "title": "Dune", "author": "Frank Herbert", "unit_price": "24.99",
                "quantity": 1, "category": "fiction"}],
     "updated_at": "2026-04-02T09:30:00Z"}
"""

import re
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Annotated, Literal

from babel.numbers import get_currency_precision, list_currencies
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import URLValidator, validate_email
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    WrapValidator,
    field_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from orders.addresses import ADDRESS_INPUT_LENGTHS, AddressInvalid, ShippingAddress, address_field_clean
from orders.models import ISO_DATE_PATTERN, Order, OrderItem, OrderStatus, Refund, Shipment
from store.categories import ItemCategory
from store.text import text_has_unseen, text_single_line

# The shop's address fields, and ours (orders.addresses).
SHOP_ADDRESS_FIELDS = {"name": "to", "line1": "line1", "line2": "line2", "city": "city", "region": "state",
                  "postal_code": "zip", "country": "country"}  # fmt: skip
MAX_ITEMS = 200
MAX_LINE_NUMBER = MAX_ITEMS * 100
MAX_QUANTITY = 999
# Parcels an order may be sent in, and refunds made on it.
MAX_SHIPMENTS = 50
# How far ahead of our clock the shop's `updated_at` may be: two clocks a little apart, not a time zone
# read wrong (an hour or more) or a year mistyped. A time far ahead would make every later real version
# of the order stale (orders.intake's rule).
SHOP_CLOCK_AHEAD = timedelta(minutes=10)
# The shape by example (the store API's schema and the README show it).
ORDER_EXAMPLE = {
    "customer_name": "Ada Reader",
    "customer_email": "ada@example.com",
    "status": "shipped",
    "ordered_on": "2026-04-01",
    "delivered_on": None,
    "tracking_number": "1Z999AA10123456799",
    "carrier": "UPS",
    "total": "24.99",
    "currency": "USD",
    "shipping_address": {
        "country": "US",
        "name": "Ada Reader",
        "line1": "1 Main St",
        "line2": "",
        "city": "Springfield",
        "region": "IL",
        "postal_code": "62701",
    },
    "items": [
        {
            "line_number": 1,
            "title": "Dune",
            "author": "Frank Herbert",
            "unit_price": "24.99",
            "quantity": 1,
            "category": "fiction",
            "sku": "978-0441172719",
            "variant": "Paperback",
            "line_id": "",
            "requires_shipping": True,
        }
    ],
}

# The error type of every problem the validators below name in their own words.
PROBLEM = "order_problem"
_ISO_DATE_RE = re.compile(ISO_DATE_PATTERN)
# An unknown field is named only when its name is a plain identifier: the name is the sender's text.
_PLAIN_NAME_RE = re.compile(r"[a-z_]{1,40}")


def _problem(message: str) -> PydanticCustomError:
    return PydanticCustomError(PROBLEM, message)


def _required(value: object) -> None:
    # A required field sent as null is as missing as one not sent.
    if value is None:
        raise _problem("is required")


def _text_clean(value: object, *, max_length: int, required: bool) -> str:
    if required:
        _required(value)
    if value is None or value == "":
        if required:
            raise _problem("must not be empty")
        return ""
    if not isinstance(value, str):
        raise _problem("must be a string")
    if len(value) > max_length:  # as sent, as the schema says: never cut down to fit
        raise _problem(f"must be at most {max_length} characters")
    if text_has_unseen(value.replace("\t", " ")):
        raise _problem("must not contain control or invisible characters")
    value = text_single_line(value)
    if len(value) > max_length:
        raise _problem(f"must be at most {max_length} characters")
    if required and not value:
        raise _problem("must not be empty")
    return value


def _text(model, field: str, *, required: bool = False) -> PlainValidator:
    """One line of text, at most as long as the column it is stored in."""
    max_length = model._meta.get_field(field).max_length
    sent = Annotated[str, StringConstraints(min_length=1 if required else 0, max_length=max_length)]
    return PlainValidator(
        lambda value: _text_clean(value, max_length=max_length, required=required),
        json_schema_input_type=sent if required else sent | None,
    )


def email_canonical(value: str) -> str | None:
    """The email as the store keeps it (lower case), or None when Django's own check, the order's
    EmailField's, refuses it: the one owner of what an email is, for the intake and the assistant."""
    value = value.lower()
    try:
        validate_email(value)
    except DjangoValidationError:
        return None
    return value


_EMAIL_SENT = (
    Annotated[str, StringConstraints(max_length=Order._meta.get_field("customer_email").max_length)] | None
)


def _email(value: object) -> str:
    """The customer's email address, as the column keeps it; blank when the shop has none."""
    max_length = Order._meta.get_field("customer_email").max_length
    email = _text_clean(value, max_length=max_length, required=False)
    if not email:
        return ""
    if len(email.lower()) > max_length:  # "İ" lowercases to two: the column holds the lowered email
        raise _problem(f"must be at most {max_length} characters")
    canonical = email_canonical(email)
    if canonical is None:
        raise _problem("must be an email address")
    return canonical


def _choice(choices, *, required: bool = True) -> PlainValidator:
    sent = Literal[tuple(choices.values)] if required else Literal[(*choices.values, "")] | None

    def clean(value: object) -> str:
        if required:
            _required(value)
        elif value is None or value == "":
            return ""
        if not isinstance(value, str) or value not in choices.values:
            raise _problem("must be one of " + ", ".join(choices.values))
        return value

    return PlainValidator(clean, json_schema_input_type=sent)


def _date(*, required: bool) -> PlainValidator:
    def clean(value: object) -> date | None:
        if required:
            _required(value)
        if value is None:
            return None
        try:
            if not isinstance(value, str) or not _ISO_DATE_RE.fullmatch(value):
                raise ValueError
            return date.fromisoformat(value)
        except ValueError:
            raise _problem("must be a date like 2026-04-01") from None

    return PlainValidator(clean, json_schema_input_type=date if required else date | None)


def _shop_time(value: object) -> datetime | None:
    if value is None:
        return None
    try:
        moment = parse_datetime(value) if isinstance(value, str) and len(value) <= 40 else None
        # In UTC, so that a time at the calendar's edge (9999-12-31T23:59:59-23:59) is refused here
        # rather than overflowing in the database.
        moment = moment.astimezone(UTC) if moment and moment.tzinfo else None
    except (ValueError, OverflowError):
        moment = None
    if moment is None:
        raise _problem("must be a time like 2026-04-01T09:30:00Z, with its time zone")
    if moment > timezone.now() + SHOP_CLOCK_AHEAD:
        minutes = int(SHOP_CLOCK_AHEAD.total_seconds() // 60)
        raise _problem(
            f"must not be more than {minutes} minutes ahead of the time now: check the shop's clock and "
            "time zone"
        )
    return moment


# An amount as written: digits and perhaps decimals (more than two are refused in words of their own);
# no plus sign, space or exponent ("1e3" is no price). The schema says the same of two decimals at most.
_AMOUNT_RE = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")  # a minus sign: refused in words of its own
AMOUNT_PATTERN = r"^[0-9]+(\.[0-9]{1,2})?$"


def _money(model, field: str, *, required: bool = True) -> PlainValidator:
    """An amount in the order's currency, as a string ("24.99"; a whole number is taken too), with at most
    two decimals, that fits its column; None when not required and not sent."""
    limit = Decimal(10) ** (model._meta.get_field(field).max_digits - 2)

    def clean(value: object) -> Decimal | None:
        if value is None and not required:
            return None
        _required(value)
        try:
            if isinstance(value, bool) or not isinstance(value, str | int):
                raise InvalidOperation
            if isinstance(value, str) and not _AMOUNT_RE.fullmatch(value):
                raise InvalidOperation
            amount = Decimal(str(value))
        except (InvalidOperation, ValueError):  # ValueError: an integer of more digits than str() writes
            raise _problem('must be an amount like "24.99" (a string)') from None
        if not amount.is_finite() or amount.is_signed() or amount.as_tuple().exponent < -2:
            raise _problem("must be zero or more, with at most two decimals")
        if amount >= limit:
            raise _problem(f"must be less than {limit:,}")
        return amount.quantize(Decimal("0.01"))

    sent = (
        Annotated[
            str,
            Field(
                pattern=AMOUNT_PATTERN,
                description=f'An amount like "24.99" (a whole number is taken too), less than {limit:,}.',
            ),
        ]
        | Annotated[int, Field(ge=0, lt=int(limit))]
    )
    return PlainValidator(clean, json_schema_input_type=sent if required else sent | None)


_CURRENCY_SENT = Annotated[
    str, Field(pattern=r"^[A-Za-z]{3}$", description="ISO 4217 code; its shop's currency when left out.")
]


def _currency(value: object) -> str:
    _required(value)
    code = value.upper() if isinstance(value, str) else None
    if code not in list_currencies():
        raise _problem('must be a currency by its ISO 4217 code, like "USD", "EUR" or "BRL"')
    if get_currency_precision(code) > 2:
        raise _problem("is not supported yet: amounts are kept with at most two decimals")
    return code


def _shop_currency(value: object, info: ValidationInfo) -> str | None:
    if value is None:
        return None
    code = _currency(value)
    if code == info.data.get("currency"):  # not sent: checked once the shop's is known (intake)
        raise _problem("must be another currency than the order's, or left out")
    return code


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise _problem("must be true or false")
    return value


def _whole_number(*, low: int, high: int) -> PlainValidator:
    def clean(value: object) -> int:
        _required(value)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise _problem(f"must be a whole number from {low} to {high}")
        return value

    return PlainValidator(clean, json_schema_input_type=Annotated[int, Field(ge=low, le=high)])


def _address_field(shops: str) -> PlainValidator:
    """One of the address's fields, as orders.addresses checks every address the store keeps, by the
    rules of the address's country (read before the other fields)."""
    ours = SHOP_ADDRESS_FIELDS[shops]

    def clean(value: object, info: ValidationInfo) -> str:
        try:
            return address_field_clean(name=ours, value=value, country=info.data.get("country"))
        except AddressInvalid as invalid:
            raise _problem(invalid.problems[0]["problem"]) from None

    # Judged as sent up to four times its length (a pasted address's spaces); then, cleaned, at most its
    # length (ADDRESS_INPUT_LENGTHS).
    sent = Annotated[str, StringConstraints(max_length=4 * ADDRESS_INPUT_LENGTHS[ours])] | None
    return PlainValidator(clean, json_schema_input_type=sent)


class ShopAddress(BaseModel):
    """Where the order ships, in the shop's words for an address's fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # First: the region's and the postal code's rules are the country's ("US" when the shop does not say,
    # as before countries were kept).
    country: Annotated[str, _address_field("country")] = Field(default="US", validate_default=True)
    name: Annotated[str, _address_field("name")]
    line1: Annotated[str, _address_field("line1")]
    line2: Annotated[str, _address_field("line2")] = ""
    city: Annotated[str, _address_field("city")]
    region: Annotated[str, _address_field("region")] = Field(default="", validate_default=True)
    postal_code: Annotated[str, _address_field("postal_code")] = Field(default="", validate_default=True)

    def shipping_address(self) -> ShippingAddress:
        """The address as the store keeps it."""
        return ShippingAddress(**{ours: getattr(self, shops) for shops, ours in SHOP_ADDRESS_FIELDS.items()})


class ShopItem(BaseModel):
    """One line of the order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    line_number: Annotated[int, _whole_number(low=1, high=MAX_LINE_NUMBER)]
    title: Annotated[str, _text(OrderItem, "title", required=True)]
    author: Annotated[str, _text(OrderItem, "author")] = ""
    unit_price: Annotated[Decimal, _money(OrderItem, "unit_price")]
    quantity: Annotated[int, _whole_number(low=1, high=MAX_QUANTITY)]
    # What kind of item, when the shop says (the return policy excludes some kinds); a real shop's
    # products have no such kinds, and an item of none is returnable.
    category: Annotated[str, _choice(ItemCategory, required=False)] = ""
    # The shop's references, when it has them: kept for staff and for writing back, never read to the
    # customer.
    sku: Annotated[str, _text(OrderItem, "sku")] = ""
    variant: Annotated[str, _text(OrderItem, "variant")] = ""
    line_id: Annotated[str, _text(OrderItem, "line_id")] = ""
    # False for a line nothing is shipped of (a download, an ebook, a ticket, a service).
    requires_shipping: Annotated[bool, PlainValidator(_flag, json_schema_input_type=bool)] = True


_URL_SENT = (
    Annotated[str, StringConstraints(max_length=Shipment._meta.get_field("tracking_url").max_length)] | None
)


def _url(value: object) -> str:
    """A web address (http or https) a customer may open, or nothing."""
    value = _text_clean(value, max_length=Shipment._meta.get_field("tracking_url").max_length, required=False)
    if value:
        try:
            URLValidator(schemes=["http", "https"])(value)
        except DjangoValidationError:
            raise _problem("must be a web address (https://…)") from None
    return value


class ShopLineQuantity(BaseModel):
    """How many of one line of the order a parcel holds, or a refund was for."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    line_number: Annotated[int, _whole_number(low=1, high=MAX_LINE_NUMBER)]
    quantity: Annotated[int, _whole_number(low=1, high=MAX_QUANTITY)]


class ShopShipment(BaseModel):
    """One parcel the shop sent: its lines, carrier, tracking and dates."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    carrier: Annotated[str, _text(Shipment, "carrier")] = ""
    tracking_number: Annotated[str, _text(Shipment, "tracking_number")] = ""
    tracking_url: Annotated[str, PlainValidator(_url, json_schema_input_type=_URL_SENT)] = ""
    shipped_on: Annotated[date | None, _date(required=False)] = None
    delivered_on: Annotated[date | None, _date(required=False)] = None
    lines: tuple[ShopLineQuantity, ...]

    @field_validator("delivered_on")
    @classmethod
    def _arrived_after_it_left(cls, delivered_on: date | None, info: ValidationInfo) -> date | None:
        shipped_on = info.data.get("shipped_on")
        if delivered_on and shipped_on and delivered_on < shipped_on:
            raise _problem("must not be before shipped_on")
        return delivered_on

    @field_validator("lines")
    @classmethod
    def _some_lines(cls, lines: tuple[ShopLineQuantity, ...]) -> tuple[ShopLineQuantity, ...]:
        if not lines:
            raise _problem("must hold at least one line")
        if len({line.line_number for line in lines}) != len(lines):
            raise _problem("must name each line once")
        return lines


class ShopRefund(BaseModel):
    """Money the shop gave back on the order: how much (in the order's currency), when, why, and for
    which lines when it says."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    amount: Annotated[Decimal, _money(Refund, "amount")]
    refunded_on: Annotated[date | None, _date(required=False)] = None
    reason: Annotated[str, _text(Refund, "reason")] = ""
    lines: tuple[ShopLineQuantity, ...] = ()

    @field_validator("lines")
    @classmethod
    def _each_line_once(cls, lines: tuple[ShopLineQuantity, ...]) -> tuple[ShopLineQuantity, ...]:
        if len({line.line_number for line in lines}) != len(lines):
            raise _problem("must name each line once")
        return lines


def _of_the_order(parts, items: dict[int, int]) -> None:
    """Parcels' or refunds' lines: lines of the order only, never more of one than it has."""
    counted: dict[int, int] = {}
    for part in parts:
        for line in part.lines:
            if line.line_number not in items:
                raise _problem(f"must name only lines of the order (line {line.line_number} is not one)")
            counted[line.line_number] = counted.get(line.line_number, 0) + line.quantity
    over = [line for line, quantity in sorted(counted.items()) if quantity > items[line]]
    if over:
        raise _problem(f"must not count more of line {over[0]} than the order has")


def _items(value: object, handler) -> tuple[ShopItem, ...]:
    """The order's lines: a list of at least one and at most MAX_ITEMS (refused before any is read), each
    with a line number of its own."""
    _required(value)
    if not isinstance(value, list) or not value:
        raise _problem("must be a list of at least one item")
    if len(value) > MAX_ITEMS:
        raise _problem(f"must hold at most {MAX_ITEMS} items")
    items, errors = (), []
    try:
        items = handler(value)
    except ValidationError as invalid:
        errors = _error_details(invalid)
    # Read from what was sent, so that a line used twice is named beside the lines' other problems.
    lines: set[int] = set()
    for index, item in enumerate(value):
        line = item.get("line_number") if isinstance(item, dict) else None
        if isinstance(line, bool) or not isinstance(line, int) or not 1 <= line <= MAX_LINE_NUMBER:
            continue  # no line number: its own problem, named above
        if line in lines:
            problem = _problem("is used by another item of this order")
            errors.append(InitErrorDetails(type=problem, loc=(index, "line_number"), input=line))
        lines.add(line)
    if errors:
        raise ValidationError.from_exception_data("items", errors)
    return items


def _error_details(invalid: ValidationError) -> list[InitErrorDetails]:
    """A ValidationError's errors again, to be raised with more."""
    details = []
    for error in invalid.errors(include_url=False):
        kind = _problem(error["msg"]) if error["type"] == PROBLEM else error["type"]
        detail = InitErrorDetails(type=kind, loc=error["loc"], input=error["input"])
        if "ctx" in error and error["type"] != PROBLEM:
            detail["ctx"] = error["ctx"]
        details.append(detail)
    return details


class ShopOrder(BaseModel):
    """The order, as the shop has it now (its number is beside it: the API's address, the file's
    "number")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # In this order: a field's rule reads those before it (delivered_on reads status and ordered_on).
    customer_name: Annotated[str, _text(Order, "customer_name", required=True)]
    customer_email: Annotated[str, PlainValidator(_email, json_schema_input_type=_EMAIL_SENT)] = ""
    status: Annotated[str, _choice(OrderStatus)]
    ordered_on: Annotated[date, _date(required=True)]
    # Checked when not sent too: a delivered order needs it.
    delivered_on: Annotated[date | None, _date(required=False)] = Field(default=None, validate_default=True)
    tracking_number: Annotated[str, _text(Order, "tracking_number")] = ""
    carrier: Annotated[str, _text(Order, "carrier")] = ""
    total: Annotated[Decimal, _money(Order, "total")]
    # What every amount is in: its shop's currency (Shop.currency) when not sent, filled in by the intake
    # once the shop is known.
    # Documented with no default: left out, it is the shop's (never null).
    currency: Annotated[str | None, PlainValidator(_currency, json_schema_input_type=_CURRENCY_SENT)] = Field(
        default=None, json_schema_extra=lambda schema: schema.pop("default", None)
    )
    # The shop's own currency and total, when the customer paid in another (Shopify's presentment
    # money): total, the lines' prices and the refunds are then the customer's. Both or neither.
    shop_currency: Annotated[
        str | None, PlainValidator(_shop_currency, json_schema_input_type=_CURRENCY_SENT | None)
    ] = Field(default=None, description="The shop's currency, when the customer paid in another (the amounts "
              "here are then the customer's); with shop_total.")  # fmt: skip
    shop_total: Annotated[Decimal | None, _money(Order, "shop_total", required=False)] = Field(
        default=None,
        validate_default=True,
        description="The total in the shop's currency; with shop_currency.",
    )
    discount_total: Annotated[Decimal | None, _money(Order, "discount_total", required=False)] = Field(
        default="0.00",
        validate_default=True,
        description="What the shop took off the price (discounts and codes together), in currency: why the "
        "customer paid less. 0.00 when none.",
    )
    payment_voided: Annotated[bool, PlainValidator(_flag, json_schema_input_type=bool)] = Field(
        default=False,
        description="The payment was authorised and then released, never taken: the customer was not "
        "charged.",
    )
    shipping_address: ShopAddress | None = None
    items: Annotated[tuple[ShopItem, ...], WrapValidator(_items)] = Field(
        json_schema_extra={"minItems": 1, "maxItems": MAX_ITEMS}
    )
    # The parcels it went out in, when the shop ships in parts and says which lines each holds, and the
    # money it gave back (a return's refund made here is the return's). Left out (a CSV has no room for
    # them), those Bookly has are kept; an empty list has none.
    shipments: tuple[ShopShipment, ...] | None = Field(
        default=None, json_schema_extra={"maxItems": MAX_SHIPMENTS}
    )
    refunds: tuple[ShopRefund, ...] | None = Field(
        default=None, json_schema_extra={"maxItems": MAX_SHIPMENTS}
    )
    # The shop's own time of this version, when it sends one (orders.intake's rule: never older).
    updated_at: Annotated[
        datetime | None, PlainValidator(_shop_time, json_schema_input_type=datetime | None)
    ] = Field(
        default=None,
        description="The shop's own time of this version: an older version than one taken is refused (409). "
        "In an order sent back as read (with source), updated_at is Bookly's: see the PUT's description.",
    )

    @field_validator("delivered_on")
    @classmethod
    def _delivered_on_with_the_status(cls, delivered_on: date | None, info: ValidationInfo) -> date | None:
        # Only against fields that passed their own rules (info.data holds those).
        status, ordered_on = info.data.get("status"), info.data.get("ordered_on")
        if status == OrderStatus.DELIVERED and delivered_on is None:
            raise _problem("is required for a delivered order")
        if status and status != OrderStatus.DELIVERED and delivered_on is not None:
            raise _problem("must be null unless the order is delivered")
        if ordered_on and delivered_on and delivered_on < ordered_on:
            raise _problem("must not be before ordered_on")
        return delivered_on

    @field_validator("shop_total")
    @classmethod
    def _shop_money_together(cls, shop_total: Decimal | None, info: ValidationInfo) -> Decimal | None:
        if "shop_currency" not in info.data:
            return shop_total  # its own problem is named
        if (shop_total is None) != (info.data["shop_currency"] is None):
            raise _problem("is given with shop_currency, and only with it")
        return shop_total

    @field_validator("tracking_number")
    @classmethod
    def _no_tracking_while_processing(cls, tracking_number: str, info: ValidationInfo) -> str:
        if info.data.get("status") == OrderStatus.PROCESSING and tracking_number:
            raise _problem("must be empty while the order is processing")
        return tracking_number

    @field_validator("shipments")
    @classmethod
    def _shipments_of_its_lines(cls, shipments: tuple[ShopShipment, ...] | None, info: ValidationInfo):
        if not shipments:
            return shipments
        if len(shipments) > MAX_SHIPMENTS:
            raise _problem(f"must hold at most {MAX_SHIPMENTS} parcels")
        if info.data.get("status") == OrderStatus.PROCESSING:
            raise _problem("must be empty while the order is processing")
        items = {item.line_number: item.quantity for item in info.data.get("items") or ()}
        if items:  # else the items' own problems are named
            _of_the_order(shipments, items)
        return shipments

    @field_validator("refunds")
    @classmethod
    def _refunds_of_its_lines(cls, refunds: tuple[ShopRefund, ...] | None, info: ValidationInfo):
        if not refunds:
            return refunds
        if len(refunds) > MAX_SHIPMENTS:
            raise _problem(f"must hold at most {MAX_SHIPMENTS} refunds")
        items = {item.line_number: item.quantity for item in info.data.get("items") or ()}
        if items:
            _of_the_order(refunds, items)
        return refunds


ORDER_FIELDS = tuple(ShopOrder.model_fields)
ORDER_REQUIRED = frozenset(name for name, field in ShopOrder.model_fields.items() if field.is_required())
ITEM_FIELDS = tuple(ShopItem.model_fields)
ITEM_REQUIRED = frozenset(name for name, field in ShopItem.model_fields.items() if field.is_required())

# pydantic's own errors, in the validators' words (anything else: "is not valid", never the value).
_OWN_ERRORS = {
    "missing": "is required",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "dict_type": "must be an object",
}


def order_problems(*, error: ValidationError) -> list[dict[str, str]]:
    """A ShopOrder's errors as the intake names them: [{"field": its path, "problem": in words}]."""
    problems = []
    for found in error.errors(include_url=False):
        loc = found["loc"]
        if found["type"] in ("extra_forbidden", "invalid_key"):
            *parent, name = loc
            shown = name if isinstance(name, str) and _PLAIN_NAME_RE.fullmatch(name) else "(unknown)"
            field = _path((*parent, shown))
            problem = "is not a field here" if parent else "is not a field of an order here"
        else:
            field = _path(loc) or "(order)"
            problem = (
                found["msg"] if found["type"] == PROBLEM else _OWN_ERRORS.get(found["type"], "is not valid")
            )
        problems.append({"field": field, "problem": problem})
    return problems


def _path(loc: tuple) -> str:
    """("items", 2, "unit_price") as "items[2].unit_price"."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else part)
    return path
