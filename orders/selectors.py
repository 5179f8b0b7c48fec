import hmac
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from enum import StrEnum
from functools import cached_property

from django.db.models import Q, QuerySet

from orders.addresses import country_name, shipping_address_of
from orders.models import (
    ITEM_PROBLEMS,
    RETURN_STATUSES_RELEASING_ITEMS,
    CaseStatus,
    DeliveryCase,
    DeliveryProblem,
    Order,
    OrderChange,
    OrderChangeKind,
    OrderChangeState,
    OrderItem,
    OrderStatus,
    ReturnLine,
    ReturnRecord,
    Shop,
)
from orders.numbers import ORDER_NUMBERS
from policies.models import ReturnPolicy
from policies.selectors import return_policy_get

# Compared against when no order matches, so that a missing order and a wrong
# email cost the same work.
_NO_ORDER_EMAIL = "no-such-order@invalid"


def _normalize_email(email: str) -> bytes:
    return email.strip().casefold().encode()


def order_get_for_customer(*, order_number: str, email: str) -> Order | None:
    """The order, only when the email matches the one on it (the newest, when the customer has an order
    of this number in several shops: orders_get_for_customer gives each).

    A missing order and a wrong email both give None: the caller cannot tell
    them apart, so order numbers cannot be probed for their existence.
    """
    found = orders_get_for_customer(order_number=order_number, email=email)
    return found[0] if found else None


def orders_get_for_customer(*, order_number: str, email: str) -> list[Order]:
    """Every order of this number whose email it is, newest first: one, or several when the same customer
    has an order of this very number in several shops (two Shopify shops' #1001); none for a missing order
    and a wrong email alike."""
    return _orders_if_email_matches(Order.objects.filter(number__in=ORDER_NUMBERS.forms(order_number)), email)


RECENT_ORDERS = 5


def order_list_for_customer(*, email: str, limit: int = RECENT_ORDERS) -> QuerySet[Order]:
    """A customer's most recent orders, newest first. Only for an email the store vouched for (a
    customer it signed in): an email alone proves nothing, so nothing else lists orders by one."""
    email = email.strip()
    if not email:
        return Order.objects.none()  # orders kept without an email are nobody's to list
    # The shop's orders arrive with their email lowered (intake); iexact alone would miss "Zoë" against
    # "ZOË" on SQLite, whose case folding is ASCII only.
    return (
        Order.objects.filter(Q(customer_email__iexact=email) | Q(customer_email=email.lower()))
        .prefetch_related("items")
        .order_by("-ordered_on", "-pk")[:limit]
    )


def order_get_for_customer_by_rma(*, rma_number: str, email: str) -> Order | None:
    """The order a return belongs to, by the return's RMA number, only when the email matches the one on
    the order: as order_get_for_customer, a missing return and a wrong email give the same None."""
    found = _orders_if_email_matches(
        Order.objects.filter(returns__rma_number=rma_number.strip().upper()), email
    )
    return found[0] if found else None


def _orders_if_email_matches(orders: QuerySet[Order], email: str) -> list[Order]:
    # Only the emails first, with the orders' keys: a wrong email and a missing order differ by no model
    # built, no items read, no second query, and every email is compared (in constant time) whether or
    # not one matched. An outside probe told the two apart in 150 tries when the items were read for a
    # wrong email. Several shops may each have an order of the number: the one whose email it is counts.
    given = _normalize_email(email)
    found: list[tuple[int | None, str]] = list(orders.values_list("pk", "customer_email"))
    on_file = found or [(None, _NO_ORDER_EMAIL)]
    matching = [
        pk
        for pk, on_it in on_file
        if hmac.compare_digest(_normalize_email(on_it or _NO_ORDER_EMAIL), given) and on_it and pk
    ]
    if not matching:
        return []  # no order, a wrong email, or an order kept without one (none can verify it)
    return list(
        Order.objects.filter(pk__in=matching)
        .select_related("shop")
        .order_by("-ordered_on", "-pk")
        .prefetch_related("items")
    )


_IN_OPEN_RETURN = "This item is already part of an open return."


class EligibilityCode(StrEnum):
    ELIGIBLE = "eligible"
    NOT_DELIVERED = "not_delivered"
    CANCELLED = "cancelled"
    WINDOW_EXPIRED = "window_expired"
    NO_RETURNABLE_ITEMS = "no_returnable_items"
    ALREADY_RETURNED = "already_returned"


@dataclass(frozen=True)
class ItemEligibility:
    item: OrderItem
    returnable: bool
    reason: str
    in_open_return: bool = False


@dataclass(frozen=True)
class ReturnEligibility:
    order: Order
    code: EligibilityCode
    reason: str
    items: tuple[ItemEligibility, ...]
    policy: ReturnPolicy
    days_since_delivery: int | None
    last_return_day: date | None

    @property
    def eligible(self) -> bool:
        return self.code is EligibilityCode.ELIGIBLE

    @property
    def returnable_items(self) -> list[OrderItem]:
        return [entry.item for entry in self.items if entry.returnable]


def order_return_eligibility(*, order: Order, today: date) -> ReturnEligibility:
    """Whether the order can be returned today, item by item, with reasons a customer understands.

    The window counts whole days from delivery: with a 30-day window, day 30
    is the last day a return can be started.
    """
    policy = return_policy_get()
    items = list(order.items.all())
    held_item_ids = set(
        ReturnLine.objects.filter(order_item__order=order, holds_item=True).values_list(
            "order_item_id", flat=True
        )
    )

    def verdict(
        code: EligibilityCode,
        reason: str,
        item_entries: Iterable[ItemEligibility] = (),
        days: int | None = None,
        last_day: date | None = None,
    ) -> ReturnEligibility:
        if not item_entries:
            # An item staff took back by exception stays "in an open return", whatever the order's verdict.
            item_entries = tuple(
                ItemEligibility(item, False, _IN_OPEN_RETURN, in_open_return=True)
                if item.id in held_item_ids
                else ItemEligibility(item, False, reason)
                for item in items
            )
        return ReturnEligibility(order, code, reason, tuple(item_entries), policy, days, last_day)

    if order.status == OrderStatus.CANCELLED:
        return verdict(EligibilityCode.CANCELLED, "This order was cancelled, so there is nothing to return.")
    if order.status != OrderStatus.DELIVERED:
        return verdict(
            EligibilityCode.NOT_DELIVERED,
            "This order has not been delivered yet. A return can be started once it arrives.",
        )

    delivered_on = order.delivered_on
    assert delivered_on is not None  # a delivered order has its date (order_delivered_on_iff_delivered)
    days = (today - delivered_on).days
    # An order the shop dated at the calendar's end (9999-12-31) has no later day to add: its window
    # runs to the last date there is.
    window = timedelta(days=policy.window_days)
    last_day = delivered_on + window if delivered_on <= date.max - window else date.max
    if days > policy.window_days:
        return verdict(
            EligibilityCode.WINDOW_EXPIRED,
            f"Returns must be started within {policy.window_days} days of delivery. "
            f"This order was delivered on {delivered_on.isoformat()}, so the last day "
            f"to start a return was {last_day.isoformat()}.",
            days=days,
            last_day=last_day,
        )

    not_returnable = set(policy.non_returnable_categories)
    entries = []
    for item in items:
        if item.category in not_returnable:
            label = item.get_category_display().lower()
            article = "an" if label[0] in "aeiou" else "a"
            reason = f"This is {article} {label}, and {label}s cannot be returned."
            # Held too when the category was excluded after its return started.
            entries.append(ItemEligibility(item, False, reason, in_open_return=item.id in held_item_ids))
        elif item.id in held_item_ids:
            entries.append(ItemEligibility(item, False, _IN_OPEN_RETURN, in_open_return=True))
        else:
            entries.append(ItemEligibility(item, True, "This item can be returned."))

    if any(entry.returnable for entry in entries):
        code = EligibilityCode.ELIGIBLE
        reason = (
            f"This order was delivered on {delivered_on.isoformat()}, within the "
            f"{policy.window_days}-day return window, which ends on {last_day.isoformat()}."
        )
    elif held_item_ids:
        code = EligibilityCode.ALREADY_RETURNED
        reason = "Every returnable item in this order is already part of an open return."
    else:
        code = EligibilityCode.NO_RETURNABLE_ITEMS
        reason = "None of the items in this order can be returned under our policy."
    return verdict(code, reason, entries, days, last_day)


class ChangeCode(StrEnum):
    """Whether an order can still be changed (cancelled, or sent elsewhere), and if not, why."""

    ALLOWED = "allowed"
    SHIPPED = "already_shipped"
    DELIVERED = "already_delivered"
    CANCELLED = "already_cancelled"
    # Returns that are not closed (rejected or cancelled): a refunded one counts, its books came back.
    HAS_RETURNS = "has_returns"
    # A change asked of the shop that keeps the order, not made yet: the next waits for it.
    AWAITING_SHOP = "awaiting_shop"
    # A new address in another country than the order's, where the store does not ship it (a person can).
    OTHER_COUNTRY = "other_country"


@dataclass(frozen=True)
class OrderChangeCheck:
    order: Order
    kind: OrderChangeKind
    code: ChangeCode
    reason: str  # for the customer: why, and what they can do instead

    @property
    def allowed(self) -> bool:
        return self.code is ChangeCode.ALLOWED

    @cached_property
    def last_attempt_failed(self) -> str:
        """When the last change of this kind Bookly asked of the shop that keeps the order was not made
        (and nothing of the kind was asked since), why, for the customer (order_change_not_made_reason);
        else "". Read when asked for: a check that does not say it costs no query."""
        failed = order_change_last_failed(order=self.order, kind=self.kind)
        return order_change_not_made_reason(order=self.order, kind=self.kind) if failed else ""


# Why a change is refused, and what the customer can do instead, by the kind of change and the status.
_CHANGE_REFUSALS = {
    (OrderChangeKind.CANCELLED, OrderStatus.SHIPPED): (
        "This order has already shipped, so it can no longer be cancelled. Once it arrives, you can ask "
        "for a return, or a member of our team can help."
    ),
    (OrderChangeKind.CANCELLED, OrderStatus.DELIVERED): (
        "This order has already been delivered, so it can no longer be cancelled. You can ask for a return "
        "instead."
    ),
    (OrderChangeKind.CANCELLED, OrderStatus.CANCELLED): "This order is already cancelled.",
    (OrderChangeKind.ADDRESS_CHANGED, OrderStatus.SHIPPED): (
        "This order has already shipped, so its shipping address can no longer be changed here. A member "
        "of our team can ask the carrier whether it can be redirected."
    ),
    (OrderChangeKind.ADDRESS_CHANGED, OrderStatus.DELIVERED): (
        "This order has already been delivered, so its shipping address can no longer be changed."
    ),
    (OrderChangeKind.ADDRESS_CHANGED, OrderStatus.CANCELLED): (
        "This order was cancelled, so there is no delivery to change."
    ),
}
_CHANGE_CODES = {
    OrderStatus.SHIPPED: ChangeCode.SHIPPED,
    OrderStatus.DELIVERED: ChangeCode.DELIVERED,
    OrderStatus.CANCELLED: ChangeCode.CANCELLED,
}
_CHANGE_ALLOWED = {
    OrderChangeKind.CANCELLED: "This order has not shipped yet, so it can still be cancelled.",
    OrderChangeKind.ADDRESS_CHANGED: (
        "This order has not shipped yet, so its shipping address can still be changed."
    ),
}

# By the kind of the change the shop is making now.
_AWAITING_SHOP: dict[str, str] = {
    OrderChangeKind.CANCELLED: (
        "The store is already cancelling this order: you will get an email as soon as it is cancelled."
    ),
    OrderChangeKind.ADDRESS_CHANGED: (
        "The store is already changing where this order ships: you will get an email as soon as it is "
        "changed."
    ),
}

_HAS_RETURNS = (
    "This order has a return in progress or completed, so it can no longer be cancelled. A member of our "
    "team can help."
)


def _open_returns(order: Order) -> QuerySet[ReturnRecord]:
    # Not closed: any return not rejected or cancelled; a refunded one counts, its books came back.
    return order.returns.exclude(status__in=RETURN_STATUSES_RELEASING_ITEMS)


def order_has_returns(*, order: Order) -> bool:
    """Whether the order has a return that is not closed (rejected or cancelled); refunded counts."""
    return _open_returns(order).exists()


def order_open_return_numbers(*, order: Order) -> list[str]:
    """The RMA numbers of the order's returns that are not closed (as order_has_returns counts them),
    sorted."""
    return sorted(_open_returns(order).values_list("rma_number", flat=True))


def order_change_check(*, order: Order, kind: OrderChangeKind) -> OrderChangeCheck:
    """Whether the order can be cancelled or sent to another address now: only until it ships, not while
    its shop is making another change Bookly asked of it, and never cancelled while it has returns that
    are not closed (a refund and a cancellation for the same books); the order's status alone is not
    trusted for that, as an older import once moved some back."""
    if order.status == OrderStatus.PROCESSING:
        awaiting = order.changes.filter(state=OrderChangeState.AWAITING_SHOP).order_by("-id").first()
        if awaiting:
            return OrderChangeCheck(order, kind, ChangeCode.AWAITING_SHOP, _AWAITING_SHOP[awaiting.kind])
        if kind == OrderChangeKind.CANCELLED and order_has_returns(order=order):
            return OrderChangeCheck(order, kind, ChangeCode.HAS_RETURNS, _HAS_RETURNS)
        return OrderChangeCheck(order, kind, ChangeCode.ALLOWED, _CHANGE_ALLOWED[kind])
    status = OrderStatus(order.status)
    return OrderChangeCheck(order, kind, _CHANGE_CODES[status], _CHANGE_REFUSALS[(kind, status)])


def order_change_last_failed(*, order: Order, kind: OrderChangeKind) -> OrderChange | None:
    """The latest change of this kind of the order, if it was asked of the shop that keeps the order and
    the shop did not make it (refused, or failed for good); None when there is none, when a later one
    was made or asked since, or when the order is as it would have made it anyway (the shop made that
    change itself since)."""
    latest = order.changes.filter(kind=kind).order_by("-pk").first()
    if latest is None or latest.state != OrderChangeState.SHOP_FAILED:
        return None
    return None if order_change_in_effect(change=latest, order=order) else latest


def order_change_in_effect(*, change: OrderChange, order: Order) -> bool:
    """Whether the order (as it is now) is as the change would have made it: cancelled, or shipping to
    the address it asked for."""
    if change.kind == OrderChangeKind.CANCELLED:
        return order.status == OrderStatus.CANCELLED
    address = shipping_address_of(order=order)
    return address is not None and address.as_fields() == change.after


# What a change the shop did not make did not do, and why, for the customer: fixed words chosen from
# what Bookly knows (the kind of change, and the order as it is now), never the shop's own answer, which
# is for staff (OrderChange.shop_answer).
_NOT_MADE = {
    OrderChangeKind.CANCELLED: "The store could not cancel order {number}",
    OrderChangeKind.ADDRESS_CHANGED: "The store could not change the shipping address of order {number}",
}
_NOT_MADE_WHY: dict[str, str] = {
    OrderStatus.SHIPPED: "it has already been handed to the carrier",
    OrderStatus.DELIVERED: "it has already been handed to the carrier",
}


def change_not_made_sentences(*, number: str) -> list[str]:
    """Every sentence order_change_not_made_reason may say of the order of that number: fixed words of
    ours, which a reply may repeat whatever the order's state in the turn's results."""
    return [
        f"{said.format(number=number)}{ending}"
        for said in _NOT_MADE.values()
        for ending in [".", *(f": {why}." for why in set(_NOT_MADE_WHY.values()))]
    ]


def order_change_not_made_reason(*, order: Order, kind: OrderChangeKind) -> str:
    """The sentence that tells the customer a change of their order the store was asked to make was not
    made: "The store could not cancel order BK-10103: it has already been handed to the carrier." (the
    order shipped), else plainly "The store could not cancel order BK-10103." """
    said = _NOT_MADE[OrderChangeKind(kind)].format(number=order.number)
    why = _NOT_MADE_WHY.get(order.status)
    return f"{said}: {why}." if why else f"{said}."


def order_address_country_check(*, order: Order, country: str) -> OrderChangeCheck:
    """Whether the order may be sent to an address in `country` (ISO 3166 code): within its own country
    always (an order with no country on file, too); to another only where its shop's shipping allows it
    (Shop.countries_readdressed_to: the shop's list, else BOOKLY_ADDRESS_CHANGE_COUNTRIES), as its rates,
    duties and carrier are the order's country's. Refused, it says so in words and offers a person."""
    kind = OrderChangeKind.ADDRESS_CHANGED
    allowed = order.shop.countries_readdressed_to()
    if not order.ship_country or country == order.ship_country or "*" in allowed or country in allowed:
        return OrderChangeCheck(order, kind, ChangeCode.ALLOWED, _CHANGE_ALLOWED[kind])
    reason = (
        f"The store ships order {order.number} within {country_name(order.ship_country)}; a change to "
        f"{country_name(country)} needs our team."
    )
    return OrderChangeCheck(order, kind, ChangeCode.OTHER_COUNTRY, reason)


class ProblemCode(StrEnum):
    """Whether a delivery problem can be reported for an order as it is now, and if not, why."""

    ALLOWED = "allowed"
    NOT_SHIPPED = "not_shipped"
    NOT_DELIVERED = "not_delivered"
    CANCELLED = "order_cancelled"


@dataclass(frozen=True)
class DeliveryProblemCheck:
    code: ProblemCode
    reason: str  # for the customer

    @property
    def allowed(self) -> bool:
        return self.code is ProblemCode.ALLOWED


_PROBLEM_REFUSALS = {
    ProblemCode.NOT_SHIPPED: (
        "This order has not shipped yet, so there is no delivery to look into. Its status shows when it "
        "ships."
    ),
    ProblemCode.NOT_DELIVERED: (
        "This order is still on its way: nothing of it has been delivered yet. Its tracking number shows "
        "where it is."
    ),
    ProblemCode.CANCELLED: "This order was cancelled, so it was never sent.",
}


def delivery_problem_check(*, order: Order, problem: DeliveryProblem) -> DeliveryProblemCheck:
    """Whether the customer can report this problem with the order's delivery: one that never came or
    came late once it has shipped; a damaged, wrong or missing book once it, or one of its parcels, was
    delivered (an order shipped in parts is still "shipped" while its first parcel is at the door)."""
    if order.status == OrderStatus.CANCELLED:
        code = ProblemCode.CANCELLED
    elif order.status == OrderStatus.PROCESSING:
        code = ProblemCode.NOT_SHIPPED
    elif (
        order.status == OrderStatus.SHIPPED
        and problem in ITEM_PROBLEMS
        and not (order.pk and order.shipments.filter(delivered_on__isnull=False).exists())
    ):
        code = ProblemCode.NOT_DELIVERED
    else:
        return DeliveryProblemCheck(ProblemCode.ALLOWED, "A member of our team can look into this.")
    return DeliveryProblemCheck(code, _PROBLEM_REFUSALS[code])


def delivery_cases_open_count() -> int:
    """How many delivery problems wait for staff to resolve them (for the admin index)."""
    return DeliveryCase.objects.filter(status=CaseStatus.OPEN).count()


def order_get_by_number(*, shop: Shop, number: str) -> Order | None:
    """`shop`'s order with this number, items with it, for the shop's own backend (no email asked)."""
    canonical = ORDER_NUMBERS.canonical(number)
    return (
        Order.objects.filter(shop=shop, number=canonical)
        .prefetch_related("items", "shipments__lines__item", "refunds__lines__item")
        .first()
        if canonical
        else None
    )


def orders_changed_since(*, shop: Shop, since: datetime | None = None) -> QuerySet[Order]:
    """`shop`'s orders in the order they last changed (oldest first), since a time if given, items with
    them."""
    orders = (
        Order.objects.filter(shop=shop)
        .prefetch_related("items", "shipments__lines__item", "refunds__lines__item")
        .order_by("updated_at", "id")
    )
    return orders.filter(updated_at__gt=since) if since else orders


def return_get_by_rma(*, shop: Shop, rma_number: str) -> ReturnRecord | None:
    """A return of one of `shop`'s orders, by its RMA number."""
    return _returns().filter(order__shop=shop, rma_number=rma_number.strip().upper()).first()


def returns_changed_since(*, shop: Shop, since: datetime | None = None) -> QuerySet[ReturnRecord]:
    """Returns of `shop`'s orders in the order their status last moved (oldest first), since a time if
    given."""
    returns = _returns().filter(order__shop=shop).order_by("updated_at", "id")
    return returns.filter(updated_at__gt=since) if since else returns


def _returns() -> QuerySet[ReturnRecord]:
    return ReturnRecord.objects.select_related("order").prefetch_related(
        "lines__order_item", "status_changes", "order__refunds__lines"
    )
