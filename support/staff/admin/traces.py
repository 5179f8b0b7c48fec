"""The review of turn traces: every assistant turn, what the customer asked and read, how it went."""

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from orders.admin.base import ReadOnlyModelAdmin
from support.conversations.models import TurnTrace
from support.staff.selectors import trace_review_annotate
from support.staff.unanswered_page import UnansweredQuestionsAdminMixin


@admin.register(TurnTrace)
class TurnTraceAdmin(UnansweredQuestionsAdminMixin, ReadOnlyModelAdmin):
    """Every assistant turn, for review: what the customer asked, what they read, how the turn went and
    their vote. Filtered to the replies customers found unhelpful from the admin index. Read-only: a
    trace is what happened; each row links to the turn on its conversation's page."""

    list_display = ["turn_link", "asked", "reply", "outcome", "reply_source", "vote", "created_at"]
    list_display_links = None
    list_filter = ["helpful", "outcome", "reply_source", "created_at"]
    date_hierarchy = "created_at"
    ordering = ["-created_at"]

    def get_queryset(self, request):
        return trace_review_annotate(traces=super().get_queryset(request))

    def has_view_permission(self, request, obj=None):
        # The list shows what customers wrote: only for those who may read their conversations.
        return super().has_view_permission(request, obj) and request.user.has_perm(
            "support.view_conversation"
        )

    def has_module_permission(self, request):
        return super().has_module_permission(request) and request.user.has_perm("support.view_conversation")

    @admin.display(description="turn")
    def turn_link(self, obj):
        url = reverse("admin:support_conversation_change", args=[obj.conversation_id])
        return format_html(
            '<a href="{}#trace-{}">Turn {} of conversation {}</a>',
            url,
            obj.turn,
            obj.turn,
            obj.conversation_id,
        )

    @admin.display(description="the customer wrote")
    def asked(self, obj):
        return obj.asked or "-"

    @admin.display(description="they read")
    def reply(self, obj):
        return obj.reply or "-"

    @admin.display(description="vote", ordering="helpful")
    def vote(self, obj):
        return {True: "helpful", False: "not helpful"}.get(obj.helpful, "-")
