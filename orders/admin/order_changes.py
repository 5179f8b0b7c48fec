"""The changes to an order after it was placed, as staff read them: on the order's page, and in the
support inbox (support.staff.admin)."""

from typing import ClassVar

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from orders.addresses import ADDRESS_FIELDS, OrderAddress
from orders.admin.base import ReadOnlyInline, staff_name
from orders.models import Order, OrderChange, OrderChangeKind, OrderChangeState, OrderSource


def order_change_summary(change: OrderChange) -> str:
    """What changed, in a line staff read: "processing to cancelled", or the old and new address."""
    if change.kind == OrderChangeKind.CANCELLED:
        return f"{change.before.get('status', '?')} to {change.after.get('status', '?')}"
    if change.kind == OrderChangeKind.UPDATE_REFUSED:
        # The shop's version, refused whole: the order stayed as Bookly had it (orders.intake's rule).
        return f"kept {change.before.get('status', '?')}: {change.after.get('message', '')}"
    if change.kind == OrderChangeKind.SHOP_TIME_CLEARED:
        return (
            f"the shop's time {change.before.get('shop_updated_at', '?')} forgotten: its next update is "
            "taken whatever its updated_at"
        )
    before, after = (_address_line(fields) for fields in (change.before, change.after))
    return f"from {before} to {after}"


def order_change_with_state(change: OrderChange) -> str:
    """The summary, and (for one asked of the shop that keeps the order) whether the shop made it: a
    change waiting for the shop is not told as made anywhere staff read it."""
    summary = order_change_summary(change)
    if change.state == OrderChangeState.AWAITING_SHOP:
        return f"{summary}; waiting for the shop"
    if change.state == OrderChangeState.SHOP_FAILED:
        return f"{summary}; the shop did not make it: {change.shop_answer}"
    return summary


def _address_line(fields: dict[str, object]) -> str:
    if not fields:
        return "none on file"
    return OrderAddress(**{name: str(fields.get(name, "")) for name in ADDRESS_FIELDS}).one_line()


class OrderChangeInline(ReadOnlyInline):
    """Every change to the order after it was placed: what, before and after, by whom, when."""

    model = OrderChange
    fields: ClassVar[tuple[str, ...]] = ("kind", "what_changed", "changed_by_name", "changed_at", "made")
    readonly_fields = fields
    verbose_name = "change"
    verbose_name_plural = "changes after the order was placed"

    def has_view_permission(self, request: HttpRequest, obj: Order | None = None) -> bool:
        return request.user.has_perm("orders.view_order")

    def get_queryset(self, request: HttpRequest) -> QuerySet[OrderChange]:
        return super().get_queryset(request).select_related("changed_by")

    @admin.display(description="what changed")
    def what_changed(self, obj: OrderChange) -> str:
        return order_change_summary(obj)

    @admin.display(description="made")
    def made(self, obj: OrderChange) -> str:
        """Whether it is made: one asked of the shop that keeps the order says whether the shop made it,
        and what the shop answered when it did not (for staff to follow up: the customer reads only our
        own words for it, by email and in the chat)."""
        if obj.state == OrderChangeState.SHOP_FAILED:
            return f"{obj.get_state_display()}: {obj.shop_answer}"
        return obj.get_state_display()

    @admin.display(description="by")
    def changed_by_name(self, obj: OrderChange) -> str:
        if obj.kind == OrderChangeKind.UPDATE_REFUSED:
            source = obj.after.get("source")
            known = source in OrderSource.values
            return f"the shop ({OrderSource(source).label.lower()})" if known else "the shop"
        return staff_name(obj.changed_by) if obj.changed_by else "the customer"
