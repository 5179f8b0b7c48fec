"""Outbound: what Bookly sends out to the store's systems, as pydantic models: the store API's answers and
errors, and the data of each webhook event (the event catalogue). The answers and events are built
through these models (orders.shapes, orders.events) and the OpenAPI document is generated from them
(connection.api), so the document cannot say one thing while Bookly sends another.

Each class's name says its direction (OrderOut, beside the Django model Order and the shop's
orders.inbound.OrderIn); its `title` is its name in the published document ("Order"), which stays when
the class is renamed.

What the shop sends in is orders.inbound.OrderIn; an order read here can be sent back unchanged (its
`number`, `source` and `updated_at` are accepted as read: see connection.api.views).

Changing a model here changes the contract: add fields (receivers ignore what they do not know), never
rename or remove one without a new version (`EVENT_CATALOGUE_VERSION`, the API's /v2/).
"""

from datetime import date, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, create_model

from orders.models import CaseStatus, DeliveryProblem, EventType, OrderSource, OrderStatus, ReturnStatus
from orders.numbers import MAX_LENGTH as ORDER_NUMBER_MAX_LENGTH
from orders.patterns import RMA_NUMBER_PATTERN
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
if TYPE_CHECKING:
    Category = str  # mypy reads a Literal of written values only: this one is the store's categories or ""
else:
    Category = Literal[(*ItemCategory.values, "")]


class _Outbound(BaseModel):
    # Python's regular expressions: the order number's pattern is the operator's, and may use what the
    # default (Rust) engine lacks, such as lookarounds.
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, regex_engine="python-re")


class ShippingAddressOut(_Outbound, title="ShippingAddress"):
    """Where an order ships, in the shop's words for an address's fields."""

    country: str = Field(pattern=r"^[A-Z]{2}$", description="ISO 3166-1 alpha-2 code.", examples=["US"])
    name: str
    line1: str
    line2: Text
    city: str
    region: Text = Field(description="The state, province or region, as the country writes it.")
    postal_code: Text


class OrderLineOut(_Outbound, title="OrderLine"):
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


class LineQuantityOut(_Outbound, title="LineQuantity"):
    """How many of one line of the order a parcel holds, or a refund was for."""

    line_number: LineNumber
    quantity: Quantity


class ShipmentOut(_Outbound, title="Shipment"):
    """One parcel the shop sent."""

    carrier: Text
    tracking_number: Text
    tracking_url: Text
    shipped_on: date | None
    delivered_on: date | None
    lines: list[LineQuantityOut]


class RefundOut(_Outbound, title="Refund"):
    """Money the shop gave back on the order."""

    amount: Money
    refunded_on: date | None
    reason: Text
    lines: list[LineQuantityOut]


# Its docstring is its description in the published document, word for word.
class OrderOut(_Outbound, title="Order"):
    """An order as Bookly has it: the fields the shop sends (the body of PUT /orders/{number}), with its
    number, where it last came from and when Bookly's record last changed."""

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
    shipping_address: ShippingAddressOut | None
    items: list[OrderLineOut]
    shipments: list[ShipmentOut]
    refunds: list[RefundOut]
    source: OrderSource = Field(description="How the order last reached Bookly. Read only.")
    updated_at: datetime = Field(
        description="When Bookly's record of the order last changed (what updated_since filters on). Read "
        "only: sent back as read, it is ignored; any other time is the shop's own time of the version."
    )


class OrderWrittenOut(OrderOut, title="OrderWritten"):
    """An order as a PUT left it, with what the PUT did."""

    outcome: Literal["created", "updated", "unchanged"]


class LineTitleOut(_Outbound, title="LineTitle"):
    """An order line, by its number and title."""

    line_number: LineNumber
    title: str


class ReturnLineOut(_Outbound, title="ReturnLine"):
    """An order line inside a return: the whole line comes back."""

    line_number: LineNumber
    title: str
    quantity: Quantity
    unit_price: Money
    shop_refunded_quantity: int = Field(ge=0, description="How many of the line the shop refunded already.")
    refund_amount: Money = Field(
        description="What to refund for the line: unit_price times (quantity less shop_refunded_quantity)."
    )


class ReturnStatusMoveOut(_Outbound, title="ReturnStatusMove"):
    """One move of a return to its next status."""

    from_status: ReturnStatus = Field(alias="from")
    to_status: ReturnStatus = Field(alias="to")
    at: datetime
    note: Text


class ReturnOut(_Outbound, title="Return"):
    """A return (RMA) as Bookly keeps it."""

    rma_number: str = Field(pattern=RMA_NUMBER_PATTERN, examples=["RMA-7K2M9Q4X"])
    order_number: OrderNumber
    customer_email: Text = Field(description="The order's email.")
    status: ReturnStatus
    items: list[ReturnLineOut]
    refund_amount: Money = Field(description="The lines' refund amounts together.")
    currency: str = Field(pattern=r"^[A-Z]{3}$", description="The order's (ISO 4217).")
    reason: str | None = Field(description="Why, in the customer's or staff's words; null when not given.")
    refund_method: str
    refund_timeline_business_days: int = Field(ge=0)
    granted_as_exception: bool = Field(description="Staff granted it beyond the return policy.")
    created_at: datetime
    updated_at: datetime
    status_history: list[ReturnStatusMoveOut]


class DeliveryCaseOut(_Outbound, title="DeliveryCase"):
    """A delivery problem the customer reported, for staff to resolve."""

    case_number: int
    order_number: OrderNumber
    problem: DeliveryProblem
    items: list[LineTitleOut]
    details: Text = Field(description="The customer's words.")
    status: CaseStatus
    resolution: Text = Field(description="What staff did, in words to the customer.")
    opened_at: datetime
    resolved_at: datetime | None


class HandedOffConversationOut(_Outbound, title="HandedOffConversation"):
    """A conversation waiting for a person."""

    id: int
    reason: str
    note: Text
    customer_email: Text
    order_numbers: list[OrderNumber]
    handed_off_at: datetime | None
    admin_url: str = Field(description="Where staff read and answer it.")


class _Page(_Outbound):
    next: str | None = Field(description="The next page's address (a cursor); null on the last page.")
    previous: str | None


class OrderPageOut(_Page, title="OrderPage"):
    """Orders that changed, oldest change first."""

    results: list[OrderOut]


class ReturnPageOut(_Page, title="ReturnPage"):
    """Returns that changed, oldest change first."""

    results: list[ReturnOut]


class FieldProblemOut(_Outbound, title="FieldProblem"):
    field: str = Field(description="The field's path, e.g. items[2].unit_price.")
    problem: str = Field(description="What is wrong, in words (never the value sent).")


class ErrorDetailOut(_Outbound, title="ErrorDetail"):
    code: str = Field(
        description="What went wrong, for code to act on: invalid_json, unsupported_media_type, "
        "body_too_large, not_authenticated, invalid_key, rate_limited, not_found, method_not_allowed, "
        "not_acceptable, invalid_parameter, invalid_order, order_conflict, server_error."
    )
    message: str = Field(description="The same, for a person.")
    fields: list[FieldProblemOut] | None = Field(default=None, description="Each problem, by field.")
    reason: str | None = Field(default=None, description="order_conflict: which rule refused the version.")


class ErrorOut(_Outbound, title="Error"):
    """Every error of the store API."""

    error: ErrorDetailOut


class ActorOut(_Outbound, title="Actor"):
    """Who made a change: the customer through the assistant (in conversation `conversation_id`), a
    member of staff (`staff_member`, their login), or Bookly itself (`system`: a test, a script)."""

    kind: Literal["customer", "staff", "system"]
    conversation_id: int | None = Field(description="The chat's conversation, for a customer's change.")
    staff_member: str | None = Field(description="The login of the member of staff, for theirs.")


# The event catalogue: each event type's data.
class _OfAShop(_Outbound):
    shop: str = Field(
        description="The name of the shop the order is of (admin: Shops): two shops may each have an order "
        "of the same number."
    )


class ReturnEventDataOut(_OfAShop, title="ReturnEventData"):
    return_: ReturnOut = Field(alias="return")
    by: ActorOut


class ReturnStatusChangedDataOut(_OfAShop, title="ReturnStatusChangedData"):
    return_: ReturnOut = Field(alias="return")
    from_status: ReturnStatus
    to_status: ReturnStatus
    note: Text = Field(description="Why, in staff's words to the customer.")
    by: ActorOut


class OrderEventDataOut(_OfAShop, title="OrderEventData"):
    order: OrderOut
    by: ActorOut
    reason: str | None = Field(description="Why, in the customer's words; null when not given.")


class OrderAddressChangedDataOut(_OfAShop, title="OrderAddressChangedData"):
    order: OrderOut
    previous_address: ShippingAddressOut | None
    by: ActorOut


class DeliveryCaseEventDataOut(_OfAShop, title="DeliveryCaseEventData"):
    case: DeliveryCaseOut
    by: ActorOut


class ConversationEventDataOut(_Outbound, title="ConversationEventData"):
    conversation: HandedOffConversationOut


EVENT_DATA: dict[str, type[_Outbound]] = {
    EventType.RETURN_CREATED: ReturnEventDataOut,
    EventType.RETURN_STATUS_CHANGED: ReturnStatusChangedDataOut,
    EventType.ORDER_CANCELLED: OrderEventDataOut,
    EventType.ORDER_ADDRESS_CHANGED: OrderAddressChangedDataOut,
    EventType.DELIVERY_CASE_OPENED: DeliveryCaseEventDataOut,
    EventType.DELIVERY_CASE_RESOLVED: DeliveryCaseEventDataOut,
    EventType.CONVERSATION_HANDED_OFF: ConversationEventDataOut,
    EventType.CONVERSATION_EMAIL_GIVEN: ConversationEventDataOut,
}


def _event_model(event_type: EventType) -> type[_Outbound]:
    """The body POSTed for an event of this type: {"type", "timestamp", "data"}."""
    name = "".join(part.capitalize() for part in event_type.value.replace(".", "_").split("_")) + "Event"
    return create_model(
        name,
        __base__=_Outbound,
        __doc__=f"{event_type.label}: the body POSTed to the store's endpoint.",
        type=(cast(Any, Literal[event_type.value]), ...),  # a type made at run time: mypy cannot read it
        timestamp=(datetime, Field(description="When it happened.")),
        data=(EVENT_DATA[event_type], ...),
    )


EVENT_BODIES: dict[str, type[_Outbound]] = {event_type: _event_model(event_type) for event_type in EventType}


def event_data_dump(*, type: EventType, data: dict[str, object]) -> dict[str, object]:
    """An event's data as the catalogue has it (refused with pydantic's ValidationError when it is not)."""
    return EVENT_DATA[type].model_validate(data).model_dump(mode="json", by_alias=True)


def shape_dump(model: type[_Outbound], /, **fields: object) -> dict[str, object]:
    """A record's shape as JSON data, checked against its model."""
    return model(**fields).model_dump(mode="json", by_alias=True, exclude_none=False)
