"""Shop platforms' own webhooks: each delivery kept as received, then applied on the task queue
through the order intake every other write goes through (orders.intake: its checks, and its rule that
a shop's version never undoes what Bookly did). Each platform's room says how its deliveries are signed
and how its orders read (connection.shopify); what is common to all is here."""

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django_q.tasks import async_task

from connection.models import ShopEvent, ShopEventOutcome, ShopPlatform
from connection.platform_http import platform_id
from connection.shopify.orders import ORDER_TOPICS as SHOPIFY_ORDER_TOPICS
from connection.shopify.orders import shopify_order
from connection.shops import connected_shop
from connection.woocommerce.orders import ORDER_TOPICS as WOOCOMMERCE_ORDER_TOPICS
from connection.woocommerce.orders import woocommerce_order
from orders.intake import (
    NumberOfAnotherShape,
    OrderConflict,
    OrderRefused,
    UpsertOutcome,
    incoming_order_clean,
    order_upsert,
)
from orders.models import OrderSource, Shop

logger = logging.getLogger(__name__)

# Per platform: the topics whose body is a whole order, how to read one, and the orders' source.
_ORDERS: dict[str, tuple[frozenset[str], Callable[[Mapping], tuple[object, dict]], OrderSource]] = {
    ShopPlatform.SHOPIFY: (SHOPIFY_ORDER_TOPICS, shopify_order, OrderSource.SHOPIFY),
    ShopPlatform.WOOCOMMERCE: (WOOCOMMERCE_ORDER_TOPICS, woocommerce_order, OrderSource.WOOCOMMERCE),
}
# An event kept before shops were, when the platform has several shops now.
_WHICH_SHOP = "is not named by this delivery, kept before shops were, and the platform has several shops"
_OUTCOMES = {
    UpsertOutcome.CREATED: ShopEventOutcome.CREATED,
    UpsertOutcome.UPDATED: ShopEventOutcome.UPDATED,
    UpsertOutcome.UNCHANGED: ShopEventOutcome.UNCHANGED,
}


def shop_event_receive(
    *, platform: str, shop: Shop, delivery_id: str, topic: str, body: Mapping, queue: bool = True
) -> tuple[ShopEvent, bool]:
    """Keep a verified delivery for `shop` and (unless the caller applies it itself) queue its work once
    it is committed: (the event, whether it is new). A delivery the platform sends again (same delivery
    id) is the first one's."""
    try:
        with transaction.atomic():
            event = ShopEvent.objects.create(
                platform=platform, shop=shop, delivery_id=delivery_id, topic=topic, body=body
            )
    except IntegrityError:
        return ShopEvent.objects.get(platform=platform, delivery_id=delivery_id), False
    if queue:
        transaction.on_commit(lambda: shop_event_queue(event_id=event.pk))
    return event, True


def shop_event_queue(*, event_id: int) -> None:
    """On the queue; a queue that cannot take it now loses nothing (the sweep applies what is pending)."""
    try:
        async_task("connection.tasks.shop_event_apply_task", event_id, task_name=f"shop event {event_id}")
    except Exception:
        logger.exception("could not queue shop event %s; the sweep will apply it", event_id)


_PURGE_BATCH = 1000
# How many times the sweep queues an event again before it is recorded as failed.
SHOP_EVENT_ATTEMPTS = 5


def shop_event_apply(*, event_id: int) -> ShopEvent:
    """Apply a kept delivery once, under its row lock: the order as the platform sent it, through the
    intake; the outcome (and, when refused, each problem) kept on the event for staff. An error of ours
    fails the task (the sweep queues it again), and on the last attempt is recorded as the outcome."""
    try:
        return _apply(event_id=event_id)
    except Exception as error:
        event = ShopEvent.objects.get(pk=event_id)
        if event.attempts + 1 < SHOP_EVENT_ATTEMPTS:
            raise
        logger.exception("shop event %s failed its last attempt", event_id)
        ShopEvent.objects.filter(pk=event_id, applied_at__isnull=True).update(
            outcome=ShopEventOutcome.FAILED, detail=type(error).__name__, applied_at=timezone.now()
        )
        event.refresh_from_db()
        return event


def _apply(*, event_id: int) -> ShopEvent:
    with transaction.atomic():
        event = ShopEvent.objects.select_for_update().get(pk=event_id)
        if event.applied_at is not None:
            return event
        topics, read, source = _ORDERS[event.platform]
        event.outcome, event.detail = ShopEventOutcome.IGNORED, ""
        if event.topic in topics:
            number, data = read(event.body)
            event.order_number = str(number or "")[:40]
            try:
                # With the platform's own id of the order, for writing changes back (connection.write_back).
                incoming = replace(
                    incoming_order_clean(number=number, data=data),
                    shop_order_id=platform_id(
                        event.body.get("id") if isinstance(event.body, Mapping) else None
                    ),
                )
                # In this transaction: a conflict's record on the order is kept with the event.
                shop = event.shop or connected_shop(platform=event.platform)
                if shop is None:
                    raise OrderRefused([{"field": "shop", "problem": _WHICH_SHOP}])
                _, outcome = order_upsert(incoming=incoming, source=source, shop=shop)
                event.outcome = _OUTCOMES[outcome]
            except OrderConflict as conflict:
                event.outcome, event.detail = ShopEventOutcome.CONFLICT, conflict.message
            except NumberOfAnotherShape as refused:
                event.outcome, event.detail = ShopEventOutcome.OTHER_SHAPE, str(refused)
            except OrderRefused as refused:
                event.outcome = ShopEventOutcome.REFUSED
                event.detail = "; ".join(
                    f"{problem['field']} {problem['problem']}" for problem in refused.problems
                )
        event.applied_at = timezone.now()
        event.save(update_fields=["outcome", "detail", "order_number", "applied_at"])
    return event


def shop_events_retry_shape(*, shop_id: int) -> list[int]:
    """The shop's events refused for their number's shape alone, applied again once staff saved the shop
    (its shape set): pending and queued, their attempts counted afresh. The ids."""
    with transaction.atomic():
        refused = list(
            ShopEvent.objects.select_for_update()
            .filter(shop_id=shop_id, outcome=ShopEventOutcome.OTHER_SHAPE)
            .values_list("pk", flat=True)
        )
        ShopEvent.objects.filter(pk__in=refused).update(
            outcome=ShopEventOutcome.PENDING, applied_at=None, attempts=0, detail=""
        )
    for event_id in refused:
        shop_event_queue(event_id=event_id)
    return refused


def shop_saved(sender: type[Shop], instance: Shop, **kwargs: object) -> None:
    """orders.Shop's post_save: once the save commits, its deliveries refused for their shape again."""
    transaction.on_commit(lambda: shop_events_retry_shape(shop_id=instance.pk), robust=True)


def shop_events_take_pending() -> list[int]:
    """Events kept but not applied a minute after (their task lost or failed), each counted as one more
    attempt: the sweep's to queue again, at most SHOP_EVENT_ATTEMPTS times."""
    before = timezone.now() - timedelta(minutes=1)
    pending = list(
        ShopEvent.objects.filter(
            applied_at__isnull=True, received_at__lt=before, attempts__lt=SHOP_EVENT_ATTEMPTS
        ).values_list("pk", flat=True)[:100]
    )
    ShopEvent.objects.filter(pk__in=pending).update(attempts=F("attempts") + 1)
    return pending


def shop_events_purge(*, older_than: datetime) -> int:
    """Delete what shop platforms sent (whole orders: names, addresses) received before `older_than` and
    applied; one still pending is kept, whatever its age. In batches. Returns how many were deleted."""
    done = ShopEvent.objects.filter(received_at__lt=older_than, applied_at__isnull=False)
    deleted = 0
    while batch := list(done.order_by("pk").values_list("pk", flat=True)[:_PURGE_BATCH]):
        deleted += ShopEvent.objects.filter(pk__in=batch).delete()[0]
        if len(batch) < _PURGE_BATCH:
            break
    return deleted
