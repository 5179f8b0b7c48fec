"""The delivery problems customers reported, open ones first: staff resolve one by saying what they did
(the customer is emailed it)."""

from typing import Any, ClassVar

from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from orders.admin.base import ActionPageAdmin, OfAnOrderMixin, ReadOnlyModelAdmin, staff_name
from orders.models import CaseStatus, DeliveryCase
from orders.services import DeliveryCaseRefused, delivery_case_resolve
from store.text import text_multi_line

MAX_RESOLUTION_LENGTH = 2000


@admin.register(DeliveryCase)
class DeliveryCaseAdmin(OfAnOrderMixin, ActionPageAdmin, ReadOnlyModelAdmin):
    """Problems customers reported with a delivery, open ones first: read-only but for resolving one,
    which says what was done (the customer is emailed it)."""

    list_display = ["__str__", "order_link", "problem", "status", "created_at", "resolved_at"]
    list_filter = ["status", "problem", "created_at"]
    search_fields = ["order__number", "order__customer_email"]
    date_hierarchy = "created_at"
    list_select_related = ["order"]
    ordering = ["status", "created_at"]  # "open" sorts before "resolved": open cases first, oldest first
    fields: ClassVar[tuple[str, ...]] = (
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
    )
    readonly_fields = fields
    change_form_template = "admin/orders/deliverycase/change_form.html"
    action = "resolve"  # resolving the case with what staff did

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        case = self.get_object(request, unquote(object_id)) if object_id else None
        extra_context = {
            **(extra_context or {}),
            "can_resolve": case is not None and case.status == CaseStatus.OPEN and self.may_change(request),
            "resolution_max": MAX_RESOLUTION_LENGTH,
        }
        return super().changeform_view(request, object_id, form_url, extra_context)

    def action_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Resolve the case with what staff did; a refusal (already resolved, nothing said) keeps the
        words typed."""
        if not self.may_change(request):
            raise PermissionDenied
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        case = self.get_object(request, unquote(object_id))
        if case is None:
            return self.not_found(request, object_id)
        resolution = text_multi_line(request.POST.get("resolution", ""))
        if len(resolution) > MAX_RESOLUTION_LENGTH:
            error = f"Keep it to {MAX_RESOLUTION_LENGTH} characters: the customer reads it in an email."
            return self._refused(request, case, resolution, error)
        assert request.user.is_authenticated  # the admin lets in only its staff
        try:
            delivery_case_resolve(case=case, resolution=resolution, resolved_by=request.user)
        except DeliveryCaseRefused as refused:
            return self._refused(request, case, resolution, refused.message)
        self.message_user(request, f"Case {case.pk} is resolved. We emailed the customer what you wrote.")
        return HttpResponseRedirect(reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_changelist"))

    def _refused(
        self, request: HttpRequest, case: DeliveryCase, resolution: str, error: str
    ) -> TemplateResponse:
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
    def item_titles(self, obj: DeliveryCase) -> str:
        return ", ".join(item.title for item in obj.items.all()) or "-"

    @admin.display(description="resolved by")
    def resolved_by_name(self, obj: DeliveryCase) -> str:
        return staff_name(obj.resolved_by) if obj.resolved_by else "-"
