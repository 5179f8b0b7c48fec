"""A customer's message as the built-in model's rules read it, read once for every trigger (the
capabilities' and the built-in model's own: support/assistant/builtin/intents.py)."""

import functools
import re

from support.assistant.understanding.customer_words import email_in, order_id_in, plain
from support.assistant.understanding.vocabulary import (
    CHANGE_ORDER_RE,
    MY_ORDER_RE,
    REFERS_BACK_RE,
    RETURN_RE,
    RETURN_STATUS_RE,
    STATUS_RE,
)
from support.llm.protocol import FaqTopic


class Message:
    """One customer message: as typed (`raw`), in plain lower case (`text`), the order number and email in
    it, whether it is about the customer's own order (`personal`), and the store's FAQ topics."""

    def __init__(self, raw: str, *, has_prior_order: bool, topics: list[FaqTopic]):
        self.raw = raw
        self.text = plain(raw)
        self.has_prior_order = has_prior_order
        self.topics = topics
        self.order_id = order_id_in(raw)
        self.email = email_in(raw)
        self.personal = bool(
            self.order_id
            or MY_ORDER_RE.search(self.text)
            or (has_prior_order and REFERS_BACK_RE.search(self.text))
        )

    @functools.cached_property
    def change(self) -> re.Match | None:
        """Where it asks to change the order's items or details, if it does."""
        return CHANGE_ORDER_RE.search(self.text)

    @functools.cached_property
    def task(self) -> re.Match | None:
        """Where it asks about a return or an order's status, if it does."""
        text = self.text
        return RETURN_STATUS_RE.search(text) or RETURN_RE.search(text) or STATUS_RE.search(text)

    def asks_a_task_before(self, at: int) -> bool:
        """Whether a return or an order's status is asked before position `at` (several requests in one
        message: the first is answered)."""
        return bool(self.task and self.task.start() < at)
