"""The delivery problems customers reported, for staff to resolve (DeliveryCase)."""

from django.conf import settings
from django.db import models

from orders.models.order import Order, OrderItem


class DeliveryProblem(models.TextChoices):
    """What went wrong with a delivery, as a customer reports it."""

    NOT_ARRIVED = "not_arrived", "Never arrived"
    DAMAGED = "damaged", "Arrived damaged"
    WRONG_ITEM = "wrong_item", "Wrong item sent"
    MISSING_ITEM = "missing_item", "Item missing from the parcel"
    LATE = "late", "Arrived late"


# Problems with particular books (which ones, the case says); the others concern the whole parcel.
ITEM_PROBLEMS = frozenset({DeliveryProblem.DAMAGED, DeliveryProblem.WRONG_ITEM, DeliveryProblem.MISSING_ITEM})


class CaseStatus(models.TextChoices):
    OPEN = "open", "Open"
    RESOLVED = "resolved", "Resolved"


class DeliveryCase(models.Model):
    """A problem with an order's delivery that the customer reported, for staff to resolve: what went
    wrong, with which items, in the customer's words; then what staff did about it (emailed to them)."""

    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="delivery_cases")
    problem = models.CharField(max_length=20, choices=DeliveryProblem.choices)
    items = models.ManyToManyField(OrderItem, related_name="delivery_cases", blank=True)
    details = models.TextField("the customer's words", blank=True)
    status = models.CharField(max_length=10, choices=CaseStatus.choices, default=CaseStatus.OPEN)
    created_at = models.DateTimeField(auto_now_add=True)
    # The chat's conversation the customer reported it in (an id only, for the store's events).
    conversation_id = models.PositiveBigIntegerField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # What staff did, in words to the customer (the resolution email carries them).
    resolution = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(problem__in=DeliveryProblem.values), name="delivery_case_problem_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(status__in=CaseStatus.values), name="delivery_case_status_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(status=CaseStatus.OPEN)
                | (models.Q(resolved_at__isnull=False) & ~models.Q(resolution="")),
                name="delivery_case_resolved_says_how",
            ),
            # The same problem reported twice (two tabs, asked again) is one case for staff.
            models.UniqueConstraint(
                fields=["order", "problem"],
                condition=models.Q(status=CaseStatus.OPEN),
                name="delivery_case_one_open_per_problem",
                violation_error_message="This problem is already reported for this order.",
            ),
        ]

    def __str__(self) -> str:
        return f"Case {self.pk}: {self.get_problem_display().lower()}"
