"""Cancelling an order before it ships: a check the customer reads, then their yes."""

from typing import Any

from orders.models import Order, OrderChangeKind, OrderChangeState, OrderStatus
from orders.selectors import ChangeCode, order_change_check
from orders.services import OrderChangeNotAllowed
from support.assistant.capabilities.arguments import OrderArguments
from support.assistant.capabilities.base import (
    Capability,
    OrderTask,
    Tool,
    ToolContext,
    ToolOutcome,
    Trigger,
    check_key,
    error,
    unconfirmed,
    verified_order,
)
from support.assistant.capabilities.steps import (
    LAST_ATTEMPT_RULE,
    cannot_change_reply,
    change_answer,
    joined,
    last_attempt_of,
)
from support.assistant.understanding.history import Intent
from support.assistant.understanding.message import Message
from support.assistant.understanding.step import Reading, Step
from support.assistant.understanding.vocabulary import order_cancel_in
from support.assistant.understanding.wording import (
    CANCEL_CONFIRM_QUESTION,
    DECLINED_CANCEL_REPLY,
    Said,
    Waiting,
    ask,
    said,
)
from support.conversations.services import conversation_order_cancel

CHANGE = "cancel"  # its key in ToolContext.change_checks
CANCELLED_NEXT_STEPS = "The order will not ship. Nothing more is needed from you."
CANCEL_ASKED_NEXT_STEPS = "You will get an email as soon as the store has cancelled it."


def check_cancellation(args: OrderArguments, context: ToolContext) -> ToolOutcome:
    order = verified_order(args, context)
    if isinstance(order, ToolOutcome):
        return order
    check = order_change_check(order=order, kind=OrderChangeKind.CANCELLED)
    if check.allowed:
        context.checks(CHANGE)[check_key(order)] = {"turn": context.turn}
    else:
        context.checks(CHANGE).pop(check_key(order), None)
    return ToolOutcome(
        {
            "order_id": order.number,
            "order_status": order.status,
            "cancellable": check.allowed,
            "reason": check.reason,
            "items": [{"title": item.title, "quantity": item.quantity} for item in order.items.all()],
            **last_attempt_of(check),
        }
    )


def cancel_order(args: OrderArguments, context: ToolContext) -> ToolOutcome:
    order = verified_order(args, context)
    if isinstance(order, ToolOutcome):
        return order
    if order.status == OrderStatus.CANCELLED:
        return _order_cancelled(order, already=True)  # asked again: done already, and said so
    if refusal := unconfirmed(context, change=CHANGE, check_tool="check_cancellation", order=order):
        return refusal
    context.checks(CHANGE).pop(check_key(order), None)
    try:
        change = conversation_order_cancel(conversation=context.conversation, order=order)
    except OrderChangeNotAllowed as refused:
        if refused.code == ChangeCode.CANCELLED:
            return _order_cancelled(order, already=True)
        # Shipped since the check: the store's reason, and what to do instead.
        return error(refused.code, refused.message)
    if change.state == OrderChangeState.AWAITING_SHOP:
        # Asked of the shop that keeps the order: not cancelled until it says so, nor told so.
        result = {"order_id": order.number, "status": order.status, "cancellation_asked": True,
                  "next_steps": CANCEL_ASKED_NEXT_STEPS}  # fmt: skip
        return ToolOutcome(
            result, receipt=f"The store was asked to cancel order {order.number}. {CANCEL_ASKED_NEXT_STEPS}"
        )
    return _order_cancelled(order)


def _order_cancelled(order: Order, *, already: bool = False) -> ToolOutcome:
    result: dict[str, Any] = {
        "order_id": order.number,
        "status": OrderStatus.CANCELLED,
        "next_steps": CANCELLED_NEXT_STEPS,
    }
    if already:
        result["already_cancelled"] = True
    receipt = f"Order {order.number} is cancelled. {CANCELLED_NEXT_STEPS}"
    return ToolOutcome(result, receipt=receipt)


# --- The built-in model's steps ---


def _check_reply(_reading: Reading, result: dict) -> Said:
    if not result.get("cancellable"):
        return cannot_change_reply(result)
    items = [
        item.get("title", "")
        if item.get("quantity", 1) == 1
        else f"{item['quantity']} copies of {item['title']}"
        for item in result.get("items", [])
    ]
    contents = f" It contains {joined(items)}." if items else ""
    return said(
        f"Order {result.get('order_id')} has not shipped yet, so it can still be cancelled.{contents}",
        ask(Waiting.CONFIRM_CANCEL, CANCEL_CONFIRM_QUESTION),
    )


def _cancelled_reply(_reading: Reading, result: dict) -> str:
    if result.get("cancellation_asked"):
        return (
            f"I have asked the store to cancel order {result.get('order_id')}. {result.get('next_steps', '')}"
        )
    done = "was already cancelled" if result.get("already_cancelled") else "is now cancelled"
    return f"Order {result.get('order_id')} {done}. {result.get('next_steps', '')}".strip()


def _answer_confirmation(reading: Reading) -> Step | None:
    """The answer to "cancel this order?": cancel it, decline, or None (not an answer)."""
    return change_answer(
        reading,
        check="check_cancellation",
        write="cancel_order",
        declined=DECLINED_CANCEL_REPLY,
        to_cancel=True,
    )


# --- The capability ---


def _asks_to_cancel(message: Message) -> Intent | None:
    """Cancelling an order (or what cancelling costs), unless a return or a status is asked first."""
    if message.asks_a_task_before(message.change.start() if message.change else len(message.text)):
        return None
    return order_cancel_in(message.text)


CAPABILITY = Capability(
    name="cancellation",
    scope="cancelling an order",
    route="cancel",
    triggers=(
        Trigger(
            50,
            _asks_to_cancel,
            task="cancel",
            over=frozenset({"address_change", "returns", "order_status"}),
            stands=True,
        ),
    ),
    tools=(
        Tool(
            name="check_cancellation",
            description=(
                "Whether an order can be cancelled (only until it ships), and if not, why and what "
                "instead. Must pass before cancel_order."
            ),
            arguments=OrderArguments,
            handler=check_cancellation,
            progress=(
                "Checking whether order {order} can be cancelled…",
                "Checking whether your order can be cancelled…",
            ),
        ),
        Tool(
            name="cancel_order",
            description=(
                "Cancel an order: only after check_cancellation passed and the customer then said yes."
            ),
            arguments=OrderArguments,
            handler=cancel_order,
            progress=("Cancelling order {order}…", "Cancelling your order…"),
            writes=True,
        ),
    ),
    prompt=(
        "- check_cancellation: give the result and reason; if the order can no longer change, offer what "
        f"the reason offers. {LAST_ATTEMPT_RULE}"
    ),
    order_tasks=(
        OrderTask(
            kind="cancel",
            lead="I can check whether that order can still be cancelled.",
            tool="check_cancellation",
            takes_order_found=False,
        ),
    ),
    answers={Waiting.CONFIRM_CANCEL: _answer_confirmation},
    replies={"check_cancellation": _check_reply, "cancel_order": _cancelled_reply},
)
