"""How the store's own systems read Bookly's records: the store API's answers and the events' data, one
shape each, built through orders.outbound's models (an order's is intake.order_shape, the shape the shop
sends)."""

from decimal import Decimal
from typing import TYPE_CHECKING

from orders.intake import order_shape
from orders.models import RETURN_REASON_NOT_GIVEN, DeliveryCase, OrderChange, ReturnRecord
from orders.outbound import DeliveryCaseOut, ReturnOut, shape_dump

if TYPE_CHECKING:
    from django.contrib.auth.models import User

__all__ = ["actor_shape", "delivery_case_shape", "order_shape", "return_shape"]


def actor_shape(*, staff_member: "User | None", conversation_id: int | None) -> dict[str, object]:
    """Who made a change: a member of staff when one did, else the customer in a conversation, else
    Bookly itself."""
    if staff_member is not None:
        return {"kind": "staff", "conversation_id": None, "staff_member": staff_member.get_username()}
    if conversation_id is not None:
        return {"kind": "customer", "conversation_id": conversation_id, "staff_member": None}
    return {"kind": "system", "conversation_id": None, "staff_member": None}


def change_actor_shape(*, change: OrderChange) -> dict[str, object]:
    return actor_shape(staff_member=change.changed_by, conversation_id=change.conversation_id)


def return_shape(*, record: ReturnRecord) -> dict[str, object]:
    """A return as the shop reads it: what, for which order lines and how much, how far it got, and each
    move."""
    items = [line.order_item for line in record.lines.all()]
    # What the shop refunded of a line already (its own refunds) is not refunded again.
    refunded: dict[int, int] = {}
    for refund in record.order.refunds.all():
        for line in refund.lines.all():
            refunded[line.item_id] = refunded.get(line.item_id, 0) + line.quantity
    amounts = [item.unit_price * max(item.quantity - refunded.get(item.pk, 0), 0) for item in items]
    return shape_dump(
        ReturnOut,
        rma_number=record.rma_number,
        order_number=record.order.number,
        customer_email=record.order.customer_email,
        status=record.status,
        items=[
            {
                "line_number": item.line_number,
                "title": item.title,
                "quantity": item.quantity,
                "unit_price": str(item.unit_price),
                "shop_refunded_quantity": min(refunded.get(item.pk, 0), item.quantity),
                "refund_amount": str(amount),
            }
            for item, amount in zip(items, amounts, strict=True)
        ],
        refund_amount=str(sum(amounts, Decimal("0.00"))),
        currency=record.order.currency,
        reason=None if record.reason == RETURN_REASON_NOT_GIVEN else record.reason,
        refund_method=record.refund_method,
        refund_timeline_business_days=record.refund_timeline_business_days,
        granted_as_exception=bool(record.exception_note),
        created_at=record.created_at,
        updated_at=record.updated_at,
        status_history=[
            {"from": move.from_status, "to": move.to_status, "at": move.changed_at, "note": move.note}
            for move in record.status_changes.all()
        ],
    )


def delivery_case_shape(*, case: DeliveryCase) -> dict[str, object]:
    """A delivery case as the shop reads it: which order, what went wrong with which lines, where it is."""
    return shape_dump(
        DeliveryCaseOut,
        case_number=case.pk,
        order_number=case.order.number,
        problem=case.problem,
        items=[{"line_number": item.line_number, "title": item.title} for item in case.items.all()],
        details=case.details,
        status=case.status,
        resolution=case.resolution,
        opened_at=case.created_at,
        resolved_at=case.resolved_at,
    )
