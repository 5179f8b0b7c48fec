"""The parts of an order the shop sends whole with each version of it: the parcels it went out in
(Shipment) and the money the shop gave back (Refund), each with how many of which lines."""

from decimal import Decimal
from typing import ClassVar, TypeVar

from django.core.validators import MinValueValidator
from django.db import models

from orders.models.order import Order, OrderItem
from orders.models.shop import own_shop

_PartT = TypeVar("_PartT", bound="OrderPart")
_LineT = TypeVar("_LineT", bound="LineCount")


class OrderPartManager(models.Manager[_PartT]):
    """A parcel or a refund by its order's number and its own (so that a fixture loads it again in
    place)."""

    def get_by_natural_key(self, order_number: str, number: int) -> _PartT:
        return self.get(order__shop_id=own_shop(), order__number=order_number, number=number)


class PartLineManager(models.Manager[_LineT]):
    """A parcel's or a refund's line by theirs and the order's line number."""

    def get_by_natural_key(self, order_number: str, number: int, line_number: int) -> _LineT:
        part = self.model.PART
        return self.get(
            **{f"{part}__order__shop_id": own_shop(), f"{part}__order__number": order_number},
            **{f"{part}__number": number},
            item__line_number=line_number,
        )


class LineCount(models.Model):
    """How many of one line of the order a part of it (a parcel, a refund) is for; each declares its part,
    the field PART names."""

    item = models.ForeignKey(OrderItem, on_delete=models.CASCADE, related_name="+")
    quantity = models.PositiveSmallIntegerField(validators=[MinValueValidator(1)])

    PART: ClassVar[str]
    objects = PartLineManager()

    class Meta:
        abstract = True
        constraints = [
            models.CheckConstraint(condition=models.Q(quantity__gte=1), name="%(class)s_quantity_positive")
        ]

    def __str__(self) -> str:
        return f"{self.quantity} x {self.item.title}"


class OrderPart(models.Model):
    """A part of an order the shop sends whole with each version of it (a parcel, a refund): its number
    there (1, 2, … in the order the shop sent them); each declares its `order` (its own related name)."""

    number = models.PositiveSmallIntegerField()
    order: "models.ForeignKey[Order]"

    objects = OrderPartManager()

    class Meta:
        abstract = True
        ordering = ["order", "number"]

    def natural_key(self) -> tuple[str, int]:
        return (self.order.number, self.number)

    # Django's own way to name the fixtures loaded first: an attribute of the method, which mypy does not
    # allow on a function.
    natural_key.dependencies = ["orders.order"]  # type: ignore[attr-defined]


class Shipment(OrderPart):
    """One parcel the shop sent (a Shopify fulfilment): the lines it holds and how many of each, its
    carrier and tracking, when it left and when it arrived, as the shop says. An order the shop ships in
    parts has several; the order's own tracking number is the latest one's. Replaced whole with each
    version of the order the shop sends."""

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="shipments")
    carrier = models.CharField(max_length=40, blank=True)
    tracking_number = models.CharField(max_length=64, blank=True)
    tracking_url = models.URLField(max_length=500, blank=True)
    shipped_on = models.DateField(null=True, blank=True)
    delivered_on = models.DateField(null=True, blank=True)

    class Meta(OrderPart.Meta):
        constraints = [
            models.UniqueConstraint(fields=["order", "number"], name="shipment_number_unique"),
            models.CheckConstraint(
                condition=models.Q(delivered_on__isnull=True)
                | models.Q(shipped_on__isnull=True)
                | models.Q(delivered_on__gte=models.F("shipped_on")),
                name="shipment_delivered_after_shipped",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.order.number} parcel {self.number}"


class ShipmentLine(LineCount):
    """How many of one line of the order a parcel holds."""

    shipment = models.ForeignKey(Shipment, on_delete=models.CASCADE, related_name="lines")

    PART = "shipment"

    class Meta(LineCount.Meta):
        ordering = ["shipment", "item__line_number"]
        constraints = [
            *LineCount.Meta.constraints,
            models.UniqueConstraint(fields=["shipment", "item"], name="shipment_line_unique"),
        ]

    def natural_key(self) -> tuple[str, int, int]:
        return (*self.shipment.natural_key(), self.item.line_number)

    natural_key.dependencies = ["orders.shipment", "orders.orderitem"]  # type: ignore[attr-defined]


class Refund(OrderPart):
    """Money the shop gave back on the order, as the shop records it (Shopify's and WooCommerce's
    refunds): how much, in the order's currency, when, why, and for which lines when it says. Replaced
    whole with each version of the order the shop sends; a return's refund made here is the return's."""

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="refunds")
    amount = models.DecimalField(
        max_digits=10, decimal_places=2, validators=[MinValueValidator(Decimal("0"))]
    )
    refunded_on = models.DateField(null=True, blank=True)
    reason = models.CharField(max_length=300, blank=True)

    class Meta(OrderPart.Meta):
        constraints = [
            models.UniqueConstraint(fields=["order", "number"], name="refund_number_unique"),
            models.CheckConstraint(condition=models.Q(amount__gte=0), name="refund_amount_not_negative"),
        ]

    def __str__(self) -> str:
        return f"{self.order.number} refund {self.number}"


class RefundLine(LineCount):
    """How many of one line of the order a refund was for."""

    refund = models.ForeignKey(Refund, on_delete=models.CASCADE, related_name="lines")

    PART = "refund"

    class Meta(LineCount.Meta):
        ordering = ["refund", "item__line_number"]
        constraints = [
            *LineCount.Meta.constraints,
            models.UniqueConstraint(fields=["refund", "item"], name="refund_line_unique"),
        ]

    def natural_key(self) -> tuple[str, int, int]:
        return (*self.refund.natural_key(), self.item.line_number)

    natural_key.dependencies = ["orders.refund", "orders.orderitem"]  # type: ignore[attr-defined]
