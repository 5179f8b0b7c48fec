"""Orders coming in from the shop, by a file import or the store API: one shape, one validator, one upsert.

The shop is the source of truth for its orders: what it sends replaces the order's fields and items.
What Bookly made of an order stays Bookly's: its returns, delivery cases and the record of its changes.
An order is applied whole or refused whole, with every problem named by field (`items[2].unit_price`),
never echoing the value sent.

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

The shape (the API's body; a JSON Lines import adds "number"):

    {"customer_name": "Ada Reader", "customer_email": "ada@example.com", "status": "shipped",
     "ordered_on": "2026-04-01", "delivered_on": null, "tracking_number": "1Z999AA10123456799",
     "carrier": "UPS", "total": "24.99",
     "shipping_address": {"name": "Ada Reader", "line1": "1 Main St", "line2": "", "city": "Springfield",
                          "region": "IL", "postal_code": "62701", "country": "US"},
     "items": [{"line_number": 1, "title": "Dune", "author": "Frank Herbert", "unit_price": "24.99",
                "quantity": 1, "category": "fiction"}]}
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from enum import StrEnum

from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from orders.addresses import (
    ADDRESS_FIELDS,
    AddressInvalid,
    ShippingAddress,
    shipping_address_clean,
    shipping_address_of,
)
from orders.models import (
    Order,
    OrderChange,
    OrderChangeKind,
    OrderItem,
    OrderSource,
    OrderStatus,
)
from orders.numbers import ORDER_NUMBERS
from orders.selectors import order_open_return_numbers
from store.categories import ItemCategory
from store.text import text_has_unseen, text_single_line

ORDER_FIELDS = (
    "customer_name",
    "customer_email",
    "status",
    "ordered_on",
    "delivered_on",
    "tracking_number",
    "carrier",
    "total",
    "shipping_address",
    "items",
    "updated_at",
)
ORDER_REQUIRED = frozenset({"customer_name", "customer_email", "status", "ordered_on", "total", "items"})
ITEM_FIELDS = ("line_number", "title", "author", "unit_price", "quantity", "category")
ITEM_REQUIRED = frozenset({"line_number", "title", "unit_price", "quantity", "category"})
# The shop's address fields, and ours (orders.addresses): the store ships within the United States.
SHOP_ADDRESS_FIELDS = {"name": "to", "line1": "line1", "line2": "line2", "city": "city", "region": "state",
                  "postal_code": "zip", "country": None}  # fmt: skip
SHIPS_TO_COUNTRIES = frozenset({"US"})
MAX_ITEMS = 200
# How far ahead of our clock the shop's `updated_at` may be: two clocks a little apart, not a time zone
# read wrong (an hour or more) or a year mistyped.
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
    "shipping_address": {
        "name": "Ada Reader",
        "line1": "1 Main St",
        "line2": "",
        "city": "Springfield",
        "region": "IL",
        "postal_code": "62701",
        "country": "US",
    },
    "items": [
        {
            "line_number": 1,
            "title": "Dune",
            "author": "Frank Herbert",
            "unit_price": "24.99",
            "quantity": 1,
            "category": "fiction",
        }
    ],
}
_TEXT_LENGTHS = {
    field: Order._meta.get_field(field).max_length
    for field in ("customer_name", "tracking_number", "carrier")
}
_ITEM_TEXT_LENGTHS = {field: OrderItem._meta.get_field(field).max_length for field in ("title", "author")}
_MAX_QUANTITY = 999


class OrderRefused(Exception):
    """An order the store cannot take as sent: `problems` is [{"field", "problem"}], every one found."""

    def __init__(self, problems: list[dict[str, str]]):
        super().__init__("; ".join(f"{p['field']} {p['problem']}" for p in problems))
        self.problems = problems


@dataclass(frozen=True)
class IncomingItem:
    line_number: int
    title: str
    author: str
    unit_price: Decimal
    quantity: int
    category: str


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
    address: ShippingAddress | None
    items: tuple[IncomingItem, ...]
    updated_at: datetime | None = None  # the shop's own time of this version, when it sends one


class _Reader:
    """Reads one object's fields, collecting every problem by its field's path."""

    def __init__(self, data: Mapping, path: str, problems: list[dict[str, str]]):
        self.data, self.path, self.problems = data, path, problems

    def problem(self, name: str, problem: str) -> None:
        self.problems.append({"field": f"{self.path}{name}", "problem": problem})

    def known(self, fields, required) -> None:
        for name in sorted(set(self.data) - set(fields), key=str):
            # The name itself is the sender's text: named only when it is a plain identifier.
            shown = name if isinstance(name, str) and re.fullmatch(r"[a-z_]{1,40}", name) else "(unknown)"
            self.problem(shown, "is not a field of an order here" if not self.path else "is not a field here")
        # A required field sent as null is as missing as one not sent.
        for name in sorted(name for name in required if self.data.get(name) is None):
            self.problem(name, "is required")

    def text(self, name: str, *, max_length: int, required: bool = False) -> str:
        value = self.data.get(name)
        if value is None or value == "":
            if required and value == "":
                self.problem(name, "must not be empty")
            return ""
        if not isinstance(value, str):
            self.problem(name, "must be a string")
            return ""
        if text_has_unseen(value.replace("\t", " ")):
            self.problem(name, "must not contain control or invisible characters")
            return ""
        value = text_single_line(value)
        if len(value) > max_length:
            self.problem(name, f"must be at most {max_length} characters")
            return ""
        if required and not value:
            self.problem(name, "must not be empty")
        return value

    def choice(self, name: str, choices) -> str:
        value = self.data.get(name)
        if value not in choices.values:
            if name in self.data:
                self.problem(name, "must be one of " + ", ".join(choices.values))
            return ""
        return value

    def date(self, name: str) -> date | None:
        value = self.data.get(name)
        if value is None:
            return None
        try:
            if not isinstance(value, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
                raise ValueError
            return date.fromisoformat(value)
        except ValueError:
            self.problem(name, "must be a date like 2026-04-01")
            return None

    def moment(self, name: str) -> datetime | None:
        value = self.data.get(name)
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
            self.problem(name, "must be a time like 2026-04-01T09:30:00Z, with its time zone")
        return moment

    def money(self, name: str, *, max_digits: int) -> Decimal | None:
        value = self.data.get(name)
        if value is None:
            return None
        try:
            if isinstance(value, bool) or not isinstance(value, str | int):
                raise InvalidOperation
            amount = Decimal(str(value).strip())
        except InvalidOperation:
            self.problem(name, 'must be an amount like "24.99" (a string)')
            return None
        if not amount.is_finite() or amount < 0 or amount.as_tuple().exponent < -2:
            self.problem(name, "must be zero or more, with at most two decimals")
            return None
        if amount >= Decimal(10) ** (max_digits - 2):
            self.problem(name, f"must be less than {Decimal(10) ** (max_digits - 2):,}")
            return None
        return amount.quantize(Decimal("0.01"))

    def whole_number(self, name: str, *, low: int, high: int) -> int | None:
        value = self.data.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            if name in self.data:
                self.problem(name, f"must be a whole number from {low} to {high}")
            return None
        return value


def incoming_order_clean(*, number: object, data: object) -> IncomingOrder:
    """The order the shop sent, checked field by field and as a whole; OrderRefused with every problem."""
    problems: list[dict[str, str]] = []
    if not isinstance(data, Mapping):
        raise OrderRefused([{"field": "(order)", "problem": "must be a JSON object"}])
    clean_number = (ORDER_NUMBERS.canonical(number) if isinstance(number, str) else None) or ""
    if not clean_number:
        problems.append({"field": "number", "problem": f"must look like {ORDER_NUMBERS.example}"})
    order = _Reader(data, "", problems)
    order.known(ORDER_FIELDS, ORDER_REQUIRED)
    email = order.text("customer_email", max_length=254, required=True)
    if len(email.lower()) > 254:  # "İ" lowercases to two characters: the column holds the lowered email
        order.problem("customer_email", "must be at most 254 characters")
        email = ""
    email = email.lower()
    if email:
        try:
            validate_email(email)
        except ValidationError:
            order.problem("customer_email", "must be an email address")
    status = order.choice("status", OrderStatus)
    ordered_on, delivered_on = order.date("ordered_on"), order.date("delivered_on")
    tracking_number = order.text("tracking_number", max_length=_TEXT_LENGTHS["tracking_number"])
    if status == OrderStatus.DELIVERED and data.get("delivered_on") is None:
        order.problem("delivered_on", "is required for a delivered order")
    elif status and status != OrderStatus.DELIVERED and delivered_on is not None:
        order.problem("delivered_on", "must be null unless the order is delivered")
    if ordered_on and delivered_on and delivered_on < ordered_on:
        order.problem("delivered_on", "must not be before ordered_on")
    if status == OrderStatus.PROCESSING and tracking_number:
        order.problem("tracking_number", "must be empty while the order is processing")
    incoming = IncomingOrder(
        number=clean_number,
        customer_name=order.text("customer_name", max_length=_TEXT_LENGTHS["customer_name"], required=True),
        customer_email=email,
        status=status,
        ordered_on=ordered_on,
        delivered_on=delivered_on,
        tracking_number=tracking_number,
        carrier=order.text("carrier", max_length=_TEXT_LENGTHS["carrier"]),
        total=order.money("total", max_digits=Order._meta.get_field("total").max_digits),
        address=_address(data.get("shipping_address"), problems),
        items=_items(data["items"], problems) if data.get("items") is not None else (),
        updated_at=_shop_time(order),
    )
    if problems:
        raise OrderRefused(problems)
    return incoming


def _shop_time(order: _Reader) -> datetime | None:
    moment = order.moment("updated_at")
    if moment and moment > timezone.now() + SHOP_CLOCK_AHEAD:
        minutes = int(SHOP_CLOCK_AHEAD.total_seconds() // 60)
        order.problem(
            "updated_at",
            f"must not be more than {minutes} minutes ahead of the time now: check the shop's clock and "
            "time zone",
        )
        return None
    return moment


def _address(value: object, problems: list[dict[str, str]]) -> ShippingAddress | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        problems.append({"field": "shipping_address", "problem": "must be an object"})
        return None
    reader = _Reader(value, "shipping_address.", problems)
    reader.known(SHOP_ADDRESS_FIELDS, frozenset({"name", "line1", "city", "region", "postal_code"}))
    country = value.get("country", "US")
    if not isinstance(country, str) or country.strip().upper() not in SHIPS_TO_COUNTRIES:
        reader.problem("country", "must be US: the store ships within the United States")
    try:
        return shipping_address_clean(
            fields={mine: value.get(theirs) for theirs, mine in SHOP_ADDRESS_FIELDS.items() if mine}
        )
    except AddressInvalid as invalid:
        theirs = {mine: theirs for theirs, mine in SHOP_ADDRESS_FIELDS.items() if mine}
        for problem in invalid.problems:
            if problem["field"] in theirs and theirs[problem["field"]] in value:
                reader.problem(theirs[problem["field"]], problem["problem"])
        return None


def _items(value: object, problems: list[dict[str, str]]) -> tuple[IncomingItem, ...]:
    if not isinstance(value, list) or not value:
        problems.append({"field": "items", "problem": "must be a list of at least one item"})
        return ()
    if len(value) > MAX_ITEMS:
        problems.append({"field": "items", "problem": f"must hold at most {MAX_ITEMS} items"})
        return ()
    items, lines = [], set()
    for index, raw in enumerate(value):
        if not isinstance(raw, Mapping):
            problems.append({"field": f"items[{index}]", "problem": "must be an object"})
            continue
        item = _Reader(raw, f"items[{index}].", problems)
        item.known(ITEM_FIELDS, ITEM_REQUIRED)
        line_number = item.whole_number("line_number", low=1, high=MAX_ITEMS * 100)
        if line_number in lines:
            item.problem("line_number", "is used by another item of this order")
        lines.add(line_number)
        items.append(
            IncomingItem(
                line_number=line_number,
                title=item.text("title", max_length=_ITEM_TEXT_LENGTHS["title"], required=True),
                author=item.text("author", max_length=_ITEM_TEXT_LENGTHS["author"]),
                unit_price=item.money(
                    "unit_price", max_digits=OrderItem._meta.get_field("unit_price").max_digits
                ),
                quantity=item.whole_number("quantity", low=1, high=_MAX_QUANTITY),
                category=item.choice("category", ItemCategory),
            )
        )
    return tuple(items)


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
        **{f"ship_{name}": value for name, value in address.items()},
    }


def _item_fields(item: IncomingItem) -> dict[str, object]:
    return {name: getattr(item, name) for name in ITEM_FIELDS if name != "line_number"}


class ConflictCode(StrEnum):
    """Why a version of an order the shop sent was refused as undoing what Bookly did (module docstring)."""

    STALE = "stale"
    STATUS_BACKWARDS = "status_backwards"
    OPEN_RETURNS = "open_returns"
    ADDRESS_CHANGED_HERE = "address_changed_here"


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
    changes = list(order.changes.exclude(kind=OrderChangeKind.UPDATE_REFUSED).order_by("changed_at", "id"))
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


def order_upsert(*, incoming: IncomingOrder, source: OrderSource) -> tuple[Order, UpsertOutcome]:
    """Create the order, or replace its fields and items with the shop's: one transaction, under the
    order's row lock. A version that would undo what Bookly did is refused whole (OrderConflict) and the
    refusal recorded on the order: the record is written in the caller's transaction, so a caller that
    wraps this call in its own atomic block catches OrderConflict inside it. A line the shop no longer
    sends is removed, unless a return or a delivery case holds it (OrderRefused: the order is left as it
    was)."""
    fields = _order_fields(incoming)
    conflict = None
    with transaction.atomic():
        order = Order.objects.select_for_update().filter(number=incoming.number).first()
        if order is None:
            try:
                with transaction.atomic():
                    order = Order.objects.create(
                        number=incoming.number, source=source, shop_updated_at=incoming.updated_at, **fields
                    )
                    OrderItem.objects.bulk_create(
                        OrderItem(order=order, line_number=item.line_number, **_item_fields(item))
                        for item in incoming.items
                    )
                return order, UpsertOutcome.CREATED
            except IntegrityError:
                # Another request created it a moment ago (a missing row has nothing to lock): replace it.
                order = Order.objects.select_for_update().get(number=incoming.number)
        conflict = order_conflict(order=order, incoming=incoming)
        if conflict is not None:
            _conflict_record(order=order, incoming=incoming, conflict=conflict, source=source)
        else:
            if (
                incoming.address is None
                and order.changes.filter(kind=OrderChangeKind.ADDRESS_CHANGED).exists()
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


def order_shop_time_clear(*, order: Order, changed_by) -> OrderChange | None:
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
    newer = incoming.updated_at is not None and incoming.updated_at != order.shop_updated_at
    if not (changed_fields or changed_items or gone):
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
    return UpsertOutcome.UPDATED


def shipping_address_shape(*, order: Order) -> dict[str, str] | None:
    """The order's address in the shop's shape (the store API's answer)."""
    address = shipping_address_of(order=order)
    return address_shape(address=address) if address is not None else None


def address_shape(*, address: ShippingAddress) -> dict[str, str]:
    """An address in the shop's shape."""
    return {theirs: getattr(address, mine) if mine else "US" for theirs, mine in SHOP_ADDRESS_FIELDS.items()}


def order_shape(*, order: Order) -> dict[str, object]:
    """The order in the shop's shape (the store API's answer): what intake takes, with its number, where
    it came from and when it last changed."""
    return {
        "number": order.number,
        "customer_name": order.customer_name,
        "customer_email": order.customer_email,
        "status": order.status,
        "ordered_on": order.ordered_on.isoformat(),
        "delivered_on": order.delivered_on.isoformat() if order.delivered_on else None,
        "tracking_number": order.tracking_number,
        "carrier": order.carrier,
        "total": str(order.total),
        "shipping_address": shipping_address_shape(order=order),
        "items": [
            {
                "line_number": item.line_number,
                "title": item.title,
                "author": item.author,
                "unit_price": str(item.unit_price),
                "quantity": item.quantity,
                "category": item.category,
            }
            for item in order.items.all()
        ],
        "source": order.source,
        "updated_at": order.updated_at.isoformat(),
    }
