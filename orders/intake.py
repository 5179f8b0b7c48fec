"""Orders coming in from the shop, by a file import or the store API: one shape, one validator, one upsert.

The shop is the source of truth for its orders: what it sends replaces the order's fields and items.
What Bookly made of an order stays Bookly's: its returns, delivery cases and the record of its changes.
An order is applied whole or refused whole, with every problem named by field (`items[2].unit_price`),
never echoing the value sent. Its shape is orders.inbound's (pydantic models), each field's rule
orders.inbound_rules'.

The shop's version never moves an order backwards past what Bookly did (order_conflict, the one rule):
- stale: a version whose own `updated_at` (the shop's time, optional) is older than the last one taken;
- status_backwards: status only moves forward, processing -> shipped -> delivered; processing or
  shipped may become cancelled; delivered and cancelled are final (an order cancelled here stays so);
- open_returns: an order with returns that are not closed (any not rejected or cancelled: a refunded
  one too) is not cancelled, whatever its status says;
- address_changed_here: an address Bookly changed at the customer's request is not put back to the one
  it replaced, nor removed (a version without `shipping_address`: the shop's version replaces the whole
  order, so it would blank it), nor replaced by a version the shop dated before that change.
Such a version is refused whole (OrderConflict, 409 on the store API, listed by the import) and recorded
on the order for staff (an OrderChange of kind update_refused).

The shop's `updated_at` may run at most SHOP_CLOCK_AHEAD ahead of our clock (a bad value, refused by
field like any other): a time far ahead would make every later real version stale. An order whose time
was set so before this check existed is freed by staff (order_shop_time_clear, the admin action "Accept
the shop's next update").
"""

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from decimal import Decimal
from enum import StrEnum
from typing import TYPE_CHECKING

from django.db import IntegrityError, transaction
from django.utils import timezone
from pydantic import ValidationError

from orders.addresses import ADDRESS_FIELDS, OrderAddress, shipping_address_of
from orders.inbound import (
    ITEM_FIELDS,
    SHOP_ADDRESS_FIELDS,
    OrderIn,
    OrderLineIn,
    RefundIn,
    ShipmentIn,
    order_problems,
)
from orders.kinds import item_kind_of
from orders.models import (
    Order,
    OrderChange,
    OrderChangeKind,
    OrderChangeState,
    OrderItem,
    OrderSource,
    OrderStatus,
    Refund,
    RefundLine,
    Shipment,
    ShipmentLine,
    Shop,
)
from orders.models.parts import LineCount
from orders.numbers import ORDER_NUMBERS
from orders.outbound import OrderOut, shape_dump
from orders.selectors import order_open_return_numbers

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class OrderRefused(Exception):
    """An order the store cannot take as sent: `problems` is [{"field", "problem"}], every one found."""

    def __init__(self, problems: list[dict[str, str]]):
        super().__init__("; ".join(f"{p['field']} {p['problem']}" for p in problems))
        self.problems = problems


class NumberOfAnotherShape(OrderRefused):
    """Refused for its number alone, which is not in its shop's shape (a new shop whose shape staff have
    not set yet): taken once they have."""


@dataclass(frozen=True)
class IncomingOrder:
    """An order as the shop sent it, every field checked."""

    number: str
    customer_name: str
    customer_email: str
    status: str
    ordered_on: date
    delivered_on: date | None
    tracking_number: str
    carrier: str
    total: Decimal
    currency: str  # blank: not sent, its shop's (order_upsert)
    address: OrderAddress | None
    items: tuple[OrderLineIn, ...]
    updated_at: datetime | None = None  # the shop's own time of this version, when it sends one
    # None: not sent (a CSV row has no room for them), and those Bookly has are kept.
    shipments: tuple[ShipmentIn, ...] | None = None
    refunds: tuple[RefundIn, ...] | None = None
    # The platform's own id of the order, from a platform's connector (never from the shop's body):
    # kept for writing changes back. Blank: the one Bookly has is kept.
    shop_order_id: str = ""
    # The shop's currency and total when the customer paid in another (the amounts above are theirs).
    shop_currency: str = ""
    shop_total: Decimal | None = None
    discount_total: Decimal = Decimal("0.00")
    payment_voided: bool = False


def incoming_order_clean(*, number: object, data: object) -> IncomingOrder:
    """The order the shop sent, checked field by field and as a whole (orders.inbound.OrderIn);
    OrderRefused with every problem."""
    if not isinstance(data, Mapping):
        raise OrderRefused([{"field": "(order)", "problem": "must be a JSON object"}])
    problems: list[dict[str, str]] = []
    clean_number = (ORDER_NUMBERS.canonical(number) if isinstance(number, str) else None) or ""
    if not clean_number:
        problems.append({"field": "number", "problem": f"must look like {ORDER_NUMBERS.example}"})
    try:
        order = OrderIn.model_validate(dict(data))
    except ValidationError as invalid:
        raise OrderRefused(problems + order_problems(error=invalid)) from None
    if problems and isinstance(number, str) and number.strip():
        raise NumberOfAnotherShape(problems)  # the order is sound: its number is of no shop's shape yet
    if problems:
        raise OrderRefused(problems)
    return IncomingOrder(
        number=clean_number,
        customer_name=order.customer_name,
        customer_email=order.customer_email,
        status=order.status,
        ordered_on=order.ordered_on,
        delivered_on=order.delivered_on,
        tracking_number=order.tracking_number,
        carrier=order.carrier,
        total=order.total,
        currency=order.currency or "",
        shop_currency=order.shop_currency or "",
        shop_total=order.shop_total,
        discount_total=order.discount_total or Decimal("0.00"),  # null: none said
        payment_voided=order.payment_voided,
        address=order.shipping_address.shipping_address() if order.shipping_address else None,
        # A line the shop gave no kind: the kind its words say (orders.kinds), for the return policy.
        items=tuple(
            item
            if item.category
            else item.model_copy(update={"category": item_kind_of(title=item.title, variant=item.variant)})
            for item in order.items
        ),
        updated_at=order.updated_at,
        shipments=order.shipments,
        refunds=order.refunds,
    )


class UpsertOutcome(StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"


def _order_fields(incoming: IncomingOrder) -> dict[str, object]:
    address = incoming.address.as_fields() if incoming.address else dict.fromkeys(ADDRESS_FIELDS, "")
    return {
        "customer_name": incoming.customer_name,
        "customer_email": incoming.customer_email,
        "status": incoming.status,
        "ordered_on": incoming.ordered_on,
        "delivered_on": incoming.delivered_on,
        "tracking_number": incoming.tracking_number,
        "carrier": incoming.carrier,
        "total": incoming.total,
        "currency": incoming.currency,
        "shop_currency": incoming.shop_currency,
        "shop_total": incoming.shop_total,
        "discount_total": incoming.discount_total,
        "payment_voided": incoming.payment_voided,
        **{f"ship_{name}": value for name, value in address.items()},
        **({"shop_order_id": incoming.shop_order_id} if incoming.shop_order_id else {}),
    }


def _item_fields(item: OrderLineIn) -> dict[str, object]:
    return {name: getattr(item, name) for name in ITEM_FIELDS if name != "line_number"}


# The order's parts the shop sends whole, each a list of records with lines of the order: its parcels
# and its refunds (the model, its lines' model, and the fields besides the lines).
_PARTS: dict[str, tuple[type[Shipment] | type[Refund], type[LineCount], tuple[str, ...]]] = {
    "shipments": (
        Shipment,
        ShipmentLine,
        ("carrier", "tracking_number", "tracking_url", "shipped_on", "delivered_on"),
    ),
    "refunds": (Refund, RefundLine, ("amount", "refunded_on", "reason")),
}


def _parts_as_sent(incoming: IncomingOrder, name: str) -> list[tuple]:
    """The shop's parcels or refunds, in one comparable form."""
    fields = _PARTS[name][2]
    return [
        (
            *(getattr(part, field) for field in fields),
            tuple(sorted((line.line_number, line.quantity) for line in part.lines)),
        )
        for part in getattr(incoming, name) or ()
    ]


def _parts_stored(order: Order, name: str) -> list[tuple]:
    fields = _PARTS[name][2]
    return [
        (
            *(getattr(part, field) for field in fields),
            tuple(sorted((line.item.line_number, line.quantity) for line in part.lines.all())),
        )
        for part in getattr(order, name).prefetch_related("lines__item")
    ]


def _parts_write(order: Order, incoming: IncomingOrder, name: str) -> None:
    """The order's parcels or refunds, replaced by the shop's (its items already stored)."""
    model, line_model, fields = _PARTS[name]
    getattr(order, name).all().delete()
    items = {item.line_number: item for item in order.items.all()}
    owner = line_model.PART  # its lines' field of their part
    for number, sent in enumerate(getattr(incoming, name) or (), start=1):
        part = model.objects.create(
            order=order, number=number, **{field: getattr(sent, field) for field in fields}
        )
        line_model.objects.bulk_create(
            line_model(**{owner: part}, item=items[line.line_number], quantity=line.quantity)
            for line in sent.lines
        )


class ConflictCode(StrEnum):
    """Why a version of an order the shop sent was refused as undoing what Bookly did (module docstring)."""

    STALE = "stale"
    STATUS_BACKWARDS = "status_backwards"
    OPEN_RETURNS = "open_returns"
    ADDRESS_CHANGED_HERE = "address_changed_here"
    OTHER_SOURCE = "other_source"


# Where orders come from that keep them up to date: an order one of them created is that one's, and
# another's version of it (a Shopify delivery for a WooCommerce order of the same number, the store API
# writing over a Shopify order) is refused. A file import and the demo fixture own nothing: a shop
# connected later takes over the orders imported from it.
_OWNING_SOURCES = frozenset({OrderSource.API, OrderSource.SHOPIFY, OrderSource.WOOCOMMERCE})


class OrderConflict(OrderRefused):
    """A well-formed version of an order that would undo what Bookly did: `code` (a ConflictCode) and
    `message`, a sentence for the shop; refused whole, like any refused order, and recorded on the order."""

    def __init__(self, code: ConflictCode, field: str, message: str):
        super().__init__([{"field": field, "problem": message}])
        self.code, self.message = code, f"{field} {message}"


# Where the shop may move an order's status: forward only; delivered and cancelled are final.
STATUS_MAY_BECOME: dict[str, frozenset[str]] = {
    OrderStatus.PROCESSING: frozenset(OrderStatus.values),
    OrderStatus.SHIPPED: frozenset({OrderStatus.SHIPPED, OrderStatus.DELIVERED, OrderStatus.CANCELLED}),
    OrderStatus.DELIVERED: frozenset({OrderStatus.DELIVERED}),
    OrderStatus.CANCELLED: frozenset({OrderStatus.CANCELLED}),
}


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def order_conflict(*, order: Order, incoming: IncomingOrder) -> OrderConflict | None:
    """Whether this version of the order would undo what Bookly did (the rule in the module's docstring),
    and why; None when it may be applied. Read under the order's row lock by order_upsert."""
    if incoming.updated_at and order.shop_updated_at and incoming.updated_at < order.shop_updated_at:
        return OrderConflict(
            ConflictCode.STALE,
            "updated_at",
            f"is older than the version Bookly already has (updated_at {_when(order.shop_updated_at)}): "
            "an older copy of the order is not applied",
        )
    # What Bookly made (one still waiting for the shop, or one it did not make, is not Bookly's yet).
    changes = list(
        order.changes.filter(state=OrderChangeState.MADE)
        .exclude(kind=OrderChangeKind.UPDATE_REFUSED)
        .order_by("changed_at", "id")
    )
    if incoming.status not in STATUS_MAY_BECOME[order.status]:
        cancelled_here = next((c for c in changes if c.kind == OrderChangeKind.CANCELLED), None)
        why = (
            f"it was cancelled here at the customer's request on {_when(cancelled_here.changed_at)}"
            if cancelled_here
            else "an order's status only moves forward (processing, shipped, delivered) and "
            f"{order.status} is final"
        )
        return OrderConflict(
            ConflictCode.STATUS_BACKWARDS,
            "status",
            f"would move the order back from {order.status} to {incoming.status}: {why}",
        )
    if incoming.status == OrderStatus.CANCELLED and order.status != OrderStatus.CANCELLED:
        open_returns = order_open_return_numbers(order=order)
        if open_returns:
            return OrderConflict(
                ConflictCode.OPEN_RETURNS,
                "status",
                f"cannot be cancelled: the order has returns here ({', '.join(open_returns)}), and a "
                "refund and a cancellation for the same books cannot both stand",
            )
    moved = [c for c in changes if c.kind == OrderChangeKind.ADDRESS_CHANGED]
    current = {name: getattr(order, f"ship_{name}") for name in ADDRESS_FIELDS}
    sent = incoming.address.as_fields() if incoming.address else dict.fromkeys(ADDRESS_FIELDS, "")
    if moved and sent != current:
        replaced = {name: moved[-1].before.get(name, "") for name in ADDRESS_FIELDS}
        # A version without an address keeps the one changed here (order_upsert): not a conflict.
        if incoming.address is not None and (
            sent == replaced or (incoming.updated_at and incoming.updated_at < moved[-1].changed_at)
        ):
            return OrderConflict(
                ConflictCode.ADDRESS_CHANGED_HERE,
                "shipping_address",
                "would undo the address change made here at the customer's request on "
                f"{_when(moved[-1].changed_at)}: send the order with its new address",
            )
    return None


def _other_source(*, order: Order, source: str) -> OrderConflict | None:
    """Whether the order is another source's (_OWNING_SOURCES): its version from this one is refused. A
    file import (staff's, from the shop's own export) is not refused for it: the other rules hold."""
    if source in _OWNING_SOURCES and order.source in _OWNING_SOURCES and order.source != source:
        owner = OrderSource(order.source).label
        return OrderConflict(
            ConflictCode.OTHER_SOURCE,
            "number",
            f"is an order that came from {owner}: only {owner} updates it (an order of the same number "
            "from elsewhere is another order)",
        )
    return None


def _conflict_record(*, order: Order, incoming: IncomingOrder, conflict: OrderConflict, source: str) -> None:
    """Keep the refusal on the order for staff; a shop sending the same refused version again (a sync
    that retries) adds no second line."""
    after = {
        "status": incoming.status,
        "updated_at": _when(incoming.updated_at) if incoming.updated_at else None,
        "source": source,
        "reason": conflict.code.value,
        "message": conflict.message,
    }
    last = order.changes.filter(kind=OrderChangeKind.UPDATE_REFUSED).order_by("-changed_at", "-id").first()
    if last is not None and last.after == after:
        return
    before = {
        "status": order.status,
        "shop_updated_at": _when(order.shop_updated_at) if order.shop_updated_at else None,
    }
    OrderChange.objects.create(order=order, kind=OrderChangeKind.UPDATE_REFUSED, before=before, after=after)


def order_upsert(*, incoming: IncomingOrder, source: OrderSource, shop: Shop) -> tuple[Order, UpsertOutcome]:
    """Create `shop`'s order of that number, or replace its fields and items with the shop's (another
    shop's order of the same number is another order): one transaction, under the order's row lock. A
    version that would undo what Bookly did is refused whole (OrderConflict) and the refusal recorded on
    the order: the record is written in the caller's transaction, so a caller that wraps this call in
    its own atomic block catches OrderConflict inside it. A line the shop no longer sends is removed,
    unless a return or a delivery case holds it (OrderRefused: the order is left as it was)."""
    number = shop.numbering.canonical(incoming.number)
    if number is None:  # another shop's shape (or one of the store's before)
        problem = f"must look like {shop.number_example}, the shape of {shop}'s numbers"
        raise NumberOfAnotherShape([{"field": "number", "problem": problem}])
    incoming = replace(incoming, number=number, currency=incoming.currency or shop.currency)
    if incoming.shop_currency == incoming.currency:
        problem = "must be another currency than the order's, or left out"
        raise OrderRefused([{"field": "shop_currency", "problem": problem}])
    fields = _order_fields(incoming)
    conflict = None
    with transaction.atomic():
        order = Order.objects.select_for_update().filter(shop=shop, number=incoming.number).first()
        if order is None:
            try:
                with transaction.atomic():
                    order = Order.objects.create(
                        shop=shop,
                        number=incoming.number,
                        source=source,
                        shop_updated_at=incoming.updated_at,
                        **fields,
                    )
                    OrderItem.objects.bulk_create(
                        OrderItem(order=order, line_number=item.line_number, **_item_fields(item))
                        for item in incoming.items
                    )
                    for name in _PARTS:
                        _parts_write(order, incoming, name)
                return order, UpsertOutcome.CREATED
            except IntegrityError:
                # Another request created it a moment ago (a missing row has nothing to lock): replace it.
                order = Order.objects.select_for_update().get(shop=shop, number=incoming.number)
        conflict = _other_source(order=order, source=source) or order_conflict(order=order, incoming=incoming)
        if conflict is not None:
            _conflict_record(order=order, incoming=incoming, conflict=conflict, source=source)
        else:
            if (
                incoming.address is None
                and order.changes.filter(
                    kind=OrderChangeKind.ADDRESS_CHANGED, state=OrderChangeState.MADE
                ).exists()
            ):
                # A version without an address (a shop that sends none) keeps the one the customer asked
                # for here: the rest of the version (shipped, delivered) still applies.
                fields = {
                    **fields,
                    **{f"ship_{name}": getattr(order, f"ship_{name}") for name in ADDRESS_FIELDS},
                }
            outcome = _replace(order, incoming, fields, source)
    if conflict is not None:
        # Raised outside the block above, so that the record of the refusal is kept.
        raise conflict
    return order, outcome


def order_shop_time_clear(*, order: Order, changed_by: "User") -> OrderChange | None:
    """Forget the shop's time of the version Bookly last took, so that the shop's next update is taken
    whatever its `updated_at` (staff's way out when that time is wrong: set ahead by a shop clock before
    SHOP_CLOCK_AHEAD was checked). The rest of the rule still holds. Recorded as an OrderChange; None
    when there was no time to forget."""
    with transaction.atomic():
        locked = Order.objects.select_for_update().get(pk=order.pk)
        if locked.shop_updated_at is None:
            return None
        change = OrderChange.objects.create(
            order=locked,
            kind=OrderChangeKind.SHOP_TIME_CLEARED,
            before={"shop_updated_at": _when(locked.shop_updated_at)},
            after={"shop_updated_at": None},
            changed_by=changed_by,
        )
        locked.shop_updated_at = None
        locked.save(update_fields=["shop_updated_at"])
    return change


def _replace(order: Order, incoming: IncomingOrder, fields: dict[str, object], source: str) -> UpsertOutcome:
    current = {item.line_number: item for item in order.items.all()}
    wanted = {item.line_number: item for item in incoming.items}
    changed_fields = [name for name, value in fields.items() if getattr(order, name) != value]
    changed_items = [
        item
        for line, item in wanted.items()
        if line not in current
        or any(getattr(current[line], name) != value for name, value in _item_fields(item).items())
    ]
    gone = [current[line] for line in current if line not in wanted]
    changed_parts = [
        name
        for name in _PARTS
        if getattr(incoming, name) is not None
        and _parts_stored(order, name) != _parts_as_sent(incoming, name)
    ]
    newer = incoming.updated_at is not None and incoming.updated_at != order.shop_updated_at
    if not (changed_fields or changed_items or gone or changed_parts):
        if newer:
            # The shop's clock moved on with nothing else: kept for the next staleness check only.
            order.shop_updated_at = incoming.updated_at
            order.save(update_fields=["shop_updated_at"])
        return UpsertOutcome.UNCHANGED
    held = [item.line_number for item in gone if item.return_lines.exists() or item.delivery_cases.exists()]
    if held:
        raise OrderRefused(
            [
                {
                    "field": "items",
                    "problem": f"line {line} is part of a return or a delivery case here, so it "
                    "cannot be removed",
                }
                for line in held
            ]
        )
    for name in changed_fields:
        setattr(order, name, fields[name])
    if newer:
        order.shop_updated_at = incoming.updated_at
    order.source = source
    order.updated_at = timezone.now()
    order.save()
    OrderItem.objects.filter(pk__in=[item.pk for item in gone]).delete()
    for item in changed_items:
        OrderItem.objects.update_or_create(
            order=order, line_number=item.line_number, defaults=_item_fields(item)
        )
    for name in changed_parts:
        _parts_write(order, incoming, name)
    return UpsertOutcome.UPDATED


def shipping_address_shape(*, order: Order) -> dict[str, str] | None:
    """The order's address in the shop's shape (the store API's answer)."""
    address = shipping_address_of(order=order)
    return address_shape(address=address) if address is not None else None


def address_shape(*, address: OrderAddress) -> dict[str, str]:
    """An address in the shop's shape."""
    return {theirs: getattr(address, mine) for theirs, mine in SHOP_ADDRESS_FIELDS.items()}


def order_shape(*, order: Order) -> dict[str, object]:
    """The order in the shop's shape (the store API's answer): what intake takes, with its number, where
    it came from and when it last changed (orders.outbound.OrderOut)."""
    return shape_dump(
        OrderOut,
        number=order.number,
        customer_name=order.customer_name,
        customer_email=order.customer_email,
        status=order.status,
        ordered_on=order.ordered_on,
        delivered_on=order.delivered_on,
        tracking_number=order.tracking_number,
        carrier=order.carrier,
        total=str(order.total),
        currency=order.currency,
        shop_currency=order.shop_currency or None,
        shop_total=str(order.shop_total) if order.shop_total is not None else None,
        discount_total=str(order.discount_total),
        payment_voided=order.payment_voided,
        shipping_address=shipping_address_shape(order=order),
        items=[
            {
                "line_number": item.line_number,
                "title": item.title,
                "author": item.author,
                "unit_price": str(item.unit_price),
                "quantity": item.quantity,
                "category": item.category,
                "sku": item.sku,
                "variant": item.variant,
                "line_id": item.line_id,
                "requires_shipping": item.requires_shipping,
            }
            for item in order.items.all()
        ],
        shipments=[
            {
                **{name: getattr(shipment, name) for name in ("carrier", "tracking_number", "tracking_url")},
                "shipped_on": shipment.shipped_on,
                "delivered_on": shipment.delivered_on,
                "lines": [
                    {"line_number": line.item.line_number, "quantity": line.quantity}
                    for line in shipment.lines.all()
                ],
            }
            for shipment in order.shipments.all()
        ],
        refunds=[
            {
                "amount": str(refund.amount),
                "refunded_on": refund.refunded_on,
                "reason": refund.reason,
                "lines": [
                    {"line_number": line.item.line_number, "quantity": line.quantity}
                    for line in refund.lines.all()
                ],
            }
            for refund in order.refunds.all()
        ],
        source=order.source,
        updated_at=order.updated_at,
    )
