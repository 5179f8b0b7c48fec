"""What the store's systems read of Bookly, as pydantic models: the store API's answers and errors, and
the data of each webhook event (the event catalogue). The answers and events are built through these
models (orders.shapes, orders.events) and the OpenAPI document is generated from them (connection.api),
so the document cannot say one thing while Bookly sends another.

What the shop sends is orders.schemas.ShopOrder; an order read here can be sent back unchanged (its
`number`, `source` and `updated_at` are accepted as read: see connection.api.views).

Changing a model here changes the contract: add fields (receivers ignore what they do not know), never
rename or remove one without a new version (`EVENT_CATALOGUE_VERSION`, the API's /v2/).
"""

from datetime import date, datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from orders.models import (
    RMA_NUMBER_PATTERN,
    CaseStatus,
    DeliveryProblem,
    EventType,
    OrderSource,
    OrderStatus,
    ReturnStatus,
)
from orders.numbers import MAX_LENGTH as ORDER_NUMBER_MAX_LENGTH
from store.categories import ItemCategory

# The version of the event catalogue below: a field added keeps it, one changed or removed moves it on.
EVENT_CATALOGUE_VERSION = "2026-11-28"

# Every amount Bookly sends: a decimal string with two decimals, in the order's currency.
MONEY_PATTERN = r"^[0-9]+\.[0-9]{2}$"
Money = Annotated[
    str,
    Field(
        pattern=MONEY_PATTERN,
        description="An amount in the order's currency: a decimal string with two decimals.",
        examples=["24.99"],
    ),
]
# The shop's own shape (admin: Shops), which the intake checks: not in the document, made once for every
# shop. Its length is Order.number's.
OrderNumber = Annotated[str, Field(min_length=1, max_length=ORDER_NUMBER_MAX_LENGTH, examples=["BK-10042"])]
Text = Annotated[str, Field(description="Empty when not known.")]
LineNumber = Annotated[int, Field(ge=1, description="The line's number in the order, as the shop sent it.")]
Quantity = Annotated[int, Field(ge=1)]
Category = Literal[(*ItemCategory.values, "")]


class _Shape(BaseModel):
    # Python's regular expressions: the order number's pattern is the operator's, and may use what the
    # default (Rust) engine lacks, such as lookarounds.
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, regex_engine="python-re")


class ShippingAddress(_Shape):
    """Where an order ships, in the shop's words for an address's fields."""

    country: str = Field(pattern=r"^[A-Z]{2}$", description="ISO 3166-1 alpha-2 code.", examples=["US"])
    name: str
    line1: str
    line2: Text
    city: str
    region: Text = Field(description="The state, province or region, as the country writes it.")
    postal_code: Text


class OrderLine(_Shape):
    """One line of an order."""

    line_number: LineNumber
    title: str
    author: Text
    unit_price: Money
    quantity: Quantity
    category: Category = Field(description="What kind of item; empty when the shop does not say.")
    sku: Text
    variant: Text
    line_id: Text = Field(description="The shop platform's own id of the line; empty when none.")
    requires_shipping: bool = Field(
        description="Whether the line is sent in a parcel: false for a download, an ebook, a ticket."
    )


class LineQuantity(_Shape):
    """How many of one line of the order a parcel holds, or a refund was for."""

    line_number: LineNumber
    quantity: Quantity


class Shipment(_Shape):
    """One parcel the shop sent."""

    carrier: Text
    tracking_number: Text
    tracking_url: Text
    shipped_on: date | None
    delivered_on: date | None
    lines: list[LineQuantity]


class Refund(_Shape):
    """Money the shop gave back on the order."""

    amount: Money
    refunded_on: date | None
    reason: Text
    lines: list[LineQuantity]


class Order(_Shape):
    """An order as Bookly has it: what the shop sent (orders.schemas.ShopOrder's fields), with its number,
    where it last came from and when Bookly's record last changed."""

    number: OrderNumber
    customer_name: str
    customer_email: Text
    status: OrderStatus
    ordered_on: date
    delivered_on: date | None
    tracking_number: Text
    carrier: Text
    total: Money
    currency: str = Field(pattern=r"^[A-Z]{3}$", description="ISO 4217 code.", examples=["USD"])
    shop_currency: str | None = Field(
        pattern=r"^[A-Z]{3}$",
        description="The shop's currency when the customer paid in another (the amounts are then the "
        "customer's); null when the same.",
    )
    shop_total: Money | None = Field(description="The total in shop_currency; null with it.")
    discount_total: Money = Field(
        description="What the shop took off the price, in currency; 0.00 when none."
    )
    payment_voided: bool = Field(description="The payment was authorised and released: not charged.")
    shipping_address: ShippingAddress | None
    items: list[OrderLine]
    shipments: list[Shipment]
    refunds: list[Refund]
    source: OrderSource = Field(description="How the order last reached Bookly. Read only.")
    updated_at: datetime = Field(
        description="When Bookly's record of the order last changed (what updated_since filters on). Read "
        "only: sent back as read, it is ignored; any other time is the shop's own time of the version."
    )


class OrderWritten(Order):
    """An order as a PUT left it, with what the PUT did."""

    outcome: Literal["created", "updated", "unchanged"]


class LineTitle(_Shape):
    """An order line, by its number and title."""

    line_number: LineNumber
    title: str


class ReturnLine(_Shape):
    """An order line inside a return: the whole line comes back."""

    line_number: LineNumber
    title: str
    quantity: Quantity
    unit_price: Money
    shop_refunded_quantity: int = Field(ge=0, description="How many of the line the shop refunded already.")
    refund_amount: Money = Field(
        description="What to refund for the line: unit_price times (quantity less shop_refunded_quantity)."
    )


class ReturnStatusMove(_Shape):
    """One move of a return to its next status."""

    from_status: ReturnStatus = Field(alias="from")
    to_status: ReturnStatus = Field(alias="to")
    at: datetime
    note: Text


class Return(_Shape):
    """A return (RMA) as Bookly keeps it."""

    rma_number: str = Field(pattern=RMA_NUMBER_PATTERN, examples=["RMA-7K2M9Q4X"])
    order_number: OrderNumber
    customer_email: Text = Field(description="The order's email.")
    status: ReturnStatus
    items: list[ReturnLine]
    refund_amount: Money = Field(description="The lines' refund amounts together.")
    currency: str = Field(pattern=r"^[A-Z]{3}$", description="The order's (ISO 4217).")
    reason: str | None = Field(description="Why, in the customer's or staff's words; null when not given.")
    refund_method: str
    refund_timeline_business_days: int = Field(ge=0)
    granted_as_exception: bool = Field(description="Staff granted it beyond the return policy.")
    created_at: datetime
    updated_at: datetime
    status_history: list[ReturnStatusMove]


class DeliveryCase(_Shape):
    """A delivery problem the customer reported, for staff to resolve."""

    case_number: int
    order_number: OrderNumber
    problem: DeliveryProblem
    items: list[LineTitle]
    details: Text = Field(description="The customer's words.")
    status: CaseStatus
    resolution: Text = Field(description="What staff did, in words to the customer.")
    opened_at: datetime
    resolved_at: datetime | None


class HandedOffConversation(_Shape):
    """A conversation waiting for a person."""

    id: int
    reason: str
    note: Text
    customer_email: Text
    order_numbers: list[OrderNumber]
    handed_off_at: datetime | None
    admin_url: str = Field(description="Where staff read and answer it.")


class _Page(_Shape):
    next: str | None = Field(description="The next page's address (a cursor); null on the last page.")
    previous: str | None


class OrderPage(_Page):
    """Orders that changed, oldest change first."""

    results: list[Order]


class ReturnPage(_Page):
    """Returns that changed, oldest change first."""

    results: list[Return]


class FieldProblem(_Shape):
    field: str = Field(description="The field's path, e.g. items[2].unit_price.")
    problem: str = Field(description="What is wrong, in words (never the value sent).")


class ErrorDetail(_Shape):
    code: str = Field(
        description="What went wrong, for code to act on: invalid_json, unsupported_media_type, "
        "body_too_large, not_authenticated, invalid_key, rate_limited, not_found, method_not_allowed, "
        "not_acceptable, invalid_parameter, invalid_order, order_conflict, server_error."
    )
    message: str = Field(description="The same, for a person.")
    fields: list[FieldProblem] | None = Field(default=None, description="Each problem, by field.")
    reason: str | None = Field(default=None, description="order_conflict: which rule refused the version.")


class Error(_Shape):
    """Every error of the store API."""

    error: ErrorDetail


class Actor(_Shape):
    """Who made a change: the customer through the assistant (in conversation `conversation_id`), a
    member of staff (`staff_member`, their login), or Bookly itself (`system`: a test, a script)."""

    kind: Literal["customer", "staff", "system"]
    conversation_id: int | None = Field(description="The chat's conversation, for a customer's change.")
    staff_member: str | None = Field(description="The login of the member of staff, for theirs.")


# The event catalogue: each event type's data.
class _OfAShop(_Shape):
    shop: str = Field(
        description="The name of the shop the order is of (admin: Shops): two shops may each have an order "
        "of the same number."
    )


class ReturnEventData(_OfAShop):
    return_: Return = Field(alias="return")
    by: Actor


class ReturnStatusChangedData(_OfAShop):
    return_: Return = Field(alias="return")
    from_status: ReturnStatus
    to_status: ReturnStatus
    note: Text = Field(description="Why, in staff's words to the customer.")
    by: Actor


class OrderEventData(_OfAShop):
    order: Order
    by: Actor
    reason: str | None = Field(description="Why, in the customer's words; null when not given.")


class OrderAddressChangedData(_OfAShop):
    order: Order
    previous_address: ShippingAddress | None
    by: Actor


class DeliveryCaseEventData(_OfAShop):
    case: DeliveryCase
    by: Actor


class ConversationEventData(_Shape):
    conversation: HandedOffConversation


EVENT_DATA: dict[str, type[_Shape]] = {
    EventType.RETURN_CREATED: ReturnEventData,
    EventType.RETURN_STATUS_CHANGED: ReturnStatusChangedData,
    EventType.ORDER_CANCELLED: OrderEventData,
    EventType.ORDER_ADDRESS_CHANGED: OrderAddressChangedData,
    EventType.DELIVERY_CASE_OPENED: DeliveryCaseEventData,
    EventType.DELIVERY_CASE_RESOLVED: DeliveryCaseEventData,
    EventType.CONVERSATION_HANDED_OFF: ConversationEventData,
    EventType.CONVERSATION_EMAIL_GIVEN: ConversationEventData,
}


def _event_model(event_type: EventType) -> type[_Shape]:
    """The body POSTed for an event of this type: {"type", "timestamp", "data"}."""
    name = "".join(part.capitalize() for part in event_type.value.replace(".", "_").split("_")) + "Event"
    return create_model(
        name,
        __base__=_Shape,
        __doc__=f"{event_type.label}: the body POSTed to the store's endpoint.",
        type=(Literal[event_type.value], ...),
        timestamp=(datetime, Field(description="When it happened.")),
        data=(EVENT_DATA[event_type], ...),
    )


EVENT_BODIES: dict[str, type[_Shape]] = {event_type: _event_model(event_type) for event_type in EventType}


def event_data_dump(*, type: EventType, data: dict[str, object]) -> dict[str, object]:
    """An event's data as the catalogue has it (refused with pydantic's ValidationError when it is not)."""
    return EVENT_DATA[type].model_validate(data).model_dump(mode="json", by_alias=True)


def shape_dump(model: type[_Shape], /, **fields) -> dict[str, object]:
    """A record's shape as JSON data, checked against its model."""
    return model(**fields).model_dump(mode="json", by_alias=True, exclude_none=False)
