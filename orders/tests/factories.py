from collections.abc import Iterable
from datetime import date, timedelta
from decimal import Decimal
from typing import Any, TypedDict

import factory
from factory.django import DjangoModelFactory

from orders.models import (
    SHOP_PLATFORMS,
    DeliveryCase,
    Order,
    OrderItem,
    OrderSource,
    OrderStatus,
    ReturnRecord,
)
from orders.shops import shop_of_platform
from store.categories import ItemCategory


class OrderFactory(DjangoModelFactory[Order]):
    class Meta:
        model = Order

    source = OrderSource.FIXTURE
    # The platform's one shop whose address is not known yet; an import's is our own shop.
    shop = factory.LazyAttribute(
        lambda order: shop_of_platform(
            platform=order.source if order.source in SHOP_PLATFORMS else OrderSource.FIXTURE
        )
    )
    number = factory.Sequence(lambda n: f"BK-{50000 + n}")
    customer_name = factory.Faker("name")
    customer_email = factory.Sequence(lambda n: f"customer{n}@example.com")
    status = OrderStatus.PROCESSING
    ordered_on = date(2026, 4, 1)
    delivered_on = None
    tracking_number = ""
    total = Decimal("0.00")
    currency = "USD"
    ship_country = "US"  # for the address a test gives (none by default)

    class Params:
        shipped = factory.Trait(status=OrderStatus.SHIPPED, tracking_number="1Z999AA10000000001")
        delivered = factory.Trait(
            status=OrderStatus.DELIVERED,
            tracking_number="1Z999AA10000000002",
            delivered_on=factory.LazyAttribute(lambda o: o.ordered_on + timedelta(days=3)),
        )


class OrderItemFactory(DjangoModelFactory[OrderItem]):
    class Meta:
        model = OrderItem

    order = factory.SubFactory(OrderFactory)
    line_number = factory.Sequence(lambda n: n + 1)
    title = factory.Sequence(lambda n: f"Book number {n}")
    author = factory.Faker("name")
    unit_price = Decimal("12.50")
    quantity = 1
    category = ItemCategory.FICTION


class ReturnRecordFactory(DjangoModelFactory[ReturnRecord]):
    """A return as stored, made directly (return_record_create checks the policy; this does not)."""

    class Meta:
        model = ReturnRecord

    rma_number = factory.Sequence(lambda n: f"RMA-T{n:07d}")
    order = factory.SubFactory(OrderFactory)
    reason = "Changed my mind"
    refund_method = "original payment method"
    refund_timeline_business_days = 5


def delivered_order(
    *, days_ago: int, today: date, categories: Iterable[str] = (ItemCategory.FICTION,), **kwargs: Any
) -> Order:
    """A delivered order whose delivery lies `days_ago` days before `today`, one item per category."""
    delivered_on = today - timedelta(days=days_ago)
    order = OrderFactory.create(
        delivered=True, ordered_on=delivered_on - timedelta(days=2), delivered_on=delivered_on, **kwargs
    )
    for line, category in enumerate(categories, start=1):
        OrderItemFactory.create(
            order=order, line_number=line, category=category, title=f"{category} book {line}"
        )
    return order


class ChangesMade(TypedDict):
    order: Order
    record: ReturnRecord
    cancelled: Order
    moved: Order
    case: DeliveryCase


def one_change_of_each_kind(*, today: date) -> ChangesMade:
    """A return started and moved, an order cancelled, one sent elsewhere, a delivery case opened and
    resolved, through the services, in that order: each makes its store event. What was made, by name."""
    from orders.addresses import shipping_address_clean
    from orders.models import DeliveryProblem, ReturnStatus
    from orders.services import (
        delivery_case_open,
        delivery_case_resolve,
        order_cancel,
        order_shipping_address_change,
        return_record_create,
        return_record_set_status,
    )

    order = delivered_order(days_ago=5, today=today)
    record = return_record_create(order=order, reason="Changed my mind", today=today)
    return_record_set_status(return_record=record, status=ReturnStatus.LABEL_SENT)
    cancelled, moved = OrderFactory.create(), OrderFactory.create()
    OrderItemFactory.create(order=moved)
    order_cancel(order=cancelled)
    address = {"to": "Ana Diaz", "line1": "12 Elm St", "line2": "", "city": "Springfield", "state": "IL",
               "zip": "62701", "country": "US"}  # fmt: skip
    order_shipping_address_change(order=moved, address=shipping_address_clean(fields=address))
    case, _ = delivery_case_open(order=order, problem=DeliveryProblem.DAMAGED, items=None, details="torn")
    delivery_case_resolve(case=case, resolution="A new copy is on its way.", resolved_by=None)
    return {"order": order, "record": record, "cancelled": cancelled, "moved": moved, "case": case}
