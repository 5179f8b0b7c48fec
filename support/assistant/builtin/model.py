"""The built-in model: rule-based answers in the Messages API's shapes, for running Bookly without a
provider.
"""

import json
import math
from collections.abc import Callable

from support.assistant.builtin.flow import (
    respond,
    task_start,
)
from support.assistant.builtin.history import (
    History,
    ToolCall,
    read_history,
)
from support.assistant.builtin.intents import (
    classifier_trained,
    intents_of,
)
from support.assistant.builtin.reading import (
    named_titles,
    plain,
)
from support.assistant.builtin.replies import (
    CHANGE_REPLIES,
    eligibility_reply,
    error_reply,
    order_reply,
    recent_orders_reply,
    return_started_reply,
    returnable_titles,
    which_item_reply,
)
from support.assistant.builtin.vocabulary import (
    ONE_OF_RE,
)
from support.assistant.builtin.wording import (
    ASKED,
    GENERIC_ERROR_REPLY,
    Waiting,
)
from support.assistant.capabilities.registry import ORDER_TASKS
from support.llm.protocol import (
    HANDOFF_TOOL,
    FaqTopic,
    policy_quote,
)
from support.llm.types import ModelReply


def _reply_to_result(history: History, tool_use: dict, result: dict) -> str:
    name = tool_use.get("name")
    if "error" in result or not result:
        return error_reply(result)
    if task := next((task for task in ORDER_TASKS.values() if task.tool == name), None):
        return task.reply(result)
    if name == "lookup_order":
        return order_reply(result)
    if name == "check_return_eligibility":
        intents = intents_of(history.units, history.topics, history.answering)
        start = task_start(intents) or 0
        returnable = returnable_titles(result)
        chosen = named_titles(history.units[start:], returnable)
        asked_for_one = any(ONE_OF_RE.search(plain(unit)) for unit in history.units[start:])
        if result.get("eligible") and not chosen and len(returnable) > 1 and asked_for_one:
            return which_item_reply(result, returnable)
        return eligibility_reply(result, chosen)
    if name == "initiate_return":
        return return_started_reply(result)
    if name in CHANGE_REPLIES:
        return CHANGE_REPLIES[name](result)
    if name == "lookup_policy":
        return policy_quote(title=result.get("title", ""), text=result.get("text", ""))
    if name == "list_recent_orders":
        return recent_orders_reply(result)
    if name in (HANDOFF_TOOL, "report_delivery_problem"):
        return result.get("tell_the_customer") or GENERIC_ERROR_REPLY
    return GENERIC_ERROR_REPLY


# --- the model -----------------------------------------------------------------------------------


def _tokens(payload) -> int:
    return math.ceil(len(json.dumps(payload, ensure_ascii=False, default=str)) / 4)


class OfflineModel:
    """Rule-based answers in the Messages API's shapes, for running Bookly without an API key."""

    offline = True
    keeps_state = True
    provider = "built-in offline model"
    name = "bookly-offline"

    def __init__(self, *, faq: Callable[[], list[FaqTopic]] | None = None) -> None:
        """`faq` gives the published FAQ topics with all staff wrote for them (every example question,
        the answer); without it, the model reads the topics as the system prompt lists them."""
        classifier_trained()  # trained once per process, so that no customer waits for it
        self._faq = faq

    def create(
        self, *, system: list[dict], tools: list[dict], messages: list[dict], deadline: float
    ) -> ModelReply:
        history = read_history(system, messages)
        if self._faq is not None and history.topics:
            # The topics the prompt lists (the ones published when it was rendered), as staff wrote them.
            written = {topic.key: topic for topic in self._faq()}
            history.topics = [written.get(topic.key, topic) for topic in history.topics]
        asked: list[Waiting] = []
        recording = ASKED.set(asked)
        try:
            if history.new_calls:
                text = " ".join(_reply_to_result(history, use, result) for use, result in history.new_calls)
                step: str | ToolCall = text
            else:
                step = respond(history)
        finally:
            ASKED.reset(recording)
        state = None
        if isinstance(step, ToolCall):
            # Unique within the conversation: stored tool calls only ever accumulate.
            tool_id = f"toolu_offline_{history.tool_use_count + 1:04d}"
            content = [{"type": "tool_use", "id": tool_id, "name": step.name, "input": step.input}]
            stop_reason = "tool_use"
        else:
            content = [{"type": "text", "text": step}]
            stop_reason = "end_turn"
            state = {"waiting_for": asked[-1].value if asked else None}
        return ModelReply(
            content=content,
            stop_reason=stop_reason,
            model=self.name,
            offline=True,
            request_id="",
            usage={
                "input_tokens": _tokens({"system": system, "tools": tools, "messages": messages}),
                "output_tokens": _tokens(content),
                "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0,
            },
            duration_ms=0,
            state=state,
        )
