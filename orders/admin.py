from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from orders.models import Order, OrderItem, ReturnLine, ReturnRecord


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
    fields = ["line_number", "title", "author", "category", "unit_price", "quantity"]
    readonly_fields = fields


@admin.register(Order)
class OrderAdmin(admin.ModelAdmin):
    list_display = [
        "number",
        "customer_name",
        "customer_email",
        "status",
        "ordered_on",
        "delivered_on",
        "total",
    ]
    list_filter = ["status"]
    search_fields = ["number", "customer_email"]
    date_hierarchy = "ordered_on"
    inlines = [OrderItemInline]

    def has_delete_permission(self, request, obj=None):
        # Returns protect orders, and order history is evidence: never delete here.
        return False


class ReturnLineInline(ReadOnlyInline):
    model = ReturnLine
    fields = ["order_item", "holds_item"]
    readonly_fields = fields
    verbose_name = "returned item"
    verbose_name_plural = "returned items"


@admin.register(ReturnRecord)
class ReturnRecordAdmin(admin.ModelAdmin):
    """Returns are created by the assistant and the return services; admin only shows them."""

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
        "refund_method",
        "refund_timeline_business_days",
        "created_at",
    ]
    readonly_fields = fields
    inlines = [ReturnLineInline]

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("lines")

    @admin.display(description="order", ordering="order__number")
    def order_link(self, obj):
        url = reverse("admin:orders_order_change", args=[obj.order_id])
        return format_html('<a href="{}">{}</a>', url, obj.order.number)

    @admin.display(description="customer email", ordering="order__customer_email")
    def customer_email(self, obj):
        return obj.order.customer_email

    @admin.display(description="items")
    def item_count(self, obj):
        return len(obj.lines.all())

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
