"""A conversation starting to wait for a person: the fields that say so, and the one email about it."""

import logging

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse

from orders.events import event_record
from orders.models import EventType
from store.text import text_secrets_masked, text_single_line
from support.conversations.models import Conversation, ConversationStatus, HandoffReason

logger = logging.getLogger(__name__)


def waiting_fields(*, reason: str, note: str, now) -> dict:
    """The conversation's fields once it waits for a person (nobody assigned yet). `reason` is a
    HandoffReason's value (the model's HandoffAsk, support.llm.protocol, are among them)."""
    return {
        "status": ConversationStatus.WAITING,
        "assigned_to": None,
        "handoff_at": now,
        "handoff_reason": reason,
        # One line, shown to staff and put in an email and the store's event: no line breaks, no bidi or
        # invisible characters, and no card number, security code or password the customer typed (the
        # one place the note is made, so the inbox, the email and the event never carry them).
        "handoff_note": text_secrets_masked(text_single_line(note))[
            : Conversation._meta.get_field("handoff_note").max_length
        ],
    }


def waiting_notice(*, staff_available: bool, email: str) -> str:
    """What a customer waiting for a person is told (the page, the API and the handoff tool's result)."""
    if staff_available:
        return (
            "A member of our team will join this chat shortly. Anything you write meanwhile is kept for them."
        )
    then = (
        f" We'll also answer you at {email}."
        if email
        else " Leave your email address and we'll answer you there too."
    )
    return (
        f"Our team is not in the chat right now. They answer {settings.BOOKLY_SUPPORT_HOURS}, usually "
        f"{settings.BOOKLY_SUPPORT_REPLY_TIME}. Anything you write here is kept for them.{then}"
    )


def conversation_waiting_announce(*, conversation_id: int) -> None:
    """A conversation starts waiting for a person (its row already says so, in the caller's
    transaction): the store's systems get a conversation.handed_off event in that transaction, and the
    support address an email once it commits."""
    _conversation_event(conversation_id, EventType.CONVERSATION_HANDED_OFF)
    transaction.on_commit(lambda: _support_notify(conversation_id))


def conversation_email_given_announce(*, conversation_id: int) -> None:
    """The customer of a waiting conversation gave the email staff should answer at, after it was handed
    off (the page asks for it then): the store's systems get a conversation.email_given event."""
    _conversation_event(conversation_id, EventType.CONVERSATION_EMAIL_GIVEN)


def _conversation_event(conversation_id: int, event_type: EventType) -> None:
    conversation = Conversation.objects.get(pk=conversation_id)
    path = reverse("admin:support_conversation_change", args=[conversation.pk])
    event_record(
        type=event_type,
        data={
            "conversation": {
                "id": conversation.pk,
                "reason": conversation.handoff_reason,
                "note": conversation.handoff_note,
                "customer_email": conversation.customer_email,
                "order_numbers": sorted(conversation.orders.values_list("number", flat=True)),
                "handed_off_at": conversation.handoff_at.isoformat() if conversation.handoff_at else None,
                "admin_url": f"{settings.BOOKLY_SITE_URL.rstrip('/')}{path}",
            }
        },
    )


def _support_notify(conversation_id: int) -> None:
    """A mail server that fails must not fail the customer's request: the conversation waits in the
    inbox either way."""
    try:
        conversation = Conversation.objects.get(pk=conversation_id)
        lines = [
            f"Conversation {conversation.pk} is waiting for a person.",
            f"Why: {HandoffReason(conversation.handoff_reason).label}.",
        ]
        # Cleaned again here, whatever the row holds: a line break in a customer's words would start a
        # line of the email that looks like ours.
        if note := text_single_line(conversation.handoff_note):
            lines.append(f"Note: {note}")
        if email := text_single_line(conversation.customer_email):
            lines.append(f"Customer's email: {email}")
        path = reverse("admin:support_conversation_change", args=[conversation.pk])
        lines.append(f"Open it in admin: {settings.BOOKLY_SITE_URL.rstrip('/')}{path}")
        send_mail(
            subject=f"[Bookly] A customer is waiting (conversation {conversation.pk})",
            message="\n".join(lines),
            from_email=None,
            recipient_list=[settings.BOOKLY_SUPPORT_EMAIL],
        )
    except Exception:
        logger.exception("could not email the support address about conversation %s", conversation_id)
