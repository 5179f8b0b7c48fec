"""What a capability's built-in steps are given: the conversation as the built-in model reads it, and,
for a task on one order, the order's number and email found for it."""

import functools
from collections.abc import Callable, Collection
from dataclasses import dataclass

from support.assistant.understanding.history import History, Intent, ToolCall
from support.assistant.understanding.wording import Said

# A step of the built-in model: a reply in words (an Asked when it asks a question: what the model then
# waits for is returned with its words, never recorded aside), or a tool call.
Step = Said | ToolCall


class Reading:
    """The conversation as the built-in model reads it: the history, what each customer message asks
    for (read when first needed: a reply to a tool result mostly needs none), and the message that
    began the order task under way."""

    def __init__(self, history: History, *, read: Callable[[History], list[Intent]], tasks: Collection[str]):
        self.history = history
        self.tasks = tasks  # the kinds of task on one order, every capability's
        self._read = read

    @property
    def units(self) -> list[str]:
        return self.history.units

    @functools.cached_property
    def intents(self) -> list[Intent]:
        return self._read(self.history)

    @functools.cached_property
    def start(self) -> int | None:
        """Index of the customer message that started the current order task: the latest explicit one."""
        for index in range(len(self.intents) - 1, -1, -1):
            if self.intents[index].kind in self.tasks:
                return index
        return None


@dataclass(frozen=True)
class TaskAt:
    """A task on one order as its step sees it: begun at message `start`, with the order number and
    email found for it (None while not given)."""

    reading: Reading
    start: int
    order_id: str | None
    email: str | None

    @property
    def arguments(self) -> dict[str, str | None]:
        return {"order_id": self.order_id, "customer_email": self.email}
