"""What a model is sent, built from what a conversation stores: the history as a Messages API request
(the built-in model's state only for a model that keeps one), the cache breakpoint, and the tool
results and text of stored blocks."""

import re

from support.assistant.claims import ToolResult
from support.conversations.models import MessageRole

CACHE_POINT = {"type": "ephemeral"}


def history_for_request(stored: list[dict]) -> list[dict]:
    """Stored messages as a Messages API history: adjacent same-role messages merged.

    A turn that failed leaves the customer's message without a reply; merging
    keeps the roles alternating, and the model sees both of their messages.
    """
    merged: list[dict] = []
    for message in stored:
        role = message["role"]
        if role == MessageRole.STAFF:
            # Staff answered for our side: an assistant turn, its text tagged as theirs, so that what
            # they answered is not asked again. A request starts with the customer's side, so staff
            # words that open the conversation (before the customer wrote) stay there.
            role = MessageRole.ASSISTANT if merged else MessageRole.USER
        if merged and merged[-1]["role"] == role:
            merged[-1] = {"role": role, "content": merged[-1]["content"] + message["content"]}
        else:
            merged.append({"role": role, "content": list(message["content"])})
        # The state of the words said last on our side (none when staff spoke after the model).
        if role == MessageRole.ASSISTANT and message.get("model_state"):
            merged[-1]["state"] = message["model_state"]
    return merged


def tool_results_of(calls: list[dict], blocks: list[dict]) -> list[ToolResult]:
    """The tool results among `blocks`, each with the name of the tool whose call (in `calls`) it answers."""
    by_id = {call["id"]: call for call in calls if call.get("type") == "tool_use"}
    return [
        ToolResult(
            tool=by_id.get(block["tool_use_id"], {}).get("name", ""),
            content=block["content"],
            arguments=_arguments_of(by_id.get(block["tool_use_id"], {})),
        )
        for block in blocks
        if block.get("type") == "tool_result"
    ]


def _arguments_of(call: dict) -> dict:
    """A stored call's arguments (a model may have sent something other than an object)."""
    arguments = call.get("input")
    return arguments if isinstance(arguments, dict) else {}


def with_cache_point(messages: list[dict], *, keeps_state: bool = False) -> list[dict]:
    """A copy of the messages with a cache breakpoint on the last block (never stored); the built-in
    model's state only for a model that keeps one (a provider would refuse the unknown field)."""
    request = [
        message if keeps_state else {"role": message["role"], "content": message["content"]}
        for message in messages
    ]
    last = request[-1]
    blocks = [dict(block) for block in last["content"]]
    blocks[-1]["cache_control"] = CACHE_POINT
    request[-1] = {"role": last["role"], "content": blocks}
    return request


_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def whole_sentences(text: str) -> str:
    """Text cut after its last complete sentence (for replies stopped by max_tokens)."""
    ends = list(_SENTENCE_END.finditer(text))
    return text[: ends[-1].end()].strip() if ends else ""


def text_of(blocks: list[dict]) -> str:
    return "\n\n".join(
        block["text"].strip() for block in blocks if block["type"] == "text" and block["text"].strip()
    )
