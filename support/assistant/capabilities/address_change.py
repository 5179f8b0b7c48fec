"""Sending an unshipped order to a new address: a check that reads the whole new address back, then
the customer's yes. What the customer does not change (the recipient, the unit on the same street)
stays as on the order."""

import re
from typing import Annotated, Any

from pydantic import Field, WithJsonSchema

from orders.addresses import (
    AddressInvalid,
    country_name,
    shipping_address_clean,
    shipping_address_fields_kept,
    shipping_address_of,
)
from orders.models import OrderChangeKind, OrderChangeState
from orders.selectors import order_address_country_check, order_change_check
from orders.services import ADDRESS_UNCHANGED, OrderChangeNotAllowed
from support.assistant.capabilities.arguments import (
    EmailArgument,
    OrderArguments,
    OrderNumberArgument,
    ToolArguments,
)
from support.assistant.capabilities.base import (
    Capability,
    OrderTask,
    Tool,
    ToolContext,
    ToolOutcome,
    Trigger,
    address_line,
    check_key,
    error,
    unconfirmed,
    verified_order,
)
from support.assistant.capabilities.steps import (
    LAST_ATTEMPT_RULE,
    cannot_change_reply,
    change_answer,
    last_attempt_of,
)
from support.assistant.understanding.customer_words import address_abroad_in, address_in, latest_found
from support.assistant.understanding.history import Intent, ToolCall
from support.assistant.understanding.message import Message
from support.assistant.understanding.step import Reading, Step, TaskAt
from support.assistant.understanding.vocabulary import order_readdress_in
from support.assistant.understanding.wording import (
    ADDRESS_CONFIRM_QUESTION,
    ASK_ADDRESS,
    DECLINED_ADDRESS_REPLY,
    Said,
    Waiting,
    ask,
    said,
)
from support.conversations.services import conversation_order_address_change
from support.llm.protocol import ToolError

CHANGE = "address"  # its key in ToolContext.change_checks
ADDRESS_ASKED_NEXT_STEPS = "You will get an email as soon as the store has changed it."

# Each field as sent: the store checks what it holds (shipping_address_clean, by field, as invalid_address).
_Field = Annotated[Any, WithJsonSchema({"type": "string"})]


class AddressFields(ToolArguments):
    model_config = {"strict": False}  # values are the store's to check, whatever they hold

    to: _Field = None
    line1: _Field = None
    line2: _Field = None
    city: _Field = None
    state: _Field = None
    zip: _Field = None
    country: _Field = None


class CheckAddressChangeArguments(ToolArguments):
    order_id: OrderNumberArgument
    customer_email: EmailArgument
    new_address: Annotated[
        AddressFields,
        Field(
            description=(
                "Only what changes (to: recipient, line2: unit, state: region, zip: postal code); the "
                "rest is kept as on the order, but a new line1 drops line2 and a new city or state needs "
                "zip. country only as the customer wrote it, never guessed."
            )
        ),
    ]


def check_address_change(args: CheckAddressChangeArguments, context: ToolContext) -> ToolOutcome:
    order = verified_order(args, context)
    if isinstance(order, ToolOutcome):
        return order
    pending = context.checks(CHANGE)
    pending.pop(check_key(order), None)
    check = order_change_check(order=order, kind=OrderChangeKind.ADDRESS_CHANGED)
    result = {
        "order_id": order.number,
        "order_status": order.status,
        "changeable": check.allowed,
        **last_attempt_of(check),
    }
    if not check.allowed:
        return ToolOutcome({**result, "reason": check.reason})
    current = shipping_address_of(order=order)
    fields = shipping_address_fields_kept(current=current, fields=args.new_address.model_dump())
    try:
        address = shipping_address_clean(fields=fields)
    except AddressInvalid as invalid:
        return error(
            ToolError.INVALID_ADDRESS,
            "Some fields of the new address are missing or malformed. Ask the customer for them.",
            problems=[
                {**problem, "field": f"new_address.{problem['field']}"} for problem in invalid.problems
            ],
        )
    if address == current:
        return ToolOutcome(
            {**result, "reason": "This order already ships to that address.", "unchanged": True}
        )
    abroad = order_address_country_check(order=order, country=address.country)
    if not abroad.allowed:
        within = country_name(order.ship_country)
        return ToolOutcome({**result, "changeable": False, "reason": abroad.reason, "ships_within": within})
    pending[check_key(order)] = {"turn": context.turn, "address": address.as_fields()}
    return ToolOutcome(
        {
            **result,
            "reason": check.reason,
            "current_address": address_line(current),
            "new_address": address.one_line(),
        }
    )


def change_shipping_address(args: OrderArguments, context: ToolContext) -> ToolOutcome:
    order = verified_order(args, context)
    if isinstance(order, ToolOutcome):
        return order
    if refusal := unconfirmed(context, change=CHANGE, check_tool="check_address_change", order=order):
        return refusal
    checked = context.checks(CHANGE).pop(check_key(order))
    try:
        address = shipping_address_clean(fields=checked.get("address") or {})
    except AddressInvalid:
        # Only our own check writes this state; anything else in it is not an address the customer read.
        return error(ToolError.CHECK_NOT_DONE, "Call check_address_change for this order again.")
    try:
        change = conversation_order_address_change(
            conversation=context.conversation, order=order, address=address
        )
    except OrderChangeNotAllowed as refused:
        if refused.code != ADDRESS_UNCHANGED:
            return error(refused.code, refused.message)
        change = None
    if change is not None and change.state == OrderChangeState.AWAITING_SHOP:
        # Asked of the shop that keeps the order: not changed until it says so, nor told so.
        result = {"order_id": order.number, "status": order.status, "new_address": address.one_line(),
                  "address_change_asked": True, "next_steps": ADDRESS_ASKED_NEXT_STEPS}  # fmt: skip
        asked = f"The store was asked to send order {order.number} to {address.one_line()}."
        return ToolOutcome(result, receipt=f"{asked} {ADDRESS_ASKED_NEXT_STEPS}")
    result = {"order_id": order.number, "status": order.status, "shipping_address": address.one_line()}
    receipt = f"Order {order.number} will now ship to {address.one_line()}."
    return ToolOutcome(result, receipt=receipt)


# --- The built-in model's steps ---


def _address_in(text: str) -> dict | None:
    """An address as written in the United States, else as written elsewhere (the order's country's
    rules are the tool's); as written elsewhere first when its postal code comes before the city, as no
    US address has it ("10 Rue de Washington, 75008 Paris" names no state)."""
    abroad = address_abroad_in(text)
    if abroad and abroad["zip"] and text.find(abroad["zip"]) < text.rfind(abroad["city"]):
        return abroad
    return address_in(text) or abroad


def _address_step(task: TaskAt) -> Step:
    """The new address the customer gave since asking, checked for the order, or the question for it."""
    address = latest_found(_address_in, task.reading.units[task.start :])
    if address is None:
        return said("Thanks.", ask(Waiting.ADDRESS, ASK_ADDRESS))
    return ToolCall("check_address_change", {**task.arguments, "new_address": address})


def _check_reply(_reading: Reading, result: dict) -> Said:
    if not result.get("changeable") and result.get("ships_within"):
        # Another country: an address within the order's is still taken, and a person can help abroad.
        another = ask(
            Waiting.ADDRESS,
            f"You can send an address within {result['ships_within']} instead, or ask for a person and our "
            "team will help.",
        )
        return said(f"I checked order {result.get('order_id')}. {result.get('reason', '')}", another)
    if not result.get("changeable"):
        return cannot_change_reply(result)
    if result.get("unchanged"):
        return f"Order {result.get('order_id')} already ships to that address, so there is nothing to change."
    current = f" instead of {result['current_address']}" if result.get("current_address") else ""
    asked = ask(Waiting.CONFIRM_ADDRESS, ADDRESS_CONFIRM_QUESTION)
    return said(
        f"Order {result.get('order_id')} has not shipped yet, so it can still go to a new address. It would "
        f"go to {result.get('new_address')}{current}.",
        asked,
    )


def _changed_reply(_reading: Reading, result: dict) -> str:
    if result.get("address_change_asked"):
        return (
            f"I have asked the store to send order {result.get('order_id')} to {result.get('new_address')}. "
            f"{result.get('next_steps', '')}"
        )
    return f"Done. Order {result.get('order_id')} will now ship to {result.get('shipping_address')}."


def _another_address(words: str, arguments: dict[str, str]) -> ToolCall | None:
    """Another address given in answer: checked in turn."""
    if address := _address_in(words):
        return ToolCall("check_address_change", {**arguments, "new_address": address})
    return None


def _answer_confirmation(reading: Reading) -> Step | None:
    """The answer to "send it to this address?": change it, decline, check another address, or None."""
    return change_answer(
        reading,
        check="check_address_change",
        write="change_shipping_address",
        declined=DECLINED_ADDRESS_REPLY,
        read_new=_another_address,
    )


# --- The capability ---


_SEND_RE = re.compile(r"\b(?:send|ship|deliver|redirect|reroute|route)\b")


def _asks_to_readdress(message: Message) -> Intent | None:
    """Sending an order to another address, unless a return or a status is asked first."""
    if message.asks_a_task_before(message.change.start() if message.change else len(message.text)):
        return None
    return order_readdress_in(message.text)


def _sends_to_an_address(message: Message) -> Intent | None:
    """An order sent to an address given with it: "can you send BK-10089 to <an address>?"."""
    if message.order_id and address_in(message.raw) and _SEND_RE.search(message.text):
        return Intent("address")
    return None


CAPABILITY = Capability(
    name="address_change",
    scope="changing an order's shipping address",
    route="address",
    triggers=(
        Trigger(51, _asks_to_readdress, task="address", over=frozenset({"order_status"}), stands=True),
        Trigger(70, _sends_to_an_address, task="address", stands=True),
    ),
    tools=(
        Tool(
            name="check_address_change",
            description=(
                "Whether an order can go to a new address (only until it ships), the whole address "
                "checked by its country's rules. Read new_address back, ask yes or no. Must pass before "
                "change_shipping_address."
            ),
            arguments=CheckAddressChangeArguments,
            handler=check_address_change,
            progress=(
                "Checking whether order {order} can go to a new address…",
                "Checking whether your order can go to a new address…",
            ),
        ),
        Tool(
            name="change_shipping_address",
            description=(
                "Send the order to the address check_address_change read back: only after the customer "
                "then said yes."
            ),
            arguments=OrderArguments,
            handler=change_shipping_address,
            progress=("Changing the address of order {order}…", "Changing your order's address…"),
            writes=True,
        ),
    ),
    prompt=(
        "- check_address_change: give the result and reason, with the whole new_address read back; if the "
        f"order can no longer change, offer what the reason offers. {LAST_ATTEMPT_RULE}"
    ),
    order_tasks=(
        OrderTask(
            kind="address",
            lead="I can check whether that order can still go to a new address.",
            tool="check_address_change",
            call=_address_step,
            detail=Waiting.ADDRESS,
            detail_again=f"Sorry, I couldn't read that as an address. {ASK_ADDRESS}",
            takes_order_found=False,
        ),
    ),
    answers={Waiting.CONFIRM_ADDRESS: _answer_confirmation},
    replies={"check_address_change": _check_reply, "change_shipping_address": _changed_reply},
)
