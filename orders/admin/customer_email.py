"""The outbox of emails to customers, read only."""

from typing import ClassVar

from django.contrib import admin

from orders.admin.base import ReadOnlyModelAdmin
from orders.models import CustomerEmail


@admin.register(CustomerEmail)
class CustomerEmailAdmin(ReadOnlyModelAdmin):
    """The outbox of emails to customers, read-only: what was sent, and what a mail server refused
    (`manage.py send_customer_emails` sends those again)."""

    list_display = ["subject", "to", "created_at", "sent_at", "attempts", "last_error"]
    list_filter = ["sent_at", "created_at"]
    search_fields = ["to", "order__number", "subject"]
    list_select_related = ["order"]
    fields: ClassVar[tuple[str, ...]] = (
        "order",
        "to",
        "subject",
        "body",
        "created_at",
        "sent_at",
        "attempts",
        "last_error",
    )
    readonly_fields = fields
