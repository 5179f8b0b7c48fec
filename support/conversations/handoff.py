"""People in the loop: a customer asks for a person, staff take the conversation, answer, hand it back
or close it.

Every write here locks the conversation's row first, so that it is ordered
with the others and with a turn taking its lease (the turn's compare-and-set
UPDATE waits on the same row lock; SQLite serializes all writers anyway). A
message is appended only while no turn holds the lease: a running turn has
already counted the positions it will store at, and must find them free when
it commits.
"""

import logging
from datetime import timedelta

from django.conf import settings
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.db.models.signals import pre_delete
from django.dispatch import receiver
from django.urls import reverse
from django.utils import timezone

from store.text import text_multi_line, text_secrets_masked
from support.conversations.models import (
    PERSON_ANSWERS,
    Conversation,
    ConversationAssignment,
    ConversationEnd,
    ConversationMessage,
    ConversationStatus,
    HandoffReason,
    MessageRole,
    StaffAvailability,
)
from support.conversations.placeholders import placeholders_in
from support.conversations.selectors import (
    conversation_transcript,
    customer_session_is_live,
    staff_can_answer,
    staff_is_available,
    staff_name,
)
from support.conversations.services import TurnInProgress, session_ensure, session_handle, storable
from support.conversations.waiting import (
    conversation_email_given_announce,
    conversation_waiting_announce,
    waiting_fields,
)
from support.insight.metrics import HANDOFFS
from support.llm.protocol import staff_message_block_text

logger = logging.getLogger(__name__)


class ConversationActionRefused(Exception):
    """What was asked cannot be done in the conversation's state; `message` says why, for a person."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def _locked(conversation: Conversation) -> Conversation:
    """The conversation's row as it is now, locked until the transaction ends."""
    return Conversation.objects.select_for_update().get(pk=conversation.pk)


def _turn_stopped(conversation: Conversation, now, *, running: Exception) -> None:
    """Raise `running` while a turn holds the lease. A lapsed lease is cleared (the caller saves it
    with its message): a turn still alive past it must then fail its commit cleanly, not collide with
    the position the message takes."""
    if conversation.lease_token is None:
        return
    if conversation.lease_expires_at >= now:
        raise running
    conversation.lease_token = conversation.lease_expires_at = None


def _message_append(
    conversation: Conversation, *, role: MessageRole, content, visible_text: str, author=None
) -> ConversationMessage:
    """Store one message after the last (the row is locked and no turn holds the lease)."""
    last = conversation.messages.aggregate(last=Max("position"))["last"]
    return ConversationMessage.objects.create(
        conversation=conversation,
        position=0 if last is None else last + 1,
        turn=conversation.turn_count,
        role=role,
        content=storable(content),
        visible_text=storable(visible_text),
        author=author,
    )


def _assigned(conversation: Conversation, *, to, by) -> None:
    """Give the (locked) conversation to `to` (None: nobody), recorded if that changes who has it; the
    caller saves the conversation."""
    to_id = to.pk if to is not None else None
    if conversation.assigned_to_id != to_id:
        ConversationAssignment.objects.create(conversation=conversation, assigned_to=to, assigned_by=by)
    conversation.assigned_to = to


def _start_waiting(conversation: Conversation, *, reason: HandoffReason, note: str, now) -> None:
    for name, value in waiting_fields(reason=reason, note=storable(note), now=now).items():
        if name == "assigned_to":
            _assigned(conversation, to=value, by=None)
        else:
            setattr(conversation, name, value)


def conversation_handoff_request(
    *, session, conversation: Conversation | None, reason: HandoffReason, note: str = "", email: str = ""
) -> tuple[Conversation, bool]:
    """The customer asks for a person: the session's conversation (a new one if it has none, or only a
    closed one) starts waiting. Returns it and whether it was already waiting or with a person.

    `email` (already validated) is where staff may answer; given again while waiting, it replaces the
    one before. A turn running meanwhile is left to finish: its reply is stored, and the model is not
    called again while a person is on the way.
    """
    now = timezone.now()
    if conversation is not None and conversation.status == ConversationStatus.CLOSED:
        conversation_end(conversation=conversation)
        conversation = None
    if conversation is None:
        session_ensure(session=session)
        opened = Conversation(
            session_handle=session_handle(session_key=session.session_key), customer_email=email
        )
        try:
            with transaction.atomic():
                _start_waiting(opened, reason=reason, note=note, now=now)
                opened.save(force_insert=True)
                conversation_waiting_announce(conversation_id=opened.pk)
        except IntegrityError:
            # Another tab opened the session's conversation a moment ago.
            raise TurnInProgress from None
        HANDOFFS.labels(reason=reason).inc()
        return opened, False
    with transaction.atomic():
        conversation = _locked(conversation)
        already = conversation.status in PERSON_ANSWERS
        if not already:
            _start_waiting(conversation, reason=reason, note=note, now=now)
        email_given = bool(email) and email.casefold() != conversation.customer_email.casefold()
        if email:
            conversation.customer_email = email
        conversation.last_activity_at = now
        conversation.save(
            update_fields=[
                "status",
                "assigned_to",
                "handoff_at",
                "handoff_reason",
                "handoff_note",
                "customer_email",
                "last_activity_at",
            ]
        )
        if not already:
            conversation_waiting_announce(conversation_id=conversation.pk)
        elif email_given:
            conversation_email_given_announce(conversation_id=conversation.pk)
    if not already:
        HANDOFFS.labels(reason=reason).inc()
    return conversation, already


def conversation_customer_message_keep(*, conversation: Conversation, text: str) -> Conversation | None:
    """Store the customer's words for the person who answers them (the model is not called); returns
    the conversation as it is now, or None, storing nothing, when a person no longer answers it (staff
    handed it back or closed it since it was read). TurnInProgress while a turn is still running."""
    with transaction.atomic():
        conversation = _locked(conversation)
        if conversation.status not in PERSON_ANSWERS or conversation.ended_at is not None:
            return None
        now = timezone.now()
        _turn_stopped(conversation, now, running=TurnInProgress())
        _message_append(
            conversation, role=MessageRole.USER, content=[{"type": "text", "text": text}], visible_text=text
        )
        conversation.last_activity_at = now
        conversation.save(update_fields=["last_activity_at", "lease_token", "lease_expires_at"])
    return conversation


def conversation_end(*, conversation: Conversation) -> None:
    """The customer writes after staff closed it: this conversation is no longer theirs to write in."""
    Conversation.objects.filter(pk=conversation.pk, ended_at__isnull=True).update(
        ended_at=timezone.now(), end_reason=ConversationEnd.AFTER_CLOSE
    )


def staff_reply_clean(*, text: str) -> str:
    text = text_multi_line(text or "")
    if not text:
        raise ConversationActionRefused("Write a reply first.")
    limit = settings.BOOKLY_MAX_MESSAGE_CHARS
    if len(text) > limit:
        raise ConversationActionRefused(
            f"A reply can be at most {limit} characters; this one has {len(text)}."
        )
    if left := placeholders_in(text):
        names = ", ".join("{{" + name + "}}" for name in left)
        raise ConversationActionRefused(
            f"Your reply still has {names}: this conversation has nothing to put there. Write it in "
            "yourself; your reply was not sent."
        )
    return text


def _refuse_unless_open(conversation: Conversation, *, to_reply: bool = False) -> None:
    if conversation.status == ConversationStatus.CLOSED:
        raise ConversationActionRefused("This conversation is closed.")
    email = f" Write to them at {conversation.customer_email}." if conversation.customer_email else ""
    if conversation.ended_at is not None:
        raise ConversationActionRefused(
            "The customer has left this conversation (they started a new one or went idle), so they "
            f"would not see a reply here.{email}"
        )
    if to_reply and not customer_session_is_live(conversation=conversation):
        raise ConversationActionRefused(
            "The customer's chat session has ended (their browser was away too long), so they would not "
            f"see a reply here.{email}"
        )


# "Whoever has it": a take that does not compare (a test's, a script's), unlike one from a page.
ANYONE = object()


def _refuse_unless_still(conversation: Conversation, expected_assignee_id) -> None:
    """The compare of a compare-and-set on the locked row: refused if who has the conversation changed
    since the page that asked was read, rather than one colleague silently undoing another."""
    if expected_assignee_id is not ANYONE and conversation.assigned_to_id != expected_assignee_id:
        now_with = staff_name(conversation.assigned_to) if conversation.assigned_to else "nobody"
        raise ConversationActionRefused(
            f"Someone changed who has this conversation a moment ago: it is now with {now_with}. "
            "Nothing was changed; look again and choose."
        )


def conversation_assign(*, conversation: Conversation, user, expected_assignee_id=ANYONE) -> Conversation:
    """A member of staff takes the conversation: from now on they answer it, not the model. Taking it
    over from a colleague is deliberate: the page says who has it (`expected_assignee_id`)."""
    with transaction.atomic():
        conversation = _locked(conversation)
        _refuse_unless_open(conversation)
        _refuse_unless_still(conversation, expected_assignee_id)
        conversation.status = ConversationStatus.PERSON
        _assigned(conversation, to=user, by=user)
        if conversation.handoff_at is None:
            conversation.handoff_at = timezone.now()
        conversation.save(update_fields=["status", "assigned_to", "handoff_at"])
    return conversation


def conversation_assign_to(*, conversation: Conversation, user, assignee, expected_assignee_id: int | None):
    """`user` gives the conversation to `assignee` (None: nobody), as they saw it given to
    `expected_assignee_id`. A compare-and-set on the locked row: if someone else took or assigned it
    since the page was read, nothing changes and they are told who has it now, rather than one of two
    colleagues silently undoing the other. A conversation with a person that nobody has any more waits
    again; the assignee, if away, is told by email."""
    with transaction.atomic():
        conversation = _locked(conversation)
        _refuse_unless_open(conversation)
        _refuse_unless_still(conversation, expected_assignee_id)
        if conversation.status == ConversationStatus.ASSISTANT:
            # Given to someone, it would still be answered by the model: a person takes it, or the
            # customer asks for one.
            raise ConversationActionRefused(
                "The assistant is answering this conversation: take it to answer it yourself; it can be "
                "given to a colleague once a person has it or the customer asks for one."
            )
        if assignee is not None and not staff_can_answer(user=assignee):
            raise ConversationActionRefused(f"{staff_name(assignee)} cannot answer conversations.")
        if conversation.assigned_to_id == (assignee.pk if assignee else None):
            raise ConversationActionRefused(
                f"It is already with {staff_name(assignee) if assignee else 'nobody'}."
            )
        _assigned(conversation, to=assignee, by=user)
        waits_again = assignee is None and conversation.status == ConversationStatus.PERSON
        if waits_again:
            # Waiting again from now, and announced as any wait is (the support address, the event).
            conversation.status = ConversationStatus.WAITING
            conversation.handoff_at = timezone.now()
        conversation.save(update_fields=["status", "assigned_to", "handoff_at"])
        if waits_again:
            conversation_waiting_announce(conversation_id=conversation.pk)
        if assignee is not None and assignee != user and not staff_is_available(user=assignee):
            transaction.on_commit(lambda: _assignee_notify(conversation.pk, assignee, user))
    return conversation


def _assignee_notify(conversation_id: int, assignee, by) -> None:
    """A colleague who is away hears of a conversation given to them; a mail server that fails must not
    fail the assignment (the inbox shows it either way)."""
    if not assignee.email:
        return
    try:
        path = reverse("admin:support_conversation_change", args=[conversation_id])
        send_mail(
            subject=f"[Bookly] {staff_name(by)} gave you conversation {conversation_id}",
            message=(
                f"{staff_name(by)} gave you conversation {conversation_id}.\n"
                f"Open it in admin: {settings.BOOKLY_SITE_URL.rstrip('/')}{path}"
            ),
            from_email=None,
            recipient_list=[assignee.email],
        )
    except Exception:
        logger.exception("could not email %s about conversation %s", assignee.pk, conversation_id)


def conversation_staff_reply(*, conversation: Conversation, user, text: str) -> ConversationMessage:
    """Send the customer a staff member's reply. A conversation nobody has taken yet becomes theirs;
    one another person has taken is refused (take it over first), so two people never answer at once."""
    text = staff_reply_clean(text=text)
    with transaction.atomic():
        conversation = _locked(conversation)
        _refuse_unless_open(conversation, to_reply=True)
        now = timezone.now()
        if conversation.assigned_to_id not in (None, user.pk):
            raise ConversationActionRefused(
                f"{staff_name(conversation.assigned_to)} has this conversation. Take it over first if you "
                "mean to answer instead; your reply was not sent."
            )
        _turn_stopped(
            conversation,
            now,
            running=ConversationActionRefused(
                "The assistant is finishing a reply in this conversation. Send yours again in a moment."
            ),
        )
        message = _message_append(
            conversation,
            role=MessageRole.STAFF,
            content=[{"type": "text", "text": staff_message_block_text(text)}],
            visible_text=text,
            author=user,
        )
        conversation.status = ConversationStatus.PERSON
        _assigned(conversation, to=user, by=user)
        conversation.last_activity_at = now
        conversation.save(
            update_fields=["status", "assigned_to", "last_activity_at", "lease_token", "lease_expires_at"]
        )
    return message


def conversation_hand_back(*, conversation: Conversation, user) -> Conversation:
    """The assistant answers the customer's next message again."""
    with transaction.atomic():
        conversation = _locked(conversation)
        _refuse_unless_open(conversation)
        if conversation.status not in PERSON_ANSWERS:
            raise ConversationActionRefused("The assistant is already answering this conversation.")
        conversation.status = ConversationStatus.ASSISTANT
        _assigned(conversation, to=None, by=user)
        conversation.save(update_fields=["status", "assigned_to"])
    return conversation


def conversation_close(*, conversation: Conversation, user) -> Conversation:
    """Staff close the conversation; the customer's next message starts a new one with the assistant."""
    with transaction.atomic():
        conversation = _locked(conversation)
        if conversation.status == ConversationStatus.CLOSED:
            raise ConversationActionRefused("This conversation is already closed.")
        conversation.status = ConversationStatus.CLOSED
        if conversation.assigned_to_id is None:
            _assigned(conversation, to=user, by=user)
        conversation.save(update_fields=["status", "assigned_to"])
    return conversation


def conversation_transcript_email(*, conversation: Conversation) -> str:
    """Email the customer what they saw in the chat (card data and secrets masked), to the address
    known for them. Returns that
    address; raises ConversationActionRefused when none is known, and the mail backend's error when
    sending fails."""
    if not conversation.customer_email:
        raise ConversationActionRefused("No email address is known for this customer.")
    lines = ["Here is your conversation with Bookly support.", ""]
    for entry in conversation_transcript(conversation=conversation):
        # Card data and passwords the customer typed do not leave in a plain email.
        lines.append(f"{_speaker(entry)}: {text_secrets_masked(entry['text'])}")
    send_mail(
        subject="Your conversation with Bookly support",
        message="\n".join(lines),
        from_email=None,
        recipient_list=[conversation.customer_email],
    )
    return conversation.customer_email


def _speaker(entry: dict) -> str:
    if entry["role"] == "staff":
        return f"{entry['name']} from Bookly support" if entry["name"] else "Bookly support"
    return "You" if entry["role"] == "customer" else "Bookly assistant"


def staff_availability_set(*, user, available: bool) -> None:
    """A member of staff says they can (or no longer can) answer chats now."""
    if available:
        until = timezone.now() + timedelta(minutes=settings.BOOKLY_STAFF_IDLE_MINUTES)
        StaffAvailability.objects.update_or_create(user=user, defaults={"available_until": until})
    else:
        StaffAvailability.objects.filter(user=user).delete()


def staff_availability_extend(*, user) -> None:
    """They are using the inbox: if they said they are available, they still are."""
    until = timezone.now() + timedelta(minutes=settings.BOOKLY_STAFF_IDLE_MINUTES)
    StaffAvailability.objects.filter(user=user, available_until__gt=timezone.now()).update(
        available_until=until
    )


@receiver(pre_delete, sender=settings.AUTH_USER_MODEL)
def _staff_deleted_conversations_wait_again(sender, instance, **kwargs):
    """Conversations a deleted member of staff answered wait for someone else (the database allows no
    conversation "with a person" without one)."""
    theirs = Conversation.objects.filter(assigned_to=instance)
    open_ones = theirs.filter(ended_at__isnull=True).exclude(status=ConversationStatus.CLOSED)
    ConversationAssignment.objects.bulk_create(
        ConversationAssignment(conversation_id=pk, assigned_to=None, assigned_by=None)
        for pk in open_ones.values_list("pk", flat=True)
    )
    theirs.filter(status=ConversationStatus.PERSON).update(
        status=ConversationStatus.WAITING, assigned_to=None
    )
