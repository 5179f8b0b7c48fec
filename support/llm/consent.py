"""How a customer says yes to a change only they can approve (a return, a cancellation, a new address).

Read by the tools, which refuse a write the customer's latest words do not agree to, whatever the model
decided, and by the offline model, which asks the same question. One reading, so that the two agree.
"""

import re

# Words that begin a yes.
YES_RE = re.compile(
    r"^(?:yes|yeah|yea|yep|yup|sure|ok|okay|please do|please|go ahead|confirm(?:ed)?|do it|correct|"
    r"absolutely|of course|definitely|that's right|that is right|y)\b"
)
# A yes that is not one: a go-ahead for a real write must be plain. Phrases, not words: "yes, I don't
# want it" and "yes, it's not what I ordered" are a yes with a reason.
HESITANT_RE = re.compile(
    r"\b(?:maybe|later|wait|hold on|hang on|unsure|not sure|not now|not yet|instead|cancel|stop|never ?mind|"
    r"rather not|think (?:about it|it over|again)|second thoughts|bye|goodbye)\b"
    r"|\b(?:don't|dont|do not|not|no longer|never) (?:[\w']+ ){0,4}?(?:return|send (?:it|them) back)\b"
)
# For a cancellation, naming it is the yes ("yes, cancel it"), and only an explicit no or a pause is not.
_CANCEL_YES_RE = re.compile(
    r"^(?:(?:yes|yeah|yep|ok|okay|sure|please)\W+)?(?:please )?cancel (?:it|the order|that|my order)\b"
)
_NOT_CANCEL_RE = re.compile(
    r"\b(?:don't|dont|do not|not|no|never) (?:[\w']+ ){0,3}?cancel\b|\b(?:maybe|later|wait|hold on|hang on|"
    r"not sure|unsure|rather not|think (?:about it|it over|again)|second thoughts|never ?mind|keep it)\b"
)
_NEGATION_RE = re.compile(r"\b(?:no|nope|nah|don't|dont|do not|not)\b")
# A yes with a question or a change attached ("cancel it?", "yes, but make it Apt 5") is not a plain yes.
_QUALIFIED_RE = re.compile(r"\?|\b(?:but|except|actually|although|though|wait|hmm|ask)\b")


def plain_reply(text: str) -> str:
    """A short reply as the readers above expect it: lower case, straight apostrophes, one line."""
    return " ".join(text.replace("\u2019", "'").casefold().split())


def reads_as_yes(text: str, *, to_cancel: bool = False) -> bool:
    """Whether the customer's words agree, plainly, to what they were just asked. `to_cancel`: the
    question was whether to cancel an order, so "cancel it" agrees and "cancel" is no pause."""
    said = plain_reply(text)
    if _QUALIFIED_RE.search(said):
        return False
    if to_cancel:
        if _NOT_CANCEL_RE.search(said) or _NEGATION_RE.search(said):
            return False
        if _CANCEL_YES_RE.match(said):
            return True
        return bool(YES_RE.match(said)) and not _NEGATION_RE.search(said)
    return bool(YES_RE.match(said)) and not HESITANT_RE.search(said) and not _NEGATION_RE.search(said)
