"""The one small interface through which Bookly's changes become events for the store's systems.

A service that changes something calls event_record inside its transaction: the event is written with
the change (an outbox), and `event_recorded` is sent once that transaction commits, for whoever
delivers events (the connection app's webhooks) to pick it up at once. What this module knows of its
listeners: nothing. An event whose signal was missed (the process died just after the commit) is still
there, undispatched, for the deliverer's sweep.

A change of an order its shop keeps is asked of the shop first: `order_change_requested` is sent once
it is recorded (orders.services), for whoever writes to shops.
"""

from typing import TYPE_CHECKING

from django.db import transaction
from django.dispatch import Signal

from orders.addresses import OrderAddress
from orders.intake import address_shape
from orders.models import DeliveryCase, Event, EventType, Order, OrderChange, ReturnRecord, Shop
from orders.outbound import event_data_dump
from orders.shapes import actor_shape, change_actor_shape, delivery_case_shape, order_shape, return_shape

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# Sent with `event` after the transaction that recorded it commits.
event_recorded = Signal()
# Sent with `change` (an OrderChange waiting for the shop) after the transaction that recorded it
# commits: for whoever writes to the shop (the connection's write-back) to ask it at once.
order_change_requested = Signal()


def event_record(*, type: EventType, data: dict[str, object], shop: Shop | None = None) -> Event:
    """Keep an event of a change made in the caller's transaction, its data as the event catalogue
    (orders.outbound) has it: data that is not fails the change, never reaches a receiver. An order's
    event is its shop's (named in its data): only endpoints for every shop or for that one get it."""
    if shop is not None:
        data = {"shop": shop.name, **data}
    event = Event.objects.create(type=type, shop=shop, data=event_data_dump(type=type, data=data))
    transaction.on_commit(lambda: event_recorded.send(sender=Event, event=event), robust=True)
    return event


def order_change_requested_send(*, change: OrderChange) -> None:
    """Once the caller's transaction commits, tell who writes to shops that the shop must make `change`.
    One missed (the process died just after the commit) is still waiting, for the writer's sweep."""
    transaction.on_commit(lambda: order_change_requested.send(sender=OrderChange, change=change), robust=True)


def return_created_event(*, record: ReturnRecord) -> Event:
    by = actor_shape(staff_member=record.created_by, conversation_id=record.conversation_id)
    return event_record(
        type=EventType.RETURN_CREATED,
        data={"return": return_shape(record=record), "by": by},
        shop=record.order.shop,
    )


def return_status_changed_event(
    *, record: ReturnRecord, from_status: str, note: str, changed_by: "User | None"
) -> Event:
    return event_record(
        type=EventType.RETURN_STATUS_CHANGED,
        data={
            "return": return_shape(record=record),
            "from_status": from_status,
            "to_status": record.status,
            "note": note,
            "by": actor_shape(staff_member=changed_by, conversation_id=None),
        },
        shop=record.order.shop,
    )


def order_cancelled_event(*, order: Order, change: OrderChange) -> Event:
    # The chat asks no reason for a cancellation; the field is there for when one is given.
    return event_record(
        type=EventType.ORDER_CANCELLED,
        data={"order": order_shape(order=order), "by": change_actor_shape(change=change), "reason": None},
        shop=order.shop,
    )


def order_address_changed_event(*, order: Order, previous: OrderAddress | None, change: OrderChange) -> Event:
    return event_record(
        type=EventType.ORDER_ADDRESS_CHANGED,
        data={
            "order": order_shape(order=order),
            "previous_address": address_shape(address=previous) if previous else None,
            "by": change_actor_shape(change=change),
        },
        shop=order.shop,
    )


def delivery_case_event(*, case: DeliveryCase, type: EventType) -> Event:
    if type == EventType.DELIVERY_CASE_RESOLVED:
        by = actor_shape(staff_member=case.resolved_by, conversation_id=None)
    else:
        by = actor_shape(staff_member=None, conversation_id=case.conversation_id)
    return event_record(
        type=type, data={"case": delivery_case_shape(case=case), "by": by}, shop=case.order.shop
    )
