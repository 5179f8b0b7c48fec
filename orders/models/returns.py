"""Returns (RMAs): the items returned, and each move of a return to its next status."""

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.db.models.functions import Length
from django.db.models.lookups import Exact
from django.utils import timezone

from orders.models.order import Order, OrderItem
from orders.patterns import RMA_NUMBER_LENGTH, RMA_NUMBER_PATTERN


class ReturnStatus(models.TextChoices):
    INITIATED = "initiated", "Initiated"
    LABEL_SENT = "label_sent", "Label sent"
    RECEIVED = "received", "Received"
    REFUNDED = "refunded", "Refunded"
    REJECTED = "rejected", "Rejected"
    CANCELLED = "cancelled", "Cancelled"


# A return in one of these statuses no longer holds its items: they may be
# returned again. A refunded return keeps holding them (they came back).
RETURN_STATUSES_RELEASING_ITEMS = frozenset({ReturnStatus.REJECTED, ReturnStatus.CANCELLED})


# A return's reason when the customer gave none (the chat starts a return without asking twice).
RETURN_REASON_NOT_GIVEN = "Not given"


class ReturnRecord(models.Model):
    """A return merchandise authorisation (RMA), as promised to the customer."""

    rma_number = models.CharField(
        "RMA number",
        max_length=RMA_NUMBER_LENGTH,
        unique=True,
        validators=[RegexValidator(RMA_NUMBER_PATTERN, "Use RMA- followed by 8 letters or digits.")],
    )
    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="returns")
    items = models.ManyToManyField(OrderItem, through="ReturnLine", related_name="returns")
    reason = models.TextField()
    status = models.CharField(max_length=20, choices=ReturnStatus.choices, default=ReturnStatus.INITIATED)
    refund_method = models.CharField(max_length=200)
    refund_timeline_business_days = models.PositiveSmallIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    # Who started it: a member of staff (from the order's admin page), or nobody for the customer
    # through the assistant, in the chat's conversation `conversation_id` (an id only: the domain knows
    # nothing of conversations; the store's events say it).
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    conversation_id = models.PositiveBigIntegerField(null=True, blank=True)
    # Why staff granted a return the policy would refuse (outside the window, an item never
    # returnable); empty for a return within the policy.
    exception_note = models.TextField(blank=True)
    # When its status last moved (the store API lists returns changed since a time).
    updated_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "return"
        permissions = [("grant_return_exception", "Can start a return the policy would refuse")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=ReturnStatus.values), name="return_status_valid"
            ),
            # django-stubs types Q & x for a Q only (a lookup's & is a Combinable); Django makes it a Q.
            models.CheckConstraint(
                condition=models.Q(rma_number__startswith="RMA-")  # type: ignore[arg-type]
                & Exact(Length("rma_number"), RMA_NUMBER_LENGTH),
                name="return_rma_number_shape",
            ),
        ]

    def __str__(self) -> str:
        return self.rma_number

    @property
    def holds_items(self) -> bool:
        return self.status not in RETURN_STATUSES_RELEASING_ITEMS


class ReturnStatusChange(models.Model):
    """One move of a return to its next status: from what, to what, by whom, when."""

    return_record = models.ForeignKey(ReturnRecord, on_delete=models.CASCADE, related_name="status_changes")
    from_status = models.CharField(max_length=20, choices=ReturnStatus.choices)
    to_status = models.CharField(max_length=20, choices=ReturnStatus.choices)
    # The member of staff (empty for changes made by the system).
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    changed_at = models.DateTimeField(auto_now_add=True)
    # Why, in staff's words to the customer: required to reject or cancel a return.
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["return_record", "changed_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(to_status__in=ReturnStatus.values), name="return_change_status_valid"
            ),
            models.CheckConstraint(
                condition=~models.Q(from_status=models.F("to_status")), name="return_change_moves"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_from_status_display()} to {self.get_to_status_display()}"


class ReturnLine(models.Model):
    """An order item inside a return.

    `holds_item` mirrors the return's status so that the database itself can
    refuse a second return of an item while the first one stands.
    """

    return_record = models.ForeignKey(ReturnRecord, on_delete=models.CASCADE, related_name="lines")
    order_item = models.ForeignKey(OrderItem, on_delete=models.PROTECT, related_name="return_lines")
    holds_item = models.BooleanField(default=True)

    class Meta:
        ordering = ["return_record", "order_item__line_number"]
        constraints = [
            models.UniqueConstraint(
                fields=["return_record", "order_item"], name="return_line_item_once_per_return"
            ),
            models.UniqueConstraint(
                fields=["order_item"],
                condition=models.Q(holds_item=True),
                name="return_line_item_in_one_open_return",
                violation_error_message="This item is already part of an open return.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.return_record.rma_number}: {self.order_item.title}"
