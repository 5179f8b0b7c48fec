"""Customer feedback as the page's forms and the JSON API send it: one reading of both."""

from support.conversations.feedback import (
    RATING_COMMENT_MAX_CHARS,
    FeedbackRefused,
    conversation_rate,
    turn_vote,
)
from support.conversations.services import conversation_get_for_session

FEEDBACK_JSON = 'Send JSON like {"turn": 3, "helpful": true} or {"rating": 5, "comment": "Quick and clear"}.'


class InvalidFeedback(Exception):
    def __init__(self, code: str, detail: str):
        super().__init__(detail)
        self.code = code
        self.detail = detail


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def feedback_give(*, session, payload) -> dict:
    """Store a vote ({"turn": N, "helpful": bool}) or a rating ({"rating": 1-5, "comment": text,
    optional}) for the session's conversation; returns what was stored. Raises InvalidFeedback."""
    if not isinstance(payload, dict):
        raise InvalidFeedback("invalid_feedback", FEEDBACK_JSON)
    keys = set(payload)
    conversation = conversation_get_for_session(session=session)
    try:
        if keys == {"turn", "helpful"}:
            turn, helpful = payload["turn"], payload["helpful"]
            if not _is_int(turn) or not isinstance(helpful, bool):
                raise InvalidFeedback(
                    "invalid_feedback", "turn must be a whole number and helpful true or false."
                )
            turn_vote(conversation=conversation, turn=turn, helpful=helpful)
            return {"turn": turn, "helpful": helpful}
        if keys in ({"rating"}, {"rating", "comment"}):
            rating, comment = payload["rating"], payload.get("comment", "")
            if not _is_int(rating) or not 1 <= rating <= 5:
                raise InvalidFeedback("invalid_rating", "Choose a rating from 1 (poor) to 5 (excellent).")
            if not isinstance(comment, str) or len(comment) > RATING_COMMENT_MAX_CHARS:
                raise InvalidFeedback(
                    "invalid_comment",
                    f"comment must be text of at most {RATING_COMMENT_MAX_CHARS} characters.",
                )
            conversation_rate(conversation=conversation, rating=rating, comment=comment)
            return {"rating": rating}
    except FeedbackRefused as refused:
        raise InvalidFeedback("nothing_to_rate", refused.message) from None
    raise InvalidFeedback("invalid_feedback", FEEDBACK_JSON)
