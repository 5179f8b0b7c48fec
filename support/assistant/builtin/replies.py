"""Replies to tool results, in fixed words with the results' own values."""

from orders.selectors import ChangeCode, ProblemCode
from orders.services import ITEMS_NEEDED, ReturnRefusal
from support.assistant.builtin.wording import (
    ADDRESS_CONFIRM_QUESTION,
    ASK_ADDRESS,
    ASK_ORDER_NUMBER,
    ASK_WHICH_BOOKS,
    ASK_WHICH_ITEM,
    CANCEL_CONFIRM_QUESTION,
    CHECKS_SPENT_REPLY,
    CONFIRM_QUESTION,
    GENERIC_ERROR_REPLY,
    INVALID_EMAIL_REPLY,
    INVALID_ORDER_NUMBER_REPLY,
    ORDER_NOT_FOUND_REPLY,
    WHICH_ORDER,
    Waiting,
    ask,
)
from support.llm.protocol import (
    OFFER_PERSON,
    ToolError,
)

# --- replies to tool results ---------------------------------------------------------------------


def returnable_titles(result: dict) -> list[str]:
    return [item.get("title", "") for item in result.get("items", []) if item.get("returnable")]


def _join(values: list[str]) -> str:
    if len(values) <= 1:
        return "".join(values)
    return ", ".join(values[:-1]) + " and " + values[-1]


def _refund_sentence(method, days) -> str:
    return f"The refund goes to {method} within {days} business days after we receive the items."


def order_reply(result: dict) -> str:
    # The status word exactly as the result gives it (processing, shipped, delivered, cancelled).
    sentences = [f"The status of order {result.get('order_id')} is {result.get('status')}."]
    if result.get("ordered_on"):
        delivered = f" and delivered on {result['delivered_on']}" if result.get("delivered_on") else ""
        sentences.append(f"It was ordered on {result['ordered_on']}{delivered}.")
    if result.get("tracking_number"):
        sentences.append(f"The tracking number is {result['tracking_number']}.")
    items = [
        item["title"] if item.get("quantity", 1) == 1 else f"{item['quantity']} copies of {item['title']}"
        for item in result.get("items", [])
    ]
    if items:
        sentences.append(f"It contains {_join(items)}.")
    if result.get("shipping_address") and result.get("status") == "processing":
        # While it can still be sent elsewhere; once shipped, the tracking number says where it is.
        sentences.append(f"It is going to {result['shipping_address']}.")
    sentences += _returns_sentences(result.get("returns", []))
    return " ".join(sentences)


def _returns_sentences(returns: list) -> list[str]:
    sentences = []
    for record in returns:
        status = str(record.get("status", "")).replace("_", " ")
        granted = f" {record['exception']}" if isinstance(record.get("exception"), str) else ""
        if isinstance(record.get("our_reason"), str):
            granted += f" Our team's reason: {record['our_reason']}"
        sentences.append(f"Return {record.get('rma_number')} for this order is {status}.{granted}")
    return sentences


def eligibility_reply(result: dict, chosen: list[str] | None) -> str:
    order_id = result.get("order_id")
    if not result.get("eligible"):
        made = _returns_sentences(result.get("returns", []))
        if made and all(item.get("reason") == _IN_OPEN_RETURN for item in result.get("items", [])):
            # Every item is on its way back already (staff may have granted it outside the policy).
            return " ".join([f"Every item of order {order_id} is already part of an open return.", *made])
        return " ".join(
            [
                f"I checked order {order_id}, and it can't be returned. {result.get('reason', '')}".strip(),
                *made,
            ]
        )
    policy = result.get("policy", {})
    sentences = [
        f"Order {order_id} can be returned. {result.get('reason', '')}".strip(),
        f"I can start a return for {_join(chosen or returnable_titles(result))}.",
    ]
    for item in result.get("items", []):
        if item.get("returnable"):
            continue
        if item.get("reason") == _IN_OPEN_RETURN:
            sentences.append(f"{item.get('title')} is already part of an open return.")
        else:
            sentences.append(f"{item.get('title')} can't be returned. {item.get('reason', '')}".strip())
    if policy.get("condition_requirements"):
        sentences.append(policy["condition_requirements"])
    sentences.append(
        _refund_sentence(policy.get("refund_method"), policy.get("refund_timeline_business_days"))
    )
    sentences.append(ask(Waiting.CONFIRM_RETURN, CONFIRM_QUESTION))
    return " ".join(sentences)


_IN_OPEN_RETURN = "This item is already part of an open return."


def which_item_reply(result: dict, returnable: list[str]) -> str:
    titles = ", ".join(returnable[:-1]) + " or " + returnable[-1]
    return (
        f"Order {result.get('order_id')} can be returned. {result.get('reason', '')} "
        f"You can return {titles}. {ask(Waiting.WHICH_ITEM, ASK_WHICH_ITEM)}"
    )


def return_started_reply(result: dict) -> str:
    return " ".join(
        [
            f"Your return has started. Your RMA number is {result.get('rma_number')}, for "
            f"{_join(result.get('items', []))} from order {result.get('order_id')}.",
            result.get("next_steps", ""),
            _refund_sentence(result.get("refund_method"), result.get("refund_timeline_business_days")),
        ]
    )


_ADDRESS_FIELD_WORDS = {
    "to": "recipient's name",
    "line1": "street",
    "line2": "apartment or unit",
    "city": "city",
    "state": "state",
    "zip": "ZIP code",
}


def recent_orders_reply(result: dict) -> str:
    """The signed-in customer's recent orders, one sentence each, then which one they mean."""
    orders = [order for order in result.get("orders", []) if isinstance(order, dict)]
    if not orders:
        return f"I found no recent orders for you. {ask(Waiting.ORDER_NUMBER, ASK_ORDER_NUMBER)}"
    lines = [
        f"Order {order.get('order_id')}, ordered on {order.get('ordered_on')}, is "
        f"{str(order.get('status', '')).replace('_', ' ')}: {_join(order.get('titles') or [])}."
        for order in orders
    ]
    return " ".join(["Here are your recent orders.", *lines, ask(Waiting.WHICH_ORDER, WHICH_ORDER)])


def error_reply(result: dict) -> str:
    """A plain sentence for a tool error; repeats only customer-facing messages from the result."""
    code, message = result.get("error"), result.get("message", "")
    fields = {problem.get("field") for problem in result.get("problems", []) if isinstance(problem, dict)}
    if code == ITEMS_NEEDED:
        titles = result.get("order_titles") or []
        asked = ask(Waiting.WHICH_BOOKS, ASK_WHICH_BOOKS)
        return f"{asked} The order has {_join(titles)}." if titles else asked
    match code:
        case ToolError.ORDER_NOT_FOUND:
            return ask(Waiting.DETAILS_AGAIN, ORDER_NOT_FOUND_REPLY)
        case ToolError.TOO_MANY_FAILED_CHECKS:
            return ask(Waiting.OFFER_PERSON, CHECKS_SPENT_REPLY)
        case ToolError.INVALID_ARGUMENTS if "order_id" in fields:
            return ask(Waiting.DETAILS_AGAIN, INVALID_ORDER_NUMBER_REPLY)
        case ToolError.INVALID_ARGUMENTS if "customer_email" in fields:
            return ask(Waiting.DETAILS_AGAIN, INVALID_EMAIL_REPLY)
        case ToolError.NOT_SIGNED_IN:
            return ask(Waiting.ORDER_NUMBER, ASK_ORDER_NUMBER)
        case ToolError.TOPIC_NOT_SUPPORTED:
            return (
                "I'm sorry, but I don't have a published policy answer for that. I can help with an order, "
                "a return, or another store policy question."
            )
        case ToolError.ELIGIBILITY_NOT_VERIFIED:
            return (
                "Before I can start a return, I need to check that the order can be returned. Please tell "
                "me again that you'd like to return it, and I will check it first."
            )
        case ReturnRefusal.ALREADY_INITIATED:
            return "Those items are already part of an open return, so I did not start a new one."
        case ReturnRefusal.NOT_ELIGIBLE | ReturnRefusal.ITEM_NOT_RETURNABLE:
            return f"I couldn't start that return. {message}".strip()
        case ReturnRefusal.ITEM_NOT_IN_ORDER:
            titles = result.get("order_titles") or []
            listed = f" The items in this order are {_join(titles)}." if titles else ""
            return f"One of those items isn't part of this order, so I did not start a return.{listed}"
        case ToolError.CHECK_NOT_DONE:
            return (
                "Before I can change that order, I need to check it first. Please tell me again what you'd "
                "like to change."
            )
        case ToolError.NOT_CONFIRMED:
            return "I haven't changed your order yet. Please reply yes or no."
        case ToolError.INVALID_ADDRESS:
            named = [
                words for field, words in _ADDRESS_FIELD_WORDS.items() if f"new_address.{field}" in fields
            ]
            verb = "are" if len(named) > 1 else "is"
            missing = _join(named) or "address"
            asked = ask(Waiting.ADDRESS, ASK_ADDRESS)
            return f"I couldn't use that address: the {missing} {verb} missing or not right. {asked}"
        case ChangeCode.SHIPPED | ChangeCode.DELIVERED | ChangeCode.CANCELLED | ChangeCode.HAS_RETURNS:
            return f"I couldn't make that change. {message}".strip()
        case ProblemCode.NOT_SHIPPED | ProblemCode.NOT_DELIVERED | ProblemCode.CANCELLED:
            return f"{message} {ask(Waiting.OFFER_PERSON, OFFER_PERSON)}".strip()
        case ReturnRefusal.REASON_REQUIRED:
            return "Could you tell me briefly why you are returning the items? Then I can start the return."
    return GENERIC_ERROR_REPLY


def _cannot_change_reply(result: dict) -> str:
    """An order that can no longer change: the store's reason, and a person offered when it is on its way
    (staff may still reach the carrier)."""
    reason = result.get("reason", "")
    offer = f" {ask(Waiting.OFFER_PERSON, OFFER_PERSON)}" if result.get("order_status") == "shipped" else ""
    return f"I checked order {result.get('order_id')}. {reason}{offer}".strip()


def _cancellation_check_reply(result: dict) -> str:
    if not result.get("cancellable"):
        return _cannot_change_reply(result)
    items = [
        item.get("title", "")
        if item.get("quantity", 1) == 1
        else f"{item['quantity']} copies of {item['title']}"
        for item in result.get("items", [])
    ]
    contents = f" It contains {_join(items)}." if items else ""
    return (
        f"Order {result.get('order_id')} has not shipped yet, so it can still be cancelled.{contents} "
        f"{ask(Waiting.CONFIRM_CANCEL, CANCEL_CONFIRM_QUESTION)}"
    )


def _address_check_reply(result: dict) -> str:
    if not result.get("changeable"):
        return _cannot_change_reply(result)
    if result.get("unchanged"):
        return f"Order {result.get('order_id')} already ships to that address, so there is nothing to change."
    current = f" instead of {result['current_address']}" if result.get("current_address") else ""
    asked = ask(Waiting.CONFIRM_ADDRESS, ADDRESS_CONFIRM_QUESTION)
    return (
        f"Order {result.get('order_id')} has not shipped yet, so it can still go to a new address. It would "
        f"go to {result.get('new_address')}{current}. {asked}"
    )


def _cancelled_reply(result: dict) -> str:
    done = "was already cancelled" if result.get("already_cancelled") else "is now cancelled"
    return f"Order {result.get('order_id')} {done}. {result.get('next_steps', '')}".strip()


def _address_changed_reply(result: dict) -> str:
    return f"Done. Order {result.get('order_id')} will now ship to {result.get('shipping_address')}."


CHANGE_REPLIES = {
    "check_cancellation": _cancellation_check_reply,
    "check_address_change": _address_check_reply,
    "cancel_order": _cancelled_reply,
    "change_shipping_address": _address_changed_reply,
}
