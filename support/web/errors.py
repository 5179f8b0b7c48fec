"""What a customer is told when a turn cannot be answered: one mapping for the page and the API."""

import logging
from dataclasses import dataclass

from support.assistant.turn import InvalidMessage
from support.conversations.services import ConversationEnded, TurnInProgress
from support.llm.types import ModelFailed, ModelUnavailable

logger = logging.getLogger(__name__)

_SAVED_TRY_AGAIN = "Your message is saved; please try again."
TURN_IN_PROGRESS_RETRY_SECONDS = 2


@dataclass(frozen=True)
class TurnRefusal:
    status: int
    code: str
    detail: str
    retry_after: int | None = None
    # The request's copy of the session is older than the stored one (a sign-out changed it while the
    # turn ran): saving it would sign the customer back in, so the view must not save it.
    session_stale: bool = False


def turn_refusal(error: Exception) -> TurnRefusal:
    """The answer for a turn that raised `error`; logs what operators need. Call it in `except`."""
    match error:
        case InvalidMessage():
            return TurnRefusal(400, "invalid_message", error.detail)
        case ConversationEnded():
            # Whoever is at the browser now may not be who asked: no word of the question or its answer.
            return TurnRefusal(
                409,
                "conversation_ended",
                "This conversation ended while I was answering (you were signed out, or a new "
                "conversation was started), so that answer is not shown here. Please ask again.",
                session_stale=True,
            )
        case TurnInProgress():
            return TurnRefusal(
                409,
                "turn_in_progress",
                "I'm still answering your previous message. Please wait a moment, then send this again.",
                # A turn usually ends within seconds; a dead worker's lease within one lease.
                retry_after=TURN_IN_PROGRESS_RETRY_SECONDS,
            )
        case ModelUnavailable():
            logger.warning("model unavailable: %s (request_id=%s)", error.reason, error.request_id)
            return TurnRefusal(
                503,
                "model_unavailable",
                "The assistant is very busy right now. Your message is saved; please try again in a moment.",
                retry_after=error.retry_after,
            )
        case ModelFailed(request_rejected=True):
            logger.error("model API refused the request: %s (request_id=%s)", error.reason, error.request_id)
            return TurnRefusal(
                422,
                "message_not_processed",
                "I couldn't process that message, so I've set it aside. Could you put it another way?",
            )
        case ModelFailed():
            logger.error("model call failed: %s (request_id=%s)", error.reason, error.request_id)
            return TurnRefusal(
                502,
                "model_error",
                "The assistant ran into a problem. Your message is saved; please try again.",
            )
        case _:
            logger.exception("turn failed")
            return TurnRefusal(
                500,
                "internal_error",
                # The turn set the message aside (turn._poisons_history): sent again as it was, it
                # might fail the same way, and it must not fail the turns after it.
                "Something went wrong on our side while answering that, so I've set that message aside. "
                "Please send it again, or put it another way.",
            )
