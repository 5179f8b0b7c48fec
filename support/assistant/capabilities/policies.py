"""Store policies: the published FAQ answer for a topic, quoted word for word."""

import re
from typing import Annotated

from pydantic import BeforeValidator, Field

from orders.numbers import ORDER_NUMBERS
from orders.patterns import EMAIL_MENTION_RE, RMA_NUMBER_MENTION_RE
from policies.models import TOPIC_KEY_PATTERN
from policies.selectors import policy_entry_get_published, policy_entry_list_published
from support.assistant.capabilities.arguments import ToolArguments, clean_text, shaped
from support.assistant.capabilities.base import Capability, Tool, ToolContext, ToolOutcome, error
from support.llm.protocol import ToolError, policy_quote

_TOPIC_RE = re.compile(TOPIC_KEY_PATTERN)


def _topic(value: str) -> str | None:
    value = value.lower()
    return value if _TOPIC_RE.fullmatch(value) else None


class LookupPolicyArguments(ToolArguments):
    topic: Annotated[
        str,
        Field(min_length=1, max_length=40, description="A topic key, like shipping."),
        BeforeValidator(clean_text),  # after Field: cleaned, then measured as a string
        shaped(_topic, "shipping"),
    ]


def lookup_policy(args: LookupPolicyArguments, context: ToolContext) -> ToolOutcome:
    entry = policy_entry_get_published(topic=args.topic)
    if entry is None:
        return error(
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


CAPABILITY = Capability(
    name="policies",
    route="policy:{topic}",
    old_design=True,
    tools=(
        Tool(
            name="lookup_policy",
            description=(
                "The published FAQ answer for a topic key from faq_topics. The customer reads it word for "
                "word at once: if the message asks for more, call the other tools in the same step."
            ),
            arguments=LookupPolicyArguments,
            handler=lookup_policy,
            progress=("Looking up our policy…", "Looking up our policy…"),
        ),
    ),
    prompt="",  # its rules are critical rule 3 and the faq_topics section
    # The built-in model quotes the answer as published.
    replies={
        "lookup_policy": lambda _reading, result: policy_quote(
            title=result.get("title", ""), text=result.get("text", "")
        )
    },
)
