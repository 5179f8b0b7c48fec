"""The inbox, and a conversation's page with its reply box and actions (reply, note, assign, take, hand
back, close): the admin only reads and routes; support.conversations.handoff holds the rules."""

import logging

from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import Case, DateTimeField, F, IntegerField, Value, When
from django.http import HttpResponseRedirect, JsonResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.text import Truncator
from django.utils.timesince import timesince

from orders.admin.order_changes import order_change_with_state
from store.text import text_secrets_masked
from support.conversations.handoff import (
    ConversationActionRefused,
    conversation_assign,
    conversation_assign_to,
    conversation_close,
    conversation_hand_back,
    conversation_staff_reply,
    conversation_transcript_email,
    staff_availability_extend,
    staff_availability_set,
)
from support.conversations.models import Conversation, ConversationStatus
from support.conversations.notes import NOTE_MAX_CHARS, conversation_note_add
from support.conversations.selectors import staff_is_available, staff_name, staff_who_can_answer
from support.staff.admin.store import admin_link, told_in_chat
from support.staff.dashboard_page import dashboard_page
from support.staff.selectors import (
    PREVIEW_CHARS,
    conversation_customer_label,
    conversation_inbox_annotate,
    conversation_staff_transcript,
    inbox_state,
    saved_replies_for_conversation,
)

logger = logging.getLogger(__name__)

# Waiting conversations first (longest wait at the top), then those with a person, then the rest
# (including those the customer left: they can no longer be answered in the chat).
_INBOX_RANK = Case(
    When(status=ConversationStatus.WAITING, ended_at__isnull=True, then=Value(0)),
    When(status=ConversationStatus.PERSON, ended_at__isnull=True, then=Value(1)),
    default=Value(2),
    output_field=IntegerField(),
)
_WAITING_SINCE = Case(
    When(status=ConversationStatus.WAITING, ended_at__isnull=True, then=F("handoff_at")),
    default=None,
    output_field=DateTimeField(),
)


# What the inbox's and the conversation page's scripts send with the requests they make on their own
# (inbox.js, staff.js): "active" when the member of staff clicked, typed or scrolled since the last one.
POLL_HEADER = "X-Bookly-Poll"


def _used(request) -> bool:
    """Whether the request shows the member of staff at work, which keeps them available: a page they
    opened, or a script's request after they used the page; not a tab left open."""
    return request.headers.get(POLL_HEADER, "active") == "active"


class AssignedFilter(admin.SimpleListFilter):
    title = "assigned to"
    parameter_name = "assigned"

    def lookups(self, request, model_admin):
        return [("me", "Mine"), ("nobody", "Unassigned")]

    def queryset(self, request, queryset):
        if self.value() == "me":
            return queryset.filter(assigned_to=request.user)
        if self.value() == "nobody":
            return queryset.filter(assigned_to__isnull=True)
        return queryset


@admin.register(Conversation)
class ConversationAdmin(admin.ModelAdmin):
    """The inbox and each conversation's page. Conversations are written by customers, the assistant
    and the actions on their page: never through a form."""

    list_display = [
        "customer",
        "latest_message",
        "status_with_wait",
        "about",
        "who_has_it",
        "last_activity_at",
    ]
    list_display_links = ["customer"]
    list_filter = ["status", AssignedFilter, "created_at"]
    search_fields = [
        "orders__number",
        "customer_email",
        "signed_in_email",
        "orders__customer_email",
        "returns__rma_number",
    ]
    date_hierarchy = "created_at"
    list_select_related = ["assigned_to"]
    ordering = [_INBOX_RANK.asc(), _WAITING_SINCE.asc(nulls_last=True), "-last_activity_at"]
    change_list_template = "admin/support/conversation/inbox.html"
    conversation_template = "admin/support/conversation/conversation.html"

    def get_queryset(self, request):
        conversations = super().get_queryset(request).prefetch_related("orders", "returns", "delivery_cases")
        return conversation_inbox_annotate(conversations=conversations)

    def has_add_permission(self, request):
        return False

    @admin.display(description="customer")
    def customer(self, obj):
        # The name on an order looked up here (with its email, so it is theirs), as well, if there is one.
        name = next((order.customer_name for order in obj.orders.all() if order.customer_name), "")
        label = conversation_customer_label(conversation=obj)
        return format_html(
            '{}<br><span class="support-quiet">{}</span>', f"{name} · {label}" if name else label, obj
        )

    @admin.display(description="their latest message")
    def latest_message(self, obj):
        if not obj.last_words:
            return "-"
        # No card number, security code or password the customer typed on a list every colleague sees.
        return Truncator(text_secrets_masked(obj.last_words)).chars(PREVIEW_CHARS)

    @admin.display(description="status", ordering="status")
    def status_with_wait(self, obj):
        if obj.ended_at is not None and obj.status != ConversationStatus.CLOSED:
            return f"{obj.get_status_display()} (the customer left)"
        if obj.status == ConversationStatus.WAITING and obj.handoff_at:
            # The page counts the wait on between its refreshes (inbox.js reads data-since).
            return format_html(
                '{}, <span data-since="{}">{}</span>',
                obj.get_status_display(),
                obj.handoff_at.isoformat(),
                timesince(obj.handoff_at),
            )
        return obj.get_status_display()

    @admin.display(description="about")
    def about(self, obj):
        """The orders looked up, the returns started and the delivery cases reported here."""
        links = [admin_link(order, order.number) for order in obj.orders.all()]
        links += [admin_link(record, record.rma_number) for record in obj.returns.all()]
        links += [
            admin_link(case, f"Case {case.pk} ({case.get_status_display().lower()})")
            for case in obj.delivery_cases.all()
        ]
        return format_html_join(", ", "{}", ((link,) for link in links)) or "-"

    @admin.display(description="who has it", ordering="assigned_to")
    def who_has_it(self, obj):
        if obj.assigned_to is not None:
            return staff_name(obj.assigned_to)
        if obj.status == ConversationStatus.ASSISTANT:
            return "the assistant"
        return "nobody yet" if obj.status == ConversationStatus.WAITING and obj.ended_at is None else "-"

    def get_urls(self):
        own = [
            path(
                "availability/",
                self.admin_site.admin_view(self.availability_view),
                name="support_conversation_availability",
            ),
            path("dashboard/", self.admin_site.admin_view(self.dashboard_view), name="support_dashboard"),
            path("website/", self.admin_site.admin_view(self.website_view), name="support_website"),
            path(
                "inbox/state/", self.admin_site.admin_view(self.inbox_state_view), name="support_inbox_state"
            ),
            path(
                "<path:object_id>/saved-replies/",
                self.admin_site.admin_view(self.saved_replies_view),
                name="support_conversation_saved_replies",
            ),
        ]
        return own + super().get_urls()

    def changelist_view(self, request, extra_context=None):
        if _used(request):
            staff_availability_extend(user=request.user)
        available = staff_is_available(user=request.user)
        context = {
            "title": "Inbox: conversations, waiting ones first",
            "available": available,
            "inbox": inbox_state(user=request.user),
        }
        return super().changelist_view(request, {**context, **(extra_context or {})})

    def inbox_state_view(self, request):
        """What the open inbox polls (inbox.js): the waiting customers, the inbox's version and whether
        this member of staff is still available. `?active=1`: they used the page since the last poll,
        which keeps them available as a page view does."""
        if not self.has_view_or_change_permission(request):
            raise PermissionDenied
        if _used(request):
            staff_availability_extend(user=request.user)
        state = inbox_state(user=request.user)
        return JsonResponse(
            {
                "waiting": state.waiting,
                "mine": state.mine,
                "given": state.given,
                "version": state.version,
                "available": staff_is_available(user=request.user),
            }
        )

    def saved_replies_view(self, request, object_id):
        """The saved replies this member of staff may use, filled for this conversation (staff.js shows
        them when they type / in the reply box); each lists the placeholders it has no value for."""
        conversation = self.get_object(request, unquote(object_id))
        if conversation is None or not self.has_change_permission(request, conversation):
            raise PermissionDenied
        return JsonResponse(
            {"replies": saved_replies_for_conversation(conversation=conversation, user=request.user)}
        )

    def availability_view(self, request):
        """Staff say they can (or no longer can) answer chats now; customers are told accordingly."""
        if request.method != "POST" or not self.has_change_permission(request):
            raise PermissionDenied
        available = request.POST.get("available") == "yes"
        staff_availability_set(user=request.user, available=available)
        self.message_user(
            request,
            "Customers asking for a person are told someone will join shortly."
            if available
            else "You are away: customers asking for a person are given the opening hours.",
        )
        inbox = reverse("admin:support_conversation_changelist")
        back = request.POST.get("next", "")
        # Back to the inbox as it was (its filters), and never off this site.
        if not (back.startswith(inbox) and url_has_allowed_host_and_scheme(back, allowed_hosts=None)):
            back = inbox
        return HttpResponseRedirect(back)

    def dashboard_view(self, request):
        """How the assistant is doing over a period: for anyone who may read conversations."""
        if not self.has_view_or_change_permission(request):
            raise PermissionDenied
        return dashboard_page(request, context={**self.admin_site.each_context(request), "opts": self.opts})

    def website_view(self, request):
        """For superusers: the widget's script tag for the store's pages, where it may appear, and the
        secret the store's server signs its customers with (README, "On your website")."""
        if not request.user.is_superuser:
            raise PermissionDenied
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "The chat on your website",
            "script_url": request.build_absolute_uri(reverse("support:widget_script")),
            "origins": settings.BOOKLY_WIDGET_ORIGINS,
            "signing_secret": settings.BOOKLY_CUSTOMER_SIGNING_SECRET,
            "signature_max_age": settings.BOOKLY_CUSTOMER_SIGNATURE_MAX_AGE_SECONDS,
        }
        return TemplateResponse(request, "admin/support/website.html", context)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        """The conversation as it happened, with the reply box and the actions (POSTed here)."""
        conversation = self.get_object(request, unquote(object_id))
        if conversation is None:
            # Django's own answer to an object that is not there, which django-stubs leaves out.
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)  # type: ignore[attr-defined]
        if not self.has_view_or_change_permission(request, conversation):
            raise PermissionDenied
        drafts = {}
        if request.method == "POST":
            if not self.has_change_permission(request, conversation):
                raise PermissionDenied
            action = request.POST.get("action", "")
            wants_json = request.headers.get("Accept") == "application/json"  # staff.js sends it
            try:
                if action not in _ACTIONS:
                    raise ConversationActionRefused("Choose an action.")
                done = _ACTIONS[action](request, conversation)
            except ConversationActionRefused as refused:
                refusal = refused.message
            else:
                if wants_json:
                    return JsonResponse({"message": done})
                self.message_user(request, done)
                # Back to where they were: the reply box after a reply or a note.
                return HttpResponseRedirect(
                    request.path + ("#composer" if action in ("reply", "note") else "")
                )
            if wants_json:
                return JsonResponse({"error": refusal}, status=409)
            self.message_user(request, refusal, messages.ERROR)
            drafts = {action: request.POST.get("text", "")}  # kept in the box, not lost
            conversation.refresh_from_db()
        if _used(request):
            staff_availability_extend(user=request.user)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": f"{conversation}: {conversation_customer_label(conversation=conversation)}",
            "conversation": conversation,
            "answered_by": staff_name(conversation.assigned_to) if conversation.assigned_to else "",
            "entries": conversation_staff_transcript(conversation=conversation),
            "orders": conversation.orders.all(),
            "returns": conversation.returns.all(),
            "order_changes": [
                (link.order_change, order_change_with_state(link.order_change) + told_in_chat(link))
                for link in conversation.order_change_links.select_related("order_change__order").order_by(
                    "order_change__changed_at"
                )
            ],
            "delivery_cases": conversation.delivery_cases.select_related("order").prefetch_related("items"),
            "can_act": self.has_change_permission(request, conversation),
            "reply_draft": drafts.get("reply", ""),
            "note_draft": drafts.get("note", ""),
            "note_max": NOTE_MAX_CHARS,
            "colleagues": staff_who_can_answer(),
            "saved_replies_url": reverse("admin:support_conversation_saved_replies", args=[conversation.pk]),
            "waited": timesince(conversation.handoff_at) if conversation.handoff_at else "",
            **(extra_context or {}),
        }
        return TemplateResponse(request, self.conversation_template, context)


def _reply(request, conversation) -> str:
    conversation_staff_reply(conversation=conversation, user=request.user, text=request.POST.get("text", ""))
    return "Your reply was sent."


def _note(request, conversation) -> str:
    conversation_note_add(conversation=conversation, user=request.user, text=request.POST.get("text", ""))
    return "Your note was added. Only staff see it."


def _expected_assignee(request) -> int | None:
    """Who the page showed having the conversation (its forms carry it)."""
    expected = request.POST.get("expected_assignee", "")
    return int(expected) if expected.isdigit() else None


def _assign(request, conversation) -> str:
    chosen = request.POST.get("assignee", "")
    assignee = get_user_model().objects.filter(pk=int(chosen)).first() if chosen.isdigit() else None
    if chosen and assignee is None:
        raise ConversationActionRefused("Choose a colleague from the list.")
    conversation = conversation_assign_to(
        conversation=conversation,
        user=request.user,
        assignee=assignee,
        expected_assignee_id=_expected_assignee(request),
    )
    if assignee is None:
        waits = conversation.status == ConversationStatus.WAITING
        return "Nobody has it now." + (" It waits for a person." if waits else "")
    if assignee == request.user:
        return "It is yours now."
    if staff_is_available(user=assignee):
        away = ""
    elif assignee.email:
        away = " They are away: they were emailed."
    else:
        away = " They are away and have no email address in admin: tell them."
    return f"{staff_name(assignee)} has it now.{away}"


def _take(request, conversation) -> str:
    conversation_assign(
        conversation=conversation, user=request.user, expected_assignee_id=_expected_assignee(request)
    )
    return "You are answering this conversation; the assistant stays quiet."


def _hand_back(request, conversation) -> str:
    conversation_hand_back(conversation=conversation, user=request.user)
    return "Handed back: the assistant answers the customer's next message."


def _close(request, conversation) -> str:
    conversation = conversation_close(conversation=conversation, user=request.user)
    closed = "Closed. The customer's next message starts a new conversation."
    if request.POST.get("email_transcript") != "yes":
        return closed
    try:
        address = conversation_transcript_email(conversation=conversation)
    except ConversationActionRefused as refused:
        return f"{closed} The transcript was not emailed: {refused.message}"
    except Exception:
        logger.exception("could not email the transcript of conversation %s", conversation.pk)
        return f"{closed} The transcript could not be emailed (the mail server failed); try again later."
    return f"{closed} The transcript was emailed to {address}."


_ACTIONS = {
    "reply": _reply,
    "note": _note,
    "assign": _assign,
    "take": _take,
    "hand_back": _hand_back,
    "close": _close,
}
