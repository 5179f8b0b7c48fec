"""What the orders' admin pages share: read-only inlines and pages (a record of what happened is never
edited in admin), the columns of a record that belongs to an order, and a member of staff's name."""

from typing import TYPE_CHECKING

from django.contrib import admin
from django.db import models
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from orders.models import DeliveryCase, ReturnRecord

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return False


class ReadOnlyModelAdmin(admin.ModelAdmin):
    """A record of what happened: never added, edited or deleted in admin (its actions go through the
    services, on pages of their own)."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return False


class OfAnOrderMixin:
    """Columns for a record that belongs to an order: the order, linked, and its customer's email."""

    @admin.display(description="order", ordering="order__number")
    def order_link(self, obj: ReturnRecord | DeliveryCase) -> SafeString:
        url = reverse("admin:orders_order_change", args=[obj.order_id])
        return format_html('<a href="{}">{}</a>', url, obj.order.number)

    @admin.display(description="customer email", ordering="order__customer_email")
    def customer_email(self, obj: ReturnRecord | DeliveryCase) -> str:
        return obj.order.customer_email


def staff_name(user: "User") -> str:
    # A name, not a link: support staff may not open user accounts.
    return user.get_full_name() or user.get_username()
