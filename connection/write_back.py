"""Changes written back to the shop that keeps an order: a cancellation or an address change asked in
Bookly (by the customer through the assistant, or by staff) of an order a shop platform sent is made
in the shop first, through its API, on the task queue; only once the shop made it is it Bookly's
(orders.services.order_change_shop_made: the order changed, the customer's email, the store's event).

Each write is tried at once, then again after a back-off while the shop cannot be reached or keeps
failing; a refusal (Shopify's 422, WooCommerce's 400) is final. One the shop did not make is kept on
the change for staff with the shop's words (orders.services.order_change_shop_failed), and the customer
is told in ours: by email, and in the chat the next time they write or look the order up. Each
platform's room says how it is asked (connection.shopify.changes …).
"""

import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django_q.tasks import async_task

from connection.models import ShopPlatform, ShopWrite, ShopWriteOutcome
from connection.platform_http import PlatformError, platform_budget
from connection.shopify.changes import shopify_change_write
from connection.shopify.listing import shopify_client
from connection.shops import shop_key
from connection.woocommerce.changes import woocommerce_change_write
from connection.woocommerce.listing import woocommerce_client
from orders.models import OrderChange, OrderChangeKind, OrderChangeState, OrderSource, OrderStatus
from orders.services import order_change_shop_failed, order_change_shop_made

logger = logging.getLogger(__name__)

# Per source of the order: its platform, a client with the shop's key, and how a change is asked.
_WRITERS: dict[str, tuple[str, Callable, Callable]] = {
    OrderSource.SHOPIFY: (ShopPlatform.SHOPIFY, shopify_client, shopify_change_write),
    OrderSource.WOOCOMMERCE: (ShopPlatform.WOOCOMMERCE, woocommerce_client, woocommerce_change_write),
}
# Minutes before each attempt after the first (each attempt already retries a busy platform itself). The
# first is longer than the queue's task timeout (Q_CLUSTER timeout, 100 s): an attempt still running
# (or killed) is never overlapped by the next.
_BACK_OFF = (2, 5, 15, 60)
# How long one attempt may take, all its requests, their retries and waits included (each request try
# ends within platform_http.ATTEMPT_SECONDS, cut to what is left of this): well within the queue's task
# timeout (Q_CLUSTER timeout, 100 s), so a slow shop ends the attempt, never the worker (_attempt_seconds).
_ATTEMPT_SECONDS = 60.0
# The share of the queue's task timeout an attempt may take at most, when that timeout is set shorter.
_TASK_TIMEOUT_SHARE = 0.6
SHOP_WRITE_ATTEMPTS = len(_BACK_OFF) + 1
# A change whose signal was lost (the process died after its commit) is taken by the sweep after this.
_SIGNAL_LOST_AFTER = timedelta(minutes=1)


def _write_of(change: OrderChange) -> ShopWrite:
    # Only an order a platform sent waits for its shop (orders.services); one whose source changed
    # since is refused at its attempt.
    platform = _WRITERS.get(change.order.source, (ShopPlatform.SHOPIFY,))[0]
    return ShopWrite.objects.get_or_create(change=change, defaults={"platform": platform})[0]


def shop_write_request(*, change: OrderChange) -> ShopWrite:
    """The write of a change waiting for its shop (once), on the queue."""
    write = _write_of(change)
    shop_write_queue(write_id=write.pk)
    return write


def shop_write_queue(*, write_id: int) -> None:
    """On the queue; a queue that cannot take it now loses nothing (the sweep takes what is due)."""
    try:
        async_task("connection.tasks.shop_write_attempt_task", write_id, task_name=f"shop write {write_id}")
    except Exception:
        logger.exception("could not queue shop write %s; the sweep will take it", write_id)


def _claimed(write_id: int, now: datetime) -> ShopWrite | None:
    """The write, counted as one more attempt and its next one scheduled, if an attempt is due now
    (a task run twice, or late, finds it not due and does nothing)."""
    with transaction.atomic():
        write = ShopWrite.objects.select_for_update().get(pk=write_id)
        if write.outcome != ShopWriteOutcome.PENDING or write.next_attempt_at > now:
            return None
        if write.attempts >= SHOP_WRITE_ATTEMPTS:
            # Its last attempt never said how it ended (the worker killed at its timeout): failed.
            return write
        write.attempts += 1
        write.next_attempt_at = now + timedelta(minutes=_BACK_OFF[min(write.attempts, len(_BACK_OFF)) - 1])
        write.save(update_fields=["attempts", "next_attempt_at"])
    return write


def shop_write_attempt(
    *, write_id: int, now: datetime, sleep: Callable[[float], None] = time.sleep
) -> ShopWrite:
    """Ask the shop to make the change, once (if an attempt is due): made, the change is Bookly's;
    refused, or failed its last attempt, it is kept for staff with the shop's answer."""
    write = _claimed(write_id, now)
    if write is None:
        return ShopWrite.objects.get(pk=write_id)
    if write.attempts > SHOP_WRITE_ATTEMPTS or (
        write.attempts == SHOP_WRITE_ATTEMPTS and write.next_attempt_at <= now
    ):
        return _not_made(write, write.answer or "no answer (the attempt was stopped)", refused=False, now=now)
    change = OrderChange.objects.select_related("order__shop").get(pk=write.change_id)
    order = change.order
    try:
        if order.source not in _WRITERS or not order.shop_order_id:
            raise PlatformError(
                f"order {order.number} is not kept by a shop platform Bookly writes to", status=400
            )
        # Its own shop's key, never another's: that shop's order of the same id would be changed instead.
        key = shop_key(shop=order.shop)
        if order.status == OrderStatus.CANCELLED and change.kind == OrderChangeKind.CANCELLED:
            pass  # the shop cancelled it itself meanwhile (its webhook came first): made
        elif order.status != OrderStatus.PROCESSING:
            # Shipped (or cancelled) since it was asked: the shop is not asked to undo that.
            now_is = order.get_status_display().lower()
            raise PlatformError(
                f"order {order.number} is {now_is} now, so the shop was not asked",
                status=409,
                said=f"not asked: the order is {now_is} now",
            )
        else:
            _, client_of, write_change = _WRITERS[order.source]
            client, base = client_of(key=key)
            with client, platform_budget(_attempt_seconds()):
                write_change(client=client, base=base, order=order, change=change, sleep=sleep)
        with transaction.atomic():
            order_change_shop_made(change_id=change.pk)
            _finish(write, ShopWriteOutcome.MADE, "", now)
    except PlatformError as error:
        refused = error.refused or error.status == 409
        return _not_made(write, str(error), refused=refused, now=now, said=error.said)
    except Exception as error:  # ours (a bug, the database): tried again like an unreachable shop
        logger.exception("shop write %s failed", write_id)
        return _not_made(write, f"{type(error).__name__}: {error}", refused=False, now=now)
    return write


def _attempt_seconds() -> float:
    """_ATTEMPT_SECONDS, or less when the queue's task timeout is set so short that it would not leave
    the rest of the attempt (the database, the email) its time."""
    return min(_ATTEMPT_SECONDS, _TASK_TIMEOUT_SHARE * settings.Q_CLUSTER["timeout"])


def _not_made(write: ShopWrite, answer: str, *, refused: bool, now: datetime, said: str = "") -> ShopWrite:
    """Kept for the next attempt, or (refused, or the last attempt) for staff: on the change, the shop's
    own words when it gave any ("400: Invalid shipping postcode."), else what happened."""
    if not refused and write.attempts < SHOP_WRITE_ATTEMPTS:
        write.answer = answer[:2000]
        write.save(update_fields=["answer"])
        return write
    outcome = ShopWriteOutcome.REFUSED if refused else ShopWriteOutcome.FAILED
    if not refused:
        said = f"the shop could not be reached after {write.attempts} attempts (last: {said or answer[:300]})"
    with transaction.atomic():
        order_change_shop_failed(change_id=write.change_id, answer=said or answer)
        _finish(write, outcome, answer, now)
    return write


def _finish(write: ShopWrite, outcome: str, answer: str, now: datetime) -> None:
    """Once: a write another attempt finished already keeps that outcome."""
    write.outcome, write.answer, write.finished_at = outcome, answer[:2000], now
    ShopWrite.objects.filter(pk=write.pk, outcome=ShopWriteOutcome.PENDING).update(
        outcome=outcome, answer=answer[:2000], finished_at=now
    )


def shop_writes_take_due(*, now: datetime) -> list[int]:
    """Writes due again, and those of changes whose signal was lost (created now): the sweep's to
    queue."""
    lost = (
        OrderChange.objects.filter(
            state=OrderChangeState.AWAITING_SHOP,
            shop_write__isnull=True,
            changed_at__lt=now - _SIGNAL_LOST_AFTER,
        )
        .select_related("order")
        .order_by("changed_at")[:100]
    )
    for change in lost:
        _write_of(change)
    return list(
        ShopWrite.objects.filter(outcome=ShopWriteOutcome.PENDING, next_attempt_at__lte=now)
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:100]
    )
