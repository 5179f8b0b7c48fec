"""The fixed replies a turn gives when the model's own cannot be kept, and what a reply's outcome is for
the customer: answered, refused, no policy, handed off, or failed (a dead end, unless a person is
offered)."""

from support.assistant.validator import FALLBACK_REPLY, is_no_policy, is_refusal
from support.insight.traces import TurnOutcome
from support.llm.protocol import OFFERS_PERSON_RE

STUCK_REPLY = (
    "Sorry, I got stuck working that out. Could you rephrase your question about your order, a return "
    "or our store policies, one thing at a time?"
)
TOO_LONG_REPLY = (
    "My answer was getting too long. Could you ask about one order, return or policy question at a time?"
)
# When the assistant fails the customer twice in a row, a person takes over.
STUCK_HANDOFF_REPLY = (
    "I'm sorry, I'm not getting this right. I've asked a member of our support team to take over this "
    "conversation; their answer will appear here."
)
FAILED_REPLIES = frozenset({FALLBACK_REPLY, STUCK_REPLY})
TURN_LIMIT_REPLY = (
    "This conversation has reached its length limit. Please start a new conversation to carry on with "
    "your order, return or policy question."
)


def reply_outcome(reply: str, violations: tuple[str, ...], *, handed_off: bool) -> TurnOutcome:
    if handed_off:
        return TurnOutcome.HANDED_OFF
    if violations:
        return TurnOutcome.FALLBACK
    if reply in (STUCK_REPLY, TOO_LONG_REPLY):
        return TurnOutcome.STUCK
    if is_refusal(reply):
        return TurnOutcome.REFUSED
    return TurnOutcome.NO_POLICY if is_no_policy(reply) else TurnOutcome.ANSWERED


# Outcomes that leave the customer nowhere to go, and those that do unless a person is offered.
_FAILED_OUTCOMES = frozenset({TurnOutcome.FALLBACK, TurnOutcome.STUCK})
_UNSERVED_OUTCOMES = frozenset({TurnOutcome.REFUSED, TurnOutcome.NO_POLICY})


def reply_leaves_dead_end(reply: str, *, outcome: TurnOutcome | None = None) -> bool:
    """Whether the customer reading `reply` is left with nowhere to go: refused, or told there is no
    policy, with no person offered; or failed by the assistant (its fallback, or stuck). A refusal of
    what is not the store's (the weather) is a dead end by this reading too: counted, it shows how
    often the assistant says no without a way on, whatever was asked."""
    outcome = outcome or reply_outcome(reply, (), handed_off=False)
    if outcome in _FAILED_OUTCOMES:
        return True
    return outcome in _UNSERVED_OUTCOMES and not OFFERS_PERSON_RE.search(reply)
