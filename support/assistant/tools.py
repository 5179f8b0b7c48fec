"""The assistant's tools: Anthropic tool schemas and their handlers.

Handlers are thin: they validate arguments in code, call the orders and
policies services, and turn the outcome into a JSON tool result. Privacy and
protocol rules are enforced here, whatever the model was told:
- no order detail, not even its status, without the email on the order;
- no return without an eligibility check that passed for that order earlier
  in the same conversation;
- no cancellation or new address without its check passing for that order in
  an earlier turn (so the customer has read it) and the customer's words in
  this turn agreeing to it; a new address is the one the check read back.
Nothing raises to the customer: every failure is a tool result the model can
recover from, built from field names and codes, never from the raw input.
"""

import json
import re
import unicodedata
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from orders.addresses import (
    ADDRESS_FIELDS,
    AddressInvalid,
    ShippingAddress,
    shipping_address_clean,
    shipping_address_of,
)
from orders.emails import DELIVERY_CASE_NEXT_STEPS
from orders.models import (
    EMAIL_MENTION_RE,
    ITEM_PROBLEMS,
    RMA_NUMBER_MENTION_RE,
    RMA_NUMBER_PATTERN,
    DeliveryProblem,
    Order,
    OrderChangeKind,
    OrderItem,
    OrderStatus,
    ReturnRecord,
)
from orders.numbers import MAX_LENGTH as ORDER_NUMBER_MAX_LENGTH
from orders.numbers import ORDER_NUMBERS
from orders.selectors import (
    ChangeCode,
    order_change_check,
    order_get_for_customer,
    order_get_for_customer_by_rma,
    order_list_for_customer,
    order_return_eligibility,
)
from orders.services import (
    ADDRESS_UNCHANGED,
    ITEMS_NEEDED,
    RETURN_STATUSES_NEEDING_A_REASON,
    DeliveryCaseRefused,
    OrderChangeNotAllowed,
    ReturnNotAllowed,
    ReturnRefusal,
)
from policies.models import TOPIC_KEY_PATTERN
from policies.selectors import policy_entry_get_published, policy_entry_list_published
from store.clock import store_today
from support.assistant.budget import CheckScope, identity_check_failed, identity_checks_spent
from support.conversations.models import Conversation
from support.conversations.selectors import conversation_return_get_open, staff_available_now
from support.conversations.services import (
    conversation_delivery_case_open,
    conversation_order_address_change,
    conversation_order_cancel,
    conversation_return_create,
)
from support.conversations.waiting import waiting_notice
from support.llm.consent import reads_as_yes
from support.llm.protocol import HANDOFF_TOOL, HandoffAsk, ToolError, policy_quote

RMA_RE = re.compile(RMA_NUMBER_PATTERN)
EMAIL_RE = re.compile(r"^[^@\s]{1,64}@[^@\s]+\.[^@\s]{2,}$")
TOPIC_RE = re.compile(TOPIC_KEY_PATTERN)

MAX_EMAIL_LENGTH = 254
MAX_REASON_LENGTH = 500
MAX_TITLE_LENGTH = 300
MAX_ITEM_TITLES = 20
MAX_SUMMARY_LENGTH = 300

_ORDER_ID_SCHEMA = {
    "type": "string",
    "description": f"As the customer gave it, like {ORDER_NUMBERS.example}.",
    "pattern": ORDER_NUMBERS.json_schema_pattern,
}
_EMAIL_SCHEMA = {"type": "string", "description": "The email the customer gave for the order."}
_ORDER_AND_EMAIL_SCHEMA = {
    "type": "object",
    "properties": {"order_id": _ORDER_ID_SCHEMA, "customer_email": _EMAIL_SCHEMA},
    "required": ["order_id", "customer_email"],
    "additionalProperties": False,
}

_ADDRESS_SCHEMA = {
    "type": "object",
    "description": "As the customer gave it; to is the recipient, line2 an apartment or unit.",
    "properties": {name: {"type": "string"} for name in ("to", "line1", "line2", "city", "state", "zip")},
    "required": ["to", "line1", "city", "state", "zip"],
    "additionalProperties": False,
}

TOOLS: list[dict[str, Any]] = [
    {
        "name": "lookup_order",
        "description": (
            "An order's status, dates, tracking, items and returns. Needs the order number (or a return's "
            "rma_number) and the email on the order, from the customer. order_not_found if either is wrong, "
            "never saying which."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "order_id": _ORDER_ID_SCHEMA,
                "rma_number": {"type": "string", "pattern": RMA_NUMBER_PATTERN},
                "customer_email": _EMAIL_SCHEMA,
            },
            "required": ["customer_email"],
            "additionalProperties": False,
        },
    },
    {
        "name": "check_return_eligibility",
        "description": (
            "Whether an order can be returned today, item by item, with the reason and the policy terms. "
            "Must pass before initiate_return for that order."
        ),
        "input_schema": _ORDER_AND_EMAIL_SCHEMA,
    },
    {
        "name": "initiate_return",
        "description": (
            "Start a return; gives its RMA number. Only after check_return_eligibility passed for the "
            "order and the customer said yes to the summary. Without item_titles, all returnable items."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "order_id": _ORDER_ID_SCHEMA,
                "customer_email": _EMAIL_SCHEMA,
                "reason": {
                    "type": "string",
                    "description": "Why, in the customer's words (short).",
                },
                "item_titles": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Exact titles from check_return_eligibility.",
                },
            },
            "required": ["order_id", "customer_email", "reason"],
            "additionalProperties": False,
        },
    },
    {
        "name": "check_cancellation",
        "description": (
            "Whether an order can be cancelled (only until it ships), and if not, why and what instead. "
            "Must pass before cancel_order."
        ),
        "input_schema": _ORDER_AND_EMAIL_SCHEMA,
    },
    {
        "name": "cancel_order",
        "description": (
            "Cancel an order: only after check_cancellation passed and the customer then said yes."
        ),
        "input_schema": _ORDER_AND_EMAIL_SCHEMA,
    },
    {
        "name": "check_address_change",
        "description": (
            "Whether an order can go to a new US address (only until it ships), the address checked. Read "
            "new_address back, ask yes or no. Must pass before change_shipping_address."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "order_id": _ORDER_ID_SCHEMA,
                "customer_email": _EMAIL_SCHEMA,
                "new_address": _ADDRESS_SCHEMA,
            },
            "required": ["order_id", "customer_email", "new_address"],
            "additionalProperties": False,
        },
    },
    {
        "name": "change_shipping_address",
        "description": (
            "Send the order to the address check_address_change read back: only after the customer then "
            "said yes."
        ),
        "input_schema": _ORDER_AND_EMAIL_SCHEMA,
    },
    {
        "name": "report_delivery_problem",
        "description": (
            "A delivery gone wrong (never came, late, a damaged, wrong or missing book) becomes a case for "
            "staff, who take the chat. Then say only tell_the_customer."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "order_id": _ORDER_ID_SCHEMA,
                "customer_email": _EMAIL_SCHEMA,
                "problem": {"type": "string", "enum": list(DeliveryProblem.values)},
                "item_titles": {"type": "array", "items": {"type": "string"}},
                "details": {"type": "string", "description": "In the customer's words."},
            },
            "required": ["order_id", "customer_email", "problem", "details"],
            "additionalProperties": False,
        },
    },
    {
        "name": "list_recent_orders",
        "description": (
            "The signed-in customer's recent orders, newest first: number, status, dates, titles. Only "
            "for a customer the store signed in (their reminder says so); not_signed_in otherwise."
        ),
        "input_schema": {"type": "object", "properties": {}, "additionalProperties": False},
    },
    {
        "name": "lookup_policy",
        "description": (
            "The published FAQ answer for a topic key from faq_topics. The customer reads it word for word "
            "at once: if the message asks for more, call the other tools in the same step."
        ),
        "input_schema": {
            "type": "object",
            "properties": {"topic": {"type": "string", "description": "A topic key, like shipping."}},
            "required": ["topic"],
            "additionalProperties": False,
        },
    },
    {
        "name": HANDOFF_TOOL,
        "description": (
            "Hand the chat to support staff: the customer asks for a person (customer_asked), or needs "
            "what only staff can do, like a complaint (needs_staff). Then say only the "
            "result's tell_the_customer."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "reason": {"type": "string", "enum": [code.value for code in HandoffAsk]},
                "summary": {
                    "type": "string",
                    "description": "For staff, one line: what they need.",
                },
            },
            "required": ["reason", "summary"],
            "additionalProperties": False,
        },
    },
]
TOOL_NAMES = tuple(tool["name"] for tool in TOOLS)
TOOL_ARGUMENT_NAMES = frozenset(name for tool in TOOLS for name in tool["input_schema"]["properties"])
# Tools that change the store: the step that calls one is stored in the same transaction as the change.
WRITE_TOOLS = frozenset(
    {"initiate_return", "cancel_order", "change_shipping_address", "report_delivery_problem"}
)


@dataclass(frozen=True)
class HandoffAsked:
    """The model handed the conversation over: why, a line for staff, and what the customer is told."""

    reason: HandoffAsk
    summary: str
    reply: str


@dataclass
class ToolContext:
    """What a tool may know about the conversation it runs in."""

    conversation: Conversation
    eligibility_verified: set[str] = field(default_factory=set)
    # Orders a tool found with the right email, by primary key, with that email (for staff).
    orders_found: dict[int, str] = field(default_factory=dict)
    # Checks of order changes that passed: {"cancel" | "address": {order number: {"turn": N, ...}}}.
    change_checks: dict[str, dict[str, dict]] = field(default_factory=dict)
    # The turn the tools run in, and what the customer wrote in it: a write needs their yes here.
    turn: int = 0
    customer_said: str = ""
    # Set by hand_off_to_person.
    handoff: "HandoffAsked | None" = None
    # The email the store signed the customer in with, or "": only then are their orders listed.
    signed_in_email: str = ""
    # The client's address as the rate limits see it ("" when there is none): failed checks count by it.
    client_address: str = ""

    def check_scope(self, number: str) -> CheckScope:
        """What a check of this order or RMA number counts against (support/assistant/budget.py)."""
        return CheckScope(
            number=number, conversation_id=self.conversation.pk, client_address=self.client_address
        )

    def checks(self, change: str) -> dict[str, dict]:
        return self.change_checks.setdefault(change, {})


@dataclass(frozen=True)
class ToolOutcome:
    result: dict[str, Any]
    is_error: bool = False
    # A write's outcome in fixed words, for when the model cannot word it (its next call failed):
    # what was done is told, never lost.
    receipt: str | None = None

    def as_block(self, tool_use_id: str) -> dict[str, Any]:
        block = {
            "type": "tool_result",
            "tool_use_id": tool_use_id,
            "content": json.dumps(self.result, ensure_ascii=False),
        }
        if self.is_error:
            block["is_error"] = True
        return block


def _error(code: str, message: str, **extra) -> ToolOutcome:
    return ToolOutcome({"error": code, "message": message, **extra}, is_error=True)


class _InvalidArguments(Exception):
    def __init__(self, problems: list[dict[str, str]]):
        self.problems = problems


def _clean_text(value: str) -> str:
    """Turn line breaks and tabs into spaces, drop other control and format characters, trim."""
    kept = []
    for char in value:
        if char in "\t\n\r":
            kept.append(" ")
        elif unicodedata.category(char) not in ("Cc", "Cf"):
            kept.append(char)
    return "".join(kept).strip()


class _Arguments:
    """Reads and validates one tool call's arguments, collecting every problem by field name."""

    def __init__(self, raw: Any, allowed: set[str]):
        self.problems: list[dict[str, str]] = []
        if not isinstance(raw, dict):
            raise _InvalidArguments([{"field": "(arguments)", "problem": "must be a JSON object"}])
        self.raw = raw
        if set(raw) - allowed:
            # The unknown names are the model's input: name only what is accepted.
            self.problems.append(
                {"field": "(other)", "problem": "only these parameters exist: " + ", ".join(sorted(allowed))}
            )

    def text(self, name: str, *, max_length: int, required: bool = True) -> str | None:
        value = self.raw.get(name)
        if value is None:
            if required:
                self.problems.append({"field": name, "problem": "is required"})
            return None
        if not isinstance(value, str):
            self.problems.append({"field": name, "problem": "must be a string"})
            return None
        value = _clean_text(value)
        if not value:
            self.problems.append({"field": name, "problem": "must not be empty"})
            return None
        if len(value) > max_length:
            self.problems.append({"field": name, "problem": f"must be at most {max_length} characters"})
            return None
        return value

    def matching(
        self, name: str, pattern: re.Pattern, *, max_length: int, shape: str, upper=False, lower=False
    ):
        value = self.text(name, max_length=max_length)
        if value is None:
            return None
        value = value.upper() if upper else value.lower() if lower else value
        if not pattern.fullmatch(value):
            self.problems.append({"field": name, "problem": f"must look like {shape}"})
            return None
        return value

    def order_id(self) -> str | None:
        value = self.text("order_id", max_length=ORDER_NUMBER_MAX_LENGTH + 8)  # room for spaces typed in it
        number = ORDER_NUMBERS.canonical(value) if value is not None else None
        if value is not None and number is None:
            self.problems.append({"field": "order_id", "problem": f"must look like {ORDER_NUMBERS.example}"})
        return number

    def email(self) -> str | None:
        return self.matching(
            "customer_email", EMAIL_RE, max_length=MAX_EMAIL_LENGTH, shape="name@example.com", lower=True
        )

    def one_of(self, name: str, choices: type[StrEnum]):
        value = self.raw.get(name)
        if not isinstance(value, str) or value not in {choice.value for choice in choices}:
            self.problems.append({"field": name, "problem": "must be one of " + ", ".join(choices)})
            return None
        return choices(value)

    def titles(self, name: str) -> list[str] | None:
        value = self.raw.get(name)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(title, str) for title in value):
            self.problems.append({"field": name, "problem": "must be a list of strings"})
            return None
        if len(value) > MAX_ITEM_TITLES:
            self.problems.append({"field": name, "problem": f"must list at most {MAX_ITEM_TITLES} titles"})
            return None
        titles = [_clean_text(title)[:MAX_TITLE_LENGTH] for title in value]
        return [title for title in titles if title] or None

    def address(self, name: str) -> dict[str, object] | None:
        """The address fields as sent (the store checks each one); only the shape is checked here."""
        value = self.raw.get(name)
        if not isinstance(value, dict):
            self.problems.append({"field": name, "problem": "is required, as an object of address fields"})
            return None
        if set(value) - set(ADDRESS_FIELDS):
            self.problems.append(
                {"field": name, "problem": "only these fields exist: " + ", ".join(ADDRESS_FIELDS)}
            )
            return None
        return value

    def done(self) -> None:
        if self.problems:
            raise _InvalidArguments(self.problems)


def _order_summary(order: Order) -> dict[str, Any]:
    return {
        "order_id": order.number,
        "customer_name": order.customer_name,
        "status": order.status,
        "ordered_on": order.ordered_on.isoformat(),
        "delivered_on": order.delivered_on.isoformat() if order.delivered_on else None,
        "tracking_number": order.tracking_number or None,
        "items": [
            {
                "title": item.title,
                "author": item.author,
                "quantity": item.quantity,
                "unit_price": str(item.unit_price),
                "category": item.category,
            }
            for item in order.items.all()
        ],
        "total": str(order.total),
        "shipping_address": _address_line(shipping_address_of(order=order)),
        "returns": _returns_of(order),
    }


# Said of a return staff granted outside the policy (the note itself is for staff).
GRANTED_AS_EXCEPTION = "Our team granted this return as an exception to the return policy."


def _returns_of(order: Order) -> list[dict[str, Any]]:
    """The order's returns as the tools report them: one staff granted outside the policy says so, and
    a rejected or cancelled one gives staff's reason."""
    returns = []
    for record in order.returns.prefetch_related("lines__order_item", "status_changes"):
        entry = {
            "rma_number": record.rma_number,
            "status": record.status,
            "items": [line.order_item.title for line in record.lines.all()],
        }
        if record.exception_note:
            entry["exception"] = GRANTED_AS_EXCEPTION
        moves = list(record.status_changes.all())
        if moves and moves[-1].note and record.status in RETURN_STATUSES_NEEDING_A_REASON:
            # What staff wrote to the customer when rejecting or cancelling it (the email said it too).
            entry["our_reason"] = moves[-1].note
        returns.append(entry)
    return returns


_ORDER_NOT_FOUND = (
    ToolError.ORDER_NOT_FOUND,
    "No order matches that order number together with that email address. Ask the customer to check both.",
)


_CHECKS_SPENT = (
    ToolError.TOO_MANY_FAILED_CHECKS,
    "Too many order number and email checks failed lately; no more can be made now. Tell the customer "
    "you cannot check more and offer a person; do not ask for more guesses.",
)


def _verified_order(args: _Arguments, context: ToolContext) -> Order | ToolOutcome:
    order_id, email = args.order_id(), args.email()
    args.done()
    scope = context.check_scope(order_id)
    # Before the lookup: past the budget a right guess finds nothing either, or guessing would go on.
    if identity_checks_spent(scope=scope):
        return _error(*_CHECKS_SPENT)
    order = order_get_for_customer(order_number=order_id, email=email)
    if order is None:
        identity_check_failed(scope=scope)
        return _error(*_ORDER_NOT_FOUND)
    context.orders_found[order.pk] = order.customer_email
    return order


def _lookup_order(args: _Arguments, context: ToolContext) -> ToolOutcome:
    if args.raw.get("order_id") is None and args.raw.get("rma_number") is not None:
        rma_number = args.matching("rma_number", RMA_RE, max_length=12, shape="RMA-AB12CD34", upper=True)
        email = args.email()
        args.done()
        scope = context.check_scope(rma_number)
        if identity_checks_spent(scope=scope):
            return _error(*_CHECKS_SPENT)
        order = order_get_for_customer_by_rma(rma_number=rma_number, email=email)
        if order is None:
            identity_check_failed(scope=scope)
            return _error(
                ToolError.ORDER_NOT_FOUND,
                "No return matches that RMA number together with that email address. Ask the customer to "
                "check both, or for the order number.",
            )
        context.orders_found[order.pk] = order.customer_email
        return ToolOutcome(_order_summary(order))
    order = _verified_order(args, context)
    if isinstance(order, ToolOutcome):
        return order
    return ToolOutcome(_order_summary(order))


def _check_return_eligibility(args: _Arguments, context: ToolContext) -> ToolOutcome:
    order = _verified_order(args, context)
    if isinstance(order, ToolOutcome):
        return order
    eligibility = order_return_eligibility(order=order, today=store_today())
    if eligibility.eligible:
        context.eligibility_verified.add(order.number)
    policy = eligibility.policy
    return ToolOutcome(
        {
            "order_id": order.number,
            "order_status": order.status,
            "eligible": eligibility.eligible,
            "reason": eligibility.reason,
            "delivered_on": order.delivered_on.isoformat() if order.delivered_on else None,
            "last_day_to_start_return": (
                eligibility.last_return_day.isoformat() if eligibility.last_return_day else None
            ),
            "items": [
                {"title": entry.item.title, "returnable": entry.returnable, "reason": entry.reason}
                for entry in eligibility.items
            ],
            # Returns already made (one staff granted outside the policy too): never contradicted.
            "returns": _returns_of(order),
            "policy": {
                "return_window_days": policy.window_days,
                "condition_requirements": policy.condition_requirements,
                "refund_method": policy.refund_method,
                "refund_timeline_business_days": policy.refund_timeline_business_days,
                "not_returnable": policy.non_returnable_category_labels,
            },
        }
    )


def _initiate_return(args: _Arguments, context: ToolContext) -> ToolOutcome:
    reason = args.text("reason", max_length=MAX_REASON_LENGTH)
    titles = args.titles("item_titles")
    order = _verified_order(args, context)
    if isinstance(order, ToolOutcome):
        return order
    if order.number not in context.eligibility_verified:
        return _error(
            ToolError.ELIGIBILITY_NOT_VERIFIED,
            "Call check_return_eligibility for this order first; it must pass before a return can start.",
        )
    items = _items_titled(order, titles)
    if isinstance(items, ToolOutcome):
        return items
    try:
        record = conversation_return_create(
            conversation=context.conversation, order=order, reason=reason, items=items, today=store_today()
        )
    except ReturnNotAllowed as refused:
        # Asked again (a retry, or after a turn that failed once the return was made): the same
        # return, not a refusal the customer would read as "it did not work".
        earlier = (
            conversation_return_get_open(conversation=context.conversation, order=order, items=items)
            if refused.code == ReturnRefusal.ALREADY_INITIATED
            else None
        )
        if earlier is None:
            return _error(refused.code, refused.message)
        return _return_started(earlier, already_started=True)
    return _return_started(record)


def _items_titled(order: Order, titles: list[str] | None) -> list[OrderItem] | ToolOutcome | None:
    """The order's items with these titles (None for none named), or the error naming the order's titles."""
    if not titles:
        return None
    by_title = {item.title.casefold(): item for item in order.items.all()}
    if any(title.casefold() not in by_title for title in titles):
        return _error(
            ReturnRefusal.ITEM_NOT_IN_ORDER,
            "Some titles are not items of this order. Use the exact titles listed here.",
            order_titles=[item.title for item in order.items.all()],
        )
    return [by_title[title.casefold()] for title in titles]


def _return_started(record: ReturnRecord, *, already_started: bool = False) -> ToolOutcome:
    titles = [line.order_item.title for line in record.lines.select_related("order_item")]
    result = {
        "rma_number": record.rma_number,
        "order_id": record.order.number,
        "status": record.status,
        "items": titles,
        "refund_method": record.refund_method,
        "refund_timeline_business_days": record.refund_timeline_business_days,
        "next_steps": _RETURN_NEXT_STEPS,
    }
    if already_started:
        result["already_started"] = True
    receipt = (
        f"Your return for order {record.order.number} has started: RMA number {record.rma_number}, for "
        f"{_titles_joined(titles)}. {_RETURN_NEXT_STEPS} The refund goes to {record.refund_method} within "
        f"{record.refund_timeline_business_days} business days after we receive the items."
    )
    return ToolOutcome(result, receipt=receipt)


_RETURN_NEXT_STEPS = (
    "We will email a prepaid return label to the address on the order. Pack the items in their original "
    "packaging, attach the label and drop the parcel off."
)


def _titles_joined(titles: list[str]) -> str:
    return titles[0] if len(titles) == 1 else ", ".join(titles[:-1]) + " and " + titles[-1]


def _address_line(address: ShippingAddress | None) -> str | None:
    return address.one_line() if address else None


# The two order changes: their key in ToolContext.change_checks, and the check tool that must pass first.
_CANCEL, _ADDRESS = "cancel", "address"
_CHECK_TOOL = {_CANCEL: "check_cancellation", _ADDRESS: "check_address_change"}


def _unconfirmed(context: ToolContext, change: str, order: Order) -> ToolOutcome | None:
    """Why the write must not happen yet, or None: its check passed for this order in the turn just
    before (the customer has read it, and this message answers it) and the customer's words in this turn
    say yes. A check from further back is no question this message answers."""
    check = context.checks(change).get(order.number)
    if check is None:
        return _error(
            ToolError.CHECK_NOT_DONE,
            f"Call {_CHECK_TOOL[change]} for this order first; it must pass, and the customer must then "
            "say yes.",
        )
    if check.get("turn", 0) >= context.turn:
        return _error(
            ToolError.NOT_CONFIRMED,
            "The customer has not answered yet. Tell them the check's result, ask yes or no, and wait for "
            "their reply.",
        )
    if check.get("turn", 0) != context.turn - 1:
        return _error(
            ToolError.NOT_CONFIRMED,
            f"That check was several messages ago. Call {_CHECK_TOOL[change]} again, tell the customer its "
            "result and ask yes or no.",
        )
    if not reads_as_yes(context.customer_said, to_cancel=change == _CANCEL):
        return _error(
            ToolError.NOT_CONFIRMED,
            "The customer's latest message is not a plain yes. Nothing was changed: ask them again, yes or "
            "no.",
        )
    return None


def _check_cancellation(args: _Arguments, context: ToolContext) -> ToolOutcome:
    order = _verified_order(args, context)
    if isinstance(order, ToolOutcome):
        return order
    check = order_change_check(order=order, kind=OrderChangeKind.CANCELLED)
    if check.allowed:
        context.checks(_CANCEL)[order.number] = {"turn": context.turn}
    else:
        context.checks(_CANCEL).pop(order.number, None)
    return ToolOutcome(
        {
            "order_id": order.number,
            "order_status": order.status,
            "cancellable": check.allowed,
            "reason": check.reason,
            "items": [{"title": item.title, "quantity": item.quantity} for item in order.items.all()],
        }
    )


def _cancel_order(args: _Arguments, context: ToolContext) -> ToolOutcome:
    order = _verified_order(args, context)
    if isinstance(order, ToolOutcome):
        return order
    if order.status == OrderStatus.CANCELLED:
        return _order_cancelled(order, already=True)  # asked again: done already, and said so
    if refusal := _unconfirmed(context, _CANCEL, order):
        return refusal
    context.checks(_CANCEL).pop(order.number, None)
    try:
        conversation_order_cancel(conversation=context.conversation, order=order)
    except OrderChangeNotAllowed as refused:
        if refused.code == ChangeCode.CANCELLED:
            return _order_cancelled(order, already=True)
        # Shipped since the check: the store's reason, and what to do instead.
        return _error(refused.code, refused.message)
    return _order_cancelled(order)


_CANCELLED_NEXT_STEPS = "The order will not ship. Nothing more is needed from you."


def _order_cancelled(order: Order, *, already: bool = False) -> ToolOutcome:
    result = {"order_id": order.number, "status": OrderStatus.CANCELLED, "next_steps": _CANCELLED_NEXT_STEPS}
    if already:
        result["already_cancelled"] = True
    receipt = f"Order {order.number} is cancelled. {_CANCELLED_NEXT_STEPS}"
    return ToolOutcome(result, receipt=receipt)


def _check_address_change(args: _Arguments, context: ToolContext) -> ToolOutcome:
    fields = args.address("new_address")
    order = _verified_order(args, context)
    if isinstance(order, ToolOutcome):
        return order
    pending = context.checks(_ADDRESS)
    pending.pop(order.number, None)
    check = order_change_check(order=order, kind=OrderChangeKind.ADDRESS_CHANGED)
    result = {"order_id": order.number, "order_status": order.status, "changeable": check.allowed}
    if not check.allowed:
        return ToolOutcome({**result, "reason": check.reason})
    try:
        address = shipping_address_clean(fields=fields)
    except AddressInvalid as invalid:
        return _error(
            ToolError.INVALID_ADDRESS,
            "Some fields of the new address are missing or malformed. Ask the customer for them.",
            problems=[
                {**problem, "field": f"new_address.{problem['field']}"} for problem in invalid.problems
            ],
        )
    current = shipping_address_of(order=order)
    if address == current:
        return ToolOutcome(
            {**result, "reason": "This order already ships to that address.", "unchanged": True}
        )
    pending[order.number] = {"turn": context.turn, "address": address.as_fields()}
    return ToolOutcome(
        {
            **result,
            "reason": check.reason,
            "current_address": _address_line(current),
            "new_address": address.one_line(),
        }
    )


def _change_shipping_address(args: _Arguments, context: ToolContext) -> ToolOutcome:
    order = _verified_order(args, context)
    if isinstance(order, ToolOutcome):
        return order
    if refusal := _unconfirmed(context, _ADDRESS, order):
        return refusal
    checked = context.checks(_ADDRESS).pop(order.number)
    try:
        address = shipping_address_clean(fields=checked.get("address") or {})
    except AddressInvalid:
        # Only our own check writes this state; anything else in it is not an address the customer read.
        return _error(ToolError.CHECK_NOT_DONE, "Call check_address_change for this order again.")
    try:
        conversation_order_address_change(conversation=context.conversation, order=order, address=address)
    except OrderChangeNotAllowed as refused:
        if refused.code != ADDRESS_UNCHANGED:
            return _error(refused.code, refused.message)
    result = {"order_id": order.number, "status": order.status, "shipping_address": address.one_line()}
    receipt = f"Order {order.number} will now ship to {address.one_line()}."
    return ToolOutcome(result, receipt=receipt)


def _report_delivery_problem(args: _Arguments, context: ToolContext) -> ToolOutcome:
    problem = args.one_of("problem", DeliveryProblem)
    details = args.text("details", max_length=MAX_REASON_LENGTH)
    titles = args.titles("item_titles")
    order = _verified_order(args, context)
    if isinstance(order, ToolOutcome):
        return order
    items = _items_titled(order, titles)
    if isinstance(items, ToolOutcome):
        return items
    try:
        case, created = conversation_delivery_case_open(
            conversation=context.conversation, order=order, problem=problem, items=items, details=details
        )
    except DeliveryCaseRefused as refused:
        if refused.code == ITEMS_NEEDED:
            return _error(
                ITEMS_NEEDED,
                "Ask the customer which of these books it concerns, then call again with item_titles.",
                order_titles=[item.title for item in order.items.all()],
            )
        return _error(refused.code, refused.message)  # no delivery to look into yet: the store's reason
    concerned = [item.title for item in case.items.all()] if problem in ITEM_PROBLEMS else []
    what = DeliveryProblem(problem).label.lower() + (f" ({_titles_joined(concerned)})" if concerned else "")
    next_steps = DELIVERY_CASE_NEXT_STEPS[problem]
    receipt = f"I've reported this as case {case.pk} for order {order.number}: {what}. {next_steps}"
    summary = f"Case {case.pk}, order {order.number}: {what}. The customer says: {details}"
    # The case goes to staff with the conversation: they are told what they need in one line.
    context.handoff = HandoffAsked(
        reason=HandoffAsk.NEEDS_STAFF, summary=summary[:MAX_SUMMARY_LENGTH], reply=HANDED_OVER_REPLY
    )
    result = {
        "case_number": case.pk,
        "order_id": order.number,
        "problem": problem,
        "items": concerned,
        "next_steps": next_steps,
        "tell_the_customer": f"{receipt} {HANDED_OVER_REPLY}",
    }
    if not created:
        result["already_reported"] = True
    return ToolOutcome(result, receipt=receipt)


def _list_recent_orders(args: _Arguments, context: ToolContext) -> ToolOutcome:
    args.done()
    if not context.signed_in_email:
        return _error(
            ToolError.NOT_SIGNED_IN,
            "Only a customer the store signed in has their orders listed. Ask for the order number and "
            "the email on the order.",
        )
    orders = list(order_list_for_customer(email=context.signed_in_email))
    for order in orders:
        context.orders_found[order.pk] = order.customer_email
    return ToolOutcome(
        {
            "customer_email": context.signed_in_email,
            "orders": [
                {
                    "order_id": order.number,
                    "status": order.status,
                    "ordered_on": order.ordered_on.isoformat(),
                    "delivered_on": order.delivered_on.isoformat() if order.delivered_on else None,
                    "titles": [item.title for item in order.items.all()],
                }
                for order in orders
            ],
        }
    )


def _lookup_policy(args: _Arguments, context: ToolContext) -> ToolOutcome:
    topic = args.matching("topic", TOPIC_RE, max_length=40, shape="shipping", lower=True)
    args.done()
    entry = policy_entry_get_published(topic=topic)
    if entry is None:
        return _error(
            ToolError.TOPIC_NOT_SUPPORTED,
            "There is no published FAQ entry for that topic.",
            available_topics=list(policy_entry_list_published().values_list("topic", flat=True)),
        )
    return ToolOutcome({"topic": entry.topic, "title": entry.title, "text": entry.text})


def policy_answer(*, calls: list[tuple[str, ToolOutcome]], customer_said: str) -> str | None:
    """The reply, in the FAQ's own words, when every call of the turn's first step was a lookup_policy
    that found its answer (name and outcome of each): the question needed only the FAQ, so no second
    model call is needed to quote it, and none can misquote it. None otherwise: a topic not found,
    anything else asked for, or a message that names an order, a return or an email (a question about
    one of them too, which a model may have left for later), and the model writes the reply."""
    if not calls or any(name != "lookup_policy" or outcome.is_error for name, outcome in calls):
        return None
    if ORDER_NUMBERS.look_alike_re.search(customer_said) or RMA_NUMBER_MENTION_RE.search(customer_said):
        return None
    if EMAIL_MENTION_RE.search(customer_said):
        return None
    quotes = {policy_quote(title=o.result["title"], text=o.result["text"]): None for _, o in calls}
    return "\n\n".join(quotes)


HANDED_OVER_REPLY = "I've passed this conversation to our support team."


def _hand_off_to_person(args: _Arguments, context: ToolContext) -> ToolOutcome:
    reason = args.one_of("reason", HandoffAsk)
    summary = args.text("summary", max_length=MAX_SUMMARY_LENGTH)
    args.done()
    available = staff_available_now()
    # What happens next (who joins, when, where else we answer) is the page's notice under the reply,
    # kept up to date as staff come and go: said once, there, not in the reply as well.
    next_steps = waiting_notice(staff_available=available, email=context.conversation.customer_email)
    # Stored with the turn: the conversation waits for a person once the reply is kept.
    context.handoff = HandoffAsked(reason=reason, summary=summary, reply=HANDED_OVER_REPLY)
    return ToolOutcome(
        {
            "handed_off": True,
            "staff_available_now": available,
            "tell_the_customer": HANDED_OVER_REPLY,
            "shown_to_the_customer_below": next_steps,
        }
    )


_HANDLERS = {
    "lookup_order": (_lookup_order, {"order_id", "rma_number", "customer_email"}),
    "check_return_eligibility": (_check_return_eligibility, {"order_id", "customer_email"}),
    "initiate_return": (_initiate_return, {"order_id", "customer_email", "reason", "item_titles"}),
    "check_cancellation": (_check_cancellation, {"order_id", "customer_email"}),
    "cancel_order": (_cancel_order, {"order_id", "customer_email"}),
    "check_address_change": (_check_address_change, {"order_id", "customer_email", "new_address"}),
    "change_shipping_address": (_change_shipping_address, {"order_id", "customer_email"}),
    "report_delivery_problem": (
        _report_delivery_problem,
        {"order_id", "customer_email", "problem", "item_titles", "details"},
    ),
    "list_recent_orders": (_list_recent_orders, set()),
    "lookup_policy": (_lookup_policy, {"topic"}),
    HANDOFF_TOOL: (_hand_off_to_person, {"reason", "summary"}),
}


def tool_execute(*, name: str, arguments: Any, context: ToolContext) -> ToolOutcome:
    """Run one tool call; never raises for anything the model sent (a name that is not text included)."""
    handler = _HANDLERS.get(name) if isinstance(name, str) else None
    if handler is None:
        return _error(
            ToolError.UNKNOWN_TOOL, "There is no tool by that name.", available_tools=list(TOOL_NAMES)
        )
    run, allowed = handler
    try:
        return run(_Arguments(arguments, allowed), context)
    except _InvalidArguments as invalid:
        return _error(
            ToolError.INVALID_ARGUMENTS,
            "Some arguments are missing or malformed; fix them and call again.",
            problems=invalid.problems,
        )


# What the customer's page says while a tool runs: fixed words, with the order number only when the
# customer typed it (a model's guess is never shown).
_PROGRESS = {
    "lookup_order": ("Looking up order {order}…", "Looking up your order…"),
    "check_return_eligibility": (
        "Checking whether order {order} can be returned…",
        "Checking whether your order can be returned…",
    ),
    "initiate_return": ("Starting your return for order {order}…", "Starting your return…"),
    "check_cancellation": (
        "Checking whether order {order} can be cancelled…",
        "Checking whether your order can be cancelled…",
    ),
    "cancel_order": ("Cancelling order {order}…", "Cancelling your order…"),
    "check_address_change": (
        "Checking whether order {order} can go to a new address…",
        "Checking whether your order can go to a new address…",
    ),
    "change_shipping_address": ("Changing the address of order {order}…", "Changing your order's address…"),
    "report_delivery_problem": (
        "Reporting the problem with order {order}…",
        "Reporting the problem with your order…",
    ),
    "list_recent_orders": ("Looking up your recent orders…", "Looking up your recent orders…"),
    "lookup_policy": ("Looking up our policy…", "Looking up our policy…"),
    HANDOFF_TOOL: ("Asking a member of our team to join…", "Asking a member of our team to join…"),
}
PROGRESS_WRITING = "Writing the answer…"
_PROGRESS_WORKING = "Working on it…"


def tool_progress(*, name: str, arguments: Any, customer_words: list[str]) -> str:
    """The status line while the tool `name` runs."""
    working = (_PROGRESS_WORKING, _PROGRESS_WORKING)
    with_order, without = _PROGRESS.get(name, working) if isinstance(name, str) else working
    order = arguments.get("order_id") if isinstance(arguments, dict) else None
    typed = (
        isinstance(order, str)
        and ORDER_NUMBERS.exact.fullmatch(order)
        and any(_typed(order, words) for words in customer_words)
    )
    return with_order.format(order=order) if typed else without


def _typed(order: str, words: str) -> bool:
    """Whether the customer wrote this order number, in any of the ways people write it."""
    return order in ORDER_NUMBERS.mentions(words)
