"""The built-in model's own sentences, and its questions as data: the words, and what it then waits for."""

from dataclasses import dataclass
from enum import StrEnum

from orders.numbers import ORDER_NUMBERS
from support.llm.protocol import (
    OFFER_PERSON,
)


# The questions this model asks. Asking one (ask) gives its words with what the model then waits for
# (Waiting): data the step returns, stored with the reply; the next turn reads that, never these words.
def ask_order_number() -> str:
    """Asked when no order is named (what a number starts with: the store's shapes now)."""
    return ORDER_NUMBERS.starts_with(
        "What is the order number? It starts with {prefix} and is in your order confirmation email.",
        "What is the order number? It is in your order confirmation email.",
    )


ASK_EMAIL = "What is the email address on the order?"
WHICH_ORDER = "Which order is it about?"
CONFIRM_QUESTION = "Would you like me to start this return? Please reply yes or no."
ASK_WHICH_ITEM = "Which would you like to return?"
ASK_WHICH_BOOKS = "Which of the books does this concern?"
ASK_WHICH_TASK = "Would you like me to check the status of that order, or start a return?"
ASK_ADDRESS = (
    "What is the new shipping address? Please send the street, apartment or unit if any, city, state or "
    "region and ZIP or postal code, separated by commas, and the recipient's name first if it changes."
)
CANCEL_CONFIRM_QUESTION = "Would you like me to cancel this order? Please reply yes or no."
ADDRESS_CONFIRM_QUESTION = "Shall I send the order to this new address? Please reply yes or no."
ASK_WHICH_POLICY = (
    # No credential word, not even as a topic's name: layer 4 holds any for a request.
    "Which store policy would you like to know about, for example shipping, returns or signing in?"
)
# The FAQ topics a question may be about, asked (their titles follow the lead), with a person for
# anything else: a yes has one meaning (the one topic asked about).
WHICH_TOPIC_LEAD = "Is your question about"
WHICH_TOPIC_ONE = (
    "If it's about something else, just say so and I can pass it to a member of our support team."
)
WHICH_TOPIC_SEVERAL = (
    "Tell me which, or if it's about something else, I can pass it to a member of our support team."
)

GREETING_REPLY = (
    "Hello! I'm Bookly's automated support assistant. I can help with order status, returns, changing "
    "an order before it ships, delivery problems and store policies. How can I help?"
)
HELP_REPLY = GREETING_REPLY.removeprefix("Hello! ")
THANKS_REPLY = (
    "You're welcome! If you need anything else with an order, a return, a delivery or a store policy, "
    "just ask."
)
DECLINE_REPLY = "No problem. If you need anything else with an order, a return or a store policy, just ask."
GOODBYE_REPLY = "Goodbye, and thanks for visiting Bookly! Come back any time you need help with an order."
ANYTHING_ELSE_REPLY = (
    "Is there anything else I can help with? I can check an order, start a return or share a policy."
)


def no_number_reply() -> str:
    return (
        "I'm not able to look up orders by email alone. Your order number is in your order confirmation "
        "email" + ORDER_NUMBERS.starts_with(" and starts with {prefix}.", ".") + " Once you have it, I can "
        "help with that order."
    )


DECLINED_REPLY = (
    "Okay, I have not started a return. If you change your mind, just ask and I can check the order again."
)
ORDER_NOT_FOUND_REPLY = (
    "I couldn't find an order that matches that order number together with that email address. Could you "
    "check both and send them again?"
)
# Too many order/email checks failed: no more guesses, a person offered (a yes hands over).
CHECKS_SPENT_REPLY = (
    "I'm sorry, I can't check any more order numbers or email addresses right now. " + OFFER_PERSON
)


# An order number many guessed at: its check needs the code emailed to the order (whether the email
# given was right is not said).
CODE_NEEDED_REPLY = (
    "For this order I need one more check. If that email address is the one on the order, we have just "
    "emailed it a 6-digit code (an email with a code sent in the last few minutes holds too). To see your "
    "order, please type that code here."
)
# Failed checks just before: the next may be made after a short wait.
CHECK_TOO_SOON_REPLY = "Please check the order number and the email address, and send them again in a moment."


# A question about the store that no FAQ topic answers: said honestly, with a person offered.
def invalid_order_number_reply() -> str:
    return (
        "That order number doesn't look quite right."
        + ORDER_NUMBERS.starts_with(" Order numbers start with {prefix} followed by digits.", "")
        + " Could you check your order confirmation email and send it again?"
    )


INVALID_EMAIL_REPLY = (
    "That email address doesn't look right. Could you send the email address on the order again?"
)
NO_POLICY_REPLY = (
    "I don't have a store policy on that, so I can't answer it myself. Would you like me to pass your "
    "question to a member of our support team?"
)
DECLINED_CANCEL_REPLY = "Okay, I have not cancelled the order. It will ship as planned."
DECLINED_ADDRESS_REPLY = "Okay, I have not changed the address. The order still goes to the address on file."
GENERIC_ERROR_REPLY = (
    "Sorry, something went wrong on my side while checking that. Could you try again? I can help with an "
    "order, a return or a store policy."
)


# Intent vocabulary, matched against lower-cased text with straight apostrophes.
class Waiting(StrEnum):
    """What the model waits for after its reply: returned with the question (ask), read back next turn."""

    ORDER_NUMBER = "order_number"
    CONFIRM_ORDER_NUMBER = "confirm_order_number"  # "Is 1050 your order number?"
    EMAIL = "email"
    DETAILS_AGAIN = "details_again"  # the number and email found nothing, or one was malformed
    WHICH_ORDER = "which_order"  # the signed-in customer's orders were listed
    WHICH_SHOP = "which_shop"  # the customer has an order of that number in several shops
    CODE = "code"  # the one-time code emailed to an order many guessed at (support/assistant/check_codes.py)
    CONFIRM_RETURN = "confirm_return"
    WHICH_ITEM = "which_item"
    WHICH_BOOKS = "which_books"
    CONFIRM_CANCEL = "confirm_cancel"
    CONFIRM_ADDRESS = "confirm_address"
    ADDRESS = "address"
    PASS_ON = "pass_on"  # noqa: S105 (no password) a store question no policy answers, offered to staff
    OFFER_PERSON = "offer_person"
    WHICH_TOPIC = "which_topic"  # the FAQ topics a question may be about were named


# Messages that answer a question for an order's details (read as such, however worded).
ASKS_FOR_DETAILS = frozenset(
    {
        Waiting.ORDER_NUMBER,
        Waiting.CONFIRM_ORDER_NUMBER,
        Waiting.EMAIL,
        Waiting.DETAILS_AGAIN,
        Waiting.WHICH_ORDER,
    }
)


@dataclass(frozen=True)
class Asked:
    """Words that ask a question, and what the model then waits for: a step returns it, and the model
    stores `waiting` with the reply (OfflineModel.create). Not a str, so that what it waits for is never
    lost in an f-string or a join (either refuses it): words around it are added with `said`."""

    text: str
    waiting: Waiting

    def __format__(self, spec: str) -> str:
        raise TypeError("an Asked in an f-string would lose what it waits for: compose it with said()")


# What a step says: words that ask nothing (str), or words that ask (Asked).
Said = str | Asked


def ask(waiting: Waiting, sentence: str) -> Asked:
    """The sentence that asks, with what the model then waits for."""
    return Asked(sentence, waiting)


def said(*parts: Said) -> Said:
    """The parts said one after another (joined by a space), waiting for what the last question among them
    asks; words that ask nothing when none does."""
    text = " ".join(words_of(part) for part in parts)
    waiting = [part.waiting for part in parts if isinstance(part, Asked)]
    return Asked(text, waiting[-1]) if waiting else text


def words_of(step: Said) -> str:
    """What the customer reads of it."""
    return step.text if isinstance(step, Asked) else step
