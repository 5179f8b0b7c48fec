"""The record of changes to an order after it was placed (OrderChange): a cancellation, a new address, a
shop's update refused."""

from django.conf import settings
from django.db import models

from orders.models.order import Order


class OrderChangeKind(models.TextChoices):
    CANCELLED = "cancelled", "Cancelled"
    ADDRESS_CHANGED = "address_changed", "Shipping address changed"
    # Not a change but one refused: the shop sent a version that would have undone what Bookly did
    # (orders.intake's rule); `after` holds what it sent and why it was refused.
    UPDATE_REFUSED = "update_refused", "Shop's update refused"
    # Staff forgot the shop's time of the version last taken (one a clock ahead of the shop's once set),
    # so that its next update is taken whatever its `updated_at`.
    SHOP_TIME_CLEARED = "shop_time_cleared", "Shop's next update accepted"


class OrderChangeState(models.TextChoices):
    """Whether a change is made. An order a shop platform keeps (settings.BOOKLY_CHANGES_THROUGH_SHOP) is
    changed in the shop first: the change waits for the shop, and only once the shop made it is it
    Bookly's too (the order changed, the customer's email sent). One the shop did not make is kept for
    staff, with what the shop said."""

    MADE = "made", "Made"
    AWAITING_SHOP = "awaiting_shop", "Waiting for the shop"
    SHOP_FAILED = "shop_failed", "The shop did not make it"


class OrderChange(models.Model):
    """One change to an order after it was placed: what, before and after, by whom, when.

    `changed_by` is the member of staff who made it; empty when the customer asked for it, then
    `conversation_id` is the chat's conversation they asked in (an id only: the domain knows nothing of
    conversations; the store's events say it).
    """

    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="changes")
    kind = models.CharField(max_length=20, choices=OrderChangeKind.choices)
    # {"status": …} for a cancellation; the address fields (ship_to … ship_zip) for an address change;
    # for a refused update, the order as Bookly kept it ({"status", "shop_updated_at"}) and what the shop
    # sent ({"status", "updated_at", "source", "reason", "message"}); for the shop's time cleared,
    # {"shop_updated_at": …} before and after.
    before = models.JSONField()
    after = models.JSONField()
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    changed_at = models.DateTimeField(auto_now_add=True)
    conversation_id = models.PositiveBigIntegerField(null=True, blank=True)
    state = models.CharField(max_length=20, choices=OrderChangeState.choices, default=OrderChangeState.MADE)
    # What the shop answered when it did not make the change (for staff), else blank.
    shop_answer = models.TextField(blank=True)

    class Meta:
        ordering = ["order", "changed_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(kind__in=OrderChangeKind.values), name="order_change_kind_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(state__in=OrderChangeState.values), name="order_change_state_valid"
            ),
            # Two confirmations at once (two tabs, the assistant and staff) cancel once; one the shop
            # did not make leaves the order to be cancelled again.
            models.UniqueConstraint(
                fields=["order"],
                condition=models.Q(kind=OrderChangeKind.CANCELLED)
                & ~models.Q(state=OrderChangeState.SHOP_FAILED),
                name="order_cancelled_once",
                violation_error_message="This order is already cancelled.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.order.number}: {self.get_kind_display().lower()}"
