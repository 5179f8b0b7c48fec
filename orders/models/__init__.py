"""The orders' Django models, one module a subject; import them from here (`from orders.models import Order`):

- shop: the shops whose orders Bookly answers for, and where orders come from (`Shop`, `OrderSource`);
- order: an order with its shipping address and its items (`Order`, `OrderItem`, `OrderStatus`);
- parts: what the shop sends whole with each version of an order: parcels and refunds (`Shipment`,
  `Refund` and their lines);
- changes: the changes to an order after it was placed (`OrderChange`);
- returns: returns (RMAs), their items and status moves (`ReturnRecord`, `ReturnLine`, `ReturnStatusChange`);
- delivery_cases: the delivery problems customers reported (`DeliveryCase`);
- outboxes: what waits to be sent: emails to customers and the store's events (`CustomerEmail`, `Event`).

The text patterns (RMA numbers, emails, dates, amounts) are orders.patterns'; the order numbers' shapes,
orders.numbers'.
"""

from django.db import models

from orders.models.changes import OrderChange, OrderChangeKind, OrderChangeState
from orders.models.delivery_cases import ITEM_PROBLEMS, CaseStatus, DeliveryCase, DeliveryProblem
from orders.models.order import Order, OrderItem, OrderStatus, UsState
from orders.models.outboxes import CustomerEmail, Event, EventType, _event_id
from orders.models.parts import Refund, RefundLine, Shipment, ShipmentLine
from orders.models.returns import (
    RETURN_REASON_NOT_GIVEN,
    RETURN_STATUSES_RELEASING_ITEMS,
    ReturnLine,
    ReturnRecord,
    ReturnStatus,
    ReturnStatusChange,
)
from orders.models.shop import (
    CURRENCY_CODE_LENGTH,
    OWN_SHOP_NAME,
    SHOP_PLATFORMS,
    OrderSource,
    Shop,
    own_shop,
    store_currency,
    store_number_example,
    store_number_pattern,
)


def column_length(model: type[models.Model], name: str) -> int:
    """The most characters a model's text column holds (its field's max_length)."""
    field = model._meta.get_field(name)
    if not isinstance(field, models.Field) or field.max_length is None:
        raise TypeError(f"{model.__name__}.{name} is no column of a set length")
    return field.max_length


__all__ = [
    "CURRENCY_CODE_LENGTH",
    "ITEM_PROBLEMS",
    "OWN_SHOP_NAME",
    "RETURN_REASON_NOT_GIVEN",
    "RETURN_STATUSES_RELEASING_ITEMS",
    "SHOP_PLATFORMS",
    "CaseStatus",
    "CustomerEmail",
    "DeliveryCase",
    "DeliveryProblem",
    "Event",
    "EventType",
    "Order",
    "OrderChange",
    "OrderChangeKind",
    "OrderChangeState",
    "OrderItem",
    "OrderSource",
    "OrderStatus",
    "Refund",
    "RefundLine",
    "ReturnLine",
    "ReturnRecord",
    "ReturnStatus",
    "ReturnStatusChange",
    "Shipment",
    "ShipmentLine",
    "Shop",
    "UsState",
    # The migrations name these callables by this module's path (orders.models.own_shop, …).
    "_event_id",
    "column_length",
    "own_shop",
    "store_currency",
    "store_number_example",
    "store_number_pattern",
]
