"""Writing conversations: finding or opening the session's one, the turn lease, storing a turn, retention.

A turn holds its conversation's lease while it runs, so that a second message
of the same conversation (a double submit, another tab, another worker) waits
instead of interleaving. Everything a turn produced is stored in one
transaction that first proves the lease is still its own.
"""

import re
import time
import uuid
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from types import MappingProxyType

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac

from orders.addresses import OrderAddress
from orders.models import DeliveryCase, DeliveryProblem, Order, OrderChange, OrderItem, ReturnRecord
from orders.services import (
    delivery_case_open,
    order_cancel,
    order_shipping_address_change,
    return_record_create,
)
from support.conversations.lease_keeper import lease_forget, lease_keep
from support.conversations.models import (
    MODEL_ANSWERS,
    PERSON_ANSWERS,
    Conversation,
    ConversationDeliveryCase,
    ConversationEnd,
    ConversationMessage,
    ConversationOrderChange,
    ConversationReturn,
    ConversationStatus,
    MessageRole,
    ModelCall,
    TurnTrace,
)
from support.conversations.selectors import (
    SIGNED_IN_SESSION_KEY,
    conversation_has_ended,
    session_signed_in_email,
)
from support.conversations.waiting import conversation_waiting_announce, waiting_fields
from support.insight.metrics import HANDOFFS
from support.insight.traces import TurnRecord
from support.llm.types import ModelReply


class TurnInProgress(Exception):
    """Another turn of this conversation is running."""


class ConversationEnded(TurnInProgress):
    """The conversation ended while the turn ran (the store signed the customer out or another one in,
    a new conversation was started): what the turn produced is for whoever the conversation was with,
    who may no longer be at the browser, so it is neither stored nor shown.

    A lost lease in every other way: the turn is abandoned as when another turn took it over; only the
    customer is told something else."""


@dataclass(frozen=True)
class TurnLease:
    """A turn's hold on its conversation: the token that proves it, the turn's number, the
    position its first new message takes, and the time.monotonic() by which the turn must end."""

    conversation: Conversation
    token: uuid.UUID
    number: int
    next_position: int
    deadline: float


@dataclass(frozen=True)
class NewMessage:
    """A message a turn produced, to be stored: Messages API content and what the customer sees."""

    role: MessageRole
    content: list[dict]
    visible_text: str = ""
    violations: tuple[str, ...] = ()  # the validator's codes, on a fallback reply
    model_state: dict | None = None  # what the built-in model recorded with its reply


def session_ensure(*, session) -> None:
    """Give the visitor a stored session (and so a cookie) before their first message.

    Django keeps only sessions that hold data; the date the visitor started
    chatting is the one thing this one needs to hold.
    """
    if "chat_since" not in session:
        session["chat_since"] = timezone.now().isoformat()
    if not session.session_key:
        session.save()


def _is_idle(conversation: Conversation, now) -> bool:
    return conversation.last_activity_at < now - timedelta(minutes=settings.BOOKLY_CONVERSATION_IDLE_MINUTES)


def session_handle(*, session_key: str) -> str:
    """What a conversation stores of its session: a keyed hash of the key (HMAC-SHA256 under
    SECRET_KEY). It finds the session's conversation, but whoever reads it (staff through any admin
    lookup, a backup, a log) learns nothing that opens the session. A new SECRET_KEY starts every
    customer's chat afresh."""
    return salted_hmac("bookly.conversation-session", session_key, algorithm="sha256").hexdigest()


# The customer's visits are recorded at most this often: a poll every few seconds writes nothing.
SEEN_EVERY = timedelta(minutes=1)


def conversation_get_for_session(*, session) -> Conversation | None:
    """The session's open conversation, or None; an idle one is ended on the way, unless it waits for
    or is with a person (the customer may come back for the answer). Finding it records that the
    customer is still there (customer_seen_at), at most once a minute."""
    if not session.session_key:
        return None
    conversation = Conversation.objects.filter(
        session_handle=session_handle(session_key=session.session_key), ended_at__isnull=True
    ).first()
    if conversation is None:
        return None
    now = timezone.now()
    if conversation.status not in PERSON_ANSWERS and _is_idle(conversation, now):
        _conversation_end(conversation.pk, ConversationEnd.IDLE, now)
        return None
    if conversation.signed_in_email and conversation.signed_in_email != session_signed_in_email(
        session=session
    ):
        # The store's sign-in no longer holds (its secret changed or was removed, or the session lost
        # it): whoever is at the browser now may not be the customer this conversation was with.
        _conversation_end(conversation.pk, ConversationEnd.SIGNED_OUT, now)
        return None
    if conversation.customer_seen_at <= now - SEEN_EVERY:
        Conversation.objects.filter(pk=conversation.pk).update(customer_seen_at=now)
        conversation.customer_seen_at = now
    return conversation


def _conversation_end(pk: int, reason: ConversationEnd, now) -> bool:
    """End the conversation unless it already ended; whether this ended it."""
    return bool(
        Conversation.objects.filter(pk=pk, ended_at__isnull=True).update(ended_at=now, end_reason=reason)
    )


def conversation_end_for_session(
    *, session, reason: ConversationEnd = ConversationEnd.NEW_CONVERSATION
) -> bool:
    """Start afresh: the next message opens a new conversation, and whoever the store had signed in is
    signed out (a shared computer's next customer starts as nobody). Whether an open conversation
    ended (with `reason`, for staff)."""
    session.pop(SIGNED_IN_SESSION_KEY, None)
    if not session.session_key:
        return False
    return bool(
        Conversation.objects.filter(
            session_handle=session_handle(session_key=session.session_key), ended_at__isnull=True
        ).update(ended_at=timezone.now(), end_reason=reason)
    )


def conversation_turn_begin(
    *, session, conversation: Conversation | None, customer_message: NewMessage
) -> tuple[TurnLease, list[dict]]:
    """Take the session's conversation for one turn (opening one if it has none), count the turn,
    store the customer's words, and read the stored history (theirs last) as dicts with
    position, role, content, visible_text, set_aside and model_state.

    All of it commits together: either the turn has begun with their message
    kept, or nothing happened (TurnInProgress when another turn holds the
    conversation). `conversation` is the session's open one as read before, or
    None; the turn's number is its turn_count + 1 (1 for a new one), which is
    what the caller built the customer's message for.
    """
    now = timezone.now()
    lease_expires_at = now + timedelta(seconds=settings.BOOKLY_TURN_LEASE_SECONDS)
    token = uuid.uuid4()
    history: list[dict]
    if conversation is None:
        conversation = _conversation_open_for_turn(session, customer_message, token, lease_expires_at)
        history, position = [], 0
    else:
        if conversation.lease_held(now):
            raise TurnInProgress
        with transaction.atomic():
            # A compare-and-set on the row as read: every turn changes turn_count
            # when it takes the lease and lease_token when it ends, so if both are
            # still as read, no turn holds the conversation and the guard state in
            # hand (eligibility_verified, turn_count) is current, with no second read.
            taken = Conversation.objects.filter(
                pk=conversation.pk,
                ended_at__isnull=True,
                status=MODEL_ANSWERS,  # a person may have been asked for since
                turn_count=conversation.turn_count,
                lease_token=conversation.lease_token,
            ).update(
                lease_token=token,
                lease_expires_at=lease_expires_at,
                last_activity_at=now,
                turn_count=conversation.turn_count + 1,
            )
            if not taken:
                raise TurnInProgress
            conversation.turn_count += 1
            history = [
                dict(entry)
                for entry in ConversationMessage.objects.filter(conversation=conversation)
                .order_by("position")
                .values("position", "role", "content", "visible_text", "set_aside", "model_state")
            ]
            position = history[-1]["position"] + 1 if history else 0
            _message(conversation, conversation.turn_count, position, customer_message).save(
                force_insert=True
            )
    history.append(_as_history(position, customer_message))
    deadline = time.monotonic() + settings.BOOKLY_TURN_DEADLINE_SECONDS
    # Renewed while the turn runs, and for one lease past its deadline at most.
    lease_keep(conversation.pk, token, until=deadline + settings.BOOKLY_TURN_LEASE_SECONDS)
    lease = TurnLease(
        conversation=conversation,
        token=token,
        number=conversation.turn_count,
        next_position=position + 1,
        deadline=deadline,
    )
    return lease, history


def _conversation_open_for_turn(
    session, customer_message: NewMessage, token: uuid.UUID, lease_expires_at
) -> Conversation:
    """A new conversation is born holding its first turn's lease, with the customer's words.

    Two first messages of one session at once (two tabs): the database keeps
    one open conversation per session, so the second finds the first's turn
    running.
    """
    session_ensure(session=session)
    try:
        with transaction.atomic():
            signed_in = session_signed_in_email(session=session)
            conversation = Conversation.objects.create(
                session_handle=session_handle(session_key=session.session_key),
                signed_in_email=signed_in,
                customer_email=signed_in,
                turn_count=1,
                lease_token=token,
                lease_expires_at=lease_expires_at,
            )
            _message(conversation, 1, 0, customer_message).save(force_insert=True)
    except IntegrityError:
        raise TurnInProgress from None
    return conversation


def _as_history(position: int, message: NewMessage) -> dict:
    return {
        "position": position,
        "role": message.role,
        "content": message.content,
        "visible_text": message.visible_text,
        "set_aside": False,
        "model_state": message.model_state,
    }


def conversation_turn_keep(*, lease: TurnLease, messages: Sequence[NewMessage], first: int) -> None:
    """Store part of a running turn now (a step that wrote to the store), at positions from `first`,
    only if the lease is still ours and the conversation open (else TurnInProgress, or
    ConversationEnded).

    Called inside the transaction that made the write: the write and the tool call that asked for it
    commit together or not at all, so a turn that fails afterwards, or a worker killed, never leaves a
    return the conversation does not show.
    """
    with transaction.atomic(savepoint=False):  # part of the write's transaction, never on its own
        ours = Conversation.objects.filter(
            pk=lease.conversation.pk, lease_token=lease.token, ended_at__isnull=True
        )
        if not ours.update(last_activity_at=timezone.now()):
            # Raised inside the write's transaction: a return or cancellation asked for before a
            # sign-out that came first is not made, as it could not be shown.
            raise _lease_lost(lease)
        _messages_add(lease.conversation, lease.number, first, messages)


def conversation_turn_commit(
    *,
    lease: TurnLease,
    messages: Sequence[NewMessage],
    first: int,
    model_calls: Sequence[ModelReply],
    eligibility_verified: Collection[str],
    change_checks: Mapping[str, dict] = MappingProxyType({}),
    orders_found: Mapping[int, str] = MappingProxyType({}),
    handoff: tuple[str, str] | None = None,
    trace: TurnRecord | None = None,
    changes_told: Collection[int] = (),
) -> ConversationStatus:
    """Store what the turn produced and end it, only if the lease is still ours and the conversation
    open (else TurnInProgress, or ConversationEnded). Returns who answers the conversation now.

    `first` is the position of the first of `messages`: the lease's next position, or later when
    part of the turn was kept already.

    `orders_found` (order primary key -> its email) are the orders a tool found with the customer's
    email: linked to the conversation, and the first email becomes the one staff may answer at.
    `handoff` (reason, a line for staff): the conversation waits for a person from now on, unless a
    person was asked for (or took it) while the turn ran; the turn's reply is kept either way.
    `trace`: what the turn did, stored with it for staff.
    `changes_told`: the links (ConversationOrderChange) of changes the store did not make that the reply
    told the customer of (support.conversations.not_made): told once, with the reply.
    """
    conversation = lease.conversation
    now = timezone.now()
    ending = {
        "lease_token": None,
        "lease_expires_at": None,
        "last_activity_at": now,
        "eligibility_verified": sorted(eligibility_verified),
        "change_checks": storable(dict(change_checks)),
    }
    if orders_found and not conversation.customer_email:
        ending["customer_email"] = next(iter(orders_found.values()))
    handing_over = waiting_fields(reason=handoff[0], note=storable(handoff[1]), now=now) if handoff else {}
    # A sign-out during the turn ends the conversation without touching the lease (the sign-out never
    # waits for a turn): the end is what stops this turn's answer reaching the next person.
    ours = Conversation.objects.filter(pk=conversation.pk, lease_token=lease.token, ended_at__isnull=True)
    try:
        with transaction.atomic():
            # One statement in the usual case: the lease is ours and the assistant still answers.
            if ours.filter(status=MODEL_ANSWERS).update(**ending, **handing_over):
                status = ConversationStatus.WAITING if handoff else ConversationStatus.ASSISTANT
                if handoff:
                    HANDOFFS.labels(reason=handoff[0]).inc()
            elif ours.update(**ending):
                # A person was asked for, or took it, while the turn ran.
                status = ConversationStatus(
                    Conversation.objects.values_list("status", flat=True).get(pk=conversation.pk)
                )
            else:
                raise _lease_lost(lease)
            _messages_add(conversation, lease.number, first, messages)
            _model_calls_add(conversation, lease.number, model_calls)
            _trace_add(conversation, lease.number, trace)
            if orders_found:
                conversation.orders.add(*orders_found)
            if changes_told:
                ConversationOrderChange.objects.filter(
                    pk__in=list(changes_told), customer_told_at__isnull=True
                ).update(customer_told_at=now)
            if handoff and status == ConversationStatus.WAITING:
                # After the orders are linked: the store's systems hear which orders it was about.
                conversation_waiting_announce(conversation_id=conversation.pk)
    finally:
        # Renewed until now: waiting for the write lock (SQLite) must not let the lease lapse.
        lease_forget(lease.token)
    return status


def _lease_lost(lease: TurnLease) -> TurnInProgress:
    """Why a turn may no longer store what it produced: its conversation ended meanwhile, or another
    turn took the lease over (it expired)."""
    ended = conversation_has_ended(conversation_id=lease.conversation.pk)
    return ConversationEnded() if ended else TurnInProgress()


def conversation_turn_abandon(
    *,
    lease: TurnLease,
    model_calls: Sequence[ModelReply],
    set_aside_unanswered: bool = False,
    trace: TurnRecord | None = None,
) -> None:
    """End a failed turn: free the conversation, then keep the usage of the calls it made.

    The customer's words stay (stored when the turn began); nothing the model
    said is kept, so the history stays a valid request. Two separate writes on
    purpose: if storing the usage fails, the conversation is free anyway.
    With `set_aside_unanswered` (the model API refused the request's content),
    the customer messages still waiting for a reply are set aside: shown, never
    sent again, so that one bad message cannot block the conversation.
    `trace` says what failed, for staff (stored with the usage).
    """
    lease_forget(lease.token)
    with transaction.atomic():
        # Set aside and free together, and only while the lease is ours: the next turn
        # (another tab's) must neither find its own words set aside nor miss ours.
        released = Conversation.objects.filter(pk=lease.conversation.pk, lease_token=lease.token).update(
            lease_token=None, lease_expires_at=None
        )
        if released and set_aside_unanswered:
            _unanswered_set_aside(lease.conversation)
    # Apart, too: the usage (what the calls cost) is kept even if storing the trace fails.
    _model_calls_add(lease.conversation, lease.number, model_calls)
    _trace_add(lease.conversation, lease.number, trace)


def _unanswered_set_aside(conversation: Conversation) -> None:
    """Set aside what no reply the customer read follows: their messages, and any tool step a failed
    turn kept (a return's), whose content may be what the model API refuses."""
    last_reply = (
        ConversationMessage.objects.filter(
            conversation=conversation, role__in=[MessageRole.ASSISTANT, MessageRole.STAFF]
        )
        .exclude(visible_text="")
        .order_by("-position")
        .values_list("position", flat=True)
        .first()
    )
    unanswered = ConversationMessage.objects.filter(conversation=conversation)
    if last_reply is not None:
        unanswered = unanswered.filter(position__gt=last_reply)
    unanswered.update(set_aside=True)


def _message(
    conversation: Conversation, turn: int, position: int, message: NewMessage
) -> ConversationMessage:
    return ConversationMessage(
        conversation=conversation,
        position=position,
        turn=turn,
        role=message.role,
        content=storable(message.content),
        visible_text=storable(message.visible_text),
        violations=list(message.violations),
        model_state=storable(message.model_state),
    )


def _messages_add(conversation: Conversation, turn: int, first: int, messages: Sequence[NewMessage]) -> None:
    ConversationMessage.objects.bulk_create(
        _message(conversation, turn, first + offset, message) for offset, message in enumerate(messages)
    )


def _model_calls_add(conversation: Conversation, turn: int, calls: Sequence[ModelReply]) -> None:
    if not calls:
        return
    ModelCall.objects.bulk_create(
        ModelCall(
            conversation=conversation,
            turn=turn,
            model=call.model,
            offline=call.offline,
            stop_reason=call.stop_reason,
            request_id=call.request_id,
            duration_ms=call.duration_ms,
            **call.usage,
        )
        for call in calls
    )


def _trace_add(conversation: Conversation, turn: int, trace: TurnRecord | None) -> None:
    if trace is None:
        return
    TurnTrace.objects.create(
        conversation=conversation,
        turn=turn,
        outcome=trace.outcome,
        reply_source=trace.reply_source,
        violations=list(trace.violations),
        dead_end=trace.dead_end,
        tool_calls=[
            {"tool": call.tool, "arguments": call.arguments, "result": call.result, "ms": call.ms}
            for call in trace.tool_calls
        ],
        handoff_reason=trace.handoff_reason,
        error=trace.error[:60],
        total_ms=trace.total_ms,
        model_ms=trace.model_ms,
    )


_UNSTORABLE_RE = re.compile("[\x00\ud800-\udfff]")


def storable(value):
    """The value without what PostgreSQL text and jsonb cannot hold (and UTF-8 cannot encode): NUL and
    lone surrogates, which a model's JSON or a customer's may carry. Applied to everything a
    conversation stores."""
    if isinstance(value, str):
        return _UNSTORABLE_RE.sub("", value)
    if isinstance(value, list):
        return [storable(item) for item in value]
    if isinstance(value, dict):
        return {storable(key): storable(item) for key, item in value.items()}
    return value


def conversation_return_create(
    *,
    conversation: Conversation,
    order: Order,
    reason: str,
    items: Collection[OrderItem] | None,
    today: date,
) -> ReturnRecord:
    """Start a return for this conversation's customer, linked to the conversation in the same
    transaction. Raises orders.services.ReturnNotAllowed."""
    with transaction.atomic():
        record = return_record_create(
            order=order, reason=reason, items=items, today=today, conversation_id=conversation.pk
        )
        ConversationReturn.objects.create(conversation=conversation, return_record=record)
    return record


def conversation_order_cancel(*, conversation: Conversation, order: Order) -> OrderChange:
    """Cancel the order for this conversation's customer, linked to the conversation in the same
    transaction. Raises orders.services.OrderChangeNotAllowed."""
    with transaction.atomic():
        change = order_cancel(order=order, conversation_id=conversation.pk)
        ConversationOrderChange.objects.create(conversation=conversation, order_change=change)
    return change


def conversation_order_address_change(
    *, conversation: Conversation, order: Order, address: OrderAddress
) -> OrderChange:
    """Send the order to the address the customer confirmed, linked to the conversation in the same
    transaction. Raises orders.services.OrderChangeNotAllowed."""
    with transaction.atomic():
        change = order_shipping_address_change(order=order, address=address, conversation_id=conversation.pk)
        ConversationOrderChange.objects.create(conversation=conversation, order_change=change)
    return change


def conversation_delivery_case_open(
    *,
    conversation: Conversation,
    order: Order,
    problem: DeliveryProblem,
    items: Collection[OrderItem] | None,
    details: str,
) -> tuple[DeliveryCase, bool]:
    """Open (or find open) the case of a delivery problem the customer reported here, linked to the
    conversation in the same transaction. Raises orders.services.DeliveryCaseRefused."""
    with transaction.atomic():
        case, created = delivery_case_open(
            order=order, problem=problem, items=items, details=details, conversation_id=conversation.pk
        )
        ConversationDeliveryCase.objects.get_or_create(conversation=conversation, delivery_case=case)
    return case, created


def conversations_purge(*, older_than_days: int) -> int:
    """Delete conversations idle for longer than the retention period. Returns how many.

    Returns they started are kept (only their link to the conversation goes).
    """
    cutoff = timezone.now() - timedelta(days=older_than_days)
    with transaction.atomic():
        doomed = Conversation.objects.filter(last_activity_at__lt=cutoff, lease_token__isnull=True)
        count = doomed.count()
        doomed.delete()
    return count
