"""Promises (a refund confirmed, a replacement, a credit, a code or discount, an exception): each kind
made only where a tool result of this turn made it, in those words.
"""

import re

from support.assistant.claims import sentences_of
from support.assistant.conduct.normalise import _lower

_PROMISE_RES = [
    # A refund, credit or replacement said to be done or decided.
    re.compile(
        r"\b(?:refund|credit|compensation|replacement|reimbursement|money)\b[^.!?\n]{0,40}?\b(?:confirmed|"
        r"approved|authori[sz]ed|processed|issued|granted|sent|paid|completed|on (?:its|the) way|guaranteed|"
        r"been arranged|gone through|went through|credited)\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:i|we)(?:'ve|'ll| have| will| had| can| am| are|'m|'re)?\s+"
        r"(?:just\s+|now\s+|already\s+|going to\s+|happy to\s+|gladly\s+)?"
        r"(?:approved?|approving|authori[sz](?:ed?|ing)|issu(?:e|ed|ing)|process(?:ed|ing)?|"
        r"grant(?:ed|ing)?|arrang(?:e|ed|ing)|credit(?:ed|ing)?|refund(?:ed|ing)?|waiv(?:e|ed|ing)|"
        r"reimburs(?:e|ed|ing)|send(?:ing)?|sent|ship(?:ping|ped)?|give|giving|offer(?:ing)?|"
        r"replac(?:e|ed|ing))\b[^.!?\n]{0,40}?"
        r"\b(?:refunds?|credit|discount|compensation|exception|replacement|voucher|coupon|money|fee|new copy|"
        r"another copy|free)\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:full refund|(?:refund|reimburs)\w*(?: you)? in full|refund is confirmed|discount|coupon|"
        r"promo\w*|voucher|store credit|"
        r"(?:we|i)(?:'ll| will| can|'ve| have| are going to)\s+(?:gladly\s+)?replace|"
        r"account credit|compensation|free of charge|for free|at no (?:extra )?(?:cost|charge)|no charge|"
        r"on the house|on us|complimentary|\d+\s?% off|[\w-]+ (?:percent|per cent) off|"
        r"\d+(?:[.,]\d+)?\s?(?-i:[A-Z]{3}) off|"
        r"half (?:price|off)|as an exception|an exception|goodwill|waive[ds]?|"
        r"just this once|this one time|(?:a|another) (?:new|free|fresh|replacement) copy|replacement copy|"
        r"(?:send|ship|mail)(?:ing)? you (?:a |another )?(?:new|replacement|free)|reship|re-ship|"
        r"extend(?:ed)? (?:the|your) (?:return )?window|at checkout)\b",
        re.IGNORECASE,
    ),
    # An amount off in any currency's sign ("$5 off", "€5 off"): a sign is no word's edge, so not above.
    re.compile(r"(?:[$€£¥₹]|R\$)\s?\d+(?:[.,]\d+)? off\b", re.IGNORECASE),
    # A code: "code SAVE50", "enter SAVE50", "use BOOKLY20"; after "code" or "promo", letters alone too.
    re.compile(
        r"\b(?:code|enter|use|apply|redeem)\s*[:#]?\s*[\"']?(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{4,}\b"
        r"|\b(?:code|promo)\s*[:#]?\s*[\"']?[A-Z][A-Z0-9]{3,}\b"
    ),
]
# A promise said not to be made, read only in the words just before it (a bounded window, and no
# nested repetition, so that no reply can make it backtrack): a modal or auxiliary governing the promise's
# verb, at most one adverb between ("I can't make an exception", "we cannot really offer a discount"),
# or no such thing to give ("I don't have any discount codes"). "Don't worry your refund has been
# approved" and "No catch here - your refund ..." negate something else.
_PROMISE_NEGATED_RE = re.compile(
    r"\b(?:can't|cannot|can not|won't|will not|couldn't|could not|unable to|not able to)\s+(?:[a-z]+ly\s+)?"
    r"(?:make|grant|give|offer|issue|approve|arrange|promise|provide|process|send|authori[sz]e|waive|extend|"
    r"apply|add|guarantee|help(?: you)? with)\s+(?:you\s+)?(?:an?\s+|any\s+|the\s+|your\s+)?"
    r"(?:[a-z]+s?\s+(?:or|and)\s+)?$"
    r"|(?:^|\W)(?:no|not any|(?:don't|do not|doesn't|does not) have (?:any|an?))\s+$",
    re.IGNORECASE,
)
NEGATION_WINDOW_CHARS = 60  # how far before a promise its negation is looked for
# The refund the return policy or a tool states, as what will happen: "once we receive the books, your
# refund will be processed within 7 business days", "issued to your original payment method".
_REFUND_TERMS_RE = re.compile(
    r"\b\d+ (?:business|working) days?\b|\boriginal (?:form of )?payment(?: method)?\b", re.I
)
_REFUND_FUTURE_RE = re.compile(r"\b(?:will|'ll|once|after|when)\b", re.IGNORECASE)
# What a refund sentence may add to the policy's timeline and method that is a promise of its own: the
# books kept, no return needed, the policy set aside.
_REFUND_EXTRA_RE = re.compile(
    r"\bkeep(?:ing)?\b(?! (?:you|me|us|in touch)\b)|\bwithout (?:return|send|ship|mail)\w*|"
    r"\bno need to (?:send|return|ship|mail)\b|"
    r"\b(?:don't|do not) (?:need|have) to (?:send|return|ship|mail)\b|\beven (?:though|if|after|when)\b|"
    r"\bregardless\b|\bno return\b",
    re.IGNORECASE,
)
_REFUND_WORD_RE = re.compile(r"\b(?:refund\w*|reimburs\w*|credit\w*|replacement|money back)\b", re.I)
_REFUND_DONE_RE = re.compile(
    r"\b(?:(?:has|have|had|just) been|'s been|was|were|already|now|is being)\b|"
    r"\b(?:confirmed|approved|authori[sz]ed|granted|guaranteed|gone through|went through)\b",
    re.IGNORECASE,
)


def _unmade_promise(reply: str, grounded: str) -> bool:
    """A promise no tool result of this turn (nor the policy's terms, in `grounded`) made in those words;
    one said not to be made is none, nor the policy's refund said as what will happen."""
    for sentence in sentences_of(reply):
        for pattern in _PROMISE_RES:
            for match in pattern.finditer(sentence):
                if _lower(match.group(0)) in grounded or _negated(sentence[: match.start()]):
                    continue
                if pattern is _PROMISE_RES[0] and _refund_as_the_terms_say(sentence, grounded):
                    continue
                return True
        if _REFUND_WORD_RE.search(sentence) and any(
            _lower(extra.group(0)) not in grounded for extra in _REFUND_EXTRA_RE.finditer(sentence)
        ):
            return True  # "your refund will be issued ..., and you can keep the books"
    return False


def _negated(before: str) -> bool:
    return bool(_PROMISE_NEGATED_RE.search(before[-NEGATION_WINDOW_CHARS:]))


def _refund_as_the_terms_say(sentence: str, grounded: str) -> bool:
    stated = [_lower(match.group(0)) for match in _REFUND_TERMS_RE.finditer(sentence)]
    return (
        bool(stated)
        and all(value in grounded for value in stated)
        and bool(_REFUND_FUTURE_RE.search(sentence))
        and not _REFUND_DONE_RE.search(sentence)
    )
