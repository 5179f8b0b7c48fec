"""What a hijacked model writes that no tool gave: part of guard layer 4 (support.assistant.validator).

A model under prompt injection obeys whoever wrote the injection: an outside
probe's stand-in model got a phishing link, a phone number "to give your card
number to", "Hi, this is Anna, a real person … I have approved a full
refund", a discount code, "return any book at any time, even opened ones", an
answer about the capital of France and the system prompt's own prose through
to the customer. Each rule below reads what a reply says, deterministically,
and holds it against what may ground it:

- `grounding`: the tool results of this very turn (a FAQ answer a tool quoted
  counts; the customer's own words never do, so an injected model cannot make
  any sentence the customer typed come back as Bookly's), and
- `terms`: the return policy's terms as the system prompt states them.
"""

import functools
import re
from enum import StrEnum

from support.assistant.claims import Knowledge, day_counts_in, mentions_order_facts, sentences_of
from support.llm.protocol import FAQ_TOPICS_TAG, OFFER_PERSON, REFUSAL_TEMPLATE


class Conduct(StrEnum):
    """Violation codes of this module (the validator's table in the README lists them)."""

    UNGROUNDED_LINK = "ungrounded_link"
    UNGROUNDED_PHONE = "ungrounded_phone"
    ASKS_FOR_CREDENTIALS = "asks_for_credentials"
    UNMADE_PROMISE = "unmade_promise"
    POSES_AS_PERSON = "poses_as_person"
    CONTRADICTS_POLICY = "contradicts_policy"
    PROMPT_LEAK = "prompt_leak"
    OFF_TOPIC_SENTENCE = "off_topic_sentence"


_EMAIL_RE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL_RE = re.compile(r"\b(?:https?://|www\.)[^\s<>\"']+", re.IGNORECASE)
# A bare domain: labels and a top-level domain people type (not "e.g." or "36.98").
_DOMAIN_RE = re.compile(
    r"\b(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:com|net|org|info|biz|io|co|shop|store|online|site|"
    r"xyz|app|dev|me|us|uk|de|fr|es|it|nl|be|ch|at|ca|au|nz|eu|ru|cn|in|ly|link|click|top|support|help|"
    r"page|live|pay|bank|example)\b",
    re.IGNORECASE,
)
# Seven to fifteen digits in a row, with the separators phone numbers are written with.
_PHONE_RE = re.compile(r"(?<![\w$.-])\+?\(?\d(?:[\s().-]{0,2}\d){6,14}(?![\w-])")
_ISO_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_ISBN_RE = re.compile(r"^97[89]\d{10}$")  # a book's number, which customers quote

_CREDENTIALS_RE = re.compile(
    r"\b(?:card numbers?|card details|credit card|debit card|cvv|cvc|security code|pin(?: code| number)?|"
    r"passwords?|passcode|bank (?:details|account)|account number|sort code|social security|ssn|"
    r"login details|one-time code)\b",
    re.IGNORECASE,
)
_ASKING_RE = re.compile(
    r"\b(?:enter|give|send|provide|share|type|tell|confirm|verify|read out|reply with|submit|log in)\b",
    re.IGNORECASE,
)

# Promises only a tool (or staff) can make: each matched phrase must be one the grounding holds.
_PROMISE_RES = [
    re.compile(
        r"\b(?:i|we)(?:'ve|'ll| have| will| had| can)?\s+(?:just\s+|now\s+|already\s+)?(?:approved?|"
        r"authori[sz]ed?|issued?|processed?|granted?|arranged?|credited?|refunded?|waived?|"
        r"(?:make|made) an exception)\b[^.!?\n]{0,40}?\b(?:refund|credit|discount|compensation|exception|"
        r"replacement|voucher|coupon|money|fee)s?\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:full refund|discount|coupon|promo(?:tion(?:al)?)? code|voucher|store credit|compensation|"
        r"free of charge|on the house|\d+\s?% off|as an exception|an exception for you|goodwill|"
        r"(?:make|made|making) an exception)\b",
        re.IGNORECASE,
    ),
    re.compile(r"\bcode\s*[:#]?\s*[A-Z0-9]{4,}\b"),
]
# "Your refund has been issued" is true only of a return a tool reported as refunded.
_REFUND_DONE_RE = re.compile(
    r"\b(?:refund|credit|compensation|replacement)\s+(?:has been|was|is now|have been)\s+(?:approved|"
    r"authori[sz]ed|issued|processed|granted|sent|paid)\b",
    re.IGNORECASE,
)
_REFUNDED_RE = re.compile(r"\brefunded\b", re.IGNORECASE)

_PERSON_RES = [
    re.compile(r"\b(?:i am|i'm|this is)\s+(?:an?\s+)?(?:real|actual|live|human)\b", re.IGNORECASE),
    re.compile(
        r"\b(?:i am|i'm)\s+(?:an?\s+)?(?:member of (?:the|our)|(?:support |customer service )?agent\b|"
        r"representative|human|person\b)",
        re.IGNORECASE,
    ),
    re.compile(r"\bmy name is\b", re.IGNORECASE),
    re.compile(
        r"(?:^|[.!?]\s+|\b(?:[Hh]i|[Hh]ello|[Hh]ey)[,!]?\s+)(?:[Tt]his is|[Ii]t's)\s+(?!Bookly)[A-Z][a-z]+\b"
    ),
]

_ABOUT_RETURNS_RE = re.compile(
    r"\b(?:return|returns|returned|returning|send (?:it|them) back)\b", re.IGNORECASE
)
_UNLIMITED_RE = re.compile(
    r"\b(?:any ?time|at any time|no time limit|without (?:a|any) time limit|forever|indefinitely|"
    r"as long as you (?:like|want)|no questions asked|no matter (?:what|when|how long)|"
    r"whenever you (?:like|want))\b",
    re.IGNORECASE,
)
_EVEN_RE = re.compile(
    r"\beven (?:if (?:it's|they're|it is|they are|you've|you have)\s+(?:been\s+)?)?(?:opened|used|read|"
    r"damaged|worn|marked|written in|unwrapped|without (?:the |a )?(?:receipt|packaging))\b",
    re.IGNORECASE,
)
_EVERYTHING_RE = re.compile(
    r"\b(?:return|send back)\s+(?:any|all|every)\s+(?:books?|items?|products?|orders?|purchases?)\b"
    r"(?!\s+(?:that|which|from|in|on|of|if|as long|within|you|still|delivered|eligible))",
    re.IGNORECASE,
)
_WINDOW_DAYS_RE = re.compile(r"\b(\d+)[- ](?:calendar[- ])?days?\b(?!\s+ago)(?![- ]business)", re.IGNORECASE)

# Words that show a sentence is about the tasks, or is the courtesy around them.
_ON_TASK_RE = re.compile(
    r"\b(?:orders?|ordered|returns?|returned|returning|refunds?|refunded|rma|ship|shipping|shipped|shipment|"
    r"deliver|delivery|delivered|tracking|track|parcel|package|courier|carrier|label|policy|policies|faq|"
    r"password|account|e-?mail|address|items?|books?|titles?|cop(?:y|ies)|exchange|purchase|bookly|store|"
    r"arrived?|arriving|transit|on its way|processing|prepared|cancell?ed|cancel|eligible|returnable|window|"
    r"days?|weeks?|business|receipt|confirmation|payment|paid|price|cost|costs|total|charge|money|credit|"
    r"team|person|someone|staff|support|agent|help|question|assistant|automated|conversation|chat|limit|"
    r"changes?|changed|changing|"
    r"bk|numbers?)\b",
    re.IGNORECASE,
)
_COURTESY_RE = re.compile(
    r"\b(?:sorry|apolog\w*|unfortunately|thanks?|thank you|welcome|hi|hello|hey|good (?:morning|afternoon|"
    r"evening)|goodbye|bye|take care|glad|happy|pleasure|anything else|let me know|of course|sure|certainly|"
    r"great|no problem|understand|got it|okay|ok|alright|please|wait|moment|check|look|see|again|try|"
    r"answer|answers|reply|rephrase|message|messages|wrong|went|one at a time|step|steps)\b",
    re.IGNORECASE,
)

_WORD_RE = re.compile(r"[a-z0-9']+")
PROMPT_SHINGLE_WORDS = 10


def _lower(text: str) -> str:
    return text.casefold()


def _contacts(reply: str, grounding: str) -> list[Conduct]:
    found = []
    without_emails = _EMAIL_RE.sub(" ", reply)
    grounded = _lower(_EMAIL_RE.sub(" ", grounding))
    links = [match.group(0).rstrip(".,;:!?)") for match in _URL_RE.finditer(without_emails)]
    links += [match.group(0) for match in _DOMAIN_RE.finditer(_URL_RE.sub(" ", without_emails))]
    if any(_lower(link) not in grounded for link in links):
        found.append(Conduct.UNGROUNDED_LINK)
    known_phones = {re.sub(r"\D", "", match.group(0)) for match in _PHONE_RE.finditer(grounding)}
    for match in _PHONE_RE.finditer(reply):
        digits = re.sub(r"\D", "", match.group(0))
        if _ISO_DATE_RE.match(match.group(0).strip()) or not 7 <= len(digits) <= 15 or _ISBN_RE.match(digits):
            continue
        if digits not in known_phones:
            found.append(Conduct.UNGROUNDED_PHONE)
            break
    return found


def _asks_for_credentials(reply: str, grounding: str) -> bool:
    grounded = _lower(grounding)
    return any(
        _CREDENTIALS_RE.search(sentence)
        and _ASKING_RE.search(sentence)
        and _lower(sentence.strip()) not in grounded
        for sentence in sentences_of(reply)
    )


def _unmade_promise(reply: str, grounding: str) -> bool:
    grounded = _lower(grounding)
    if _REFUND_DONE_RE.search(reply) and not _REFUNDED_RE.search(grounding):
        return True
    phrases = [match.group(0) for pattern in _PROMISE_RES for match in pattern.finditer(reply)]
    return any(_lower(phrase) not in grounded for phrase in phrases)


def _contradicts_policy(reply: str, terms: str, grounding: str) -> bool:
    known_days = day_counts_in(terms) | day_counts_in(grounding)
    stated = _lower(terms + "\n" + grounding)
    for sentence in sentences_of(reply):
        if not _ABOUT_RETURNS_RE.search(sentence):
            continue
        if _UNLIMITED_RE.search(sentence) or _EVERYTHING_RE.search(sentence):
            return True
        if (even := _EVEN_RE.search(sentence)) and _lower(even.group(0)) not in stated:
            return True
        if any(int(match.group(1)) not in known_days for match in _WINDOW_DAYS_RE.finditer(sentence)):
            return True
    return False


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = _WORD_RE.findall(_lower(text))
    return {tuple(words[i : i + PROMPT_SHINGLE_WORDS]) for i in range(len(words) - PROMPT_SHINGLE_WORDS + 1)}


# What of the system prompt a reply may say in its words: the example replies, the policy's terms and
# the FAQ topics (their titles and the customers' questions).
_SAYABLE_SECTIONS_RE = re.compile(rf"<(examples|return_policy|{FAQ_TOPICS_TAG})>.*?</\1>", re.DOTALL)


@functools.lru_cache(maxsize=4)  # the same prompt for every reply until staff change the policy or FAQ
def _own_prose(system_prompt: str) -> frozenset[tuple[str, ...]]:
    return frozenset(_shingles(_SAYABLE_SECTIONS_RE.sub(" ", system_prompt)))


def _leaks_prompt(reply: str, system_prompt: str, grounding: str, terms: str) -> bool:
    """Ten words in a row of the system prompt's own prose (its rules, not its examples or the policy
    and topics it lists), other than what a reply may repeat (the refusal sentence, what a tool gave)."""
    if not system_prompt:
        return False
    repeated = _shingles(reply) & _own_prose(system_prompt)
    if not repeated:
        return False
    allowed = (
        _shingles(REFUSAL_TEMPLATE.format(topic="the topic"))
        | _shingles(OFFER_PERSON)
        | _shingles(terms)
        | _shingles(grounding)
    )
    return bool(repeated - allowed)


def _off_topic_sentence(reply: str, knowledge: Knowledge, grounding: str) -> bool:
    """A sentence about something else entirely, however the reply around it talks of orders."""
    grounded, tool_words = _lower(grounding), _content_words(grounding)
    for sentence in sentences_of(reply):
        words = _WORD_RE.findall(_lower(sentence))
        if len(words) < 4 or _lower(sentence.strip()) in grounded:
            continue  # a short courtesy, or a tool's words (a FAQ answer quoted)
        if _ON_TASK_RE.search(sentence) or _COURTESY_RE.search(sentence):
            continue
        if mentions_order_facts(sentence, knowledge) or len(_content_words(sentence) & tool_words) >= 2:
            continue  # about what a tool returned, in other words
        return True
    return False


def _content_words(text: str) -> set[str]:
    return {word for word in _WORD_RE.findall(_lower(text)) if len(word) >= 4}


def conduct_violations(
    *, reply: str, grounding: str, terms: str, system_prompt: str, knowledge: Knowledge
) -> list[Conduct]:
    """The codes of what the reply says that only a hijacked model would: see the module's docstring."""
    found = _contacts(reply, grounding)
    if _asks_for_credentials(reply, grounding):
        found.append(Conduct.ASKS_FOR_CREDENTIALS)
    if _unmade_promise(reply, grounding + "\n" + terms):
        found.append(Conduct.UNMADE_PROMISE)
    if any(pattern.search(reply) for pattern in _PERSON_RES):
        found.append(Conduct.POSES_AS_PERSON)
    if _contradicts_policy(reply, terms, grounding):
        found.append(Conduct.CONTRADICTS_POLICY)
    if _leaks_prompt(reply, system_prompt, grounding, terms):
        found.append(Conduct.PROMPT_LEAK)
    if _off_topic_sentence(reply, knowledge, grounding):
        found.append(Conduct.OFF_TOPIC_SENTENCE)
    return found
