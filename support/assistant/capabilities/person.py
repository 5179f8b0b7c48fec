"""A person: the conversation is handed to support staff when the customer asks, or needs what only
staff can do."""

from typing import Annotated

from pydantic import Field

from support.assistant.capabilities.arguments import SummaryArgument, ToolArguments
from support.assistant.capabilities.base import (
    EVERY_CAPABILITY,
    Capability,
    HandoffAsked,
    Tool,
    ToolContext,
    ToolOutcome,
    Trigger,
)
from support.assistant.understanding.history import Intent
from support.assistant.understanding.message import Message
from support.assistant.understanding.vocabulary import ARE_YOU_HUMAN_RE, PERSON_RE
from support.assistant.understanding.wording import GENERIC_ERROR_REPLY
from support.conversations.selectors import staff_available_now
from support.conversations.waiting import waiting_notice
from support.llm.protocol import HANDOFF_TOOL, HandoffAsk

HANDED_OVER_REPLY = "I've passed this conversation to our support team."


class HandOffArguments(ToolArguments):
    reason: Annotated[HandoffAsk, Field(strict=False)]
    summary: Annotated[SummaryArgument, Field(description="For staff, one line: what they need.")]


def hand_off_to_person(args: HandOffArguments, context: ToolContext) -> ToolOutcome:
    available = staff_available_now()
    # What happens next (who joins, when, where else we answer) is the page's notice under the reply,
    # kept up to date as staff come and go: said once, there, not in the reply as well.
    next_steps = waiting_notice(staff_available=available, email=context.conversation.customer_email)
    # Stored with the turn: the conversation waits for a person once the reply is kept.
    context.handoff = HandoffAsked(reason=args.reason, summary=args.summary, reply=HANDED_OVER_REPLY)
    return ToolOutcome(
        {
            "handed_off": True,
            "staff_available_now": available,
            "tell_the_customer": HANDED_OVER_REPLY,
            "shown_to_the_customer_below": next_steps,
        }
    )


# --- The built-in model's steps ---


def _asks_for_a_person(message: Message) -> Intent | None:
    """A person asked for in so many words, unless only "are you a person?" names one."""
    asking_if_human = ARE_YOU_HUMAN_RE.search(message.text)
    for found in PERSON_RE.finditer(message.text):
        if (
            not asking_if_human
            or found.start() >= asking_if_human.end()
            or found.end() <= asking_if_human.start()
        ):
            return Intent("person")
    return None


CAPABILITY = Capability(
    name="person",
    route="person",
    old_design=True,
    triggers=(Trigger(10, _asks_for_a_person, over=EVERY_CAPABILITY),),
    tools=(
        Tool(
            name=HANDOFF_TOOL,
            description=(
                "Hand the chat to support staff: the customer asks for a person (customer_asked), or needs "
                "what only staff can do, like a complaint (needs_staff). Then say only the "
                "result's tell_the_customer."
            ),
            arguments=HandOffArguments,
            handler=hand_off_to_person,
            progress=("Asking a member of our team to join…", "Asking a member of our team to join…"),
        ),
    ),
    prompt="",  # its rule is critical rule 6
    # The built-in model says only the tool's own words.
    replies={HANDOFF_TOOL: lambda _reading, result: result.get("tell_the_customer") or GENERIC_ERROR_REPLY},
)
