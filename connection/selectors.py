"""What staff and operators read of the store connection: endpoints, their deliveries, the outbox."""

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, TypedDict

from django.db.models import Count, Min, Q, QuerySet, Sum
from django.utils import timezone

from connection.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint
from orders.models import Event

_WAITING = (DeliveryStatus.PENDING, DeliveryStatus.SENDING)


class DeliveryCounts(TypedDict):
    failed_count: int
    waiting_count: int
    retrying_count: int


if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    EndpointWithCounts = WithAnnotations[WebhookEndpoint, DeliveryCounts]


def webhook_endpoint_list_with_counts() -> "QuerySet[EndpointWithCounts]":
    """Every endpoint with `failed_count`, `waiting_count` (deliveries not yet through) and
    `retrying_count` (waiting after a failed attempt)."""
    return WebhookEndpoint.objects.annotate(
        failed_count=Count("deliveries", filter=Q(deliveries__status=DeliveryStatus.FAILED)),
        waiting_count=Count("deliveries", filter=Q(deliveries__status__in=_WAITING)),
        retrying_count=Count(
            "deliveries", filter=Q(deliveries__status__in=_WAITING, deliveries__attempts__gt=0)
        ),
    ).order_by("id")


@dataclass(frozen=True)
class OutboxState:
    """How far behind the deliveries are, for the dashboard and the metrics."""

    events_undispatched: int
    by_status: dict[str, int]
    retrying: int
    oldest_waiting_since: datetime | None
    # When the most overdue delivery was due (one waiting out its back-off is not late).
    oldest_due_since: datetime | None
    attempts: int
    failing_endpoints: list[WebhookEndpoint]

    @property
    def waiting(self) -> int:
        return sum(self.by_status.get(status, 0) for status in _WAITING)

    @property
    def queue_age_seconds(self) -> float:
        """How long the most overdue delivery has waited past its time: the queue's lag."""
        if self.oldest_due_since is None:
            return 0.0
        return max(0.0, (timezone.now() - self.oldest_due_since).total_seconds())


def outbox_state() -> OutboxState:
    counts = dict(
        WebhookDelivery.objects.values_list("status")
        .annotate(count=Count("id"))
        .values_list("status", "count")
    )
    waiting = WebhookDelivery.objects.filter(status__in=_WAITING)
    endpoints = webhook_endpoint_list_with_counts().filter(is_active=True)
    failing: list[WebhookEndpoint] = [
        endpoint for endpoint in endpoints if endpoint.failed_count or endpoint.retrying_count
    ]
    return OutboxState(
        events_undispatched=Event.objects.filter(dispatched_at__isnull=True).count(),
        by_status={status: counts.get(status, 0) for status in DeliveryStatus.values},
        retrying=waiting.filter(attempts__gt=0).count(),
        oldest_waiting_since=waiting.aggregate(oldest=Min("created_at"))["oldest"],
        oldest_due_since=waiting.filter(
            status=DeliveryStatus.PENDING, next_attempt_at__lte=timezone.now()
        ).aggregate(oldest=Min("next_attempt_at"))["oldest"],
        attempts=WebhookDelivery.objects.aggregate(total=Sum("attempts"))["total"] or 0,
        failing_endpoints=failing,
    )
