"""What the customer reads in the chat about a change the store did not make (the shop that keeps the
order refused it, or failed for good), told once (support.conversations.not_made keeps which).

Fixed words of ours, never a model's nor the shop's: the store's sentence for the change
(orders.selectors.order_change_not_made_reason: "The store could not cancel order BK-10103: it has
already been handed to the carrier.") and a person offered. The turn (support.assistant.turn) puts
them before its reply, ahead of anything else about the order (after it, for a change asked in that
very turn that the shop refused while it ran); the page (GET /api/chat, the chat page) shows them as a
message of their own while the customer is in the conversation.
"""

from datetime import datetime

from orders.selectors import order_change_not_made_reason
from support.assistant.capabilities.steps import NOT_MADE_HELP
from support.assistant.understanding.wording import Waiting
from support.conversations.models import MODEL_ANSWERS, Conversation
from support.conversations.not_made import (
    ChangeNotMade,
    conversation_not_made_message_add,
    conversation_store_news,
)
from support.llm.protocol import OFFER_PERSON


def not_made_sentences(changes: list[ChangeNotMade]) -> list[str]:
    return [order_change_not_made_reason(order=change.order, kind=change.kind) for change in changes]


def not_made_told(changes: list[ChangeNotMade], *, reply: str, asked_since: datetime) -> tuple[str, str]:
    """What the turn says of changes the store did not make, (before its reply, after it), each part
    with who can help ("" for none): before, ahead of anything else about the order; after, for a change
    asked in this very turn (asked_since: the turn's start) that the shop refused while it ran, as its
    reply says it was asked. A sentence the reply says already (a check's last_attempt_failed, said by
    the model) is not said again."""
    said = [
        (change.asked_at >= asked_since, sentence)
        for change in changes
        if (sentence := order_change_not_made_reason(order=change.order, kind=change.kind)) not in reply
    ]
    before = [sentence for now, sentence in said if not now]
    after = [sentence for now, sentence in said if now]
    return (
        " ".join([*before, NOT_MADE_HELP]) if before else "",
        " ".join([*after, *([] if before else [NOT_MADE_HELP])]) if after else "",
    )


def conversation_news_tell(*, conversation: Conversation | None) -> bool:
    """For the customer's page asking for news of its conversation (GET /api/chat, the page): tell
    them of the changes asked in it the store did not make, in a message of its own, once (never while
    a turn runs: the turn tells them). While the assistant answers it offers a person (a yes hands the
    conversation over); otherwise a person answers, or closed it, already. Returns whether there is
    still news to come from the store (the page asks again meanwhile)."""
    if conversation is None:
        return False
    news = conversation_store_news(conversation_id=conversation.pk)
    if not news.not_made:
        return news.awaiting
    sentences, state = not_made_sentences(news.not_made), None
    if conversation.status == MODEL_ANSWERS:
        sentences.append(OFFER_PERSON)
        state = {"waiting_for": Waiting.OFFER_PERSON.value}
    told = conversation_not_made_message_add(
        conversation=conversation,
        text=" ".join(sentences),
        links=[link for change in news.not_made for link in change.links],
        model_state=state,
    )
    return news.awaiting or not told
