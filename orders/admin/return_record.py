"""A return's page: its items and status history, read only; staff move it to its next status (a final
move confirmed on a page of its own)."""

from typing import Any, ClassVar

from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from orders.admin.base import ActionPageAdmin, OfAnOrderMixin, ReadOnlyInline, ReadOnlyModelAdmin, staff_name
from orders.models import ReturnLine, ReturnRecord, ReturnStatus, ReturnStatusChange
from orders.services import (
    RETURN_STATUS_TRANSITIONS,
    RETURN_STATUSES_NEEDING_A_REASON,
    ReturnStatusNotAllowed,
    return_next_statuses,
    return_record_set_status,
)
from store.text import text_multi_line

MAX_MOVE_NOTE_LENGTH = 1000

# Moves after which a return cannot move again: staff confirm them on a page of their own.
FINAL_RETURN_STATUSES = frozenset(status for status, moves in RETURN_STATUS_TRANSITIONS.items() if not moves)


class ReturnLineInline(ReadOnlyInline):
    model = ReturnLine
    fields: ClassVar[tuple[str, ...]] = ("order_item", "holds_item")
    readonly_fields = fields
    verbose_name = "returned item"
    verbose_name_plural = "returned items"


class ReturnStatusChangeInline(ReadOnlyInline):
    model = ReturnStatusChange
    fields: ClassVar[tuple[str, ...]] = ("from_status", "to_status", "note", "changed_by_name", "changed_at")
    readonly_fields = fields
    verbose_name = "status change"
    verbose_name_plural = "status history"

    def has_view_permission(self, request: HttpRequest, obj: ReturnRecord | None = None) -> bool:
        # The history is part of the return: whoever may see the return sees it.
        return request.user.has_perm("orders.view_returnrecord")

    def get_queryset(self, request: HttpRequest) -> QuerySet[ReturnStatusChange]:
        return super().get_queryset(request).select_related("changed_by")

    @admin.display(description="changed by")
    def changed_by_name(self, obj: ReturnStatusChange) -> str:
        return staff_name(obj.changed_by) if obj.changed_by else "the system"


@admin.register(ReturnRecord)
class ReturnRecordAdmin(OfAnOrderMixin, ActionPageAdmin, ReadOnlyModelAdmin):
    """Returns are created by the assistant and the return services. Staff with the permission to
    change returns move them along their lifecycle with the buttons on a return's page; nothing else
    about a return is edited here."""

    list_display = ["rma_number", "order_link", "customer_email", "status", "item_count", "created_at"]
    list_filter = ["status", "created_at"]
    search_fields = ["rma_number", "order__number", "order__customer_email"]
    date_hierarchy = "created_at"
    list_select_related = ["order"]
    fields: ClassVar[tuple[str, ...]] = (
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
    )
    readonly_fields = fields
    inlines = [ReturnLineInline, ReturnStatusChangeInline]
    change_form_template = "admin/orders/returnrecord/change_form.html"
    action = "status"  # moving the return to its next status

    def get_queryset(self, request: HttpRequest) -> QuerySet[ReturnRecord]:
        return super().get_queryset(request).prefetch_related("lines")

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        record = self.get_object(request, unquote(object_id)) if object_id else None
        moves = return_next_statuses(status=record.status) if record and self.may_change(request) else []
        extra_context = {
            **(extra_context or {}),
            "status_moves": [status for status in moves if status not in FINAL_RETURN_STATUSES],
            "final_moves": [status for status in moves if status in FINAL_RETURN_STATUSES],
        }
        return super().changeform_view(request, object_id, form_url, extra_context)

    @staticmethod
    def _status_from(request: HttpRequest) -> ReturnStatus | None:
        try:
            return ReturnStatus((request.POST if request.method == "POST" else request.GET).get("status", ""))
        except ValueError:
            return None

    def action_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Move the return to the status of the button pressed (the service checks the move). A final
        move (refunded, rejected, cancelled) is confirmed first on its own page, with the reason the
        customer is emailed for a rejection or a cancellation."""
        if not self.may_change(request):
            raise PermissionDenied
        record = self.get_object(request, unquote(object_id))
        if record is None:
            return self.not_found(request, object_id)
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
        assert request.user.is_authenticated  # the admin lets in only its staff
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

    def _confirm_page(
        self, request: HttpRequest, record: ReturnRecord, status: ReturnStatus, *, note: str, error: str = ""
    ) -> TemplateResponse:
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
    def started_by(self, obj: ReturnRecord) -> str:
        return staff_name(obj.created_by) if obj.created_by else "the customer"

    @admin.display(description="items")
    def item_count(self, obj: ReturnRecord) -> int:
        return len(obj.lines.all())
