"""WooCommerce's completed orders counted as delivered when their day comes (WooCommerce's core has no
delivery: connection.woocommerce.orders reads a completed order as one parcel sent the day it was
completed, delivered WOOCOMMERCE_DELIVERED_AFTER_DAYS later). An order completed recently is shipped
when it comes; this moves it once its day has come, through the order intake as any version of the
order (its rules hold, its events go out), so a customer's return window opens without the shop
sending the order again.

An order taken completed before the reader gave it its parcel (7a3bebd) is shipped with none on file;
the same rule moves it, its parcel made as the reader makes one (its lines that ship, the order's
tracking) and sent on the latest day it can have been completed: the day of the shop's version Bookly
holds (no completion comes after it), so it is never delivered before its day. Not one refunded in full
(WooCommerce's `refunded`, which the reader keeps shipped and without a parcel, never delivered: its
money went back), nor one with nothing that ships."""

import logging
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Coalesce

from connection.woocommerce.orders import delivered_on_presumed
from orders.intake import OrderRefused, incoming_order_clean, order_shape, order_upsert
from orders.models import Order, OrderItem, OrderSource, OrderStatus, Refund, Shipment

logger = logging.getLogger(__name__)

_A_DAY = 26 * 3600  # a little more than a day: the key is the day's
_AT_MOST = 500  # a day's batch; the rest wait for the next day
# What an order as read holds beside the shop's fields.
_NOT_THE_SHOPS = ("number", "source", "updated_at")


def woocommerce_orders_delivered(*, today: date) -> int:
    """Move the completed WooCommerce orders whose day to count as delivered has come (those taken before
    the reader made their parcel too); how many. Once a store day (the sweep calls it every minute; a
    delivery is decided by the day): an order it cannot move (a return holds a line the version would
    drop) is tried again the next day, not every minute."""
    days = settings.WOOCOMMERCE_DELIVERED_AFTER_DAYS
    if not days or not cache.add(f"woocommerce-delivered:{today.isoformat()}", True, timeout=_A_DAY):
        return 0
    sent_by = today - timedelta(days=days)
    shipped = Order.objects.filter(source=OrderSource.WOOCOMMERCE, status=OrderStatus.SHIPPED)
    with_parcel = shipped.filter(shipments__shipped_on__lte=sent_by, shipments__delivered_on__isnull=True)
    refunded = Refund.objects.filter(order=OuterRef("pk")).values("order").annotate(sum=Sum("amount"))
    without_parcel = (  # taken completed before the reader made its parcel
        shipped.filter(~Exists(Shipment.objects.filter(order=OuterRef("pk"))))
        .exclude(ship_line1="")
        .filter(Exists(OrderItem.objects.filter(order=OuterRef("pk"), requires_shipping=True)))
        .annotate(refunded=Subquery(refunded.values("sum")), held=Coalesce("shop_updated_at", "updated_at"))
        .filter(Q(refunded__isnull=True) | Q(refunded__lt=F("total")))
        .filter(held__lt=datetime.combine(sent_by + timedelta(days=1), time.min, tzinfo=UTC))
    )
    due = (
        Order.objects.filter(Q(pk__in=with_parcel.values("pk")) | Q(pk__in=without_parcel.values("pk")))
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    return sum(_delivered(order_id=order_id, today=today) for order_id in due[:_AT_MOST])


def _delivered(*, order_id: int, today: date) -> bool:
    """The order, read and written under its row lock (a webhook of the shop meanwhile waits, and its
    version is applied after this one, never overwritten by it), as delivered on its parcel's day."""
    with transaction.atomic():
        order = Order.objects.select_for_update().get(pk=order_id)
        data = {name: value for name, value in order_shape(order=order).items() if name not in _NOT_THE_SHOPS}
        if order.status == OrderStatus.SHIPPED and not data["shipments"]:
            data["shipments"] = _parcel_presumed(order=order, data=data)
        shipments = data["shipments"]
        if order.status != OrderStatus.SHIPPED or not isinstance(shipments, list) or len(shipments) != 1:
            return False  # moved since, or not a completed order as the reader has it
        [parcel] = shipments
        delivered_on = delivered_on_presumed(date.fromisoformat(str(parcel["shipped_on"])))
        if delivered_on is None or delivered_on > today:
            return False  # its parcel changed since: its day has not come
        parcel["delivered_on"] = delivered_on.isoformat()
        data.update(status=OrderStatus.DELIVERED, delivered_on=delivered_on.isoformat())
        try:
            order_upsert(
                incoming=incoming_order_clean(number=order.number, data=data),
                source=OrderSource(order.source),
                shop=order.shop,
            )
        except OrderRefused as refused:
            logger.info("WooCommerce order %s not counted as delivered: %s", order.number, refused)
            return False
    return True


def _parcel_presumed(*, order: Order, data: dict) -> list[dict]:
    """The parcel of an order taken completed before the reader made one, as the reader makes it (its
    lines that ship, the order's tracking), sent on the day of the shop's version Bookly holds (Bookly's
    last change, where the shop gave no time): it cannot have been completed later. None for an order
    refunded in full, with no address or with nothing that ships."""
    refunds = [Decimal(str(refund["amount"])) for refund in data["refunds"]]
    if not data["shipping_address"] or (refunds and sum(refunds) >= order.total):
        return []
    lines = [
        {"line_number": item["line_number"], "quantity": item["quantity"]}
        for item in data["items"]
        if item["requires_shipping"] and item["quantity"] > 0
    ]
    held = (order.shop_updated_at or order.updated_at).astimezone(UTC).date()
    parcel = {
        "carrier": order.carrier,
        "tracking_number": order.tracking_number,
        "shipped_on": held.isoformat(),
    }
    return [{**parcel, "delivered_on": None, "lines": lines}] if lines else []
