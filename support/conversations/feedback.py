"""What customers tell us about the assistant: a thumbs up or down on a reply, and a rating of the whole
conversation (1 to 5, with an optional comment). A second vote or rating replaces the first."""

from django.db import transaction
from django.utils import timezone

from support.conversations.models import Conversation, MessageRole, TurnTrace
from support.conversations.services import storable
from support.insight.metrics import FEEDBACK
from support.insight.traces import TurnOutcome

RATING_COMMENT_MAX_CHARS = 1000


class FeedbackRefused(Exception):
    """The feedback has nothing to attach to; `message` says why, for the customer."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def turn_vote(*, conversation: Conversation | None, turn: int, helpful: bool) -> None:
    """The customer found the assistant's reply of `turn` helpful or not. Only a reply the assistant gave
    in this conversation can be voted on (not a person's, not a failed turn)."""
    if conversation is None:
        raise FeedbackRefused("There is no conversation to give feedback on yet.")
    with transaction.atomic():
        voted = (
            TurnTrace.objects.filter(conversation=conversation, turn=turn)
            .exclude(outcome=TurnOutcome.ERROR)
            .update(helpful=helpful, voted_at=timezone.now())
        )
    if not voted:
        raise FeedbackRefused("That reply is not in this conversation.")
    FEEDBACK.labels(rating="helpful" if helpful else "not_helpful").inc()


def conversation_rate(*, conversation: Conversation | None, rating: int, comment: str = "") -> None:
    """The customer's rating of the conversation (1 to 5) and what they add, once anyone has answered."""
    answered = conversation is not None and (
        conversation.messages.exclude(role=MessageRole.USER).exclude(visible_text="").exists()
    )
    if not answered:
        raise FeedbackRefused("There is no answer to rate yet.")
    if not 1 <= rating <= 5:
        raise FeedbackRefused("Choose a rating from 1 to 5.")
    comment = storable(comment).strip()
    if len(comment) > RATING_COMMENT_MAX_CHARS:
        raise FeedbackRefused(f"The comment can be at most {RATING_COMMENT_MAX_CHARS} characters.")
    with transaction.atomic():
        Conversation.objects.filter(pk=conversation.pk).update(
            rating=rating, rating_comment=comment, rated_at=timezone.now()
        )
    FEEDBACK.labels(rating=str(rating)).inc()
