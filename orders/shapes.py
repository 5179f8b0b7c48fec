"""How the store's own systems read Bookly's records: the store API's answers and the events' data, one
shape each (an order's is intake.order_shape, the shape the shop sends)."""

from orders.intake import order_shape
from orders.models import DeliveryCase, ReturnRecord

__all__ = ["delivery_case_shape", "order_shape", "return_shape"]


def return_shape(*, record: ReturnRecord) -> dict[str, object]:
    """A return as the shop reads it: what, for which order lines, how far it got, and each move."""
    return {
        "rma_number": record.rma_number,
        "order_number": record.order.number,
        "status": record.status,
        "items": [
            {"line_number": line.order_item.line_number, "title": line.order_item.title}
            for line in record.lines.all()
        ],
        "reason": record.reason,
        "refund_method": record.refund_method,
        "refund_timeline_business_days": record.refund_timeline_business_days,
        "granted_as_exception": bool(record.exception_note),
        "created_at": record.created_at.isoformat(),
        "updated_at": record.updated_at.isoformat(),
        "status_history": [
            {
                "from": move.from_status,
                "to": move.to_status,
                "at": move.changed_at.isoformat(),
                "note": move.note,
            }
            for move in record.status_changes.all()
        ],
    }


def delivery_case_shape(*, case: DeliveryCase) -> dict[str, object]:
    """A delivery case as the shop reads it: which order, what went wrong with which lines, where it is."""
    return {
        "case_number": case.pk,
        "order_number": case.order.number,
        "problem": case.problem,
        "items": [{"line_number": item.line_number, "title": item.title} for item in case.items.all()],
        "details": case.details,
        "status": case.status,
        "resolution": case.resolution,
        "opened_at": case.created_at.isoformat(),
        "resolved_at": case.resolved_at.isoformat() if case.resolved_at else None,
    }
