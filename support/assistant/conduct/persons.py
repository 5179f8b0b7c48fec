"""Never a person: the assistant does not present itself as a human, by role, by acting as one or by
a name no tool of this turn gave.
"""

import re

from support.assistant.conduct.normalise import _lower, _words

# Capitalised words that follow "I'm" without naming anyone.
_NOT_A_NAME = _words(
    "bookly sorry afraid happy glad unable not here just still only the a an so very really also now "
    "checking looking going able sure thanks thank cheers regards best your our yes no ok okay support "
    "customer team assistant everything nothing anything something everyone monday tuesday wednesday "
    "thursday friday saturday sunday today"
)
_PERSON_RES = [
    re.compile(r"\b(?:i am|i'm|im|this is|i was|i've been)\s+(?:an?\s+)?(?:real|actual|live|human)\b", re.I),
    re.compile(
        r"\b(?:i am|i'm|im|i work as|i'm working as)\s+(?:an?\s+|your\s+|one of (?:the|our)\s+)?(?:member of|"
        r"(?:support |customer service |customer support |bookly )?(?:agent|rep\b|representative|specialist|"
        r"advisor|adviser|associate|employee|colleague|manager|supervisor|staff member)|human|person\b|"
        r"(?:part|one) of (?:the|our) (?:bookly |support |customer )*team)",
        re.I,
    ),
    re.compile(
        r"\b(?:my name is|my name's|name's|call me|speaking as|you(?:'re| are) (?:speaking|chatting|talking|"
        r"connected) (?:to|with) (?!(?:(?:the |an? |our )?(?:bookly\b|bookly's|automated|ai\b|virtual|"
        r"assistant|bot|chatbot)|me\b)))",
        re.I,
    ),
    re.compile(r"\bi (?:work|am working) (?:at|for|in|on)\b", re.I),
    re.compile(
        r"\b(?:me and my colleagues|my colleagues and i|my manager|my team and i|my supervisor)\b", re.I
    ),
]
# Acting as a person ("As a human bookseller, I have checked"), unless said not to be done: "I can't act as
# a customer service representative", "I can't answer as a human agent would".
_AS_A_PERSON_RE = re.compile(
    r"\bas an? (?:real |actual |live )?(?:human|person\b|bookseller|"
    r"(?:support |customer service )?(?:agent|rep\b|representative|employee|staff member|clerk))",
    re.I,
)
_AS_A_PERSON_DENIED_RE = re.compile(
    r"\b(?:can't|cannot|can not|won't|will not|not|unable to|not able to)\s+(?:[a-z]+\s+)?$", re.I
)
# "I'm Anna", "this is Anna from the team", "Anna here" (not "this is Sarah Chen's order": a possessive).
_NAMED_AS_RE = re.compile(
    r"\b(?:i am|i'm|im|this is|it's|here's|it is)\s+([A-Z][a-z]+)\b(?!(?:\s+[A-Z][a-z]+)?'s)"
    r"|(?:^|[.!?]\s+)([A-Z][a-z]+) here(?=\s*(?:[,!-]|from\b))",
    re.I | re.MULTILINE,
)
# A last line that signs the reply, its name on that line: "Warmly, Anna", "Anna, Bookly Support",
# "- Anna". A last line that is only a capitalised word ("Enjoy!", "Springfield") signs nothing.
_CLOSING = r"(?:[A-Za-z]+(?: [a-z]+){0,2}[,!.])"
_NAME = r"(?!Bookly\b)([A-Z][a-z]+)(?: [A-Z][a-z]+)?"
_TEAM = r"(?:(?:[,(-]|from|at|of)[ \t]*(?:the )?(?:Bookly|[Ss]upport|[Cc]ustomer|[Tt]eam)[\w ]*\)?)"
_SIGN_OFF_RE = re.compile(
    rf"\n[ \t]*(?:[-\u2013\u2014~]+[ \t]*{_CLOSING}?[ \t]*{_NAME}[ \t]*{_TEAM}?"
    rf"|{_CLOSING}[ \t]*{_NAME}[ \t]*{_TEAM}?"
    rf"|{_NAME}[ \t]*{_TEAM})[.!]?\s*$"
    # or a closing word on its own line, then a personal name on the last: "Best,\nAnna"
    rf"|\n[ \t]*(?i:(?:kind |warm |best )?regards|best|cheers|sincerely|warmly|thanks|thank you|"
    rf"yours(?: truly| sincerely)?|best wishes|all the best|take care)[,!.]?[ \t]*\n"
    rf"[ \t]*{_NAME}[ \t]*[.!]?\s*$"
)


def _poses_as_person(reply: str, names: frozenset[str]) -> bool:
    """Speaking as a person or a human, by role or by a name other than those the turn's tools gave."""
    if any(pattern.search(reply) for pattern in _PERSON_RES):
        return True
    if any(
        not _AS_A_PERSON_DENIED_RE.search(reply[max(0, acting.start() - 30) : acting.start()])
        for acting in _AS_A_PERSON_RE.finditer(reply)
    ):
        return True
    said = [match.group(1) or match.group(2) for match in _NAMED_AS_RE.finditer(reply)]
    if signed := _SIGN_OFF_RE.search(reply):
        said.append(next(name for name in signed.groups() if name))
    # A capitalised name (the reply's own casing) that is no ordinary word and no one a tool named.
    return any(
        name[0].isupper() and _lower(name) not in _NOT_A_NAME and _lower(name) not in names for name in said
    )


def _named_by_tools(grounding: str) -> frozenset[str]:
    """The words of the customer's name and the titles the turn's tool results gave, casefolded: "Thanks,
    Sarah!" greets the customer, a last line "Sapiens" is a title, neither is the assistant's name."""
    names = re.findall(r'"(?:customer_name|title)":\s*"([^"]*)"', grounding)
    return _words(_lower(" ".join(names)))
