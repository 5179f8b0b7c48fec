"""What Bookly's assistant and any model answering it agree on, beyond the Messages API itself.

The assistant writes these into the system prompt, the reminders and the tool
results; a model reads them there. The offline model reads them from here, so
the two never drift apart.
"""

import html
import re
from dataclasses import dataclass
from enum import StrEnum

from store.text import text_single_line

# The one sentence for anything outside order status, returns and store policies.
REFUSAL_TEMPLATE = (
    "I'm sorry, but I can only help with order status, returns, and our store policies, "
    "so I can't help with {topic}."
)

# The question that offers a person, after a refusal of a store request or an order that can no longer
# change: the assistant's fixed words, with Claude and the offline model alike.
OFFER_PERSON = "Would you like me to pass this to a member of our support team?"

# A reply that offers to pass the customer's request to a person (a "yes" then hands over): what turns a
# refusal of a store request, or "no policy on that", from a dead end into a way on.
OFFERS_PERSON_RE = re.compile(
    r"\b(?:pass|hand|forward|connect|put|send|bring in)\b[^.?!]{0,60}\b(?:team|person|people|staff|colleague|"
    r"someone|somebody)\b[^.?!]{0,40}\?",
    re.IGNORECASE,
)


def policy_quote(*, title: str, text: str) -> str:
    """A FAQ answer as the customer reads it: its title, then staff's text word for word. The assistant
    answers a question only the FAQ needs in these words, without a second model call; the offline
    model quotes the same way when a policy is one of several answers."""
    return f"{title}: {text}"


# The per-turn reminder travels as its own text block of the customer's message,
# wrapped in this tag: rules for the model, not words of the customer.
REMINDER_TAG = "reminder"


def reminder_block_text(rules: str) -> str:
    return f"<{REMINDER_TAG}>{rules}</{REMINDER_TAG}>"


def is_reminder(text: str) -> bool:
    return text.lstrip().startswith(f"<{REMINDER_TAG}>")


# A customer the store signed in (support.conversations.identity): every turn's reminder says so, with
# the email the store vouched for, wrapped in this tag.
SIGNED_IN_TAG = "signed_in"
_SIGNED_IN_RE = re.compile(rf"<{SIGNED_IN_TAG}>([^<\s]+@[^<\s]+?):")


def signed_in_text(email: str) -> str:
    """The line of a turn's reminder for a signed-in customer (the email is a valid address: no < or
    whitespace, so it cannot close the tag)."""
    return (
        f"<{SIGNED_IN_TAG}>{email}: the store signed this customer in; it is the email on their orders. "
        "Use it as customer_email without asking; list_recent_orders lists their orders.</"
        f"{SIGNED_IN_TAG}>"
    )


def signed_in_email_in(text: str) -> str:
    """The signed-in customer's email a reminder names, or ""."""
    match = _SIGNED_IN_RE.search(text)
    return match.group(1) if match else ""


# What a member of staff wrote to the customer reaches the model, once the assistant answers again,
# as a block of the customer's side of the history wrapped in this tag: context, not the customer's words.
STAFF_MESSAGE_TAG = "staff_message"


def staff_message_block_text(text: str) -> str:
    return f"<{STAFF_MESSAGE_TAG}>{text}</{STAFF_MESSAGE_TAG}>"


def is_staff_message(text: str) -> bool:
    return text.lstrip().startswith(f"<{STAFF_MESSAGE_TAG}>")


# The tool that hands a conversation to support staff, and its reason codes.
HANDOFF_TOOL = "hand_off_to_person"


class HandoffAsk(StrEnum):
    CUSTOMER_ASKED = "customer_asked"  # the customer asked for a person
    NEEDS_STAFF = "needs_staff"  # something only staff can do


_TAG_LOOKALIKE = re.compile(rf"<(/?)({REMINDER_TAG}|{STAFF_MESSAGE_TAG}|{SIGNED_IN_TAG})\b", re.IGNORECASE)


# What stands in for "<" before a tag-like word in a customer's message.
TAG_STAND_IN = "\u2039"  # single left-pointing angle quotation mark


def protocol_tags_neutralised(text: str) -> str:
    """A customer's words with anything that looks like our tags turned harmless (the "<" of
    "<reminder" becomes TAG_STAND_IN): they cannot pose as our rules or as staff, to a model or to
    staff reading them."""
    return _TAG_LOOKALIKE.sub(TAG_STAND_IN + r"\1\2", text)


class ToolError(StrEnum):
    """The `error` codes of tool results the tools produce themselves.

    A refused return or order change passes on the store's own code (orders.services.ReturnRefusal,
    orders.selectors.ChangeCode).
    """

    UNKNOWN_TOOL = "unknown_tool"
    INVALID_ARGUMENTS = "invalid_arguments"
    CALL_LIMIT_REACHED = "call_limit_reached"
    ORDER_NOT_FOUND = "order_not_found"
    # The customer has an order of that number in several shops and has not said which.
    WHICH_SHOP = "which_shop"
    ELIGIBILITY_NOT_VERIFIED = "eligibility_not_verified"
    TOPIC_NOT_SUPPORTED = "topic_not_supported"
    # An order change asked for without its check passing first, or before the customer said yes.
    CHECK_NOT_DONE = "check_not_done"
    NOT_CONFIRMED = "not_confirmed"
    INVALID_ADDRESS = "invalid_address"
    # list_recent_orders for a customer the store did not sign in.
    NOT_SIGNED_IN = "not_signed_in"
    # A call past the calls one model response may make: not run.
    TOO_MANY_TOOL_CALLS = "too_many_tool_calls"
    # Too many order/email checks failed lately (for this order, conversation or client): none is made.
    TOO_MANY_FAILED_CHECKS = "too_many_failed_checks"
    # A check made too soon after failed ones from the same customer (the growing delay): not made.
    CHECK_TOO_SOON = "check_too_soon"
    # An order number with too many wrong guesses from anyone: its check needs a one-time code emailed
    # to the order too.
    CODE_NEEDED = "code_needed"


# The FAQ topics, as the system prompt lists them between <faq_topics> tags: one line each with the
# key lookup_policy takes, the title, and how customers ask about it (staff write these questions).
FAQ_TOPICS_TAG = "faq_topics"
_QUESTIONS_JOIN = " | "
_FAQ_TOPIC_LINE_RE = re.compile(r"^- ([a-z_]{1,40}): (.*?)\. Asked as: (.*)$", re.MULTILINE)


@dataclass(frozen=True)
class FaqTopic:
    key: str
    title: str
    questions: tuple[str, ...]
    answer: str = ""  # the topic's text, where a model is given it (the built-in one's FAQ reader)


def faq_topic_line(topic: FaqTopic) -> str:
    """One line of the system prompt. Staff wrote the title and questions: on one line each, without
    < > or |, they cannot close the prompt's sections or open one, whatever a row holds."""
    title = _PROMPT_UNSAFE_RE.sub("", text_single_line(topic.title))
    questions = [_PROMPT_UNSAFE_RE.sub("", text_single_line(question)) for question in topic.questions]
    return f"- {topic.key}: {title}. Asked as: {_QUESTIONS_JOIN.join(questions)}"


_PROMPT_UNSAFE_RE = re.compile(r"[<>|]")


def faq_topics_in(system_text: str) -> list[FaqTopic]:
    """The FAQ topics a system prompt lists (the offline model reads them there, as Claude does)."""
    section = re.search(rf"<{FAQ_TOPICS_TAG}>(.*?)</{FAQ_TOPICS_TAG}>", system_text, re.DOTALL)
    if section is None:
        return []
    return [
        FaqTopic(key=key, title=title, questions=tuple(questions.split(_QUESTIONS_JOIN)))
        for key, title, questions in _FAQ_TOPIC_LINE_RE.findall(section.group(1))
    ]


# A list of content parts written out ([{'type': 'text', 'text': ...}], as JSON or a Python repr): what a
# chat template that does not take content-part arrays shows the model, which it may then write back. One
# definition for the adapter's check of a server and for the validator (layer 4), which refuses it.
CONTENT_PARTS_RE = re.compile(
    r"""[\[{,]\s*['"](?:type|text|tool_use_id|tool_call_id|role|content|input|function|arguments)['"]\s*:"""
    r"""|['"]type['"]\s*:\s*['"](?:text|tool_use|tool_result|image|function)['"]""",
    re.IGNORECASE,
)


def content_parts_in(text: str) -> re.Match | None:
    """Content-part syntax in `text`, HTML-escaped or not (`[{&#39;type&#39;: ...`); the match is in the
    unescaped text."""
    return CONTENT_PARTS_RE.search(html.unescape(text))
