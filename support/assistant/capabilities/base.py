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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from orders.addresses import OrderAddress, shipping_address_of
from orders.models import Order, OrderItem
from orders.selectors import orders_get_for_customer
from orders.services import RETURN_STATUSES_NEEDING_A_REASON, ReturnRefusal
from orders.shops import shop_named_in
from support.assistant.budget import (
    CheckLimit,
    CheckScope,
    client_checks_held,
    identity_check_failed,
    order_checks_spent,
)
from support.assistant.capabilities.arguments import (
    NamesAnOrder,
    ToolArguments,
)
from support.assistant.check_codes import (
    CodeSent,
    order_check_code_matches,
    order_check_code_passed,
    order_check_code_passed_keep,
    order_check_code_send,
)
from support.assistant.understanding.history import Intent
from support.assistant.understanding.message import Message
from support.assistant.understanding.step import Reading, Step, TaskAt
from support.assistant.understanding.wording import Said, Waiting
from support.conversations.models import Conversation
from support.llm.consent import reads_as_yes
from support.llm.protocol import HandoffAsk, ToolError

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
            number=number,
            conversation_id=self.conversation.pk,
            client_address=self.client_address,
            session=self.conversation.session_handle,
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
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": tool_use_id,
            "content": json.dumps(self.result, ensure_ascii=False),
        }
        if self.is_error:
            block["is_error"] = True
        return block


def error(code: str, message: str, **extra: Any) -> ToolOutcome:
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
Answer = Callable[[Reading], Step | None]
# Its reply to a result of one of the capability's tools that is no error (errors have the built-in
# model's own replies): its words, an Asked when it asks a question (what the model then waits for).
Reply = Callable[[Reading, dict[str, Any]], Said]


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
    # Where its words may equally ask how it works ("is the receipt emailed?"): the words that ask for it
    # to be done ("send me", "a copy of"). A message in its words without them, naming no order, is a
    # question the store's FAQ answers when its reader is sure of a topic; the task's otherwise.
    requested: re.Pattern | None = None


@dataclass(frozen=True)
class Trigger:
    """How the built-in model's rules read a message as one of the capability's requests: `reads` gives
    the intent, or None. The rules try every trigger, the capabilities' and the built-in model's own
    (builtin/intents.py), lowest `precedence` first, and the first that reads the message wins; no two
    share a precedence. A trigger that may read a message another capability's trigger reads too names
    that capability in `over` (whose requests it comes before): an overlap nobody declared fails
    support/tests' trigger check, which reads the evaluation sets, the phrasings and the scenarios."""

    precedence: int
    reads: Callable[[Message], Intent | None]
    # The order task it reads a message as, when it does (an OrderTask's kind; the test of the built-in
    # model's steps holds every task to a trigger or words of its own).
    task: str = ""
    over: frozenset[str] = frozenset()
    # Its reading stands over the phrasings' (the built-in model's classifier): a request read plainly
    # that must never be lost (a cancellation, a new address, a delivery problem named).
    stands: bool = False

    def comes_before(self, capability: str) -> bool:
        return capability in self.over or self.over >= EVERY_CAPABILITY


# A trigger over every other capability's requests (a person asked for in so many words).
EVERY_CAPABILITY = frozenset({"*"})


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
    # Where the routing evaluation counts a first message that reaches one of its tools (its sets'
    # label: support/evals/routing/); `{argument}` is filled from the call ("policy:{topic}").
    route: str
    # Its words in the system prompt's "You help only with ..." (none: a person, and the store's policies,
    # which the rule names itself).
    scope: str = ""
    # Its tools and rules were in the old design's measured cost (support/tests/assistant/
    # test_prompt_cost.py): a capability added since is allowed its own tools and words, at a cached
    # call's price.
    old_design: bool = False
    # How the built-in model's rules read a message as its request (a task asked in words of its own is
    # an OrderTask's `asks` instead).
    triggers: tuple[Trigger, ...] = ()
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
CHECK_TOO_SOON = (
    ToolError.CHECK_TOO_SOON,
    "Checks failed just before this one; the next may be made only after a short wait. Ask the customer to "
    "check the order number and the email and to send them again in a moment.",
)
# The order had its code emails for now (support/assistant/check_codes.py): a person can help.
CODES_SPENT = (
    ToolError.TOO_MANY_FAILED_CHECKS,
    "This order number had too many wrong guesses lately, and its codes were all sent; no more can be "
    "checked now. Tell the customer you cannot check it now and offer a person; do not ask for more.",
)
CODE_NEEDED = (
    ToolError.CODE_NEEDED,
    "This order number had too many wrong guesses, so it needs one more check: if the email given is the "
    "one on the order, a 6-digit code has been emailed to it (valid for {minutes} minutes). Ask the "
    "customer to type that code here, then call again with the same order number and email. Do not say "
    "whether the email is right.",
)


def verified_order(args: NamesAnOrder, context: ToolContext) -> Order | ToolOutcome:
    """The order, only with the email on it: a failed check counts against the budget."""
    return order_checked(
        context,
        number=args.order_id,
        email=args.customer_email,
        find=lambda: _the_customers_order(args, context),
        not_found=ORDER_NOT_FOUND,
    )


def _the_customers_order(args: NamesAnOrder, context: ToolContext) -> Order | ToolOutcome | None:
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
    email: str,
    find: Callable[[], Order | ToolOutcome | None],
    not_found: tuple[str, str],
) -> Order | ToolOutcome:
    """What `find` finds by a number (an order's or a return's) and an email, within the budget of failed
    checks (support/assistant/budget.py): a client past theirs is stopped; an order number past its own
    asks for a one-time code emailed to the order too. The store's signed-in customer finding their own
    order with the email the store vouches for is never held back; nor is a conversation that found the
    order before."""
    scope = context.check_scope(number)
    own = bool(context.signed_in_email) and email.casefold() == context.signed_in_email.casefold()
    # Before the lookup: past the budget a right guess finds nothing either, or guessing would go on. A
    # signed-in customer's own email is looked up first: it is held back only if it finds nothing.
    if not own and (held := _held(scope)):
        return held
    found = find()
    # An order of that number in several shops (which one is asked): each is the customer's.
    orders = (
        orders_get_for_customer(order_number=number, email=email)
        if isinstance(found, ToolOutcome)
        else [found]
        if found is not None
        else []
    )
    if own and not orders:
        if held := _held(scope):
            return held
        identity_check_failed(scope=scope, order_too=False)  # their own miss locks no order number
        return error(*not_found)
    conversation_id = context.conversation.pk
    if (
        not own
        and order_checks_spent(scope=scope)  # a cache read; what follows only for an order guessed at
        and not any(_found_before(order, context) for order in orders)
    ):
        if any(
            order_check_code_matches(order=order, conversation_id=conversation_id, text=context.customer_said)
            for order in orders
        ):
            order_check_code_passed_keep(orders=orders, conversation_id=conversation_id)
        else:
            return _code_asked(scope, orders, conversation_id)
    if not orders:
        identity_check_failed(scope=scope)
        return error(*not_found)
    if isinstance(found, ToolOutcome):
        return found  # which shop, is asked: none of them is found yet
    context.orders_found[orders[0].pk] = orders[0].customer_email
    return orders[0]


def _code_asked(scope: CheckScope, orders: list[Order], conversation_id: int) -> ToolOutcome:
    """The code asked for: the same answer, and the same count, whether the email was right (`orders`:
    the order, or the customer's orders of that number in several shops) or not: neither tells a guesser
    anything. The owner's one ask counts too, and waits no delay."""
    identity_check_failed(scope=scope)
    sent = [order_check_code_send(order=order, conversation_id=conversation_id) for order in orders]
    if CodeSent.TOO_MANY in sent:
        return error(*CODES_SPENT)
    return error(CODE_NEEDED[0], CODE_NEEDED[1].format(minutes=settings.BOOKLY_CHECK_CODE_MINUTES))


def _held(scope: CheckScope) -> ToolOutcome | None:
    held = client_checks_held(scope=scope)
    if held is None:
        return None
    if held.limit == CheckLimit.DELAY:
        return error(*CHECK_TOO_SOON, retry_after_seconds=held.retry_after)
    return error(*CHECKS_SPENT)


def _found_before(order: Order, context: ToolContext) -> bool:
    """Whether this conversation found the order with its email already (in this turn or before), or
    typed its code lately."""
    return (
        order.pk in context.orders_found
        or order_check_code_passed(order=order, conversation_id=context.conversation.pk)
        or (bool(context.conversation.pk) and context.conversation.orders.filter(pk=order.pk).exists())
    )


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


def address_line(address: OrderAddress | None) -> str | None:
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
