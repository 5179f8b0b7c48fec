from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from orders.addresses import ADDRESS_FIELDS, ShippingAddress, shipping_address_of
from orders.intake import order_shop_time_clear
from orders.models import (
    CaseStatus,
    CustomerEmail,
    DeliveryCase,
    Order,
    OrderChange,
    OrderChangeKind,
    OrderChangeState,
    OrderItem,
    OrderSource,
    OrderStatus,
    Refund,
    ReturnLine,
    ReturnRecord,
    ReturnStatus,
    ReturnStatusChange,
    Shipment,
    Shop,
)
from orders.money import money_text
from orders.services import (
    RETURN_STATUS_TRANSITIONS,
    RETURN_STATUSES_NEEDING_A_REASON,
    DeliveryCaseRefused,
    ReturnNotAllowed,
    ReturnRefusal,
    ReturnStatusNotAllowed,
    delivery_case_resolve,
    return_next_statuses,
    return_record_create,
    return_record_set_status,
)
from orders.shops import shop_address
from store.clock import store_today
from store.text import text_multi_line, text_single_line


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class OrderItemInline(ReadOnlyInline):
    model = OrderItem
    fields = [
        "line_number",
        "title",
        "author",
        "category",
        "requires_shipping",
        "unit_price",
        "quantity",
        "sku",
        "variant",
    ]
    readonly_fields = fields


class ShipmentInline(ReadOnlyInline):
    """The parcels the shop sent the order in, when it ships in parts."""

    model = Shipment
    fields = ["number", "holds", "carrier", "tracking_number", "tracking_url", "shipped_on", "delivered_on"]
    readonly_fields = fields
    verbose_name_plural = "parcels (as the shop sent them)"

    def get_queryset(self, request):
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
    fields = ["number", "amount_shown", "refunded_on", "reason", "for_lines"]
    readonly_fields = fields
    verbose_name_plural = "refunds (as the shop made them)"

    def get_queryset(self, request):
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


def _staff_name(user) -> str:
    # A name, not a link: support staff may not open user accounts.
    return user.get_full_name() or user.get_username()


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


def _address_line(fields: dict) -> str:
    if not fields:
        return "none on file"
    return ShippingAddress(**{name: str(fields.get(name, "")) for name in ADDRESS_FIELDS}).one_line()


class OrderChangeInline(ReadOnlyInline):
    """Every change to the order after it was placed: what, before and after, by whom, when."""

    model = OrderChange
    fields = ["kind", "what_changed", "changed_by_name", "changed_at", "made"]
    readonly_fields = fields
    verbose_name = "change"
    verbose_name_plural = "changes after the order was placed"

    def has_view_permission(self, request, obj=None):
        return request.user.has_perm("orders.view_order")

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("changed_by")

    @admin.display(description="what changed")
    def what_changed(self, obj):
        return order_change_summary(obj)

    @admin.display(description="made")
    def made(self, obj):
        """Whether it is made: one asked of the shop that keeps the order says whether the shop made it,
        and what the shop answered when it did not (for staff to follow up: the customer reads only our
        own words for it, by email and in the chat)."""
        if obj.state == OrderChangeState.SHOP_FAILED:
            return f"{obj.get_state_display()}: {obj.shop_answer}"
        return obj.get_state_display()

    @admin.display(description="by")
    def changed_by_name(self, obj):
        if obj.kind == OrderChangeKind.UPDATE_REFUSED:
            source = obj.after.get("source")
            known = source in OrderSource.values
            return f"the shop ({OrderSource(source).label.lower()})" if known else "the shop"
        return _staff_name(obj.changed_by) if obj.changed_by else "the customer"


class DeliveryCaseInline(ReadOnlyInline):
    """The problems the customer reported with the order's delivery."""

    model = DeliveryCase
    fields = ["case_link", "problem", "status", "created_at"]
    readonly_fields = fields
    verbose_name_plural = "delivery problems reported"

    @admin.display(description="case")
    def case_link(self, obj):
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

    def __init__(self, *args, order: Order, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["items"].queryset = order.items.all()

    def clean_reason(self):
        return text_single_line(self.cleaned_data["reason"])

    def clean_exception_note(self):
        return text_multi_line(self.cleaned_data["exception_note"])


MAX_MOVE_NOTE_LENGTH = 1000

# Moves after which a return cannot move again: staff confirm them on a page of their own.
FINAL_RETURN_STATUSES = frozenset(status for status, moves in RETURN_STATUS_TRANSITIONS.items() if not moves)

# The policy's verdicts that a note from staff with the permission may overrule.
_EXCEPTIONS_GRANTABLE = frozenset({ReturnRefusal.NOT_ELIGIBLE, ReturnRefusal.ITEM_NOT_RETURNABLE})


class ShopChangeFilter(admin.SimpleListFilter):
    """Orders with a change asked of their shop that it has not made (yet): for staff to follow up."""

    title = "changes asked of the shop"
    parameter_name = "shop_change"

    def lookups(self, request, model_admin):
        return [
            (OrderChangeState.AWAITING_SHOP, "Waiting for the shop"),
            (OrderChangeState.SHOP_FAILED, "The shop did not make it"),
        ]

    def queryset(self, request, queryset):
        if self.value() in (OrderChangeState.AWAITING_SHOP, OrderChangeState.SHOP_FAILED):
            return queryset.filter(changes__state=self.value()).distinct()
        return queryset


class ShopForm(forms.ModelForm):
    class Meta:
        model = Shop
        fields = ["name", "platform", "address", "number_pattern", "number_example", "currency"]

    def clean_address(self):
        """As a delivery names the shop (orders.shops.shop_address), so that its deliveries find it."""
        named = self.cleaned_data.get("address", "")
        platform = self.cleaned_data.get("platform") or self.instance.platform
        if not named or platform not in (OrderSource.SHOPIFY, OrderSource.WOOCOMMERCE):
            return named
        if not (address := shop_address(platform=platform, named=named)):
            raise forms.ValidationError(
                "A Shopify shop's address is its myshopify.com domain; a WooCommerce site's, its web "
                "address (https://…)."
            )
        return address


@admin.register(Shop)
class ShopAdmin(admin.ModelAdmin):
    """The shops whose orders Bookly answers for: a platform's is made by its first signed delivery, others
    (a store API's) are added here; staff name them and say the shape of their order numbers. Where a
    shop's orders come from, and its address there, are fixed once it is made: changed, another shop's
    deliveries would come into it."""

    form = ShopForm
    list_display = ["name", "platform", "address", "numbers_like", "currency", "order_count"]
    list_filter = ["platform"]
    search_fields = ["name", "address"]
    fields = ["name", "platform", "address", "number_pattern", "number_example", "currency", "created_at"]

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return ["created_at"]
        # An address not known yet (a shop made before shops had one) may be given once.
        return ["platform", "address", "created_at"] if obj.address else ["platform", "created_at"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(orders_kept=Count("orders"))

    @admin.display(description="orders", ordering="orders_kept")
    def order_count(self, shop):
        return shop.orders_kept

    @admin.display(description="numbers like", ordering="number_example")
    def numbers_like(self, shop):
        return shop.number_example


@admin.register(Order)
class OrderAdmin(admin.ModelAdmin):
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

    def get_urls(self):
        name = f"{self.opts.app_label}_{self.opts.model_name}_return"
        own = [path("<path:object_id>/return/", self.admin_site.admin_view(self.return_view), name=name)]
        return own + super().get_urls()

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        order = self.get_object(request, unquote(object_id)) if object_id else None
        returnable = order is not None and order.status == OrderStatus.DELIVERED  # nothing to return before
        extra_context = {
            **(extra_context or {}),
            "can_start_return": returnable and request.user.has_perm("orders.add_returnrecord"),
        }
        return super().changeform_view(request, object_id, form_url, extra_context)

    def return_view(self, request, object_id):
        """Start a return for the customer: within the policy, or beyond it with a note (its own
        permission)."""
        if not request.user.has_perm("orders.add_returnrecord"):
            raise PermissionDenied
        order = self.get_object(request, unquote(object_id))
        if order is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
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

    def _start_return(self, request, order, form) -> ReturnRecord | None:
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
    def accept_shop_next_update(self, request, queryset):
        """For an order whose shop time is wrong (ahead of the shop's real versions, which are then
        refused as stale): forget it, recorded on the order. Staff who may change orders only."""
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
    def shipping_address(self, obj):
        address = shipping_address_of(order=obj)
        return address.one_line() if address else "none on file"

    @admin.display(description="total", ordering="total")
    def total_in_currency(self, obj):
        paid = money_text(amount=obj.total, currency=obj.currency)
        return f"{paid} ({self.in_the_shops_currency(obj)})" if obj.shop_currency else paid

    @admin.display(description="in the shop's currency")
    def in_the_shops_currency(self, obj):
        if not obj.shop_currency:
            return "the same"
        return money_text(amount=obj.shop_total, currency=obj.shop_currency)

    def has_add_permission(self, request):
        # Orders come from the store (its import, or the demo fixture), never made up here.
        return False

    def has_delete_permission(self, request, obj=None):
        # Returns protect orders, and order history is evidence: never delete here.
        return False


class ReadOnlyModelAdmin(admin.ModelAdmin):
    """A record of what happened: never added, edited or deleted in admin (its actions go through the
    services, on pages of their own)."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class OfAnOrderMixin:
    """Columns for a record that belongs to an order: the order, linked, and its customer's email."""

    @admin.display(description="order", ordering="order__number")
    def order_link(self, obj):
        url = reverse("admin:orders_order_change", args=[obj.order_id])
        return format_html('<a href="{}">{}</a>', url, obj.order.number)

    @admin.display(description="customer email", ordering="order__customer_email")
    def customer_email(self, obj):
        return obj.order.customer_email


class ReturnLineInline(ReadOnlyInline):
    model = ReturnLine
    fields = ["order_item", "holds_item"]
    readonly_fields = fields
    verbose_name = "returned item"
    verbose_name_plural = "returned items"


class ReturnStatusChangeInline(ReadOnlyInline):
    model = ReturnStatusChange
    fields = ["from_status", "to_status", "note", "changed_by_name", "changed_at"]
    readonly_fields = fields
    verbose_name = "status change"
    verbose_name_plural = "status history"

    def has_view_permission(self, request, obj=None):
        # The history is part of the return: whoever may see the return sees it.
        return request.user.has_perm("orders.view_returnrecord")

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("changed_by")

    @admin.display(description="changed by")
    def changed_by_name(self, obj):
        return _staff_name(obj.changed_by) if obj.changed_by else "the system"


@admin.register(ReturnRecord)
class ReturnRecordAdmin(OfAnOrderMixin, ReadOnlyModelAdmin):
    """Returns are created by the assistant and the return services. Staff with the permission to
    change returns move them along their lifecycle with the buttons on a return's page; nothing else
    about a return is edited here."""

    list_display = ["rma_number", "order_link", "customer_email", "status", "item_count", "created_at"]
    list_filter = ["status", "created_at"]
    search_fields = ["rma_number", "order__number", "order__customer_email"]
    date_hierarchy = "created_at"
    list_select_related = ["order"]
    fields = [
        "rma_number",
        "order_link",
        "customer_email",
        "status",
        "reason",
        "exception_note",
        "started_by",
        "refund_method",
        "refund_timeline_business_days",
        "created_at",
    ]
    readonly_fields = fields
    inlines = [ReturnLineInline, ReturnStatusChangeInline]
    change_form_template = "admin/orders/returnrecord/change_form.html"

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("lines")

    def get_urls(self):
        name = f"{self.opts.app_label}_{self.opts.model_name}_status"
        own = [path("<path:object_id>/status/", self.admin_site.admin_view(self.status_view), name=name)]
        return own + super().get_urls()

    def _can_move(self, request) -> bool:
        # Not has_change_permission: that would open the return's fields to editing.
        return request.user.has_perm(f"{self.opts.app_label}.change_{self.opts.model_name}")

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        record = self.get_object(request, unquote(object_id)) if object_id else None
        moves = return_next_statuses(status=record.status) if record and self._can_move(request) else []
        extra_context = {
            **(extra_context or {}),
            "status_moves": [status for status in moves if status not in FINAL_RETURN_STATUSES],
            "final_moves": [status for status in moves if status in FINAL_RETURN_STATUSES],
        }
        return super().changeform_view(request, object_id, form_url, extra_context)

    @staticmethod
    def _status_from(request) -> ReturnStatus | None:
        try:
            return ReturnStatus((request.POST if request.method == "POST" else request.GET).get("status", ""))
        except ValueError:
            return None

    def status_view(self, request, object_id):
        """Move the return to the status of the button pressed (the service checks the move). A final
        move (refunded, rejected, cancelled) is confirmed first on its own page, with the reason the
        customer is emailed for a rejection or a cancellation."""
        if not self._can_move(request):
            raise PermissionDenied
        record = self.get_object(request, unquote(object_id))
        if record is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        status = self._status_from(request)
        change_url = reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_change", args=[record.pk])
        if request.method == "GET" and status in FINAL_RETURN_STATUSES:
            if status not in RETURN_STATUS_TRANSITIONS[record.status]:
                self.message_user(
                    request, f"Return {record.rma_number} can no longer move there.", level="error"
                )
                return HttpResponseRedirect(change_url)
            return self._confirm_page(request, record, status, note="")
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if status is None:
            self.message_user(request, "Choose a status to move the return to.", level="error")
            return HttpResponseRedirect(change_url)
        note = text_multi_line(request.POST.get("note", ""))
        if len(note) > MAX_MOVE_NOTE_LENGTH:
            message = (
                f"Keep the reason to {MAX_MOVE_NOTE_LENGTH} characters: the customer reads it in an email."
            )
            return self._confirm_page(request, record, status, note=note, error=message)
        if status in FINAL_RETURN_STATUSES and request.POST.get("confirm") != "yes":
            return self._confirm_page(request, record, status, note=note)
        try:
            return_record_set_status(return_record=record, status=status, changed_by=request.user, note=note)
        except ReturnStatusNotAllowed as refused:
            if status in RETURN_STATUSES_NEEDING_A_REASON and not note:
                return self._confirm_page(request, record, status, note=note, error=refused.message)
            self.message_user(request, refused.message, level="error")
        else:
            self.message_user(
                request, f"Return {record.rma_number} moved to {status.label}. We emailed the customer."
            )
        return HttpResponseRedirect(change_url)

    def _confirm_page(self, request, record, status, *, note: str, error: str = ""):
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": record,
            "title": f"Move return {record.rma_number} to {status.label}?",
            "status": status,
            "note": note,
            "error": error,
            "needs_reason": status in RETURN_STATUSES_NEEDING_A_REASON,
        }
        return TemplateResponse(request, "admin/orders/returnrecord/confirm_status.html", context)

    @admin.display(description="started by")
    def started_by(self, obj):
        return _staff_name(obj.created_by) if obj.created_by else "the customer"

    @admin.display(description="items")
    def item_count(self, obj):
        return len(obj.lines.all())


MAX_RESOLUTION_LENGTH = 2000


@admin.register(DeliveryCase)
class DeliveryCaseAdmin(OfAnOrderMixin, ReadOnlyModelAdmin):
    """Problems customers reported with a delivery, open ones first: read-only but for resolving one,
    which says what was done (the customer is emailed it)."""

    list_display = ["__str__", "order_link", "problem", "status", "created_at", "resolved_at"]
    list_filter = ["status", "problem", "created_at"]
    search_fields = ["order__number", "order__customer_email"]
    date_hierarchy = "created_at"
    list_select_related = ["order"]
    ordering = ["status", "created_at"]  # "open" sorts before "resolved": open cases first, oldest first
    fields = [
        "order_link",
        "customer_email",
        "problem",
        "item_titles",
        "details",
        "status",
        "created_at",
        "resolution",
        "resolved_by_name",
        "resolved_at",
    ]
    readonly_fields = fields
    change_form_template = "admin/orders/deliverycase/change_form.html"

    def get_urls(self):
        name = f"{self.opts.app_label}_{self.opts.model_name}_resolve"
        own = [path("<path:object_id>/resolve/", self.admin_site.admin_view(self.resolve_view), name=name)]
        return own + super().get_urls()

    def _can_resolve(self, request) -> bool:
        # Not has_change_permission: that would open the case's fields to editing.
        return request.user.has_perm(f"{self.opts.app_label}.change_{self.opts.model_name}")

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        case = self.get_object(request, unquote(object_id)) if object_id else None
        extra_context = {
            **(extra_context or {}),
            "can_resolve": case is not None and case.status == CaseStatus.OPEN and self._can_resolve(request),
            "resolution_max": MAX_RESOLUTION_LENGTH,
        }
        return super().changeform_view(request, object_id, form_url, extra_context)

    def resolve_view(self, request, object_id):
        """Resolve the case with what staff did; a refusal (already resolved, nothing said) keeps the
        words typed."""
        if not self._can_resolve(request):
            raise PermissionDenied
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        case = self.get_object(request, unquote(object_id))
        if case is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        resolution = text_multi_line(request.POST.get("resolution", ""))
        if len(resolution) > MAX_RESOLUTION_LENGTH:
            error = f"Keep it to {MAX_RESOLUTION_LENGTH} characters: the customer reads it in an email."
            return self._refused(request, case, resolution, error)
        try:
            delivery_case_resolve(case=case, resolution=resolution, resolved_by=request.user)
        except DeliveryCaseRefused as refused:
            return self._refused(request, case, resolution, refused.message)
        self.message_user(request, f"Case {case.pk} is resolved. We emailed the customer what you wrote.")
        return HttpResponseRedirect(reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_changelist"))

    def _refused(self, request, case, resolution: str, error: str):
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": case,
            "title": f"Resolve {str(case).lower()}",
            "resolution": resolution,
            "resolve_error": error,
            "resolution_max": MAX_RESOLUTION_LENGTH,
        }
        return TemplateResponse(request, "admin/orders/deliverycase/resolve.html", context)

    @admin.display(description="books concerned")
    def item_titles(self, obj):
        return ", ".join(item.title for item in obj.items.all()) or "-"

    @admin.display(description="resolved by")
    def resolved_by_name(self, obj):
        return _staff_name(obj.resolved_by) if obj.resolved_by else "-"


@admin.register(CustomerEmail)
class CustomerEmailAdmin(ReadOnlyModelAdmin):
    """The outbox of emails to customers, read-only: what was sent, and what a mail server refused
    (`manage.py send_customer_emails` sends those again)."""

    list_display = ["subject", "to", "created_at", "sent_at", "attempts", "last_error"]
    list_filter = ["sent_at", "created_at"]
    search_fields = ["to", "order__number", "subject"]
    list_select_related = ["order"]
    fields = ["order", "to", "subject", "body", "created_at", "sent_at", "attempts", "last_error"]
    readonly_fields = fields
