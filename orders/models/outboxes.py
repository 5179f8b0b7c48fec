"""What waits to be sent, written in the same transaction as the change it tells of: the emails to
customers (CustomerEmail) and the events for the store's systems (Event)."""

import secrets

from django.db import models
from django.utils import timezone

from orders.models.order import Order
from orders.models.shop import Shop


class CustomerEmail(models.Model):
    """An email to a customer about their order or return, kept until it is sent (an outbox).

    Written in the same transaction as the change it tells of, so that a change is never made without
    its email, nor an email sent for a change that rolled back; sent once that transaction commits,
    and again by `manage.py send_customer_emails` while the mail server refuses it.
    """

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="emails")
    to = models.EmailField()
    subject = models.CharField(max_length=200)
    body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    # What went wrong the last time (the exception's class): never the server's words, which may hold
    # credentials or addresses.
    last_error = models.CharField(max_length=100, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["sent_at", "attempts"], name="customer_email_pending")]

    def __str__(self) -> str:
        return f"{self.subject} (to {self.to})"


class EventType(models.TextChoices):
    """What the store's systems hear of Bookly's changes (webhooks; the names are a contract)."""

    RETURN_CREATED = "return.created", "Return created"
    RETURN_STATUS_CHANGED = "return.status_changed", "Return status changed"
    ORDER_CANCELLED = "order.cancelled", "Order cancelled"
    ORDER_ADDRESS_CHANGED = "order.address_changed", "Order address changed"
    DELIVERY_CASE_OPENED = "delivery_case.opened", "Delivery case opened"
    DELIVERY_CASE_RESOLVED = "delivery_case.resolved", "Delivery case resolved"
    CONVERSATION_HANDED_OFF = "conversation.handed_off", "Conversation handed off"
    CONVERSATION_EMAIL_GIVEN = "conversation.email_given", "Email given in a waiting conversation"


def _event_id() -> str:
    return "evt_" + secrets.token_hex(12)


class Event(models.Model):
    """A change Bookly made, kept for the store's systems (an outbox): written in the same transaction
    as the change, so none is lost and none is told of a change that rolled back. `data` is the
    change as it was then; `dispatched_at` is set once each webhook endpoint has its delivery."""

    public_id = models.CharField(max_length=40, unique=True, default=_event_id, editable=False)
    type = models.CharField(max_length=40, choices=EventType.choices)
    # The shop of the order it is about: endpoints for another shop do not get it. Empty for an event
    # of no order's (a conversation handed over) or kept before shops were.
    shop = models.ForeignKey(Shop, on_delete=models.PROTECT, related_name="+", null=True, blank=True)
    data = models.JSONField()
    occurred_at = models.DateTimeField(default=timezone.now)
    dispatched_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(
                fields=["id"], condition=models.Q(dispatched_at__isnull=True), name="event_undispatched"
            )
        ]

    def __str__(self) -> str:
        return f"{self.type} {self.public_id}"
