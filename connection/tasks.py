"""The webhook steps as tasks of the task queue (django-q2): what its workers run, never a request.

Each function takes only ids (the queue stores its arguments) and reads the rest from the database, so a
task run twice or late does no harm: every step checks the rows as they are now.
"""

import logging

from django.db import connections
from django.utils import timezone
from django_q.conf import Conf
from django_q.tasks import async_task

from connection.deliveries import (
    deliveries_take_due,
    delivery_attempt,
    event_dispatch,
    events_undispatched,
)
from connection.shop_events import shop_event_apply, shop_event_queue, shop_events_take_pending
from connection.woocommerce.delivered import woocommerce_orders_delivered
from connection.write_back import (
    shop_write_attempt,
    shop_write_queue,
    shop_write_request,
    shop_writes_take_due,
)
from orders.models import Event, OrderChange
from store.clock import store_today

logger = logging.getLogger(__name__)


def deliveries_queue(*, delivery_ids: list[int]) -> None:
    for delivery_id in delivery_ids:
        async_task(
            "connection.tasks.delivery_attempt_task", delivery_id, task_name=f"webhook delivery {delivery_id}"
        )


def event_dispatch_task(event_id: int) -> None:
    deliveries_queue(delivery_ids=event_dispatch(event_id=event_id))


def delivery_attempt_task(delivery_id: int) -> None:
    delivery_attempt(delivery_id=delivery_id)


def deliveries_sweep_task() -> None:
    """Every minute (a schedule the connection app's migration adds): events whose signal was lost,
    deliveries due again after their back-off, attempts a killed worker left, shop platforms' events
    whose task was lost, writes to a shop due again (or whose signal was lost), WooCommerce's completed
    orders whose day to count as delivered has come."""
    for event_id in events_undispatched():
        event_dispatch_task(event_id)
    deliveries_queue(delivery_ids=deliveries_take_due(now=timezone.now()))
    for event_id in shop_events_take_pending():
        shop_event_queue(event_id=event_id)
    for write_id in shop_writes_take_due(now=timezone.now()):
        shop_write_queue(write_id=write_id)
    woocommerce_orders_delivered(today=store_today())


def shop_event_apply_task(event_id: int) -> None:
    shop_event_apply(event_id=event_id)


def shop_write_attempt_task(write_id: int) -> None:
    shop_write_attempt(write_id=write_id, now=timezone.now())


def order_change_requested_queue(sender: type[OrderChange], change: OrderChange, **kwargs: object) -> None:
    """On the commit of a change its shop must make: its write goes on the queue at once (one missed
    here is the sweep's)."""
    shop_write_request(change=change)


def worker_database_pools_forget(sender: object, proc_name: str, **kwargs: object) -> None:
    """In a queue worker just forked from the cluster's process: forget the database connection pool
    inherited from it (its connections are the parent's, its threads did not survive the fork), so this
    process opens its own. Without it, two workers on PostgreSQL share sockets and hang. (The cluster
    closes its connections before it forks; a queue running tasks in the caller's process forks nothing.)"""
    if Conf.SYNC:
        return
    pools = getattr(type(connections["default"]), "_connection_pools", None)
    if pools is not None:
        pools.clear()


def event_recorded_queue(sender: type[Event], event: Event, **kwargs: object) -> None:
    """On an event's commit: its dispatch goes on the queue at once. A queue that cannot take it now
    loses nothing: the event stays undispatched for the sweep."""
    try:
        async_task("connection.tasks.event_dispatch_task", event.pk, task_name=f"event {event.public_id}")
    except Exception:
        logger.exception("could not queue event %s; the sweep will dispatch it", event.public_id)
