"""What one turn did, as recorded for staff (stored with the conversation) and counted for operators.

A turn record holds codes, counts, times and the shape of tool arguments: never
the customer's free text or an email address, so that it can be kept, listed
and exported without becoming a second copy of the conversation.
"""

import re
from dataclasses import dataclass

from django.db import models

from orders.models import ORDER_NUMBER_PATTERN
from policies.models import TOPIC_KEY_PATTERN


class TurnOutcome(models.TextChoices):
    ANSWERED = "answered", "Answered"
    REFUSED = "refused", "Refused (out of scope)"
    FALLBACK = "fallback", "Fallback (reply rejected)"  # the validator replaced the model's reply
    STUCK = "stuck", "Stuck"  # the call limit, or a reply too long to show
    HANDED_OFF = "handed_off", "Handed to a person"
    ERROR = "error", "Model failed"  # the customer is asked to try again


class ModelCallResult(models.TextChoices):
    OK = "ok", "OK"
    UNAVAILABLE = "unavailable", "Unavailable"  # rate-limited, overloaded, unreachable, timed out: try later
    FAILED = "failed", "Failed"  # refused for its content, or our credentials or a bug


class ReplySource(models.TextChoices):
    """Whose words the customer read at the end of a turn."""

    MODEL = "model", "The model's reply"
    FALLBACK = "fallback", "The fallback (the model's reply was rejected)"
    # A return was made, then the model failed, its reply was rejected or cut short, or the calls ran out.
    RECEIPT = "receipt", "The return's receipt in fixed words"
    FIXED = "fixed", "Fixed words (a handover, or the assistant got stuck)"
    NONE = "", "Nothing (the turn failed)"


@dataclass(frozen=True)
class ToolCallRecord:
    tool: str
    arguments: dict  # their shape: see arguments_shape
    result: str  # "ok" or the tool's error code
    ms: int


@dataclass(frozen=True)
class TurnRecord:
    outcome: TurnOutcome
    reply_source: ReplySource
    total_ms: int  # from the customer's message to the reply, the model included
    model_ms: int  # waiting for the model
    violations: tuple[str, ...] = ()  # the validator's codes, when it rejected the reply
    tool_calls: tuple[ToolCallRecord, ...] = ()
    handoff_reason: str = ""
    error: str = ""  # a ModelCallResult, when the model failed the turn

    @property
    def server_ms(self) -> int:
        return max(0, self.total_ms - self.model_ms)


# The arguments that hold codes (an order number, a FAQ topic key): kept when they look like one.
_CODES = {"order_id": re.compile(ORDER_NUMBER_PATTERN), "topic": re.compile(TOPIC_KEY_PATTERN)}
_NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_MAX_ITEMS = 20


def arguments_shape(value, name: str = ""):
    """Tool arguments as a trace keeps them: an order number or topic key as given (codes, not words),
    an email as "<email>", any other text as "<text, N chars>", numbers and booleans as they are, lists
    and objects item by item. A model can put anything anywhere, so names that are not plain
    identifiers are hidden too."""
    if isinstance(value, dict):
        shape = {}
        for key, item in list(value.items())[:_MAX_ITEMS]:
            key = key if isinstance(key, str) and _NAME_RE.match(key) else "<name>"
            shape[key] = arguments_shape(item, key)
        return shape
    if isinstance(value, list):
        return [arguments_shape(item) for item in value[:_MAX_ITEMS]]
    if isinstance(value, str):
        if name in _CODES and _CODES[name].match(value):
            return value
        return "<email>" if "@" in value else f"<text, {len(value)} chars>"
    if value is None or isinstance(value, bool | int | float):
        return value
    return f"<{type(value).__name__}>"
