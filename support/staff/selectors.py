"""What support staff read: the inbox as it changes, and a conversation as it happened, tool calls and the
validator included."""

import hashlib
import heapq
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

from django.db.models import Count, F, Max, OuterRef, Q, QuerySet, Subquery, Sum
from django.db.models.functions import Substr

from orders.selectors import delivery_cases_open_count
from support.conversations.models import (
    PERSON_ANSWERS,
    Conversation,
    ConversationAssignment,
    ConversationMessage,
    ConversationNote,
    ConversationStatus,
    MessageRole,
    ModelCall,
    TurnTrace,
)
from support.conversations.placeholders import conversation_placeholder_values, placeholders_fill
from support.conversations.selectors import staff_name
from support.llm.protocol import HANDOFF_TOOL, is_reminder
from support.staff.models import SavedReply

# How much of a customer's latest message the inbox shows; read with enough beyond it that a card
# number across the cut is still whole when it is masked (store.text.text_secrets_masked).
PREVIEW_CHARS = 120
_PREVIEW_READ = PREVIEW_CHARS + 40


def conversation_inbox_annotate(*, conversations: QuerySet[Conversation]) -> QuerySet[Conversation]:
    """The conversations with `last_words`: the start of the customer's latest message."""
    latest = (
        ConversationMessage.objects.filter(conversation=OuterRef("pk"), role=MessageRole.USER)
        .exclude(visible_text="")
        .order_by("-position")
        .values("visible_text")[:1]
    )
    return conversations.annotate(last_words=Substr(Subquery(latest), 1, _PREVIEW_READ))


def conversation_customer_label(*, conversation: Conversation) -> str:
    """How staff name the customer: the email the store signed them in with, else the one they gave or
    a tool verified, else an anonymous visitor."""
    return _customer_label(conversation.signed_in_email, conversation.customer_email)


def _customer_label(signed_in_email: str, customer_email: str) -> str:
    return signed_in_email or customer_email or "A visitor"


@dataclass(frozen=True)
class InboxState:
    """What the inbox page polls for, for one member of staff. `waiting`: the customers waiting for a
    person, longest wait first,
    each {"id", "customer", "since" (ISO 8601)}. `version` changes whenever a row of the inbox would:
    a new conversation or message, a status, an assignment, a customer leaving."""

    waiting: list[dict]
    version: str
    # The open conversations the member of staff has (taken, or given to them), by id; `given`: those a
    # colleague gave them (the last change of who has it was not theirs).
    mine: list[int]
    given: list[int]


def inbox_state(*, user) -> InboxState:
    conversations = Conversation.objects.all()
    totals = conversations.aggregate(
        count=Count("pk"),
        turns=Sum("turn_count"),
        last_activity=Max("last_activity_at"),
        last_ended=Max("ended_at"),
        closed=Count("pk", filter=Q(status=ConversationStatus.CLOSED)),
        signed_in=Count("pk", filter=~Q(signed_in_email="")),
    )
    # A row names its delivery cases with their status ("Case 3 (open)").
    totals["cases_open"] = delivery_cases_open_count()
    # The conversations a person has or is awaited in, each as it stands: a take, an assignment or a
    # hand back changes no total above; an email given while waiting changes the row's name.
    with_people = list(
        conversations.filter(ended_at__isnull=True)
        .exclude(status=ConversationStatus.CLOSED)
        .filter(Q(status__in=PERSON_ANSWERS) | Q(assigned_to__isnull=False))
        .order_by("pk")
        .values_list(
            "pk",
            "status",
            "assigned_to_id",
            "handoff_at",
            "last_activity_at",
            "signed_in_email",
            "customer_email",
        )
    )
    waiting = sorted(
        (
            (pk, since, signed_in, email)
            for pk, status, _, since, _, signed_in, email in with_people
            if status == ConversationStatus.WAITING and since is not None
        ),
        key=lambda row: row[1],
    )
    mine = [row[0] for row in with_people if row[2] == user.pk]
    # Of those, the ones a colleague gave them: the last change of who has it was not their own.
    last_change: dict[int, ConversationAssignment] = {}
    for change in ConversationAssignment.objects.filter(conversation__in=mine).order_by("-at", "-pk"):
        last_change.setdefault(change.conversation_id, change)
    version = hashlib.sha256(repr((sorted(totals.items()), with_people)).encode()).hexdigest()[:16]
    return InboxState(
        waiting=[
            {
                "id": pk,
                "customer": f"{_customer_label(signed_in, email)}, conversation {pk}",
                "since": since.isoformat(),
            }
            for pk, since, signed_in, email in waiting
        ],
        version=version,
        mine=mine,
        given=[pk for pk in mine if pk in last_change and last_change[pk].assigned_by_id != user.pk],
    )


# What each tool did, in a line staff read at a glance ({order}: the order or return it was about).
_TOOL_SUMMARIES = {
    "lookup_order": "Looked up {order}",
    "check_return_eligibility": "Checked whether {order} can be returned",
    "initiate_return": "Started a return for {order}",
    "check_cancellation": "Checked whether {order} can be cancelled",
    "cancel_order": "Cancelled {order}",
    "check_address_change": "Checked a new address for {order}",
    "change_shipping_address": "Changed the address of {order}",
    "report_delivery_problem": "Reported a delivery problem with {order}",
    "list_recent_orders": "Listed the signed-in customer's recent orders",
    "lookup_policy": "Looked up the FAQ on \u201c{topic}\u201d",
    HANDOFF_TOOL: "Asked for a person",
}


# How much of what a model sent staff read: enough to recognise it, never a page of it.
SHOWN_NAME_CHARS = 80
SHOWN_VALUE_CHARS = 80
SHOWN_JSON_CHARS = 4_000


def _shortened(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}\u2026 ({len(text) - limit:,} more characters)"


def tool_name_shown(name) -> str:
    """A tool name from a stored tool call as staff read it: ours as it is; anything else a model sent
    (a name we have no tool for, null, a number, an object) said to be unknown, cut short. Only ever
    text for autoescaping, never a format string."""
    if isinstance(name, str) and name in _TOOL_SUMMARIES:
        return name
    if isinstance(name, str):
        return f"an unknown tool (name \u201c{_shortened(name, SHOWN_NAME_CHARS)}\u201d)"
    if name is None:
        return "an unknown tool (no name)"
    return f"an unknown tool (a name that is not text: {type(name).__name__})"


def _value_shown(value, fallback: str) -> str:
    """An argument as a summary line shows it: text cut short; anything else as JSON, cut short."""
    if value is None or value == "":
        return fallback
    text = value if isinstance(value, str) else _pretty(value)
    return _shortened(text, SHOWN_VALUE_CHARS)


def _tool_summary(name, arguments, result, is_error: bool) -> str:
    arguments = arguments if isinstance(arguments, dict) else {}
    if isinstance(name, str) and name in _TOOL_SUMMARIES:
        order = _value_shown(arguments.get("order_id") or arguments.get("rma_number"), "an order")
        topic = _value_shown(arguments.get("topic"), "a topic")
        # The template is ours; the model's values are only substituted into it, never read as one.
        line = _TOOL_SUMMARIES[name].format(order=order, topic=topic)
    else:
        line = "Called " + tool_name_shown(name)
    if result is None:
        return f"{line}: no result stored"
    if is_error:
        code = result.get("error") if isinstance(result, dict) else None
        return f"{line}: refused ({_value_shown(code, '')})" if code else f"{line}: refused"
    return line


def conversation_staff_transcript(*, conversation: Conversation) -> list[dict]:
    """What happened in the conversation, oldest first, as entries of one `kind` each, each with `at`:
    "customer" (their words; `set_aside` if the model API refused them), "assistant" (the reply the
    customer read; `violations` when it is the fallback that replaced a rejected reply), "staff" (text,
    name), "note" (text, name: between colleagues), "assignment" (to, by: who had it from then) and, after
    each turn the assistant ran, "turn": `tools` (each {"summary", "input", "result", "is_error"}, raw
    JSON in input and result), `trace` (the turn's TurnTrace, if traced), `model_calls`."""
    entries: list[dict] = []
    traces = {trace.turn: trace for trace in TurnTrace.objects.filter(conversation=conversation)}
    calls: dict[int, list[ModelCall]] = {}
    for call in ModelCall.objects.filter(conversation=conversation).order_by("id"):
        calls.setdefault(call.turn, []).append(call)
    messages = (
        ConversationMessage.objects.filter(conversation=conversation)
        .select_related("author")
        .order_by("position")
    )
    turn: dict | None = None  # the turn being read: its number, its tool calls by id, its last time

    def close_turn():
        if turn is not None and (turn["tools"] or turn["number"] in traces):
            trace = traces.pop(turn["number"], None)
            entries.append(
                {
                    "kind": "turn",
                    "turn": turn["number"],
                    "at": turn["at"],
                    "trace": trace,
                    "tools": list(turn["tools"].values()),
                    "model_calls": calls.get(turn["number"], []),
                    "tool_calls": [
                        {**call, "arguments": _pretty(call["arguments"])} for call in trace.tool_calls
                    ]
                    if trace
                    else [],
                }
            )

    for message in messages:
        base = {"turn": message.turn, "at": message.created_at}
        if message.role != MessageRole.STAFF:
            if turn is None or turn["number"] != message.turn:
                close_turn()
                turn = {"number": message.turn, "tools": {}, "at": message.created_at}
            turn["at"] = message.created_at
        if message.role == MessageRole.STAFF:
            # Not part of the assistant's turn: its tool calls and trace are shown before it.
            close_turn()
            turn = None
            name = staff_name(message.author) if message.author else "a former member of staff"
            entries.append({**base, "kind": "staff", "text": message.visible_text, "name": name})
            continue
        assert turn is not None  # set above for any message but staff's
        for block in message.content:
            kind = block.get("type")
            if kind == "tool_use":
                turn["tools"][_call_key(block.get("id"), len(turn["tools"]))] = {
                    "name": block.get("name"),
                    "shown_name": tool_name_shown(block.get("name")),
                    "arguments": block.get("input"),
                    "input": _shortened(_pretty(block.get("input")), SHOWN_JSON_CHARS),
                    "result": None,
                    "is_error": False,
                }
            elif kind == "tool_result":
                tool = turn["tools"].get(_call_key(block.get("tool_use_id"), None))
                if tool is not None:
                    tool["result"] = _parsed(block.get("content"))
                    tool["is_error"] = bool(block.get("is_error"))
            elif kind == "text" and message.role == MessageRole.USER:
                text = block.get("text", "")
                # The customer's words: never tag-like (the turn neutralises that), so only our reminder
                # is left out.
                if text and not is_reminder(text):
                    entries.append({**base, "kind": "customer", "text": text, "set_aside": message.set_aside})
        if message.role == MessageRole.ASSISTANT and message.visible_text:
            entries.append(
                {
                    **base,
                    "kind": "assistant",
                    "text": message.visible_text,
                    "violations": list(message.violations),
                }
            )
            # The reply ends the turn: what the customer writes next while waiting for a person (stored
            # with the same turn number) comes after the turn's tools and trace.
            close_turn()
            turn = None
    close_turn()
    for entry in entries:
        for tool in entry.get("tools", ()):
            tool["summary"] = _tool_summary(
                tool["name"], tool.pop("arguments"), tool["result"], tool["is_error"]
            )
            # Results are our tools' own words, built from codes and the store's data: shown whole.
            tool["result"] = "" if tool["result"] is None else _pretty(tool["result"])
    return list(heapq.merge(entries, _desk_entries(conversation), key=lambda entry: entry["at"]))


def _desk_entries(conversation: Conversation) -> list[dict]:
    """Notes and changes of who has the conversation, oldest first."""
    notes = [
        {
            "kind": "note",
            "at": note.created_at,
            "text": note.text,
            "name": staff_name(note.author) if note.author else "a former member of staff",
        }
        for note in ConversationNote.objects.filter(conversation=conversation).select_related("author")
    ]
    assignments = [
        {
            "kind": "assignment",
            "at": change.at,
            "to": staff_name(change.assigned_to) if change.assigned_to else "",
            "by": staff_name(change.assigned_by) if change.assigned_by else "",
        }
        for change in ConversationAssignment.objects.filter(conversation=conversation).select_related(
            "assigned_to", "assigned_by"
        )
    ]
    return sorted(notes + assignments, key=lambda entry: entry["at"])


def _call_key(call_id, otherwise):
    """A tool call's id as a key: the model's id if it is text (anything else cannot key a dict)."""
    return call_id if isinstance(call_id, str) else otherwise


def _parsed(content):
    if isinstance(content, str):
        try:
            return json.loads(content)
        except ValueError:
            return content
    return content


def _pretty(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)


class TraceWords(TypedDict):
    """What trace_review_annotate adds to a trace (None when the turn kept no such words)."""

    asked: str | None
    reply: str | None


if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    ReviewedTrace = WithAnnotations[TurnTrace, TraceWords]


def trace_review_annotate(*, traces: QuerySet[TurnTrace]) -> "QuerySet[ReviewedTrace]":
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


def saved_replies_for_conversation(*, conversation: Conversation, user) -> list[dict]:
    """The saved replies `user` may use (their own, then the shared ones), each as {"id", "title",
    "shared", "text" (its placeholders filled for this conversation), "missing" (names with no value
    here, left in the text)}."""
    values = conversation_placeholder_values(conversation=conversation, user=user)
    replies = SavedReply.objects.filter(Q(owner=user) | Q(owner__isnull=True)).order_by(
        F("owner").asc(nulls_last=True), "title"
    )
    found = []
    for reply in replies:
        text, missing = placeholders_fill(text=reply.text, values=values)
        found.append(
            {
                "id": reply.pk,
                "title": reply.title,
                "shared": reply.owner_id is None,
                "text": text,
                "missing": missing,
            }
        )
    return found
