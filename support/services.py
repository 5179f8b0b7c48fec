"""One customer turn: the tool loop behind the four guard layers, stored atomically.

A turn takes the conversation's lease with one conditional UPDATE, stores the
customer's words at once (they are never lost), then runs the model and tools
without holding a transaction or a database connection while it waits for the
model. Everything the turn produced is written at the end in one transaction
that first proves the lease is still ours. A failure at any step leaves the
stored history a valid Messages API request: adjacent customer messages are
merged when the history is sent, and no tool_use is ever stored without its
tool_result.
"""

import copy
import hashlib
import logging
import re
import time
import unicodedata
import uuid
from collections.abc import Generator
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, connections, transaction
from django.utils import timezone

from support.llm import Model, ModelReply, get_model
from support.models import Conversation, ConversationMessage, MessageRole, ModelCall
from support.prompts import system_prompt, turn_reminder
from support.tools import TOOLS, ToolContext, ToolOutcome, tool_execute
from support.validator import FALLBACK_REPLY, reply_validate

logger = logging.getLogger(__name__)

STUCK_REPLY = (
    "Sorry, I got stuck working that out. Could you rephrase your question about your order, a return "
    "or our store policies, one thing at a time?"
)
TOO_LONG_REPLY = (
    "My answer was getting too long. Could you ask about one order, return or policy question at a time?"
)
TURN_LIMIT_REPLY = (
    "This conversation has reached its length limit. Please start a new conversation to carry on with "
    "your order, return or policy question."
)

_CACHE_POINT = {"type": "ephemeral"}
# Tools never change, so their schema (with the cache breakpoint on the last
# one) is built once per process and sent byte-identical every time.
_TOOLS_FOR_REQUEST = copy.deepcopy(TOOLS)
_TOOLS_FOR_REQUEST[-1]["cache_control"] = _CACHE_POINT


class InvalidMessage(Exception):
    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


class TurnInProgress(Exception):
    """Another turn of this conversation is running."""


@dataclass
class TurnResult:
    reply: str
    offline: bool
    turn: int
    violations: tuple[str, ...] = ()
    tool_calls: list[dict] = field(default_factory=list)
    model_ms: int = 0  # time spent waiting for the model


def message_clean(*, text) -> str:
    """The customer's message without control characters, or InvalidMessage saying why not."""
    if not isinstance(text, str):
        raise InvalidMessage("Please send your message as text.")
    text = "".join(
        char for char in text if char in "\n\t" or unicodedata.category(char) not in ("Cc", "Cf", "Cs")
    ).strip()
    if not text:
        raise InvalidMessage("Please type a message first.")
    limit = settings.BOOKLY_MAX_MESSAGE_CHARS
    if len(text) > limit:
        raise InvalidMessage(f"Messages can be at most {limit} characters. Please shorten yours.")
    return text


def log_id(conversation_id: int) -> str:
    """A stable, non-reversible identifier of a conversation for log lines."""
    return hashlib.sha256(f"{settings.SECRET_KEY}:conversation:{conversation_id}".encode()).hexdigest()[:12]


def _is_idle(conversation: Conversation, now) -> bool:
    return conversation.last_activity_at < now - timedelta(minutes=settings.BOOKLY_CONVERSATION_IDLE_MINUTES)


def conversation_get_for_session(*, session) -> Conversation | None:
    """The session's open conversation, or None; an idle one is ended on the way."""
    if not session.session_key:
        return None
    conversation = Conversation.objects.filter(session_key=session.session_key, ended_at__isnull=True).first()
    if conversation is None:
        return None
    now = timezone.now()
    if _is_idle(conversation, now):
        Conversation.objects.filter(pk=conversation.pk, ended_at__isnull=True).update(ended_at=now)
        return None
    return conversation


def session_ensure(*, session) -> None:
    """Give the visitor a stored session (and so a cookie) before their first message.

    Django keeps only sessions that hold data; the date the visitor started
    chatting is the one thing this one needs to hold.
    """
    if "chat_since" not in session:
        session["chat_since"] = timezone.now().isoformat()
    if not session.session_key:
        session.save()


def conversation_start(*, session) -> Conversation:
    """Open a conversation for the session, or return the one a simultaneous request just opened."""
    session_ensure(session=session)
    try:
        with transaction.atomic():
            return Conversation.objects.create(session_key=session.session_key)
    except IntegrityError:
        return Conversation.objects.get(session_key=session.session_key, ended_at__isnull=True)


def conversation_end_for_session(*, session) -> None:
    """Start afresh: the next message opens a new conversation."""
    if session.session_key:
        Conversation.objects.filter(session_key=session.session_key, ended_at__isnull=True).update(
            ended_at=timezone.now()
        )


def _release_db_connections() -> None:
    """Give back database connections before a slow model call (a pool can lend them meanwhile)."""
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close()


def _lease_take(conversation: Conversation) -> tuple[uuid.UUID, int]:
    """Take the conversation for one turn and count the turn; returns the lease token and turn number.

    A compare-and-set on the row as it was read: every turn changes turn_count
    when it takes the lease and lease_token when it ends, so if both are still
    as read, no turn holds the conversation and the guard state in hand
    (eligibility_verified) is current, with no second read.
    """
    now = timezone.now()
    if conversation.lease_token is not None and conversation.lease_expires_at >= now:
        raise TurnInProgress
    token = uuid.uuid4()
    taken = Conversation.objects.filter(
        pk=conversation.pk,
        ended_at__isnull=True,
        turn_count=conversation.turn_count,
        lease_token=conversation.lease_token,
    ).update(
        lease_token=token,
        lease_expires_at=now + timedelta(seconds=settings.BOOKLY_TURN_LEASE_SECONDS),
        last_activity_at=now,
        turn_count=conversation.turn_count + 1,
    )
    if not taken:
        raise TurnInProgress
    conversation.turn_count += 1
    return token, conversation.turn_count


def _lease_release(conversation: Conversation, token: uuid.UUID) -> None:
    Conversation.objects.filter(pk=conversation.pk, lease_token=token).update(
        lease_token=None, lease_expires_at=None
    )


def _history_for_request(stored: list[dict]) -> list[dict]:
    """Stored messages as a Messages API history: adjacent same-role messages merged.

    A turn that failed leaves the customer's message without a reply; merging
    keeps the roles alternating, and the model sees both of their messages.
    """
    merged: list[dict] = []
    for message in stored:
        if merged and merged[-1]["role"] == message["role"]:
            merged[-1] = {"role": message["role"], "content": merged[-1]["content"] + message["content"]}
        else:
            merged.append({"role": message["role"], "content": list(message["content"])})
    return merged


def _with_cache_point(messages: list[dict]) -> list[dict]:
    """A copy of the messages with a cache breakpoint on the last block (never stored)."""
    request = list(messages)
    last = request[-1]
    blocks = [dict(block) for block in last["content"]]
    blocks[-1]["cache_control"] = _CACHE_POINT
    request[-1] = {"role": last["role"], "content": blocks}
    return request


_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def _whole_sentences(text: str) -> str:
    """Text cut after its last complete sentence (for replies stopped by max_tokens)."""
    ends = list(_SENTENCE_END.finditer(text))
    return text[: ends[-1].end()].strip() if ends else ""


def _text_of(blocks: list[dict]) -> str:
    return "\n\n".join(
        block["text"].strip() for block in blocks if block["type"] == "text" and block["text"].strip()
    )


def _storable(value):
    """The value without NUL characters, which PostgreSQL's jsonb cannot hold (a model may send them)."""
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, list):
        return [_storable(item) for item in value]
    if isinstance(value, dict):
        return {_storable(key): _storable(item) for key, item in value.items()}
    return value


def _grounding_of(message: dict, visible_text: str) -> list[str]:
    """What a stored or new message contributes to grounding: customer words and tool results."""
    if message["role"] != MessageRole.USER:
        return []
    found = [visible_text] if visible_text else []
    found += [block["content"] for block in message["content"] if block.get("type") == "tool_result"]
    return found


@dataclass
class _Turn:
    conversation: Conversation
    number: int
    deadline: float
    new_messages: list[tuple[dict, str]] = field(default_factory=list)  # (message, visible_text)
    calls: list[ModelReply] = field(default_factory=list)
    tool_calls: list[dict] = field(default_factory=list)
    model_ms: int = 0

    def add(self, role: str, content: list[dict], visible_text: str = "") -> dict:
        message = {"role": role, "content": _storable(content)}
        self.new_messages.append((message, visible_text))
        return message


# A turn's steps: yields the keyword arguments of each model call, is sent its ModelReply
# (or thrown its error), and returns the TurnResult.
TurnSteps = Generator[dict, ModelReply, TurnResult]


def conversation_take_turn(*, session, text: str, model: Model | None = None) -> TurnResult:
    """Answer one customer message. Raises InvalidMessage, TurnInProgress, ModelUnavailable, ModelFailed."""
    model = model or get_model()
    steps = conversation_turn_steps(session=session, text=text, offline=model.offline)
    try:
        request = next(steps)
        while True:
            try:
                reply = model.create(**request)
            except BaseException as error:
                request = steps.throw(error)  # the turn cleans up, then re-raises
            else:
                request = steps.send(reply)
    except StopIteration as finished:
        return finished.value


def conversation_turn_steps(*, session, text: str, offline: bool) -> TurnSteps:
    """One customer turn with the model calls left to its driver (conversation_take_turn, or the
    benchmark's asyncio driver), so that every driver runs the same steps and guards."""
    text = message_clean(text=text)
    conversation = conversation_get_for_session(session=session) or conversation_start(session=session)
    if conversation.turn_count >= settings.BOOKLY_MAX_TURNS_PER_CONVERSATION:
        return TurnResult(reply=TURN_LIMIT_REPLY, offline=offline, turn=conversation.turn_count)

    # Taking the lease, reading the history and storing the customer's words
    # commit together: either the turn has begun with their message kept, or
    # nothing happened.
    with transaction.atomic():
        token, number = _lease_take(conversation)
        stored = list(
            ConversationMessage.objects.filter(conversation=conversation)
            .order_by("position")
            .values("position", "role", "content", "visible_text")
        )
        position = stored[-1]["position"] + 1 if stored else 0
        customer_content = [
            {"type": "text", "text": text},
            {"type": "text", "text": turn_reminder(turn=number)},
        ]
        ConversationMessage.objects.create(
            conversation=conversation,
            position=position,
            turn=number,
            role=MessageRole.USER,
            content=customer_content,
            visible_text=text,
        )
    stored.append({"role": MessageRole.USER, "content": customer_content, "visible_text": text})
    position += 1
    turn = _Turn(conversation, number, time.monotonic() + settings.BOOKLY_TURN_DEADLINE_SECONDS)
    try:
        grounding = [g for message in stored for g in _grounding_of(message, message["visible_text"])]
        history = _history_for_request(stored)
        context = ToolContext(
            conversation=conversation, eligibility_verified=set(conversation.eligibility_verified)
        )
        reply_blocks = yield from _run_tool_loop(turn, history, context, grounding)

        reply = _text_of(reply_blocks)
        verdict = reply_validate(reply=reply, customer_message=text, grounding=grounding)
        if not verdict.ok:
            logger.warning(
                "reply rejected by validator: codes=%s conversation=%s turn=%d",
                ",".join(verdict.violations),
                log_id(conversation.pk),
                number,
            )
            reply = FALLBACK_REPLY
            reply_blocks = [{"type": "text", "text": reply}]
        turn.add(MessageRole.ASSISTANT, reply_blocks, visible_text=reply)
        _turn_commit(turn, token, first_position=position, eligibility_verified=context.eligibility_verified)
    except BaseException:
        try:
            _lease_release(conversation, token)
            _model_calls_store(turn)
        except Exception:
            logger.exception(
                "could not clean up after a failed turn (conversation=%s)", log_id(conversation.pk)
            )
        raise
    return TurnResult(
        reply=reply,
        offline=offline,
        turn=number,
        violations=verdict.violations,
        tool_calls=turn.tool_calls,
        model_ms=turn.model_ms,
    )


def _run_tool_loop(
    turn: _Turn, history: list[dict], context: ToolContext, grounding: list[str]
) -> Generator[dict, ModelReply, list[dict]]:
    """Call the model until it answers in text; returns the final reply's blocks (not yet stored)."""
    system = [{"type": "text", "text": system_prompt(), "cache_control": _CACHE_POINT}]
    messages = list(history)
    calls_left = settings.BOOKLY_MAX_MODEL_CALLS_PER_TURN
    while True:
        _release_db_connections()
        response = yield {
            "system": system,
            "tools": _TOOLS_FOR_REQUEST,
            "messages": _with_cache_point(messages),
            "deadline": turn.deadline,
        }
        turn.calls.append(response)
        turn.model_ms += response.duration_ms
        calls_left -= 1
        content = response.content
        tool_uses = [block for block in content if block["type"] == "tool_use"]

        if response.stop_reason == "max_tokens":
            # Half a sentence is never shown. A tool call cut short cannot be
            # run, and the text before it only announced it.
            text = "" if tool_uses else _whole_sentences(_text_of(content))
            return [{"type": "text", "text": text or TOO_LONG_REPLY}]
        if not tool_uses:
            return [block for block in content if block["type"] == "text"]

        messages.append(turn.add(MessageRole.ASSISTANT, content))
        results = []
        for block in tool_uses:
            if calls_left:
                outcome = tool_execute(name=block["name"], arguments=block["input"], context=context)
            else:
                # The model could never read this result: do not act on the call.
                outcome = ToolOutcome({"error": "call_limit_reached", "message": "Not run."}, is_error=True)
            turn.tool_calls.append({"name": block["name"], "input": block["input"], "result": outcome.result})
            results.append(outcome.as_block(block["id"]))
            grounding.append(results[-1]["content"])
        messages.append(turn.add(MessageRole.USER, results))
        if not calls_left:
            return [{"type": "text", "text": STUCK_REPLY}]


def _model_calls_store(turn: _Turn) -> None:
    ModelCall.objects.bulk_create(
        ModelCall(
            conversation=turn.conversation,
            turn=turn.number,
            model=call.model,
            offline=call.offline,
            stop_reason=call.stop_reason,
            request_id=call.request_id,
            duration_ms=call.duration_ms,
            **call.usage,
        )
        for call in turn.calls
    )
    turn.calls.clear()


def _turn_commit(
    turn: _Turn, token: uuid.UUID, *, first_position: int, eligibility_verified: set[str]
) -> None:
    """Store everything the turn produced, only if the lease is still ours."""
    with transaction.atomic():
        still_ours = Conversation.objects.filter(pk=turn.conversation.pk, lease_token=token).update(
            lease_token=None,
            lease_expires_at=None,
            last_activity_at=timezone.now(),
            eligibility_verified=sorted(eligibility_verified),
        )
        if not still_ours:
            raise TurnInProgress
        ConversationMessage.objects.bulk_create(
            ConversationMessage(
                conversation=turn.conversation,
                position=first_position + offset,
                turn=turn.number,
                role=message["role"],
                content=message["content"],
                visible_text=visible_text,
            )
            for offset, (message, visible_text) in enumerate(turn.new_messages)
        )
        _model_calls_store(turn)


def conversations_purge(*, older_than_days: int) -> int:
    """Delete conversations idle for longer than the retention period. Returns how many.

    Returns they started are kept (their link is cleared).
    """
    cutoff = timezone.now() - timedelta(days=older_than_days)
    with transaction.atomic():
        doomed = Conversation.objects.filter(last_activity_at__lt=cutoff, lease_token__isnull=True)
        count = doomed.count()
        doomed.delete()
    return count
