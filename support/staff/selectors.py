"""What support staff read: the inbox as it changes, and a conversation as it happened, tool calls and the
validator included."""

import hashlib
import json
from dataclasses import dataclass

from django.db.models import Count, Max, OuterRef, Q, QuerySet, Subquery, Sum
from django.db.models.functions import Substr

from support.conversations.models import (
    PERSON_ANSWERS,
    Conversation,
    ConversationMessage,
    ConversationStatus,
    MessageRole,
    ModelCall,
    TurnTrace,
)
from support.conversations.selectors import staff_name
from support.llm.protocol import is_reminder

# How much of a customer's latest message the inbox shows.
PREVIEW_CHARS = 120


def conversation_inbox_annotate(*, conversations: QuerySet[Conversation]) -> QuerySet[Conversation]:
    """The conversations with `last_words`: the start of the customer's latest message."""
    latest = (
        ConversationMessage.objects.filter(conversation=OuterRef("pk"), role=MessageRole.USER)
        .exclude(visible_text="")
        .order_by("-position")
        .values("visible_text")[:1]
    )
    return conversations.annotate(last_words=Substr(Subquery(latest), 1, PREVIEW_CHARS + 1))


def conversation_customer_label(*, conversation: Conversation) -> str:
    """How staff name the customer: the email the store signed them in with, else the one they gave or
    a tool verified, else an anonymous visitor."""
    return conversation.signed_in_email or conversation.customer_email or "A visitor"


@dataclass(frozen=True)
class InboxState:
    """What the inbox page polls for. `waiting`: the customers waiting for a person, longest wait first,
    each {"id", "customer", "since" (ISO 8601)}. `version` changes whenever a row of the inbox would:
    a new conversation or message, a status, an assignment, a customer leaving."""

    waiting: list[dict]
    version: str


def inbox_state() -> InboxState:
    conversations = Conversation.objects.all()
    totals = conversations.aggregate(
        count=Count("pk"),
        turns=Sum("turn_count"),
        last_activity=Max("last_activity_at"),
        last_ended=Max("ended_at"),
        closed=Count("pk", filter=Q(status=ConversationStatus.CLOSED)),
    )
    # The conversations a person has or is awaited in, each as it stands: a take, an assignment or a
    # hand back changes no total above.
    with_people = list(
        conversations.filter(ended_at__isnull=True)
        .filter(Q(status__in=PERSON_ANSWERS) | Q(assigned_to__isnull=False))
        .order_by("pk")
        .values_list("pk", "status", "assigned_to_id", "handoff_at", "last_activity_at")
    )
    waiting = [row for row in with_people if row[1] == ConversationStatus.WAITING and row[3] is not None]
    waiting.sort(key=lambda row: row[3])
    labels = {
        conversation.pk: conversation_customer_label(conversation=conversation)
        for conversation in conversations.filter(pk__in=[row[0] for row in waiting]).only(
            "pk", "signed_in_email", "customer_email"
        )
    }
    version = hashlib.sha256(repr((sorted(totals.items()), with_people)).encode()).hexdigest()[:16]
    return InboxState(
        waiting=[
            {"id": pk, "customer": f"{labels[pk]}, conversation {pk}", "since": since.isoformat()}
            for pk, _, _, since, _ in waiting
        ],
        version=version,
    )


def conversation_staff_transcript(*, conversation: Conversation) -> list[dict]:
    """Every stored message, oldest first, as entries of one `kind` each: "customer" (their words;
    `set_aside` if the model API refused them), "tool_call" (name, input), "tool_result" (result,
    is_error), "assistant" (the reply the customer read; `violations` when it is the fallback that
    replaced a rejected reply), "staff" (text, name) and, after each turn the assistant ran, "trace"
    (`trace`: the turn's TurnTrace, `model_calls`: its ModelCall rows). Each has `turn` and `at`."""
    entries = []
    traces = {trace.turn: trace for trace in TurnTrace.objects.filter(conversation=conversation)}
    calls: dict[int, list[ModelCall]] = {}
    for call in ModelCall.objects.filter(conversation=conversation).order_by("id"):
        calls.setdefault(call.turn, []).append(call)
    messages = (
        ConversationMessage.objects.filter(conversation=conversation)
        .select_related("author")
        .order_by("position")
    )
    for message in messages:
        if entries and entries[-1]["turn"] != message.turn:
            _trace_entry(entries, traces, calls)
        base = {"turn": message.turn, "at": message.created_at}
        if message.role == MessageRole.STAFF:
            name = staff_name(message.author) if message.author else "a former member of staff"
            entries.append({**base, "kind": "staff", "text": message.visible_text, "name": name})
            continue
        for block in message.content:
            entry = _block_entry(message, block)
            if entry is not None:
                entries.append({**base, **entry})
        if message.role == MessageRole.ASSISTANT and message.visible_text:
            entries.append(
                {
                    **base,
                    "kind": "assistant",
                    "text": message.visible_text,
                    "violations": list(message.violations),
                }
            )
    if entries:
        _trace_entry(entries, traces, calls)
    return entries


def _trace_entry(
    entries: list[dict], traces: dict[int, TurnTrace], calls: dict[int, list[ModelCall]]
) -> None:
    """Close the last turn of `entries` with its trace, if the assistant ran it."""
    turn = entries[-1]["turn"]
    trace = traces.pop(turn, None)
    if trace is not None:
        entries.append(
            {
                "turn": turn,
                "at": trace.created_at,
                "kind": "trace",
                "trace": trace,
                "tool_calls": [
                    {**call, "arguments": _pretty(call["arguments"])} for call in trace.tool_calls
                ],
                "model_calls": calls.get(turn, []),
            }
        )


def _block_entry(message: ConversationMessage, block: dict) -> dict | None:
    kind = block.get("type")
    if kind == "tool_use":
        return {"kind": "tool_call", "name": block.get("name", ""), "input": _pretty(block.get("input"))}
    if kind == "tool_result":
        return {
            "kind": "tool_result",
            "result": _pretty(_parsed(block.get("content"))),
            "is_error": bool(block.get("is_error")),
        }
    text = block.get("text", "") if kind == "text" else ""
    # The customer's words: never tag-like (the turn neutralises that), so only our reminder is left out.
    if message.role == MessageRole.USER and text and not is_reminder(text):
        return {"kind": "customer", "text": text, "set_aside": message.set_aside}
    return None


def _parsed(content):
    if isinstance(content, str):
        try:
            return json.loads(content)
        except ValueError:
            return content
    return content


def _pretty(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)


def trace_review_annotate(*, traces: QuerySet[TurnTrace]) -> QuerySet[TurnTrace]:
    """Traces with the words of their turn: `asked` (the customer's) and `reply` (what they read)."""
    of_the_turn = ConversationMessage.objects.filter(
        conversation=OuterRef("conversation"), turn=OuterRef("turn")
    ).exclude(visible_text="")
    return traces.annotate(
        asked=Subquery(
            of_the_turn.filter(role=MessageRole.USER).order_by("position").values("visible_text")[:1]
        ),
        reply=Subquery(
            of_the_turn.filter(role=MessageRole.ASSISTANT).order_by("-position").values("visible_text")[:1]
        ),
    )
