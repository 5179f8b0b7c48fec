"""What support staff read: a conversation as it happened, tool calls and the validator included."""

import json

from django.db.models import OuterRef, QuerySet, Subquery

from support.conversations.models import Conversation, ConversationMessage, MessageRole, ModelCall, TurnTrace
from support.conversations.selectors import staff_name
from support.llm.protocol import is_reminder


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
