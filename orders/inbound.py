"""Inbound: what shops send in, the shop's order as it arrives by a file import (a JSON Lines line, a CSV's
rows) or the store API (the body of PUT /orders/<number>): its shape, as pydantic models, with each
field's rule from orders.inbound_rules. orders.intake takes a valid one as the order to apply. What
Bookly sends out is orders.outbound's.

Each class's name says its direction (OrderIn, beside the Django model Order and orders.outbound's
OrderOut); its `title` is its name in the published store API document ("ShopAddress"), which stays when
the class is renamed.

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
from collections.abc import Iterable
from datetime import date, datetime
from decimal import Decimal
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    field_validator,
)
from pydantic.json_schema import JsonDict
from pydantic_core import InitErrorDetails

from orders.addresses import ADDRESS_INPUT_LENGTHS, AddressInvalid, OrderAddress, address_field_clean
from orders.inbound_rules import (
    PROBLEM,
    choice_rule,
    currency_rule,
    date_rule,
    email_rule,
    flag_rule,
    money_rule,
    order_problem,
    shop_currency_rule,
    shop_time_rule,
    text_rule,
    url_rule,
    value_required,
    whole_number_rule,
)
from orders.models import Order, OrderItem, OrderStatus, Refund, Shipment
from store.categories import ItemCategory

# The shop's address fields, and ours (orders.addresses).
SHOP_ADDRESS_FIELDS = {"name": "to", "line1": "line1", "line2": "line2", "city": "city", "region": "state",
                  "postal_code": "zip", "country": "country"}  # fmt: skip
MAX_ITEMS = 200
MAX_LINE_NUMBER = MAX_ITEMS * 100
MAX_QUANTITY = 999
# Parcels an order may be sent in, and refunds made on it.
MAX_SHIPMENTS = 50
# The shape by example (the store API's schema and the README show it): a JSON object.
ORDER_EXAMPLE: dict[str, Any] = {
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

# An unknown field is named only when its name is a plain identifier: the name is the sender's text.
_PLAIN_NAME_RE = re.compile(r"[a-z_]{1,40}")


def _address_field(shops: str) -> PlainValidator:
    """One of the address's fields, as orders.addresses checks every address the store keeps, by the
    rules of the address's country (read before the other fields)."""
    ours = SHOP_ADDRESS_FIELDS[shops]

    def clean(value: object, info: ValidationInfo) -> str:
        try:
            return address_field_clean(name=ours, value=value, country=info.data.get("country"))
        except AddressInvalid as invalid:
            raise order_problem(invalid.problems[0]["problem"]) from None

    # Judged as sent up to four times its length (a pasted address's spaces); then, cleaned, at most its
    # length (ADDRESS_INPUT_LENGTHS).
    sent = Annotated[str, StringConstraints(max_length=4 * ADDRESS_INPUT_LENGTHS[ours])] | None
    return PlainValidator(clean, json_schema_input_type=sent)


class ShippingAddressIn(BaseModel):
    """Where the order ships, in the shop's words for an address's fields."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="ShopAddress")

    # First: the region's and the postal code's rules are the country's ("US" when the shop does not say,
    # as before countries were kept).
    country: Annotated[str, _address_field("country")] = Field(default="US", validate_default=True)
    name: Annotated[str, _address_field("name")]
    line1: Annotated[str, _address_field("line1")]
    line2: Annotated[str, _address_field("line2")] = ""
    city: Annotated[str, _address_field("city")]
    region: Annotated[str, _address_field("region")] = Field(default="", validate_default=True)
    postal_code: Annotated[str, _address_field("postal_code")] = Field(default="", validate_default=True)

    def shipping_address(self) -> OrderAddress:
        """The address as the store keeps it."""
        return OrderAddress(**{ours: getattr(self, shops) for shops, ours in SHOP_ADDRESS_FIELDS.items()})


class OrderLineIn(BaseModel):
    """One line of the order."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="ShopItem")

    line_number: Annotated[int, whole_number_rule(low=1, high=MAX_LINE_NUMBER)]
    title: Annotated[str, text_rule(OrderItem, "title", required=True)]
    author: Annotated[str, text_rule(OrderItem, "author")] = ""
    unit_price: Annotated[Decimal, money_rule(OrderItem, "unit_price")]
    quantity: Annotated[int, whole_number_rule(low=1, high=MAX_QUANTITY)]
    # What kind of item, when the shop says (the return policy excludes some kinds); a real shop's
    # products have no such kinds, and an item of none is returnable.
    category: Annotated[str, choice_rule(ItemCategory, required=False)] = ""
    # The shop's references, when it has them: kept for staff and for writing back, never read to the
    # customer.
    sku: Annotated[str, text_rule(OrderItem, "sku")] = ""
    variant: Annotated[str, text_rule(OrderItem, "variant")] = ""
    line_id: Annotated[str, text_rule(OrderItem, "line_id")] = ""
    # False for a line nothing is shipped of (a download, an ebook, a ticket, a service).
    requires_shipping: Annotated[bool, flag_rule()] = True


class LineQuantityIn(BaseModel):
    """How many of one line of the order a parcel holds, or a refund was for."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="ShopLineQuantity")

    line_number: Annotated[int, whole_number_rule(low=1, high=MAX_LINE_NUMBER)]
    quantity: Annotated[int, whole_number_rule(low=1, high=MAX_QUANTITY)]


class ShipmentIn(BaseModel):
    """One parcel the shop sent: its lines, carrier, tracking and dates."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="ShopShipment")

    carrier: Annotated[str, text_rule(Shipment, "carrier")] = ""
    tracking_number: Annotated[str, text_rule(Shipment, "tracking_number")] = ""
    tracking_url: Annotated[str, url_rule()] = ""
    shipped_on: Annotated[date | None, date_rule(required=False)] = None
    delivered_on: Annotated[date | None, date_rule(required=False)] = None
    lines: tuple[LineQuantityIn, ...]

    @field_validator("delivered_on")
    @classmethod
    def _arrived_after_it_left(cls, delivered_on: date | None, info: ValidationInfo) -> date | None:
        shipped_on = info.data.get("shipped_on")
        if delivered_on and shipped_on and delivered_on < shipped_on:
            raise order_problem("must not be before shipped_on")
        return delivered_on

    @field_validator("lines")
    @classmethod
    def _some_lines(cls, lines: tuple[LineQuantityIn, ...]) -> tuple[LineQuantityIn, ...]:
        if not lines:
            raise order_problem("must hold at least one line")
        if len({line.line_number for line in lines}) != len(lines):
            raise order_problem("must name each line once")
        return lines


class RefundIn(BaseModel):
    """Money the shop gave back on the order: how much (in the order's currency), when, why, and for
    which lines when it says."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="ShopRefund")

    amount: Annotated[Decimal, money_rule(Refund, "amount")]
    refunded_on: Annotated[date | None, date_rule(required=False)] = None
    reason: Annotated[str, text_rule(Refund, "reason")] = ""
    lines: tuple[LineQuantityIn, ...] = ()

    @field_validator("lines")
    @classmethod
    def _each_line_once(cls, lines: tuple[LineQuantityIn, ...]) -> tuple[LineQuantityIn, ...]:
        if len({line.line_number for line in lines}) != len(lines):
            raise order_problem("must name each line once")
        return lines


def _of_the_order(parts: Iterable[ShipmentIn | RefundIn], items: dict[int, int]) -> None:
    """Parcels' or refunds' lines: lines of the order only, never more of one than it has."""
    counted: dict[int, int] = {}
    for part in parts:
        for line in part.lines:
            if line.line_number not in items:
                raise order_problem(f"must name only lines of the order (line {line.line_number} is not one)")
            counted[line.line_number] = counted.get(line.line_number, 0) + line.quantity
    over = [line for line, quantity in sorted(counted.items()) if quantity > items[line]]
    if over:
        raise order_problem(f"must not count more of line {over[0]} than the order has")


def _items(value: object, handler: ValidatorFunctionWrapHandler) -> tuple[OrderLineIn, ...]:
    """The order's lines: a list of at least one and at most MAX_ITEMS (refused before any is read), each
    with a line number of its own."""
    value_required(value)
    if not isinstance(value, list) or not value:
        raise order_problem("must be a list of at least one item")
    if len(value) > MAX_ITEMS:
        raise order_problem(f"must hold at most {MAX_ITEMS} items")
    items: tuple[OrderLineIn, ...] = ()
    errors: list[InitErrorDetails] = []
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
            problem = order_problem("is used by another item of this order")
            errors.append(InitErrorDetails(type=problem, loc=(index, "line_number"), input=line))
        lines.add(line)
    if errors:
        raise ValidationError.from_exception_data("items", errors)
    return items


def _error_details(invalid: ValidationError) -> list[InitErrorDetails]:
    """A ValidationError's errors again, to be raised with more."""
    details: list[InitErrorDetails] = []
    for error in invalid.errors(include_url=False):
        kind = order_problem(error["msg"]) if error["type"] == PROBLEM else error["type"]
        detail = InitErrorDetails(type=kind, loc=error["loc"], input=error["input"])
        if "ctx" in error and error["type"] != PROBLEM:
            detail["ctx"] = error["ctx"]
        details.append(detail)
    return details


def _no_default(schema: JsonDict) -> None:
    schema.pop("default", None)


class OrderIn(BaseModel):
    """The order, as the shop has it now (its number is beside it: the API's address, the file's
    "number")."""

    # No title: the document shows it as connection.api.schema.OrderPut, which would inherit one.
    model_config = ConfigDict(extra="forbid", frozen=True)

    # In this order: a field's rule reads those before it (delivered_on reads status and ordered_on).
    customer_name: Annotated[str, text_rule(Order, "customer_name", required=True)]
    customer_email: Annotated[str, email_rule()] = ""
    status: Annotated[str, choice_rule(OrderStatus)]
    ordered_on: Annotated[date, date_rule(required=True)]
    # Checked when not sent too: a delivered order needs it.
    delivered_on: Annotated[date | None, date_rule(required=False)] = Field(
        default=None, validate_default=True
    )
    tracking_number: Annotated[str, text_rule(Order, "tracking_number")] = ""
    carrier: Annotated[str, text_rule(Order, "carrier")] = ""
    total: Annotated[Decimal, money_rule(Order, "total")]
    # What every amount is in: its shop's currency (Shop.currency) when not sent, filled in by the intake
    # once the shop is known.
    # Documented with no default: left out, it is the shop's (never null).
    currency: Annotated[str | None, currency_rule()] = Field(default=None, json_schema_extra=_no_default)
    # The shop's own currency and total, when the customer paid in another (Shopify's presentment
    # money): total, the lines' prices and the refunds are then the customer's. Both or neither.
    shop_currency: Annotated[
        str | None, shop_currency_rule()
    ] = Field(default=None, description="The shop's currency, when the customer paid in another (the amounts "
              "here are then the customer's); with shop_total.")  # fmt: skip
    shop_total: Annotated[Decimal | None, money_rule(Order, "shop_total", required=False)] = Field(
        default=None,
        validate_default=True,
        description="The total in the shop's currency; with shop_currency.",
    )
    discount_total: Annotated[Decimal | None, money_rule(Order, "discount_total", required=False)] = Field(
        default="0.00",
        validate_default=True,
        description="What the shop took off the price (discounts and codes together), in currency: why the "
        "customer paid less. 0.00 when none.",
    )
    payment_voided: Annotated[bool, flag_rule()] = Field(
        default=False,
        description="The payment was authorised and then released, never taken: the customer was not "
        "charged.",
    )
    shipping_address: ShippingAddressIn | None = None
    items: Annotated[tuple[OrderLineIn, ...], WrapValidator(_items)] = Field(
        json_schema_extra={"minItems": 1, "maxItems": MAX_ITEMS}
    )
    # The parcels it went out in, when the shop ships in parts and says which lines each holds, and the
    # money it gave back (a return's refund made here is the return's). Left out (a CSV has no room for
    # them), those Bookly has are kept; an empty list has none.
    shipments: tuple[ShipmentIn, ...] | None = Field(
        default=None, json_schema_extra={"maxItems": MAX_SHIPMENTS}
    )
    refunds: tuple[RefundIn, ...] | None = Field(default=None, json_schema_extra={"maxItems": MAX_SHIPMENTS})
    # The shop's own time of this version, when it sends one (orders.intake's rule: never older).
    updated_at: Annotated[datetime | None, shop_time_rule()] = Field(
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
            raise order_problem("is required for a delivered order")
        if status and status != OrderStatus.DELIVERED and delivered_on is not None:
            raise order_problem("must be null unless the order is delivered")
        if ordered_on and delivered_on and delivered_on < ordered_on:
            raise order_problem("must not be before ordered_on")
        return delivered_on

    @field_validator("shop_total")
    @classmethod
    def _shop_money_together(cls, shop_total: Decimal | None, info: ValidationInfo) -> Decimal | None:
        if "shop_currency" not in info.data:
            return shop_total  # its own problem is named
        if (shop_total is None) != (info.data["shop_currency"] is None):
            raise order_problem("is given with shop_currency, and only with it")
        return shop_total

    @field_validator("tracking_number")
    @classmethod
    def _no_tracking_while_processing(cls, tracking_number: str, info: ValidationInfo) -> str:
        if info.data.get("status") == OrderStatus.PROCESSING and tracking_number:
            raise order_problem("must be empty while the order is processing")
        return tracking_number

    @field_validator("shipments")
    @classmethod
    def _shipments_of_its_lines(
        cls, shipments: tuple[ShipmentIn, ...] | None, info: ValidationInfo
    ) -> tuple[ShipmentIn, ...] | None:
        if not shipments:
            return shipments
        if len(shipments) > MAX_SHIPMENTS:
            raise order_problem(f"must hold at most {MAX_SHIPMENTS} parcels")
        if info.data.get("status") == OrderStatus.PROCESSING:
            raise order_problem("must be empty while the order is processing")
        items = {item.line_number: item.quantity for item in info.data.get("items") or ()}
        if items:  # else the items' own problems are named
            _of_the_order(shipments, items)
        return shipments

    @field_validator("refunds")
    @classmethod
    def _refunds_of_its_lines(
        cls, refunds: tuple[RefundIn, ...] | None, info: ValidationInfo
    ) -> tuple[RefundIn, ...] | None:
        if not refunds:
            return refunds
        if len(refunds) > MAX_SHIPMENTS:
            raise order_problem(f"must hold at most {MAX_SHIPMENTS} refunds")
        items = {item.line_number: item.quantity for item in info.data.get("items") or ()}
        if items:
            _of_the_order(refunds, items)
        return refunds


ORDER_FIELDS = tuple(OrderIn.model_fields)
ORDER_REQUIRED = frozenset(name for name, field in OrderIn.model_fields.items() if field.is_required())
ITEM_FIELDS = tuple(OrderLineIn.model_fields)
ITEM_REQUIRED = frozenset(name for name, field in OrderLineIn.model_fields.items() if field.is_required())

# pydantic's own errors, in the validators' words (anything else: "is not valid", never the value).
_OWN_ERRORS = {
    "missing": "is required",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "dict_type": "must be an object",
}


def order_problems(*, error: ValidationError) -> list[dict[str, str]]:
    """A OrderIn's errors as the intake names them: [{"field": its path, "problem": in words}]."""
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
