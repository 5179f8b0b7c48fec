"""What the built-in model reads from a request: the customer's words, its state, tool calls."""

import json
from dataclasses import dataclass, field

from orders.numbers import ORDER_NUMBERS
from support.assistant.check_codes import CODE_RE
from support.assistant.understanding.customer_words import plain
from support.assistant.understanding.wording import (
    ASKS_FOR_DETAILS,
    Waiting,
)
from support.llm.consent import YES_RE
from support.llm.protocol import (
    FaqTopic,
    faq_topics_in,
    is_reminder,
    is_staff_message,
    signed_in_email_in,
)


@dataclass(frozen=True)
class Intent:
    kind: str  # person, status, return, policy, info, order_unclear, no_number, offtopic, help, ...
    topic: str = ""


@dataclass(frozen=True)
class ToolCall:
    name: str
    input: dict


@dataclass
class History:
    """What a model reads from the messages: customer words, its own last question, tool calls."""

    units: list[str] = field(default_factory=list)  # one entry per customer message, oldest first
    # Per message: whether it answers the model's question for an order number or email.
    answering: list[bool] = field(default_factory=list)
    # By message: the order number the customer said yes to ("Is 1050 your order number?" "yes").
    confirmed: dict[int, str] = field(default_factory=dict)
    # The messages answering "please type the code" with one (support/assistant/check_codes.py): its
    # digits are a code, never an order number.
    codes: set[int] = field(default_factory=set)
    # What the model's last reply waits for, as it recorded it (None after anyone else's words).
    waiting: Waiting | None = None
    calls: list[tuple[dict, dict]] = field(default_factory=list)  # (tool_use block, parsed result)
    new_calls: list[tuple[dict, dict]] = field(default_factory=list)  # results in the last message
    tool_use_count: int = 0
    topics: list[FaqTopic] = field(default_factory=list)  # the FAQ topics the system prompt lists
    signed_in: str = ""  # the email the store signed the customer in with, as the reminder says


# --- reading the history -------------------------------------------------------------------------


def _result_of(block: dict) -> dict:
    content = block.get("content", "")
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    try:
        result = json.loads(content)
    except (TypeError, ValueError):
        result = {}
    return result if isinstance(result, dict) else {}


def _waiting_in(state) -> Waiting | None:
    """What a stored state says the model waits for; None for anything else (a state is data we wrote,
    but a history is input all the same)."""
    waiting = state.get("waiting_for") if isinstance(state, dict) else None
    return Waiting(waiting) if isinstance(waiting, str) and waiting in Waiting.__members__.values() else None


def read_history(system: list[dict], messages: list[dict]) -> History:
    history = History(topics=faq_topics_in("".join(block.get("text", "") for block in system)))
    tool_uses: dict[str, dict] = {}
    for position, message in enumerate(messages):
        blocks = message.get("content") or []
        if isinstance(blocks, str):
            blocks = [{"type": "text", "text": blocks}]
        last = position == len(messages) - 1
        if message.get("role") == "assistant":
            history.waiting = _waiting_in(message.get("state"))
            for block in blocks:
                if block.get("type") == "tool_use":
                    tool_uses[block.get("id", "")] = block
                    history.tool_use_count += 1
            continue
        for block in blocks:
            if block.get("type") == "text" and is_reminder(block.get("text", "")):
                history.signed_in = signed_in_email_in(block["text"]) or history.signed_in
        # The per-turn reminder (rules for the model) and staff replies are not the customer's words.
        texts = [
            block.get("text", "").strip()
            for block in blocks
            if block.get("type") == "text"
            and not is_reminder(block.get("text", ""))
            and not is_staff_message(block.get("text", ""))
        ]
        if any(text for text in texts):
            unit = "\n".join(text for text in texts if text)
            asked = history.units[-1] if history.units else ""
            yes = history.waiting == Waiting.CONFIRM_ORDER_NUMBER and YES_RE.match(plain(unit))
            if yes and (maybe := ORDER_NUMBERS.unsure(asked)):
                history.confirmed[len(history.units)] = maybe[1]
            if history.waiting == Waiting.CODE and CODE_RE.search(unit):
                history.codes.add(len(history.units))
            history.units.append(unit)
            history.answering.append(history.waiting in ASKS_FOR_DETAILS)
        for block in blocks:
            if block.get("type") == "tool_result" and block.get("tool_use_id") in tool_uses:
                call = (tool_uses[block["tool_use_id"]], _result_of(block))
                history.calls.append(call)
                if last:
                    history.new_calls.append(call)
    return history
