"""What can be returned and for how long: only as the return policy's terms say (no unlimited window,
no state or category of item the terms rule out, no period of its own).
"""

import re

from store.categories import ItemCategory
from support.assistant.claims import sentences_of
from support.assistant.conduct.normalise import _lower, _words

_ABOUT_RETURNS_RE = re.compile(
    r"\b(?:return|returns|returned|returning|returnable|send (?:it|them|those|these) back|refundable|"
    r"exchange|eligible|qualif(?:y|ies) for)\b",
    re.IGNORECASE,
)
_UNLIMITED_RE = re.compile(
    r"\b(?:any ?time|at any time|no time limit|without (?:a|any) time limit|forever|indefinitely|"
    r"as long as you (?:like|want)|no questions asked|no matter (?:what|when|how long)|"
    r"whenever you (?:like|want)|no deadline|never expires?)\b",
    re.IGNORECASE,
)
_EVEN_RE = re.compile(
    r"\beven (?:if (?:it's|they're|it is|they are|you've|you have)\s+(?:been\s+)?)?(?:opened|used|read|"
    r"damaged|worn|marked|written in|unwrapped|without (?:the |a )?(?:receipt|packaging))\b",
    re.IGNORECASE,
)
_EVERYTHING_RE = re.compile(
    r"\b(?:return|send back)\s+(?:any|all|every|anything|everything)\b"
    r"(?:\s+(?:books?|items?|products?|orders?|purchases?))?"
    r"(?!\s+(?:that|which|from|in|on|of|if|as long|within|you|still|delivered|eligible|except))",
    re.IGNORECASE,
)
# "Anytime within 30 days": a time limit after all, read as a period below.
_WITHIN_RE = re.compile(r"\s+(?:within|in|during|up to|for)\b", re.IGNORECASE)
# An item in a state the policy's condition rules out, said to be returnable: "opened books", "books you
# have read". Each state goes with the condition word in the terms that rules it out.
_STATES_RULED_OUT = {
    "unread": r"opened|read|used|second-hand|pre-owned|annotated|highlighted",
    "undamaged": r"damaged|worn|torn|written in|marked",
    "original packaging": r"unwrapped|unsealed|without (?:the |its |their )?(?:original )?packaging",
}
_ITEM_WORDS = r"(?:books?|items?|cop(?:y|ies)|ones|titles?|paperbacks?|hardcovers?|novels?)"
_CONDITION_RE = re.compile(r"Condition:\s*([^\n]*)", re.IGNORECASE)


def _ruled_out_states(terms: str) -> list[re.Pattern]:
    line = _CONDITION_RE.search(terms)
    condition = _lower(line.group(1)) if line else ""
    return [
        re.compile(
            rf"\b(?:{states})\s+{_ITEM_WORDS}\b|\b{_ITEM_WORDS}\s+(?:that\s+|which\s+)?(?:you(?:'ve| have)|"
            rf"(?:have|has|had) been|(?:are|is|were|was)(?: already)?)\s+(?:already\s+)?(?:{states})\b",
            re.IGNORECASE,
        )
        for required, states in _STATES_RULED_OUT.items()
        if required in condition
    ]


# The word after "any"/"all" in "return any unread book": the policy's own condition, when it is one.
_CONDITION_WORD_RE = re.compile(r"\s+(?:of\s+)?(?:the\s+|your\s+)?(\w+)")
_UNITS_IN_DAYS = {"day": 1, "week": 7, "fortnight": 14, "month": 30, "year": 365}
_COUNT_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "twelve": 12,
    "fourteen": 14,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "forty-five": 45,
    "sixty": 60,
    "ninety": 90,
    "hundred": 100,
}
_PERIOD_RE = re.compile(
    r"\b(\d{1,4}|" + "|".join(sorted(_COUNT_WORDS, key=len, reverse=True)) + r")(?:\s+|-)"
    r"(?:calendar[- ])?(day|week|fortnight|month|year)s?\b(?!\s+ago)(?![- ](?:business|working))",
    re.IGNORECASE,
)
_BUSINESS_DAYS_RE = re.compile(r"\b(?:business|working)\s+days?\b", re.IGNORECASE)
_NEGATION_RE = re.compile(
    r"\b(?:not|never|no|cannot|can't|isn't|aren't|won't|don't|doesn't|except|excluding|excluded|exclusions?|"
    r"non-returnable|unreturnable|other than|apart from|besides|only)\b|n't\b",
    re.IGNORECASE,
)
# How each kind of item is called, for "ebooks can be returned too" when the policy excludes them.
_CATEGORY_WORDS = {
    ItemCategory.EBOOK: r"e-?books?|digital (?:books?|editions?|copies)|kindle",
    ItemCategory.AUDIOBOOK: r"audio-? ?books?|audible",
    ItemCategory.GIFT_CARD: r"gift-? ?cards?|gift certificates?|gift vouchers?",
    ItemCategory.PERSONALIZED_ITEM: r"personali[sz]ed|custom(?:ised|ized)?|engraved|monogrammed",
    ItemCategory.CHILDRENS: r"children'?s books?",
    ItemCategory.FICTION: r"fiction|novels?",
    ItemCategory.NONFICTION: r"non-?fiction",
}
_NEVER_RETURNABLE_RE = re.compile(r"Never returnable:\s*([^\n]*)", re.IGNORECASE)


def _excluded_categories(terms: str) -> list[re.Pattern]:
    line = _NEVER_RETURNABLE_RE.search(terms)
    listed = _lower(line.group(1)) if line else ""
    labels = dict(ItemCategory.choices)
    return [
        re.compile(rf"\b(?:{words})\b", re.IGNORECASE)
        for category, words in _CATEGORY_WORDS.items()
        if _lower(labels[category]) in listed
    ]


def _periods_in_days(sentence: str) -> list[int]:
    found = []
    for match in _PERIOD_RE.finditer(sentence):
        count = match.group(1)
        number = int(count) if count.isdigit() else _COUNT_WORDS[_lower(count)]
        found.append(number * _UNITS_IN_DAYS[_lower(match.group(2))])
    return found


def _contradicts_policy(reply: str, terms: str, grounding: str) -> bool:
    known_days = set(_periods_in_days(terms)) | set(_periods_in_days(grounding))
    stated = _lower(terms + "\n" + grounding)
    excluded = _excluded_categories(terms)
    ruled_out = _ruled_out_states(terms)
    condition = _words(re.sub(r"\W", " ", _lower(m.group(1)))) if (m := _CONDITION_RE.search(terms)) else ()
    for sentence in sentences_of(reply):
        if not _ABOUT_RETURNS_RE.search(sentence) or _lower(sentence.strip()) in stated:
            continue
        if any(
            _WITHIN_RE.match(sentence, unlimited.end()) is None
            for unlimited in _UNLIMITED_RE.finditer(sentence)
        ):
            return True  # "anytime within 30 days" has its limit: the period is read below
        if any(
            not (rest := _CONDITION_WORD_RE.match(sentence, everything.end()))
            or _lower(rest.group(1)) not in condition
            for everything in _EVERYTHING_RE.finditer(sentence)
        ):
            return True  # "any unread book" states the policy's condition
        if (even := _EVEN_RE.search(sentence)) and _lower(even.group(0)) not in stated:
            return True
        if not _NEGATION_RE.search(sentence) and any(pattern.search(sentence) for pattern in ruled_out):
            return True
        if not _BUSINESS_DAYS_RE.search(sentence) and any(
            days not in known_days for days in _periods_in_days(sentence)
        ):
            return True
        if not _NEGATION_RE.search(sentence) and any(pattern.search(sentence) for pattern in excluded):
            return True
    return False
