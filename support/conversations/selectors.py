from collections.abc import Collection

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone
from django.utils.crypto import salted_hmac

from orders.models import RETURN_STATUSES_RELEASING_ITEMS, Order, OrderItem, ReturnRecord
from support.conversations.models import (
    Conversation,
    ConversationMessage,
    ConversationStatus,
    MessageRole,
    StaffAvailability,
    TurnTrace,
)
from support.insight.traces import votable_traces

# What the customer's transcript calls each stored role.
_TRANSCRIPT_ROLES: dict[str, str] = {
    MessageRole.USER: "customer",
    MessageRole.ASSISTANT: "assistant",
    MessageRole.STAFF: "staff",
}


def conversation_transcript(*, conversation: Conversation | None) -> list[dict]:
    """What the customer sees, oldest first: their words, the replies that passed validation, and what
    staff wrote (with the writer's first name; empty if they have none or their account is gone), each
    with the time it was written (`at`).
    The assistant's replies carry their `turn` and the customer's vote on them, `helpful` (None if
    none), when the turn was traced (the customer may vote on those)."""
    if conversation is None:
        return []
    rows = (
        ConversationMessage.objects.filter(conversation=conversation)
        .exclude(visible_text="")
        .order_by("position")
        .values_list("role", "visible_text", "author__first_name", "turn", "created_at")
    )
    votes = dict(
        votable_traces(TurnTrace.objects.filter(conversation=conversation)).values_list("turn", "helpful")
    )
    transcript = []
    for role, text, first_name, turn, at in rows:
        entry = {"role": _TRANSCRIPT_ROLES[role], "text": text, "at": at}
        if role == MessageRole.STAFF:
            entry["name"] = first_name or ""
        elif role == MessageRole.ASSISTANT and turn in votes:
            # The turn's reply; a message the chat added after it (support.conversations.not_made) takes
            # no vote of its own.
            entry.update(turn=turn, helpful=votes.pop(turn))
        transcript.append(entry)
    return transcript


def conversation_reference(*, conversation_id: int) -> str:
    """The name a page gives the conversation it shows, without its database id: feedback carries it, so
    that a vote from a page left open on an earlier conversation is never counted for the current one."""
    return salted_hmac("bookly.conversation-reference", str(conversation_id)).hexdigest()[:16]


def staff_name(user) -> str:
    """How staff are named to each other: their first name, else their login."""
    return user.first_name or user.get_username()


def conversation_status(*, conversation: Conversation | None) -> ConversationStatus:
    return ConversationStatus(conversation.status) if conversation else ConversationStatus.ASSISTANT


def staff_available_now() -> bool:
    """Whether a member of staff said they can answer chats and has not gone idle since."""
    return StaffAvailability.objects.filter(available_until__gt=timezone.now()).exists()


# The permission that lets a member of staff answer (and so be given) conversations.
ANSWER_PERMISSION = "support.change_conversation"


def staff_can_answer(*, user) -> bool:
    return user.is_active and user.is_staff and user.has_perm(ANSWER_PERMISSION)


def staff_who_can_answer():
    """Everyone a conversation may be given to, by name, each with `available` (said so, not idle)."""
    app_label, codename = ANSWER_PERMISSION.split(".")
    may = Q(codename=codename, content_type__app_label=app_label)
    granted = Permission.objects.filter(may)
    users = (
        get_user_model()
        .objects.filter(is_active=True, is_staff=True)
        .filter(Q(is_superuser=True) | Q(groups__permissions__in=granted) | Q(user_permissions__in=granted))
        .distinct()
        .annotate(
            available=Exists(
                StaffAvailability.objects.filter(user=OuterRef("pk"), available_until__gt=timezone.now())
            )
        )
    )
    return sorted(users, key=lambda user: staff_name(user).casefold())


def staff_is_available(*, user) -> bool:
    return StaffAvailability.objects.filter(user=user, available_until__gt=timezone.now()).exists()


def conversation_has_ended(*, conversation_id: int) -> bool:
    """Whether the conversation ended (a sign-out, another customer signed in, a new one started)."""
    return Conversation.objects.filter(pk=conversation_id, ended_at__isnull=False).exists()


def conversations_waiting_count() -> int:
    return Conversation.objects.filter(status=ConversationStatus.WAITING, ended_at__isnull=True).count()


def customer_session_is_live(*, conversation: Conversation) -> bool:
    """Whether the customer's browser session may still exist: it expires SESSION_COOKIE_AGE after
    their last request, and their page asks for the conversation at least every 15 seconds while it
    waits for or is with a person. Only then can they see a reply in the chat. (The conversation keeps
    a hash of the session key, never the key, so the session itself cannot be looked up.)"""
    idle = timezone.now() - conversation.customer_seen_at
    return idle.total_seconds() < settings.SESSION_COOKIE_AGE


def conversation_return_get_open(
    *, conversation: Conversation, order: Order, items: Collection[OrderItem] | None
) -> ReturnRecord | None:
    """The open return this conversation started for these items of the order (None: its latest open
    return of the order), or None."""
    records = (
        ReturnRecord.objects.filter(order=order, conversation_link__conversation=conversation)
        .exclude(status__in=RETURN_STATUSES_RELEASING_ITEMS)
        .prefetch_related("lines")
        .order_by("-created_at", "-pk")
    )
    wanted = None if items is None else {item.pk for item in items}
    for record in records:
        if wanted is None or {line.order_item_id for line in record.lines.all()} == wanted:
            return record
    return None


def replies_unhelpful_count() -> int:
    return TurnTrace.objects.filter(helpful=False).count()


# Where the session keeps whom the store signed its customer in as (support.conversations.identity):
# {"email", "secret": signing_secret_fingerprint() of the secret that signed it}.
SIGNED_IN_SESSION_KEY = "bookly_signed_in"


def signing_secret_fingerprint() -> str:
    """Names the signing secret without revealing it: a sign-in holds only while its secret is set."""
    secret = settings.BOOKLY_CUSTOMER_SIGNING_SECRET
    return salted_hmac("bookly.signing-secret", secret).hexdigest()[:16] if secret else ""


def session_signed_in_email(*, session) -> str:
    """The email the store signed this session's customer in with, or "": also "" once the secret
    that signed it was changed or removed."""
    signed_in = session.get(SIGNED_IN_SESSION_KEY) if session.session_key else None
    if not isinstance(signed_in, dict) or not signed_in.get("secret"):
        return ""
    return signed_in.get("email", "") if signed_in["secret"] == signing_secret_fingerprint() else ""
