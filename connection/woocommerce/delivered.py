"""WooCommerce's completed orders counted as delivered when their day comes (WooCommerce's core has no
delivery: connection.woocommerce.orders reads a completed order as one parcel sent the day it was
completed, delivered WOOCOMMERCE_DELIVERED_AFTER_DAYS later). An order completed recently is shipped
when it comes; this moves it once its day has come, through the order intake as any version of the
order (its rules hold, its events go out), so a customer's return window opens without the shop
sending the order again."""

import logging
from datetime import date, timedelta

from django.conf import settings

from connection.woocommerce.orders import delivered_on_presumed
from orders.intake import OrderRefused, incoming_order_clean, order_shape, order_upsert
from orders.models import Order, OrderSource, OrderStatus

logger = logging.getLogger(__name__)

# What an order as read holds beside the shop's fields.
_NOT_THE_SHOPS = ("number", "source", "updated_at")


def woocommerce_orders_delivered(*, today: date) -> int:
    """Move the completed WooCommerce orders whose day to count as delivered has come; how many."""
    days = settings.WOOCOMMERCE_DELIVERED_AFTER_DAYS
    if not days:
        return 0
    due = Order.objects.filter(
        source=OrderSource.WOOCOMMERCE,
        status=OrderStatus.SHIPPED,
        shipments__shipped_on__lte=today - timedelta(days=days),
        shipments__delivered_on__isnull=True,
    ).distinct()
    moved = 0
    for order in due[:500]:
        data = {name: value for name, value in order_shape(order=order).items() if name not in _NOT_THE_SHOPS}
        if len(data["shipments"]) != 1:
            continue  # not a completed order as the reader has it (a parcel per tracking extension entry)
        [parcel] = data["shipments"]
        delivered_on = delivered_on_presumed(date.fromisoformat(str(parcel["shipped_on"])))
        parcel["delivered_on"] = delivered_on.isoformat()
        data.update(status=OrderStatus.DELIVERED, delivered_on=delivered_on.isoformat())
        try:
            order_upsert(incoming=incoming_order_clean(number=order.number, data=data), source=order.source)
        except OrderRefused as refused:  # the order changed since (a return held a line): kept as it is
            logger.info("WooCommerce order %s not counted as delivered: %s", order.number, refused)
            continue
        moved += 1
    return moved
