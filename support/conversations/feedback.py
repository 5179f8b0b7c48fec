"""What customers tell us about the assistant: a thumbs up or down on a reply, and a rating of the whole
conversation (1 to 5, with an optional comment). A second vote or rating replaces the first.

Both take the reference of the conversation the customer's page shows, when it has one: a page left
open on a conversation that has since ended must not vote in the one the session has now.
"""

from django.db import transaction
from django.utils import timezone
from django.utils.crypto import constant_time_compare

from store.text import text_multi_line
from support.conversations.models import Conversation, MessageRole, TurnTrace
from support.conversations.selectors import conversation_reference
from support.conversations.services import storable
from support.insight.metrics import FEEDBACK
from support.insight.traces import votable_traces

RATING_COMMENT_MAX_CHARS = 1000


class FeedbackRefused(Exception):
    """The feedback has nothing to attach to: `code` says what, `message` says why, for the customer."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def _current(conversation: Conversation | None, reference: str | None) -> Conversation:
    if conversation is None:
        raise FeedbackRefused("no_conversation", "There is no conversation to give feedback on.")
    if reference is not None and not constant_time_compare(
        reference, conversation_reference(conversation_id=conversation.pk)
    ):
        raise FeedbackRefused(
            "conversation_ended",
            "That conversation has ended, so it can no longer take feedback. Reload the page to see the "
            "current one.",
        )
    return conversation


def turn_vote(
    *, conversation: Conversation | None, turn: int, helpful: bool, reference: str | None = None
) -> None:
    """The customer found the assistant's reply of `turn` helpful or not. Only a reply the assistant gave
    in this conversation can be voted on (not a person's, not a fixed notice, not a failed turn)."""
    conversation = _current(conversation, reference)
    with transaction.atomic():
        voted = votable_traces(TurnTrace.objects.filter(conversation=conversation, turn=turn)).update(
            helpful=helpful, voted_at=timezone.now()
        )
    if not voted:
        raise FeedbackRefused(
            "unknown_reply", "That reply is not one of the assistant's in this conversation."
        )
    FEEDBACK.labels(rating="helpful" if helpful else "not_helpful").inc()


def conversation_rate(
    *, conversation: Conversation | None, rating: int, comment: str = "", reference: str | None = None
) -> None:
    """The customer's rating of the conversation (1 to 5) and what they add, once anyone has answered.
    The caller checks the rating's range and the comment's length (and says so in its own words)."""
    conversation = _current(conversation, reference)
    if not conversation.messages.exclude(role=MessageRole.USER).exclude(visible_text="").exists():
        raise FeedbackRefused("nothing_to_rate", "There is no answer to rate yet.")
    with transaction.atomic():
        Conversation.objects.filter(pk=conversation.pk).update(
            rating=rating, rating_comment=text_multi_line(storable(comment)), rated_at=timezone.now()
        )
    FEEDBACK.labels(rating=str(rating)).inc()
