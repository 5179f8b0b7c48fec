"""Replies to tool results, in fixed words with the results' own values: the capability's reply to its
tool's result (support/assistant/capabilities/), and the built-in model's own to an error."""

from orders.selectors import ChangeCode, ProblemCode
from orders.services import ITEMS_NEEDED, ReturnRefusal
from support.assistant.capabilities.registry import REPLIES
from support.assistant.capabilities.steps import joined, with_last_attempt
from support.assistant.understanding.step import Reading
from support.assistant.understanding.wording import (
    ASK_ADDRESS,
    ASK_WHICH_BOOKS,
    CHECK_TOO_SOON_REPLY,
    CHECKS_SPENT_REPLY,
    CODE_NEEDED_REPLY,
    GENERIC_ERROR_REPLY,
    INVALID_EMAIL_REPLY,
    ORDER_NOT_FOUND_REPLY,
    Said,
    Waiting,
    ask,
    ask_order_number,
    invalid_order_number_reply,
    said,
)
from support.llm.protocol import (
    OFFER_PERSON,
    ToolError,
)


def reply_to_result(reading: Reading, tool_use: dict, result: dict) -> Said:
    """The reply to one tool result: an error's in our words, else the capability's."""
    if "error" in result or not result:
        return error_reply(result)
    name = tool_use.get("name")
    reply = REPLIES.get(name) if isinstance(name, str) else None
    # A change check saying the store did not make the last change of its kind: said before the rest.
    return with_last_attempt(result, reply(reading, result)) if reply else GENERIC_ERROR_REPLY


_ADDRESS_FIELD_WORDS = {
    "to": "recipient's name",
    "line1": "street",
    "line2": "apartment or unit",
    "city": "city",
    "state": "state or region",
    "zip": "ZIP or postal code",
    "country": "country",
}


def _address_problems(result: dict) -> str:
    """What is wrong with each field of an address, in the store's words: "the state or region must be a
    state of Australia, like ACT or Australian Capital Territory"."""
    problems = {
        problem.get("field"): problem.get("problem")
        for problem in result.get("problems", [])
        if isinstance(problem, dict) and isinstance(problem.get("problem"), str)
    }
    said = [
        f"the {words} {problems[f'new_address.{field}']}"
        for field, words in _ADDRESS_FIELD_WORDS.items()
        if f"new_address.{field}" in problems
    ]
    return joined(said) or "the address is missing or not right"


def error_reply(result: dict) -> Said:
    """A plain sentence for a tool error; repeats only customer-facing messages from the result."""
    code, message = result.get("error"), result.get("message", "")
    fields = {problem.get("field") for problem in result.get("problems", []) if isinstance(problem, dict)}
    if code == ITEMS_NEEDED:
        titles = result.get("order_titles") or []
        asked = ask(Waiting.WHICH_BOOKS, ASK_WHICH_BOOKS)
        return said(asked, f"The order has {joined(titles)}.") if titles else asked
    match code:
        case ToolError.ORDER_NOT_FOUND:
            return ask(Waiting.DETAILS_AGAIN, ORDER_NOT_FOUND_REPLY)
        case ToolError.WHICH_SHOP if result.get("shops"):
            shops = joined([str(shop) for shop in result["shops"]], "or")
            return ask(
                Waiting.WHICH_SHOP,
                f"You have an order {result.get('order_id')} with more than one of our shops. Which shop "
                f"is it from: {shops}?",
            )
        case ToolError.TOO_MANY_FAILED_CHECKS:
            return ask(Waiting.OFFER_PERSON, CHECKS_SPENT_REPLY)
        case ToolError.CHECK_TOO_SOON:
            return ask(Waiting.DETAILS_AGAIN, CHECK_TOO_SOON_REPLY)
        case ToolError.CODE_NEEDED:
            return ask(Waiting.CODE, CODE_NEEDED_REPLY)
        case ToolError.INVALID_ARGUMENTS if "order_id" in fields:
            return ask(Waiting.DETAILS_AGAIN, invalid_order_number_reply())
        case ToolError.INVALID_ARGUMENTS if "customer_email" in fields:
            return ask(Waiting.DETAILS_AGAIN, INVALID_EMAIL_REPLY)
        case ToolError.NOT_SIGNED_IN:
            return ask(Waiting.ORDER_NUMBER, ask_order_number())
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
            listed = f" The items in this order are {joined(titles)}." if titles else ""
            return f"One of those items isn't part of this order, so I did not start a return.{listed}"
        case ToolError.CHECK_NOT_DONE:
            return (
                "Before I can change that order, I need to check it first. Please tell me again what you'd "
                "like to change."
            )
        case ToolError.NOT_CONFIRMED:
            return "I haven't changed your order yet. Please reply yes or no."
        case ToolError.INVALID_ADDRESS:
            asked = ask(Waiting.ADDRESS, ASK_ADDRESS)
            return said(f"I couldn't use that address: {_address_problems(result)}.", asked)
        case ChangeCode.OTHER_COUNTRY:
            return ask(Waiting.OFFER_PERSON, f"{message} {OFFER_PERSON}".strip())
        case ChangeCode.SHIPPED | ChangeCode.DELIVERED | ChangeCode.CANCELLED | ChangeCode.HAS_RETURNS:
            return f"I couldn't make that change. {message}".strip()
        case ChangeCode.AWAITING_SHOP:
            return message or GENERIC_ERROR_REPLY  # the store's own words: it is making a change already
        case ProblemCode.NOT_SHIPPED | ProblemCode.NOT_DELIVERED | ProblemCode.CANCELLED:
            return ask(Waiting.OFFER_PERSON, f"{message} {OFFER_PERSON}".strip())
        case ReturnRefusal.REASON_REQUIRED:
            return "Could you tell me briefly why you are returning the items? Then I can start the return."
    return GENERIC_ERROR_REPLY
