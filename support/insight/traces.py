"""What one turn did, as recorded for staff (stored with the conversation) and counted for operators.

A turn record holds codes, counts, times and the shape of tool arguments: never
the customer's free text or an email address, so that it can be kept, listed
and exported without becoming a second copy of the conversation.
"""

import re
from dataclasses import dataclass

from django.db import models

from orders.numbers import ORDER_NUMBERS
from policies.models import TOPIC_KEY_PATTERN


class TurnOutcome(models.TextChoices):
    ANSWERED = "answered", "Answered"
    REFUSED = "refused", "Refused (out of scope)"
    NO_POLICY = "no_policy", "No policy on it"  # a store question no FAQ topic answers
    FALLBACK = "fallback", "Fallback (reply rejected)"  # the validator replaced the model's reply
    STUCK = "stuck", "Stuck"  # the call limit, or a reply too long to show
    HANDED_OFF = "handed_off", "Handed to a person"
    # The model failed, or the turn could not be stored (another turn took over, a bug): the customer is
    # asked to try again.
    ERROR = "error", "Failed"


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
    # The question needed only the FAQ: its answer, word for word, without a second model call.
    FAQ = "faq", "The FAQ's answer, quoted by the assistant"
    NONE = "", "Nothing (the turn failed)"


# Replies that are the assistant's own answer, which a customer may vote on: not a fixed notice (a
# handover, stuck, the fallback), nor a turn that failed.
VOTABLE_SOURCES = frozenset({ReplySource.MODEL, ReplySource.RECEIPT, ReplySource.FAQ})


def votable_traces(traces):
    """The turns whose reply the customer may vote on, of a TurnTrace queryset."""
    return traces.filter(reply_source__in=VOTABLE_SOURCES).exclude(
        outcome__in=[TurnOutcome.ERROR, TurnOutcome.HANDED_OFF]
    )


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
    # The customer was left with nowhere to go: refused, or told there is no policy, without a person
    # offered; or the assistant failed them (its fallback, or stuck).
    dead_end: bool = False
    tool_calls: tuple[ToolCallRecord, ...] = ()
    handoff_reason: str = ""
    error: str = ""  # when the turn failed: what failed it (the exception's class, e.g. ModelUnavailable)

    @property
    def server_ms(self) -> int:
        return max(0, self.total_ms - self.model_ms)


# The arguments that hold codes (an order number, a FAQ topic key): kept when they look like one.
_CODES = {"order_id": lambda: ORDER_NUMBERS.exact, "topic": lambda: _TOPIC_KEY_RE}
_TOPIC_KEY_RE: re.Pattern[str] = re.compile(TOPIC_KEY_PATTERN)
_MAX_ITEMS = 20


def arguments_shape(*, arguments, names: frozenset[str], name: str = ""):
    """Tool arguments as a trace keeps them: an order number or topic key as given (codes, not words),
    an email as "<email>", any other text as "<text, N chars>", a number as "<number>", booleans and
    null as they are, lists and objects item by item. A model can put anything anywhere, so argument
    names outside `names` (the tools' own) are hidden too."""
    if isinstance(arguments, dict):
        shape = {}
        for key, item in list(arguments.items())[:_MAX_ITEMS]:
            key = key if key in names else "<name>"
            shape[key] = arguments_shape(arguments=item, names=names, name=key)
        return shape
    if isinstance(arguments, list):
        return [arguments_shape(arguments=item, names=names) for item in arguments[:_MAX_ITEMS]]
    if isinstance(arguments, str):
        if name in _CODES and _CODES[name]().fullmatch(arguments):
            return arguments
        return "<email>" if "@" in arguments else f"<text, {len(arguments)} chars>"
    if arguments is None or isinstance(arguments, bool):
        return arguments
    return "<number>" if isinstance(arguments, int | float) else f"<{type(arguments).__name__}>"
