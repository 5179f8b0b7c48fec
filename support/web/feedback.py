"""Customer feedback as the page's forms and the JSON API send it: one reading of both."""

from support.conversations.feedback import (
    RATING_COMMENT_MAX_CHARS,
    FeedbackRefused,
    conversation_rate,
    turn_vote,
)
from support.conversations.services import conversation_get_for_session

FEEDBACK_JSON = 'Send JSON like {"turn": 3, "helpful": true} or {"rating": 5, "comment": "Quick and clear"}.'
_VOTE, _RATING = {"turn", "helpful"}, {"rating"}


class InvalidFeedback(Exception):
    def __init__(self, code: str, detail: str):
        super().__init__(detail)
        self.code = code
        self.detail = detail


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def feedback_give(*, session, payload: object) -> dict:
    """Store a vote ({"turn": N, "helpful": bool}) or a rating ({"rating": 1-5, "comment": text}) for the
    session's conversation; either may name it ({"conversation": its reference}). Returns what was
    stored. Raises InvalidFeedback."""
    if not isinstance(payload, dict):
        raise InvalidFeedback("invalid_feedback", FEEDBACK_JSON)
    keys = set(payload) - {"conversation"}
    reference = payload.get("conversation")
    if reference is not None and not isinstance(reference, str):
        raise InvalidFeedback("invalid_feedback", "conversation must be the reference the chat gave.")
    conversation = conversation_get_for_session(session=session)
    try:
        if keys == _VOTE:
            turn, helpful = payload["turn"], payload["helpful"]
            if not _is_int(turn) or not isinstance(helpful, bool):
                raise InvalidFeedback(
                    "invalid_feedback", "turn must be a whole number and helpful true or false."
                )
            turn_vote(conversation=conversation, turn=turn, helpful=helpful, reference=reference)
            return {"turn": turn, "helpful": helpful}
        if keys in (_RATING, _RATING | {"comment"}):
            rating, comment = payload["rating"], payload.get("comment", "")
            if not _is_int(rating) or not 1 <= rating <= 5:
                raise InvalidFeedback("invalid_rating", "Choose a rating from 1 (poor) to 5 (excellent).")
            if isinstance(comment, str):
                comment = comment.replace("\r\n", "\n")  # a form's line breaks, counted as the browser does
            if not isinstance(comment, str) or len(comment) > RATING_COMMENT_MAX_CHARS:
                raise InvalidFeedback(
                    "invalid_comment", f"The comment can be at most {RATING_COMMENT_MAX_CHARS} characters."
                )
            conversation_rate(conversation=conversation, rating=rating, comment=comment, reference=reference)
            return {"rating": rating}
    except FeedbackRefused as refused:
        raise InvalidFeedback(refused.code, refused.message) from None
    raise InvalidFeedback("invalid_feedback", FEEDBACK_JSON)
