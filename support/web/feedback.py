"""Customer feedback as the page's forms and the JSON API send it (support.web.forms reads both): a vote
or a rating, stored for the session's conversation."""

from support.conversations.feedback import conversation_rate, turn_vote
from support.conversations.services import conversation_get_for_session


def feedback_give(*, session, feedback: dict) -> dict:
    """Store a vote ({"turn", "helpful"}) or a rating ({"rating", "comment"}), a VoteForm's or a
    RatingForm's cleaned data, for the session's conversation (the one `feedback["conversation"]` names,
    when it names one). Returns what was stored. Raises FeedbackRefused when there is nothing to attach
    it to."""
    conversation = conversation_get_for_session(session=session)
    reference = feedback.get("conversation")
    if "turn" in feedback:
        turn, helpful = feedback["turn"], feedback["helpful"]
        turn_vote(conversation=conversation, turn=turn, helpful=helpful, reference=reference)
        return {"turn": turn, "helpful": helpful}
    conversation_rate(
        conversation=conversation,
        rating=feedback["rating"],
        comment=feedback.get("comment", ""),
        reference=reference,
    )
    return {"rating": feedback["rating"]}
