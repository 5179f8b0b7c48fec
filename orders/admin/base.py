"""What the orders' admin pages share: read-only inlines and pages (a record of what happened is never
edited in admin), the columns of a record that belongs to an order, and a member of staff's name."""

from typing import TYPE_CHECKING, ClassVar

from django.contrib import admin
from django.db import models
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path, reverse
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


class ActionPageAdmin(admin.ModelAdmin):
    """A page with an action of its own at <object>/<action>/ (its URL named <app>_<model>_<action>),
    which changes the record through the services, never by editing its fields: `action_view` answers
    it."""

    action: ClassVar[str]

    def action_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        raise NotImplementedError

    def get_urls(self) -> list[URLPattern]:
        name = f"{self.opts.app_label}_{self.opts.model_name}_{self.action}"
        view = self.admin_site.admin_view(self.action_view)
        return [path(f"<path:object_id>/{self.action}/", view, name=name), *super().get_urls()]

    def may_change(self, request: HttpRequest) -> bool:
        """The model's change permission, asked without has_change_permission, which would open the
        record's fields to editing."""
        return request.user.has_perm(f"{self.opts.app_label}.change_{self.opts.model_name}")

    def not_found(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Django's own answer to an object that is not there, which django-stubs leaves out."""
        return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)  # type: ignore[attr-defined]


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
