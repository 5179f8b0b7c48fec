"""The built-in model: rule-based answers in the Messages API's shapes, for running Bookly without a
provider.
"""

import json
import math
from collections.abc import Callable

from support.assistant.builtin.faq import faq_reader_warm
from support.assistant.builtin.flow import (
    reading_of,
    respond,
)
from support.assistant.builtin.intents import (
    classifier_trained,
)
from support.assistant.builtin.replies import (
    reply_to_result,
)
from support.assistant.understanding.history import (
    ToolCall,
    read_history,
)
from support.assistant.understanding.step import Step
from support.assistant.understanding.wording import (
    Asked,
    said,
    words_of,
)
from support.llm.protocol import FaqTopic
from support.llm.types import ModelReply

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
        if faq is not None:
            faq_reader_warm()  # and the FAQ reader's background, read once per process
        self._faq = faq

    def create(
        self, *, system: list[dict], tools: list[dict], messages: list[dict], deadline: float
    ) -> ModelReply:
        history = read_history(system, messages)
        if self._faq is not None and history.topics:
            # The topics the prompt lists (the ones published when it was rendered), as staff wrote them.
            written = {topic.key: topic for topic in self._faq()}
            history.topics = [written.get(topic.key, topic) for topic in history.topics]
        reading = reading_of(history)
        step: Step
        if history.new_calls:
            step = said(*(reply_to_result(reading, use, result) for use, result in history.new_calls))
        else:
            step = respond(reading)
        state = None
        if isinstance(step, ToolCall):
            # Unique within the conversation: stored tool calls only ever accumulate.
            tool_id = f"toolu_offline_{history.tool_use_count + 1:04d}"
            content = [{"type": "tool_use", "id": tool_id, "name": step.name, "input": step.input}]
            stop_reason = "tool_use"
        else:
            content = [{"type": "text", "text": words_of(step)}]
            stop_reason = "end_turn"
            # What the step's words wait for, returned with them (the last question of a reply that asks).
            state = {"waiting_for": step.waiting.value if isinstance(step, Asked) else None}
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
