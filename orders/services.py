import secrets
import string
from collections.abc import Collection
from datetime import date
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from orders.addresses import OrderAddress, shipping_address_of
from orders.emails import (
    delivery_case_opened_email,
    delivery_case_resolved_email,
    order_address_changed_email,
    order_cancelled_email,
    order_change_not_made_email,
    return_moved_email,
    return_started_by_staff_email,
)
from orders.events import (
    delivery_case_event,
    order_address_changed_event,
    order_cancelled_event,
    order_change_requested_send,
    return_created_event,
    return_status_changed_event,
)
from orders.models import (
    ITEM_PROBLEMS,
    RETURN_STATUSES_RELEASING_ITEMS,
    CaseStatus,
    DeliveryCase,
    DeliveryProblem,
    EventType,
    Order,
    OrderChange,
    OrderChangeKind,
    OrderChangeState,
    OrderItem,
    OrderStatus,
    ReturnLine,
    ReturnRecord,
    ReturnStatus,
    ReturnStatusChange,
    own_shop,
)
from orders.selectors import (
    ChangeCode,
    EligibilityCode,
    ItemEligibility,
    ReturnEligibility,
    delivery_problem_check,
    order_address_country_check,
    order_change_check,
    order_return_eligibility,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User

_RMA_ALPHABET = string.ascii_uppercase + string.digits
_RMA_ATTEMPTS = 5

# Where each return status may go next; refunded, rejected and cancelled are final.
RETURN_STATUS_TRANSITIONS: dict[str, frozenset[str]] = {
    ReturnStatus.INITIATED: frozenset(
        {ReturnStatus.LABEL_SENT, ReturnStatus.REJECTED, ReturnStatus.CANCELLED}
    ),
    ReturnStatus.LABEL_SENT: frozenset(
        {ReturnStatus.RECEIVED, ReturnStatus.REJECTED, ReturnStatus.CANCELLED}
    ),
    ReturnStatus.RECEIVED: frozenset({ReturnStatus.REFUNDED, ReturnStatus.REJECTED}),
    ReturnStatus.REFUNDED: frozenset(),
    ReturnStatus.REJECTED: frozenset(),
    ReturnStatus.CANCELLED: frozenset(),
}


class ReturnRefusal(StrEnum):
    """Why the store will not start a return: stable codes, read by whoever asked for the return."""

    REASON_REQUIRED = "reason_required"
    NOT_ELIGIBLE = "not_eligible"
    ITEM_NOT_RETURNABLE = "item_not_returnable"
    ITEM_NOT_IN_ORDER = "item_not_in_order"
    ALREADY_INITIATED = "already_initiated"


class ReturnNotAllowed(Exception):
    """A return the store cannot start; `code` is stable, `message` is for the customer."""

    def __init__(self, code: ReturnRefusal, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


# Verdicts about the whole order: no item of it can go back, whatever is chosen.
_ORDER_NOT_RETURNABLE = frozenset(
    {EligibilityCode.NOT_DELIVERED, EligibilityCode.CANCELLED, EligibilityCode.WINDOW_EXPIRED}
)


def _refusal(eligibility: ReturnEligibility, item: ItemEligibility | None = None) -> ReturnNotAllowed:
    """The one mapping from an eligibility verdict (and the entry of a chosen item) to a refusal."""
    if eligibility.code in _ORDER_NOT_RETURNABLE:
        return ReturnNotAllowed(ReturnRefusal.NOT_ELIGIBLE, eligibility.reason)
    if item is None:
        if eligibility.code is EligibilityCode.ALREADY_RETURNED:
            return ReturnNotAllowed(ReturnRefusal.ALREADY_INITIATED, eligibility.reason)
        return ReturnNotAllowed(ReturnRefusal.NOT_ELIGIBLE, eligibility.reason)
    if item.in_open_return:
        return ReturnNotAllowed(ReturnRefusal.ALREADY_INITIATED, item.reason)
    return ReturnNotAllowed(ReturnRefusal.ITEM_NOT_RETURNABLE, item.reason)


def _new_rma_number() -> str:
    return "RMA-" + "".join(secrets.choice(_RMA_ALPHABET) for _ in range(8))


def return_record_create(
    *,
    order: Order,
    reason: str,
    items: Collection[OrderItem] | None = None,
    today: date,
    created_by: "User | None" = None,
    exception_note: str = "",
    conversation_id: int | None = None,
) -> ReturnRecord:
    """Start a return for the given items (default: every item that can be returned).

    With `exception_note`, a member of staff (`created_by`) grants what the policy would refuse: a
    return after the window, or of an item never returnable. `conversation_id`: the chat's conversation
    the customer asked in, for the store's event. Not of an order that was never delivered,
    nor of an item already in an open return. Raises ReturnNotAllowed with a ReturnRefusal code.
    """
    reason, exception_note = reason.strip(), exception_note.strip()
    if not reason:
        raise ReturnNotAllowed(
            ReturnRefusal.REASON_REQUIRED, "Please tell us briefly why you are returning the items."
        )

    with transaction.atomic():
        # Serialise returns of the same order (a no-op on SQLite, whose
        # IMMEDIATE transactions are serialised already).
        order = Order.objects.select_for_update().get(pk=order.pk)
        eligibility = order_return_eligibility(order=order, today=today)
        by_id = {entry.item.id: entry for entry in eligibility.items}
        if exception_note:
            chosen = _items_by_exception(order, eligibility, items)
        elif items is None:
            if not eligibility.eligible:
                raise _refusal(eligibility)
            chosen = eligibility.returnable_items
        else:
            chosen = []
            for item in items:
                entry = by_id.get(item.id)
                if entry is None:
                    raise ReturnNotAllowed(
                        ReturnRefusal.ITEM_NOT_IN_ORDER, "That item is not part of this order."
                    )
                if not entry.returnable:
                    raise _refusal(eligibility, entry)
                chosen.append(entry.item)
            if not chosen:
                raise ReturnNotAllowed(
                    ReturnRefusal.ITEM_NOT_IN_ORDER, "Please choose at least one item to return."
                )

        policy = eligibility.policy
        for _ in range(_RMA_ATTEMPTS):
            try:
                with transaction.atomic():
                    record = ReturnRecord.objects.create(
                        rma_number=_new_rma_number(),
                        order=order,
                        reason=reason,
                        refund_method=policy.refund_method,
                        refund_timeline_business_days=policy.refund_timeline_business_days,
                        created_by=created_by,
                        exception_note=exception_note,
                        conversation_id=conversation_id,
                    )
                    ReturnLine.objects.bulk_create(
                        ReturnLine(return_record=record, order_item=item) for item in chosen
                    )
                    if created_by is not None:
                        return_started_by_staff_email(record=record)  # the chat tells the assistant's own
                    return_created_event(record=record)
                return record
            except IntegrityError:
                # Either another return took one of these items a moment ago
                # (the database's one-open-return rule), or the random RMA
                # number collided: tell them apart and retry only the latter.
                if ReturnLine.objects.filter(order_item__in=chosen, holds_item=True).exists():
                    raise ReturnNotAllowed(
                        ReturnRefusal.ALREADY_INITIATED, "These items are already part of an open return."
                    ) from None
        raise RuntimeError("Could not allocate a unique RMA number.")


def _items_by_exception(
    order: Order, eligibility: ReturnEligibility, items: Collection[OrderItem] | None
) -> list[OrderItem]:
    """What staff may return outside the policy: any item of a delivered order not already in an open
    return (all of them when none are named)."""
    if eligibility.code in (EligibilityCode.NOT_DELIVERED, EligibilityCode.CANCELLED):
        raise ReturnNotAllowed(ReturnRefusal.NOT_ELIGIBLE, eligibility.reason)
    held = {entry.item.id for entry in eligibility.items if entry.in_open_return}  # read by the check already
    in_order = {item.id: item for item in order.items.all()}
    if items is None:
        wanted = [item for item in in_order.values() if item.id not in held]
        if not wanted:
            raise ReturnNotAllowed(
                ReturnRefusal.ALREADY_INITIATED, "Every item of this order is already part of an open return."
            )
    else:
        wanted = list(items)
    if any(item.id not in in_order for item in wanted):
        raise ReturnNotAllowed(ReturnRefusal.ITEM_NOT_IN_ORDER, "That item is not part of this order.")
    if any(item.id in held for item in wanted):
        raise ReturnNotAllowed(
            ReturnRefusal.ALREADY_INITIATED, "This item is already part of an open return."
        )
    chosen = [in_order[item.id] for item in wanted]
    if not chosen:
        raise ReturnNotAllowed(ReturnRefusal.ITEM_NOT_IN_ORDER, "Please choose at least one item to return.")
    return chosen


class ReturnStatusNotAllowed(Exception):
    """The return cannot move to that status from the one it is in; `message` says why, for a person."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def return_next_statuses(*, status: str) -> list[ReturnStatus]:
    """Where a return in `status` may go next, in the lifecycle's order."""
    return [choice for choice in ReturnStatus if choice in RETURN_STATUS_TRANSITIONS[status]]


# Moves the customer must be told the reason for.
RETURN_STATUSES_NEEDING_A_REASON = frozenset({ReturnStatus.REJECTED, ReturnStatus.CANCELLED})


def return_record_set_status(
    *, return_record: ReturnRecord, status: ReturnStatus, changed_by: "User | None" = None, note: str = ""
) -> ReturnRecord:
    """Move a return to its next status, record who did it and why (`note`, required to reject or
    cancel: the customer is told it), and email the customer; a rejected or cancelled return frees its
    items. The status is checked as it is now (locked), not as the caller last saw it."""
    note = note.strip()
    if status in RETURN_STATUSES_NEEDING_A_REASON and not note:
        raise ReturnStatusNotAllowed(
            f"Say why the return is {ReturnStatus(status).label.lower()}: the customer is emailed the reason."
        )
    with transaction.atomic():
        record = ReturnRecord.objects.select_for_update().select_related("order").get(pk=return_record.pk)
        if status not in RETURN_STATUS_TRANSITIONS[record.status]:
            raise ReturnStatusNotAllowed(_not_allowed_message(record, status))
        previous = record.status
        ReturnStatusChange.objects.create(
            return_record=record,
            from_status=previous,
            to_status=status,
            changed_by=changed_by,
            note=note,
        )
        record.status = status
        record.updated_at = timezone.now()
        record.save(update_fields=["status", "updated_at"])
        record.lines.update(holds_item=status not in RETURN_STATUSES_RELEASING_ITEMS)
        return_moved_email(record=record, status=status, note=note)
        return_status_changed_event(record=record, from_status=previous, note=note, changed_by=changed_by)
    return record


def _not_allowed_message(record: ReturnRecord, status: str) -> str:
    now, wanted = ReturnStatus(record.status).label.lower(), ReturnStatus(status).label.lower()
    allowed = [choice.label.lower() for choice in return_next_statuses(status=record.status)]
    then = f" From {now} it can go to: {', '.join(allowed)}." if allowed else f" {now.capitalize()} is final."
    return f"Return {record.rma_number} is {now}, so it cannot become {wanted}.{then}"


def return_records_delete_for_orders(*, order_numbers: Collection[str]) -> int:
    """Delete every return of these orders of our own shop (the demo's: another shop may have orders of
    the same numbers); for resetting demo data only. Returns how many."""
    with transaction.atomic():
        records = ReturnRecord.objects.filter(order__shop_id=own_shop(), order__number__in=order_numbers)
        count = records.count()
        records.delete()
    return count


class OrderChangeNotAllowed(Exception):
    """An order change the store will not make; `code` is stable (a ChangeCode, or "unchanged"),
    `message` is for the customer."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


ADDRESS_UNCHANGED = "unchanged"


def _locked_for_change(order: Order, kind: OrderChangeKind) -> Order:
    """The order, locked, if it can still take this change as it is now (not as the caller last saw it:
    the store may have shipped it since the customer was told it could change)."""
    locked = Order.objects.select_for_update().get(pk=order.pk)
    check = order_change_check(order=locked, kind=kind)
    if not check.allowed:
        raise OrderChangeNotAllowed(check.code, check.reason)
    return locked


def order_changes_through_shop(*, order: Order) -> bool:
    """Whether a change of this order is made in the shop first: a platform sent it (with its id) and
    its shop's changes go through it (the shop's own connection says so, else the settings say so of the
    platform: settings.BOOKLY_CHANGES_THROUGH_SHOP)."""
    if not order.shop_order_id:
        return False
    own = order.shop.writes_back
    return own if own is not None else order.source in settings.BOOKLY_CHANGES_THROUGH_SHOP


def _recorded(locked: Order, **fields: Any) -> OrderChange:
    """The change, made now or (for an order its shop keeps) asked of the shop once this commits."""
    if not order_changes_through_shop(order=locked):
        return OrderChange.objects.create(order=locked, **fields)
    change = OrderChange.objects.create(order=locked, state=OrderChangeState.AWAITING_SHOP, **fields)
    order_change_requested_send(change=change)
    return change


def _cancellation_make(locked: Order, change: OrderChange) -> None:
    locked.status = OrderStatus.CANCELLED
    locked.updated_at = timezone.now()
    locked.save(update_fields=["status", "updated_at"])
    order_cancelled_email(order=locked)
    order_cancelled_event(order=locked, change=change)


def _address_make(
    locked: Order, address: OrderAddress, before: OrderAddress | None, change: OrderChange
) -> None:
    for name, value in address.as_fields().items():
        setattr(locked, f"ship_{name}", value)
    locked.updated_at = timezone.now()
    locked.save(update_fields=[*(f"ship_{name}" for name in address.as_fields()), "updated_at"])
    order_address_changed_email(order=locked, address=address)
    order_address_changed_event(order=locked, previous=before, change=change)


def order_cancel(
    *, order: Order, changed_by: "User | None" = None, conversation_id: int | None = None
) -> OrderChange:
    """Cancel an order that has not shipped, and record it; for an order its shop keeps, ask the shop
    (the change's state says which). Raises OrderChangeNotAllowed: its code ChangeCode.CANCELLED when it
    is cancelled already, ChangeCode.AWAITING_SHOP when its shop is making a change Bookly asked of it
    (asking twice changes nothing)."""
    try:
        with transaction.atomic():
            locked = _locked_for_change(order, OrderChangeKind.CANCELLED)
            change = _recorded(
                locked,
                kind=OrderChangeKind.CANCELLED,
                before={"status": locked.status},
                after={"status": OrderStatus.CANCELLED},
                changed_by=changed_by,
                conversation_id=conversation_id,
            )
            if change.state == OrderChangeState.MADE:
                _cancellation_make(locked, change)
    except IntegrityError:
        # The database's one-cancellation rule: another confirmation won a moment ago (SQLite has no
        # row locks to make this one wait and see it).
        raise OrderChangeNotAllowed(ChangeCode.CANCELLED, "This order is already cancelled.") from None
    return change


def order_shipping_address_change(
    *,
    order: Order,
    address: OrderAddress,
    changed_by: "User | None" = None,
    conversation_id: int | None = None,
) -> OrderChange:
    """Send an order that has not shipped to another address (cleaned by shipping_address_clean), and
    record before and after; for an order its shop keeps, ask the shop. Raises OrderChangeNotAllowed;
    code "unchanged" when it already ships there."""
    with transaction.atomic():
        locked = _locked_for_change(order, OrderChangeKind.ADDRESS_CHANGED)
        before = shipping_address_of(order=locked)
        if before == address:
            raise OrderChangeNotAllowed(ADDRESS_UNCHANGED, "This order already ships to that address.")
        abroad = order_address_country_check(order=locked, country=address.country)
        if not abroad.allowed:
            raise OrderChangeNotAllowed(abroad.code, abroad.reason)
        change = _recorded(
            locked,
            kind=OrderChangeKind.ADDRESS_CHANGED,
            before=before.as_fields() if before else {},
            after=address.as_fields(),
            changed_by=changed_by,
            conversation_id=conversation_id,
        )
        if change.state == OrderChangeState.MADE:
            _address_make(locked, address, before, change)
    return change


def order_change_shop_made(*, change_id: int) -> OrderChange:
    """The shop made a change Bookly asked of it: now it is Bookly's too (the order changed, the
    customer's email and the store's event), once. The shop's word is final: the order is changed as
    the shop changed it, whatever happened here since."""
    with transaction.atomic():
        change = OrderChange.objects.select_for_update().get(pk=change_id)
        if change.state != OrderChangeState.AWAITING_SHOP:
            return change
        locked = Order.objects.select_for_update().get(pk=change.order_id)
        if change.kind == OrderChangeKind.CANCELLED:
            _cancellation_make(locked, change)
        else:
            # The address it had when asked: the shop's own update may have brought the new one already.
            before = OrderAddress(**change.before) if change.before else None
            _address_make(locked, OrderAddress(**change.after), before, change)
        change.state = OrderChangeState.MADE
        change.save(update_fields=["state"])
    return change


def order_change_shop_failed(*, change_id: int, answer: str) -> OrderChange:
    """The shop did not make a change Bookly asked of it (refused it, or failed for good): kept for staff
    with what the shop said, and the customer, who was told it was asked, emailed that it was not made
    and why in our words (once the caller's transaction commits); the order stays as it is. Once: a
    change made or failed already is left as it is."""
    with transaction.atomic():
        change = OrderChange.objects.select_for_update().get(pk=change_id)
        if change.state != OrderChangeState.AWAITING_SHOP:
            return change
        change.state = OrderChangeState.SHOP_FAILED
        change.shop_answer = answer[:2000]
        change.save(update_fields=["state", "shop_answer"])
        order_change_not_made_email(change=change)
    return change


class DeliveryCaseRefused(Exception):
    """A delivery problem that cannot be reported, or a case that cannot be resolved, as things are;
    `code` is stable (a selectors.ProblemCode or one below), `message` is for the person asking."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


ITEMS_NEEDED = "items_needed"
ITEM_NOT_IN_ORDER = "item_not_in_order"
ALREADY_RESOLVED = "already_resolved"
RESOLUTION_NEEDED = "resolution_needed"


def delivery_case_open(
    *,
    order: Order,
    problem: DeliveryProblem,
    items: Collection[OrderItem] | None,
    details: str,
    conversation_id: int | None = None,
) -> tuple[DeliveryCase, bool]:
    """Open a case for staff about a problem with the order's delivery, and email the customer that we
    have it. Returns the case and whether it is new: the same problem reported again while its case is
    open (asked twice, two tabs) is that case, with any books it did not name yet added.

    A problem with particular books (damaged, wrong, missing) names them; of an order of one book, that
    one. Raises DeliveryCaseRefused."""
    with transaction.atomic():
        locked = Order.objects.select_for_update().get(pk=order.pk)
        check = delivery_problem_check(order=locked, problem=problem)
        if not check.allowed:
            raise DeliveryCaseRefused(check.code, check.reason)
        order_items = list(locked.items.all())
        if items and any(item.order_id != locked.pk for item in items):
            raise DeliveryCaseRefused(ITEM_NOT_IN_ORDER, "Some of those books are not part of this order.")
        if problem not in ITEM_PROBLEMS:
            items = order_items  # the whole order's
        elif not items:
            if len(order_items) != 1:
                raise DeliveryCaseRefused(ITEMS_NEEDED, "Which books of the order does this concern?")
            items = order_items
        try:
            with transaction.atomic():
                case, created = (
                    DeliveryCase.objects.create(
                        order=locked, problem=problem, details=details, conversation_id=conversation_id
                    ),
                    True,
                )
        except IntegrityError:
            # The database's one-open-case rule: reported before, or by another tab a moment ago.
            case = DeliveryCase.objects.get(order=locked, problem=problem, status=CaseStatus.OPEN)
            created = False
        case.items.add(*items)
        if created:
            delivery_case_opened_email(case=case)
            delivery_case_event(case=case, type=EventType.DELIVERY_CASE_OPENED)
    return case, created


def delivery_case_resolve(*, case: DeliveryCase, resolution: str, resolved_by: "User | None") -> DeliveryCase:
    """Staff close the case saying what they did; the customer is emailed those words. Raises
    DeliveryCaseRefused when it is resolved already or nothing is said."""
    if not resolution.strip():
        raise DeliveryCaseRefused(
            RESOLUTION_NEEDED, "Say what was done about it: the customer is emailed these words."
        )
    with transaction.atomic():
        locked = DeliveryCase.objects.select_for_update().select_related("order").get(pk=case.pk)
        if locked.status == CaseStatus.RESOLVED:
            raise DeliveryCaseRefused(ALREADY_RESOLVED, f"Case {locked.pk} is already resolved.")
        locked.status = CaseStatus.RESOLVED
        locked.resolution = resolution
        locked.resolved_by = resolved_by
        locked.resolved_at = timezone.now()
        locked.save(update_fields=["status", "resolution", "resolved_by", "resolved_at"])
        delivery_case_resolved_email(case=locked)
        delivery_case_event(case=locked, type=EventType.DELIVERY_CASE_RESOLVED)
    return locked
