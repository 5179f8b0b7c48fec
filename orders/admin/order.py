"""An order's page: its items, parcels, refunds, changes and reported delivery problems, read only; staff
start a return for the customer from it. The list filters the orders with a change waiting for the shop."""

from typing import Any, ClassVar

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from orders.addresses import shipping_address_of
from orders.admin.base import ActionPageAdmin, ReadOnlyInline
from orders.admin.order_changes import OrderChangeInline
from orders.intake import order_shop_time_clear
from orders.models import (
    DeliveryCase,
    Order,
    OrderChangeState,
    OrderItem,
    OrderStatus,
    Refund,
    ReturnRecord,
    Shipment,
)
from orders.money import money_text
from orders.services import ReturnNotAllowed, ReturnRefusal, return_record_create
from store.clock import store_today
from store.text import text_multi_line, text_single_line


class OrderItemInline(ReadOnlyInline):
    model = OrderItem
    fields: ClassVar[tuple[str, ...]] = (
        "line_number",
        "title",
        "author",
        "category",
        "requires_shipping",
        "unit_price",
        "quantity",
        "sku",
        "variant",
    )
    readonly_fields = fields


class ShipmentInline(ReadOnlyInline):
    """The parcels the shop sent the order in, when it ships in parts."""

    model = Shipment
    fields: ClassVar[tuple[str, ...]] = (
        "number",
        "holds",
        "carrier",
        "tracking_number",
        "tracking_url",
        "shipped_on",
        "delivered_on",
    )
    readonly_fields = fields
    verbose_name_plural = "parcels (as the shop sent them)"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Shipment]:
        return super().get_queryset(request).prefetch_related("lines__item")

    @admin.display(description="holds")
    def holds(self, shipment: Shipment) -> str:
        return ", ".join(
            f"{line.quantity} x line {line.item.line_number} ({line.item.title})"
            for line in shipment.lines.all()
        )


class RefundInline(ReadOnlyInline):
    """The money the shop gave back on the order, as it recorded it."""

    model = Refund
    fields: ClassVar[tuple[str, ...]] = ("number", "amount_shown", "refunded_on", "reason", "for_lines")
    readonly_fields = fields
    verbose_name_plural = "refunds (as the shop made them)"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Refund]:
        return super().get_queryset(request).select_related("order").prefetch_related("lines__item")

    @admin.display(description="amount")
    def amount_shown(self, refund: Refund) -> str:
        return money_text(amount=refund.amount, currency=refund.order.currency)

    @admin.display(description="for")
    def for_lines(self, refund: Refund) -> str:
        return ", ".join(
            f"{line.quantity} x line {line.item.line_number} ({line.item.title})"
            for line in refund.lines.all()
        )


class DeliveryCaseInline(ReadOnlyInline):
    """The problems the customer reported with the order's delivery."""

    model = DeliveryCase
    fields: ClassVar[tuple[str, ...]] = ("case_link", "problem", "status", "created_at")
    readonly_fields = fields
    verbose_name_plural = "delivery problems reported"

    @admin.display(description="case")
    def case_link(self, obj: DeliveryCase) -> SafeString:
        url = reverse("admin:orders_deliverycase_change", args=[obj.pk])
        return format_html('<a href="{}">Case {}</a>', url, obj.pk)


class StaffReturnForm(forms.Form):
    """A return started by staff: the items, why, and (only to go beyond the policy) a note saying why."""

    items = forms.ModelMultipleChoiceField(
        queryset=OrderItem.objects.none(), widget=forms.CheckboxSelectMultiple, label="Items to return"
    )
    reason = forms.CharField(max_length=500, label="Why the customer returns them")
    exception_note = forms.CharField(
        required=False,
        max_length=1000,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="Exception",
        help_text="Only to return what the policy refuses (after the window, an item never returnable): "
        "say why you grant it. The customer is told it is an exception; the note stays with staff.",
    )

    def __init__(self, *args: Any, order: Order, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        items = self.fields["items"]
        assert isinstance(items, forms.ModelMultipleChoiceField)  # declared above
        items.queryset = order.items.all()

    def clean_reason(self) -> str:
        return text_single_line(self.cleaned_data["reason"])

    def clean_exception_note(self) -> str:
        return text_multi_line(self.cleaned_data["exception_note"])


# The policy's verdicts that a note from staff with the permission may overrule.
_EXCEPTIONS_GRANTABLE = frozenset({ReturnRefusal.NOT_ELIGIBLE, ReturnRefusal.ITEM_NOT_RETURNABLE})


class ShopChangeFilter(admin.SimpleListFilter):
    """Orders with a change asked of their shop that it has not made (yet): for staff to follow up."""

    title = "changes asked of the shop"
    parameter_name = "shop_change"

    def lookups(self, request: HttpRequest, model_admin: "admin.ModelAdmin[Any]") -> list[tuple[str, str]]:
        return [
            (OrderChangeState.AWAITING_SHOP, "Waiting for the shop"),
            (OrderChangeState.SHOP_FAILED, "The shop did not make it"),
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Order]) -> QuerySet[Order]:
        if self.value() in (OrderChangeState.AWAITING_SHOP, OrderChangeState.SHOP_FAILED):
            return queryset.filter(changes__state=self.value()).distinct()
        return queryset


@admin.register(Order)
class OrderAdmin(ActionPageAdmin):
    list_display = [
        "number",
        "shop",
        "customer_name",
        "customer_email",
        "status",
        "ordered_on",
        "delivered_on",
        "total_in_currency",
        "source",
        "updated_at",
    ]
    list_filter = ["status", "shop", "source", ShopChangeFilter]
    list_select_related = ["shop"]
    search_fields = ["number", "customer_email"]
    date_hierarchy = "ordered_on"
    inlines = [OrderItemInline, ShipmentInline, RefundInline, OrderChangeInline, DeliveryCaseInline]
    # Status and address change only through the order services (which record who and when).
    # Where it came from, and when it last changed, are the intake's to record.
    # The currency is the one the customer paid in: every amount of the order is in it (the shop's own,
    # when it is another, beside the total).
    readonly_fields = [
        "shop",
        "status",
        "currency",
        "in_the_shops_currency",
        "shipping_address",
        "source",
        "shop_order_id",
        "updated_at",
        "shop_updated_at",
    ]
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "number",
                    "customer_name",
                    "customer_email",
                    "status",
                    ("total", "currency", "in_the_shops_currency"),
                ]
            },
        ),
        (
            "Dates and delivery",
            {"fields": ["ordered_on", "delivered_on", "tracking_number", "carrier", "shipping_address"]},
        ),
        (
            "Where it came from",
            {"fields": ["shop", "source", "shop_order_id", "updated_at", "shop_updated_at"]},
        ),
    ]
    actions = ["accept_shop_next_update"]

    change_form_template = "admin/orders/order/change_form.html"
    action = "return"  # a return started by staff

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        order = self.get_object(request, unquote(object_id)) if object_id else None
        returnable = order is not None and order.status == OrderStatus.DELIVERED  # nothing to return before
        extra_context = {
            **(extra_context or {}),
            "can_start_return": returnable and request.user.has_perm("orders.add_returnrecord"),
        }
        return super().changeform_view(request, object_id, form_url, extra_context)

    def action_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Start a return for the customer: within the policy, or beyond it with a note (its own
        permission)."""
        if not request.user.has_perm("orders.add_returnrecord"):
            raise PermissionDenied
        order = self.get_object(request, unquote(object_id))
        if order is None:
            return self.not_found(request, object_id)
        if not self.has_view_permission(request, order):
            raise PermissionDenied  # the page shows the customer's name and email
        form = StaffReturnForm(request.POST if request.method == "POST" else None, order=order)
        if request.method == "POST" and form.is_valid():
            record = self._start_return(request, order, form)
            if record is not None:
                titles = ", ".join(item.title for item in form.cleaned_data["items"])
                self.message_user(request, f"Return {record.rma_number} started for {titles}.")
                return HttpResponseRedirect(reverse("admin:orders_returnrecord_change", args=[record.pk]))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": order,
            "title": f"Start a return for order {order.number}",
            "form": form,
            "may_grant": request.user.has_perm("orders.grant_return_exception"),
        }
        return TemplateResponse(request, "admin/orders/order/start_return.html", context)

    def _start_return(self, request: HttpRequest, order: Order, form: StaffReturnForm) -> ReturnRecord | None:
        assert request.user.is_authenticated  # the admin lets in only its staff
        note = form.cleaned_data["exception_note"]
        if note and not request.user.has_perm("orders.grant_return_exception"):
            form.add_error(None, "Only staff who may grant exceptions can start a return the policy refuses.")
            return None
        try:
            return return_record_create(
                order=order,
                reason=form.cleaned_data["reason"],
                items=list(form.cleaned_data["items"]),
                today=store_today(),
                created_by=request.user,
                exception_note=note,
            )
        except ReturnNotAllowed as refused:
            hint = (
                " To grant it anyway, say why in the exception note."
                if refused.code in _EXCEPTIONS_GRANTABLE
                and request.user.has_perm("orders.grant_return_exception")
                else ""
            )
            form.add_error(None, f"{refused.message}{hint}")
            return None

    @admin.action(description="Accept the shop's next update", permissions=["change"])
    def accept_shop_next_update(self, request: HttpRequest, queryset: QuerySet[Order]) -> None:
        """For an order whose shop time is wrong (ahead of the shop's real versions, which are then
        refused as stale): forget it, recorded on the order. Staff who may change orders only."""
        assert request.user.is_authenticated  # the admin lets in only its staff
        cleared = [order for order in queryset if order_shop_time_clear(order=order, changed_by=request.user)]
        if cleared:
            numbers = ", ".join(order.number for order in cleared)
            self.message_user(request, f"The shop's next update will be taken for {numbers}.")
        if len(cleared) < len(queryset):
            self.message_user(
                request,
                f"{len(queryset) - len(cleared)} of the orders chosen had no time from the shop: nothing to "
                "accept.",
                messages.WARNING,
            )

    @admin.display(description="shipping address")
    def shipping_address(self, obj: Order) -> str:
        address = shipping_address_of(order=obj)
        return address.one_line() if address else "none on file"

    @admin.display(description="total", ordering="total")
    def total_in_currency(self, obj: Order) -> str:
        paid = money_text(amount=obj.total, currency=obj.currency)
        return f"{paid} ({self.in_the_shops_currency(obj)})" if obj.shop_currency else paid

    @admin.display(description="in the shop's currency")
    def in_the_shops_currency(self, obj: Order) -> str:
        if not obj.shop_currency:
            return "the same"
        assert obj.shop_total is not None  # given with the shop's currency (order_shop_money_whole)
        return money_text(amount=obj.shop_total, currency=obj.shop_currency)

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Orders come from the store (its import, or the demo fixture), never made up here.
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Order | None = None) -> bool:
        # Returns protect orders, and order history is evidence: never delete here.
        return False
