"""The store's pages in admin (orders.admin) with the links the chat owns: an order's conversations, the
conversation a return was started in or a delivery problem reported in, and what the chat told the
customer of a change the store did not make."""

from django.contrib import admin
from django.urls import reverse
from django.utils.formats import date_format
from django.utils.html import format_html, format_html_join
from django.utils.timesince import timesince
from django.utils.timezone import localtime

from orders.admin.delivery_case import DeliveryCaseAdmin
from orders.admin.order import OrderAdmin
from orders.admin.order_changes import OrderChangeInline
from orders.admin.return_record import ReturnRecordAdmin
from orders.models import DeliveryCase, Order, ReturnRecord


def admin_link(obj, label) -> str:
    """A link to the object's page in admin."""
    url = reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_change", args=[obj.pk])
    return format_html('<a href="{}">{}</a>', url, label)


def _links(objects, label) -> str:
    return format_html_join(", ", "{}", ((admin_link(obj, label(obj)),) for obj in objects)) or "-"


# The store's admin, with the links the chat owns: an order's conversations, a return's conversation.
admin.site.unregister(Order)
admin.site.unregister(ReturnRecord)
admin.site.unregister(DeliveryCase)


def told_in_chat(link) -> str:
    """For a change the store did not make: when the chat told the customer (support.conversations.
    not_made; the email went when it failed)."""
    if link.customer_told_at is None:
        return ""
    return f"; the customer was told in the chat {timesince(link.customer_told_at)} ago"


class OrderChangeWithConversationInline(OrderChangeInline):
    fields = (*OrderChangeInline.fields, "customer_told")
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("conversation_link")

    @admin.display(description="told in the chat")
    def customer_told(self, obj):
        """When the chat told the customer that the store did not make the change (once)."""
        link = getattr(obj, "conversation_link", None)
        if link is None or link.customer_told_at is None:
            return None
        return date_format(localtime(link.customer_told_at), "DATETIME_FORMAT")

    @admin.display(description="by")
    def changed_by_name(self, obj):
        link = getattr(obj, "conversation_link", None)
        if obj.changed_by is None and link is not None:
            url = reverse("admin:support_conversation_change", args=[link.conversation_id])
            return format_html(
                'the customer, through the assistant in <a href="{}">conversation {}</a>',
                url,
                link.conversation_id,
            )
        return super().changed_by_name(obj)


@admin.register(Order)
class OrderWithConversationsAdmin(OrderAdmin):
    readonly_fields = [*OrderAdmin.readonly_fields, "conversation_links"]
    inlines = [
        OrderChangeWithConversationInline if inline is OrderChangeInline else inline
        for inline in OrderAdmin.inlines
    ]
    fieldsets = [*OrderAdmin.fieldsets, ("Support", {"fields": ["conversation_links"]})]

    @admin.display(description="conversations that looked it up")
    def conversation_links(self, obj):
        return _links(obj.conversations.all(), str)


@admin.register(ReturnRecord)
class ReturnRecordWithConversationAdmin(ReturnRecordAdmin):
    fields = (*ReturnRecordAdmin.fields, "started_in")
    readonly_fields = fields

    @admin.display(description="started in")
    def started_in(self, obj):
        return _links(obj.conversations.all(), str)


@admin.register(DeliveryCase)
class DeliveryCaseWithConversationAdmin(DeliveryCaseAdmin):
    fields = (*DeliveryCaseAdmin.fields, "reported_in")
    readonly_fields = fields

    @admin.display(description="reported in")
    def reported_in(self, obj):
        return _links(obj.conversations.all(), str)
