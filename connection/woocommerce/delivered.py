"""WooCommerce's completed orders counted as delivered when their day comes (WooCommerce's core has no
delivery: connection.woocommerce.orders reads a completed order as one parcel sent the day it was
completed, delivered WOOCOMMERCE_DELIVERED_AFTER_DAYS later). An order completed recently is shipped
when it comes; this moves it once its day has come, through the order intake as any version of the
order (its rules hold, its events go out), so a customer's return window opens without the shop
sending the order again."""

import logging
from datetime import date, timedelta

from django.conf import settings
from django.core.cache import cache
from django.db import transaction

from connection.woocommerce.orders import delivered_on_presumed
from orders.intake import OrderRefused, incoming_order_clean, order_shape, order_upsert
from orders.models import Order, OrderSource, OrderStatus

logger = logging.getLogger(__name__)

_A_DAY = 26 * 3600  # a little more than a day: the key is the day's
_AT_MOST = 500  # a day's batch; the rest wait for the next day
# What an order as read holds beside the shop's fields.
_NOT_THE_SHOPS = ("number", "source", "updated_at")


def woocommerce_orders_delivered(*, today: date) -> int:
    """Move the completed WooCommerce orders whose day to count as delivered has come; how many. Once a
    store day (the sweep calls it every minute; a delivery is decided by the day): an order it cannot
    move (a return holds a line the version would drop) is tried again the next day, not every minute."""
    days = settings.WOOCOMMERCE_DELIVERED_AFTER_DAYS
    if not days or not cache.add(f"woocommerce-delivered:{today.isoformat()}", True, timeout=_A_DAY):
        return 0
    due = (
        Order.objects.filter(
            source=OrderSource.WOOCOMMERCE,
            status=OrderStatus.SHIPPED,
            shipments__shipped_on__lte=today - timedelta(days=days),
            shipments__delivered_on__isnull=True,
        )
        .distinct()
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    return sum(_delivered(order_id=order_id) for order_id in due[:_AT_MOST])


def _delivered(*, order_id: int) -> bool:
    """The order, read and written under its row lock (a webhook of the shop meanwhile waits, and its
    version is applied after this one, never overwritten by it), as delivered on its parcel's day."""
    with transaction.atomic():
        order = Order.objects.select_for_update().get(pk=order_id)
        data = {name: value for name, value in order_shape(order=order).items() if name not in _NOT_THE_SHOPS}
        if order.status != OrderStatus.SHIPPED or len(data["shipments"]) != 1:
            return False  # moved since, or not a completed order as the reader has it
        [parcel] = data["shipments"]
        delivered_on = delivered_on_presumed(date.fromisoformat(str(parcel["shipped_on"])))
        parcel["delivered_on"] = delivered_on.isoformat()
        data.update(status=OrderStatus.DELIVERED, delivered_on=delivered_on.isoformat())
        try:
            order_upsert(
                incoming=incoming_order_clean(number=order.number, data=data),
                source=order.source,
                shop=order.shop,
            )
        except OrderRefused as refused:
            logger.info("WooCommerce order %s not counted as delivered: %s", order.number, refused)
            return False
    return True
