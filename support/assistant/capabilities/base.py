"""What every capability is made of, and the parts several of them share.

A capability is one thing the assistant can do for a customer (see registry.py for the list). It owns
its tools, each with its arguments as a pydantic model (the JSON schema both providers read is
generated from it, and the same model refuses invalid arguments field by field), its handler, the
status line the page shows while it runs, its paragraph of the system prompt, and where it has any, the
wordings the validator reads its claims with (ClaimWordings).

Handlers are thin: they call the orders and policies services and turn the outcome into a JSON tool
result. Privacy and protocol rules are enforced here, whatever the model was told:
- no order detail, not even its status, without the email on the order (verified_order);
- no write without its check passing for that order earlier, as each capability states;
- nothing raises to the customer: every failure is a tool result the model can recover from, built
  from field names and codes, never from the raw input.
"""

import json
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
)
from pydantic_core import PydanticCustomError

from orders.addresses import ShippingAddress, shipping_address_of
from orders.models import Order, OrderItem
from orders.numbers import MAX_LENGTH as ORDER_NUMBER_MAX_LENGTH
from orders.numbers import ORDER_NUMBERS
from orders.schemas import email_canonical
from orders.selectors import orders_get_for_customer
from orders.services import RETURN_STATUSES_NEEDING_A_REASON, ReturnRefusal
from orders.shops import shop_named_in
from support.assistant.budget import CheckScope, identity_check_failed, identity_checks_spent
from support.assistant.understanding.turn import Step, TaskAt, Turn
from support.assistant.understanding.wording import Waiting
from support.conversations.models import Conversation
from support.llm.consent import reads_as_yes
from support.llm.protocol import HandoffAsk, ToolError

MAX_EMAIL_LENGTH = 254
MAX_REASON_LENGTH = 500
MAX_TITLE_LENGTH = 300
MAX_ITEM_TITLES = 20
MAX_SUMMARY_LENGTH = 300


# --- Arguments: pydantic models, one per tool ---


def clean_text(value: Any) -> Any:
    """Turn line breaks and tabs into spaces, drop other control and format characters, trim."""
    if not isinstance(value, str):
        return value  # the type check that follows names it
    kept = []
    for char in value:
        if char in "\t\n\r":
            kept.append(" ")
        elif unicodedata.category(char) not in ("Cc", "Cf"):
            kept.append(char)
    return "".join(kept).strip()


def Text(max_length: int, description: str | None = None):
    """One line of text, cleaned, not empty, at most max_length characters."""
    return Annotated[
        str,
        Field(min_length=1, max_length=max_length, description=description),
        BeforeValidator(clean_text),  # after Field: cleaned, then measured as a string
    ]


def shaped(check: Callable[[str], str | None], shape: str):
    def validate(value: str) -> str:
        canonical = check(value)
        if canonical is None:
            raise PydanticCustomError("shape", "must look like {shape}", {"shape": shape})
        return canonical

    return AfterValidator(validate)


def _order_number(value: str) -> str:
    """The number as the store writes it, of any of its shops' shapes now (read when the tool is called:
    the shapes are the shops', kept in the database)."""
    if (canonical := ORDER_NUMBERS.canonical(value)) is None:
        raise PydanticCustomError("shape", "must look like {shape}", {"shape": ORDER_NUMBERS.example})
    return canonical


OrderNumber = Annotated[
    str,
    # Room for the spaces people type inside a number ("BK 10042").
    Field(min_length=1, max_length=ORDER_NUMBER_MAX_LENGTH + 8),
    BeforeValidator(clean_text),  # after Field: cleaned, then measured as a string
    AfterValidator(_order_number),
    # No shape here: the schema is made once, the shops' shapes may change; the system prompt says it.
    WithJsonSchema({"type": "string", "description": "The order number as the customer gave it."}),
]
CustomerEmail = Annotated[
    str,
    Field(min_length=1, max_length=MAX_EMAIL_LENGTH),
    BeforeValidator(clean_text),  # after Field: cleaned, then measured as a string
    shaped(email_canonical, "name@example.com"),
    WithJsonSchema({"type": "string", "description": "The email the customer gave for the order."}),
]


def _titles(value: list[str]) -> list[str] | None:
    titles = [clean_text(title)[:MAX_TITLE_LENGTH] for title in value]
    return [title for title in titles if title] or None


def Titles(description: str | None = None):
    """Book titles as the customer or a tool result named them: at most MAX_ITEM_TITLES, each cut to
    MAX_TITLE_LENGTH, empty ones dropped (None when none is left)."""
    return Annotated[
        list[str], Field(max_length=MAX_ITEM_TITLES, description=description), AfterValidator(_titles)
    ]


class ToolArguments(BaseModel):
    """A tool's arguments. Strict: a number is not an order number, an unknown name is refused."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    # Names of which at least one must be given (the first is named when none is).
    one_of_required: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """The input schema both providers read: nested models inlined (with what is said beside them),
        optional fields as fields the model may leave out; without pydantic's titles, defaults and
        lengths (checked here, not worth the model's tokens) or the classes' docstrings (for
        developers)."""
        schema = cls.model_json_schema()
        definitions = schema.pop("$defs", {})
        schema.pop("description", None)
        return _schema_node(schema, definitions)

    @classmethod
    def parsed(cls, raw: Any) -> "ToolArguments":
        """The arguments, or InvalidArguments naming each problem by field, never echoing a value."""
        problems = []
        if (
            isinstance(raw, dict)
            and cls.one_of_required
            and all(raw.get(name) is None for name in cls.one_of_required)
        ):
            problems.append({"field": cls.one_of_required[0], "problem": "is required"})
        try:
            arguments = cls.model_validate(raw)
        except ValidationError as invalid:
            raise InvalidArguments(problems + _problems(invalid, cls)) from None
        if problems:
            raise InvalidArguments(problems)
        return arguments


_NOT_SENT = frozenset({"title", "default", "minLength", "maxLength", "maxItems"})


def _schema_node(node: dict[str, Any], definitions: dict[str, dict]) -> dict[str, Any]:
    """One schema node as sent: its keywords, never a property's name, are what is left out."""
    if "$ref" in node:
        definition = {
            key: value
            for key, value in definitions[node["$ref"].rsplit("/", 1)[1]].items()
            if key != "description"  # a nested model's docstring; a description beside the $ref stays
        }
        node = {**definition, **{key: value for key, value in node.items() if key != "$ref"}}
    options = node.get("anyOf")
    if options and {"type": "null"} in options and len(options) == 2:
        # An optional field is written X | None for Python; the model sends it or leaves it out.
        [kept] = [option for option in options if option != {"type": "null"}]
        node = {**{key: value for key, value in node.items() if key != "anyOf"}, **kept}
        return _schema_node(node, definitions)
    sent = {}
    for key, value in node.items():
        if key in _NOT_SENT:
            continue
        if key == "properties":
            sent[key] = {name: _schema_node(prop, definitions) for name, prop in value.items()}
        elif isinstance(value, dict):
            sent[key] = _schema_node(value, definitions)
        elif isinstance(value, list):
            sent[key] = [
                _schema_node(item, definitions) if isinstance(item, dict) else item for item in value
            ]
        else:
            sent[key] = value
    if sent.get("type") == "object":
        sent.setdefault("properties", {})
        sent["additionalProperties"] = False
    return sent


class InvalidArguments(Exception):
    def __init__(self, problems: list[dict[str, str]]):
        self.problems = problems


def _problems(invalid: ValidationError, model: type[BaseModel]) -> list[dict[str, str]]:
    """Each error in our words: the field's name (dotted inside an object) and what to fix."""
    problems, other = [], False
    for error in invalid.errors(include_url=False, include_input=False):
        kind, loc, context = error["type"], error["loc"], error.get("ctx") or {}
        if kind in ("model_type", "model_attributes_type", "dict_type") and not loc:
            return [{"field": "(arguments)", "problem": "must be a JSON object"}]
        name = ".".join(str(part) for part in loc if not isinstance(part, int))
        if any(isinstance(part, int) for part in loc):
            kind = "list_type"  # an item of a list that is not text
        if kind == "extra_forbidden":
            # The unknown names are the model's input: name only what is accepted.
            if len(loc) == 1:
                other = True
            elif not any(existing["field"] == name.rpartition(".")[0] for existing in problems):
                inner = _model_at(model, loc[:-1])
                problems.append(
                    {
                        "field": name.rpartition(".")[0],
                        "problem": "only these fields exist: " + ", ".join(inner.model_fields),
                    }
                )
            continue
        problem = {
            "missing": "is required",
            "string_type": "must be a string",
            "string_too_short": "must not be empty",
            "string_too_long": f"must be at most {context.get('max_length')} characters",
            "list_type": "must be a list of strings",
            "model_type": "must be an object",
            "too_long": f"must list at most {context.get('max_length')} titles",
            "enum": f"must be one of {context.get('expected', '').replace(' or ', ', ')}",
            "literal_error": f"must be one of {context.get('expected', '').replace(' or ', ', ')}",
        }.get(kind, error["msg"])
        if not any(existing["field"] == name for existing in problems):
            problems.append({"field": name, "problem": problem})
    if other:
        accepted = ", ".join(sorted(model.model_fields))
        problems.append({"field": "(other)", "problem": "only these parameters exist: " + accepted})
    return problems


def _model_at(model: type[BaseModel], loc: tuple) -> type[BaseModel]:
    for part in loc:
        model = model.model_fields[part].annotation
    return model


class OrderArguments(ToolArguments):
    """An order, named by the customer with the email on it."""

    order_id: OrderNumber
    customer_email: CustomerEmail


# --- Tools and capabilities ---


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
    # The orders whose return eligibility passed, by check_key (the order's own key, never its number:
    # two shops may each have the customer's order of one number).
    eligibility_verified: set[str] = field(default_factory=set)
    # Orders a tool found with the right email, by primary key, with that email (for staff).
    orders_found: dict[int, str] = field(default_factory=dict)
    # Checks of order changes that passed: {"cancel" | "address": {check_key: {"turn": N, ...}}}.
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


def error(code: str, message: str, **extra) -> ToolOutcome:
    return ToolOutcome({"error": code, "message": message, **extra}, is_error=True)


@dataclass(frozen=True)
class Tool:
    """One tool the model may call."""

    name: str
    description: str
    arguments: type[ToolArguments]
    handler: Callable[[Any, ToolContext], ToolOutcome]
    # The page's status line while it runs: with the order number the customer typed, and without.
    progress: tuple[str, str]
    # It changes the store: the step that calls it is stored in the same transaction as the change.
    writes: bool = False

    def schema(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.arguments.json_schema(),
        }


# --- The built-in model's steps for a capability ---

# Its answer to a question one of the capability's replies asked, or None: the message is no answer.
Answer = Callable[[Turn], Step | None]
# Its reply to a result of one of the capability's tools that is no error (errors have the built-in
# model's own replies).
Reply = Callable[[Turn, dict[str, Any]], str]


@dataclass(frozen=True)
class OrderTask:
    """How the built-in model serves a request about one order: what it says before asking for the
    order's number, and the tool it then calls with the order number and email. A task the built-in
    model's rules do not read already brings the words that ask for it (`asks`, `unless`)."""

    kind: str  # the task's name in the built-in model's flow
    lead: str
    tool: str
    asks: re.Pattern | None = None  # a message that asks for it, as the built-in model reads it (lower case)
    unless: re.Pattern | None = None  # what makes such a message something else (a question for staff)
    # A step of its own before the order's number is asked for (a return's status by its RMA number).
    first: Callable[[TaskAt], Step | None] | None = None
    # Its step once the order's number and email are known, when more than `tool` called with them.
    call: Callable[[TaskAt], Step] | None = None
    # A detail `call` asks for (a new address): a message answering it runs the step again, and one it
    # cannot read is asked for again in the words `detail_again`.
    detail: Waiting | None = None
    detail_again: str = ""
    # Without an order number, the one order a tool found with the customer's email in this conversation
    # is the one meant ("it was late!" after a lookup, "please send the receipt again"); when False, only
    # if the request says so ("my order", "my return").
    takes_order_found: bool = True
    # Its words are a return's or an order status's too ("money back", "my refund"): read before those.
    read_first: bool = False


# What a claim of return eligibility says (ClaimWordings.eligibility).
ELIGIBLE, NOT_ELIGIBLE, WINDOW_CLOSED = "eligible", "not_eligible", "window_closed"


@dataclass(frozen=True)
class ClaimWordings:
    """What the validator (support.assistant.claims) reads as a capability's claims: wordings, regular
    expressions read case-insensitively, each with what it claims. Order matters: the first wording that
    matches a stretch of text is the claim, so longer and negated wordings come first."""

    # An order's status, and the order statuses it is true of.
    statuses: tuple[tuple[str, frozenset[str]], ...] = ()
    # A return's progress (read in a clause about a return), and the return statuses it is true of.
    return_progress: tuple[tuple[str, frozenset[str]], ...] = ()
    # Return eligibility: ELIGIBLE, NOT_ELIGIBLE or WINDOW_CLOSED.
    eligibility: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Capability:
    """One thing the assistant can do: its tools, its paragraph of the system prompt's tool rules, the
    wordings the validator reads as its claims where it has any, and the built-in model's steps for it:
    its tasks on one order, its answers to the questions its replies ask (by what they wait for), its
    replies to its tools' results (by tool name), and a step for the message right after one of its
    results, whatever was asked (`after`)."""

    name: str
    tools: tuple[Tool, ...]
    prompt: str
    order_tasks: tuple[OrderTask, ...] = ()
    claims: ClaimWordings = field(default_factory=ClaimWordings)
    answers: Mapping[Waiting, Answer] = field(default_factory=dict)
    replies: Mapping[str, Reply] = field(default_factory=dict)
    after: Answer | None = None


# --- Shared by the capabilities that act on one order ---

ORDER_NOT_FOUND = (
    ToolError.ORDER_NOT_FOUND,
    "No order matches that order number together with that email address. Ask the customer to check both.",
)
CHECKS_SPENT = (
    ToolError.TOO_MANY_FAILED_CHECKS,
    "Too many order number and email checks failed lately; no more can be made now. Tell the customer "
    "you cannot check more and offer a person; do not ask for more guesses.",
)


def verified_order(args: OrderArguments, context: ToolContext) -> Order | ToolOutcome:
    """The order, only with the email on it: a failed check counts against the budget."""
    return order_checked(
        context,
        number=args.order_id,
        find=lambda: _the_customers_order(args, context),
        not_found=ORDER_NOT_FOUND,
    )


def _the_customers_order(args: OrderArguments, context: ToolContext) -> Order | ToolOutcome | None:
    """The customer's order of that number. When they have one in each of several shops: the one whose
    shop their words name now, else the one this conversation is already about, else they are asked."""
    found = orders_get_for_customer(order_number=args.order_id, email=args.customer_email)
    if len(found) < 2:
        return found[0] if found else None
    if named := shop_named_in(text=context.customer_said, shops=[order.shop for order in found]):
        return next(order for order in found if order.shop_id == named.pk)
    known = set(context.orders_found) | set(
        context.conversation.orders.filter(pk__in=[order.pk for order in found]).values_list("pk", flat=True)
        if context.conversation.pk
        else ()
    )
    if len(about := [order for order in found if order.pk in known]) == 1:
        return about[0]
    shops = [order.shop.name for order in found]
    return error(
        ToolError.WHICH_SHOP,
        f"The customer has an order {found[0].number} in each of these shops: {', '.join(shops)}. Ask which "
        "shop it is from; once they name it, call again.",
        order_id=found[0].number,
        shops=shops,
    )


def order_checked(
    context: ToolContext,
    *,
    number: str,
    find: Callable[[], Order | ToolOutcome | None],
    not_found: tuple[str, str],
) -> Order | ToolOutcome:
    """What `find` finds by a number (an order's or a return's) and an email, within the budget of
    failed checks for that number, this conversation and this client."""
    scope = context.check_scope(number)
    # Before the lookup: past the budget a right guess finds nothing either, or guessing would go on.
    if identity_checks_spent(scope=scope):
        return error(*CHECKS_SPENT)
    order = find()
    if order is None:
        identity_check_failed(scope=scope)
        return error(*not_found)
    if isinstance(order, ToolOutcome):
        return order  # found, in more than one shop: which, is asked
    context.orders_found[order.pk] = order.customer_email
    return order


# Said of a return staff granted outside the policy (the note itself is for staff).
GRANTED_AS_EXCEPTION = "Our team granted this return as an exception to the return policy."


def returns_of(order: Order) -> list[dict[str, Any]]:
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


def items_titled(order: Order, titles: list[str] | None) -> list[OrderItem] | ToolOutcome | None:
    """The order's items with these titles (None for none named), or the error naming the order's titles."""
    if not titles:
        return None
    by_title = {item.title.casefold(): item for item in order.items.all()}
    if any(title.casefold() not in by_title for title in titles):
        return error(
            ReturnRefusal.ITEM_NOT_IN_ORDER,
            "Some titles are not items of this order. Use the exact titles listed here.",
            order_titles=[item.title for item in order.items.all()],
        )
    return [by_title[title.casefold()] for title in titles]


def titles_joined(titles: list[str]) -> str:
    return titles[0] if len(titles) == 1 else ", ".join(titles[:-1]) + " and " + titles[-1]


def address_line(address: ShippingAddress | None) -> str | None:
    return address.one_line() if address else None


def current_address_line(order: Order) -> str | None:
    return address_line(shipping_address_of(order=order))


def check_key(order: Order) -> str:
    """How a check that passed names its order in the conversation's state: by the order itself (its
    primary key), so that one shop's order's check never opens another shop's order of the same number."""
    return str(order.pk)


def unconfirmed(context: ToolContext, *, change: str, check_tool: str, order: Order) -> ToolOutcome | None:
    """Why an order change must not happen yet, or None: its check passed for this order in the turn
    just before (the customer has read it, and this message answers it) and the customer's words in this
    turn say yes. A check from further back is no question this message answers."""
    check = context.checks(change).get(check_key(order))
    if check is None:
        return error(
            ToolError.CHECK_NOT_DONE,
            f"Call {check_tool} for this order first; it must pass, and the customer must then say yes.",
        )
    if check.get("turn", 0) >= context.turn:
        return error(
            ToolError.NOT_CONFIRMED,
            "The customer has not answered yet. Tell them the check's result, ask yes or no, and wait for "
            "their reply.",
        )
    if check.get("turn", 0) != context.turn - 1:
        return error(
            ToolError.NOT_CONFIRMED,
            f"That check was several messages ago. Call {check_tool} again, tell the customer its "
            "result and ask yes or no.",
        )
    if not reads_as_yes(context.customer_said, to_cancel=change == "cancel"):
        return error(
            ToolError.NOT_CONFIRMED,
            "The customer's latest message is not a plain yes. Nothing was changed: ask them again, yes or "
            "no.",
        )
    return None
