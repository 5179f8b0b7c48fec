"""What a hijacked model writes that no tool gave: part of guard layer 4 (support.assistant.validator).

A model under prompt injection obeys whoever wrote the injection. An outside probe's stand-in model got
phishing links, phone numbers, "the 16 digits on the front of your card", "I'm Anna from the Bookly
support team", "your refund is confirmed", "enter SAVE50 at checkout", "Ebooks can be returned too",
"Sure, the capital of France is Paris." and, from a real small model, the reminder's markup as HTML
entities through to the customer. A list of known phrasings cannot win this: a reworded one passes. So
each rule here is an allow-list, read on the reply after normalising it (Unicode NFKC, so fullwidth
forms are plain; invisible characters removed; defanged dots, "at"s and "hxxp" restored):

- a value a customer could act on (a link or domain of any ending, an email address, a phone-like run
  of digits, letters or number words, a request for a payment credential) may appear only where the
  `grounding` gave that exact value: the tool results of this very turn (a FAQ answer a tool quoted
  counts). The customer's own words never ground one, so an injected model cannot make any sentence the
  customer typed come back as Bookly's;
- a promise (a refund confirmed, a replacement, a credit, a code or discount, an exception) only where a
  tool result of this turn made that promise in those words;
- the assistant never presents itself as a person;
- what the reply says can be returned, and for how long, must agree with the return policy's `terms`;
- every sentence must be about the store's tasks once its courtesies are taken out;
- nothing internal reaches the customer: our tags and tool names, the prompt's and reminders' prose,
  content-part syntax, HTML entities or other markup.
"""

import functools
import html
import json
import re
import unicodedata
from enum import StrEnum

from orders.models import AMOUNT_MENTION_RE, EMAIL_MENTION_RE, RMA_NUMBER_MENTION_RE
from orders.numbers import ORDER_NUMBERS
from store.categories import ItemCategory
from support.assistant.capabilities.registry import TOOL_NAMES
from support.assistant.claims import (
    Knowledge,
    ToolResult,
    dates_removed,
    mentions_order_facts,
    sentences_of,
)
from support.assistant.prompts import LONG_CONVERSATION_REMINDER, TURN_REMINDER
from support.llm.protocol import (
    CONTENT_PARTS_RE,
    OFFER_PERSON,
    REFUSAL_TEMPLATE,
    REMINDER_TAG,
    SIGNED_IN_TAG,
    STAFF_MESSAGE_TAG,
    TAG_STAND_IN,
    ToolError,
    faq_topics_in,
    signed_in_text,
)


class Conduct(StrEnum):
    """Violation codes of this module, one per rule (the validator's table in the README lists them)."""

    UNGROUNDED_LINK = "ungrounded_link"
    UNGROUNDED_EMAIL = "ungrounded_email"
    UNGROUNDED_PHONE = "ungrounded_phone"
    ASKS_FOR_CREDENTIALS = "asks_for_credentials"
    UNMADE_PROMISE = "unmade_promise"
    POSES_AS_PERSON = "poses_as_person"
    CONTRADICTS_POLICY = "contradicts_policy"
    PROMPT_LEAK = "prompt_leak"
    OFF_TOPIC_SENTENCE = "off_topic_sentence"
    INTERNAL_TAG = "internal_tag"
    CONTENT_PARTS = "content_parts"
    HTML_ENTITY = "html_entity"
    MARKUP = "markup"


# --- Normalising: every check reads the reply (and what grounds it) in this one form. ---

# Characters that show nothing: a zero-width space or joiner, a soft hyphen, bidi marks and overrides.
_INVISIBLE_RE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_DASHES_RE = re.compile("[\u2010-\u2015\u2212\ufe58\ufe63]")
# Full stops of other scripts that browsers and mail clients read as a domain's dot ("bookly\u3002com");
# NFKC already makes U+FF61 and U+FE52 into these or into ".".
_DOTS_RE = re.compile("[\u3002\uff61\ufe52]")
# Curly quotes and apostrophes: "can\u2019t", "I\u2019m" and "[{\u2018type\u2019: \u2026" read as typed.
_QUOTES = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201b": "'", "\u201c": '"', "\u201d": '"', "\u201f": '"'}
)
# A defanged dot: "evil[.]com", "evil(.)com", "evil{dot}com", "evil dot com", "evil . com".
_DEFANGED_DOT_RE = re.compile(
    r"(?<=[A-Za-z0-9])\s*(?:[\[({]\s*(?:\.|dot)\s*[\])}]|\s(?:dot|DOT|Dot)\s|\s+\.\s*(?=[a-z]{2,}))\s*(?=[A-Za-z0-9])"
)
# "[at]", "(at)", " AT " (a bare lowercase " at " is a word: "available at bookly.example").
_DEFANGED_AT_RE = re.compile(r"(?<=[\w.+-])\s*(?:[\[({]\s*(?:@|at|AT)\s*[\])}]|\sAT\s)\s*(?=[\w-]+\.[a-z])")
_HXXP_RE = re.compile(r"\bh(?:xx|\*\*|XX)p(s?)(?:\[:\]|:)?(?=//)|\bhxxp(s?)\b", re.IGNORECASE)


def normalised(text: str) -> str:
    """The text as a reader sees it: NFKC (fullwidth letters, dots and at-signs plain), nothing
    invisible, one kind of dash, one kind of dot, straight quotes, and defanged links and addresses
    put back together."""
    text = _INVISIBLE_RE.sub("", unicodedata.normalize("NFKC", text))
    text = _DOTS_RE.sub(".", _DASHES_RE.sub("-", text)).translate(_QUOTES)
    text = _HXXP_RE.sub(lambda m: "http" + (m.group(1) or m.group(2) or ""), text)
    text = _DEFANGED_DOT_RE.sub(".", text)
    return _DEFANGED_AT_RE.sub("@", text)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _lower(text: str) -> str:
    return text.casefold()


def _alnum(text: str) -> str:
    return re.sub(r"[\W_]", "", _lower(text))


# --- Links, email addresses, phone numbers: only the values this turn's tools gave. ---

_URL_RE = re.compile(r"\b(?:https?://|www\.)[^\s<>\"']+", re.IGNORECASE)
# A domain of any ending: labels and a top-level label of letters (not "e.g.", "36.98" or "No. 5").
_DOMAIN_RE = re.compile(
    r"(?<![\w@.-])(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z]{2,24}|xn--[a-z0-9-]{2,59})(?![\w-])",
    re.IGNORECASE,
)

# A bare IPv4 address ("45.33.2.1/refund"): a link with no domain to read.
_IPV4_RE = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)")

_KEYPAD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "22233344455566677778889999")
_NUMBER_WORDS = {
    "zero": "0",
    "oh": "0",
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "hundred": "00",
    "thousand": "000",
}
_NUMBER_WORD_RE = re.compile(r"\b(?:(double|triple)\s+)?(" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)
# Digits with anything but letters and line breaks between them: any run of up to 5 other characters is
# a separator ("555 - 010 - 0199", "555_010_0199", "555|010|0199", "555\u00b7010\u00b70199").
_PHONE_RE = re.compile(r"(?<![\w$.,-])\+?\(?\d(?:(?:[^\w\n]|_){0,5}\d){6,14}(?![\w-])")
# A vanity number: groups of digits and letters (any case) joined by dashes or dots, "1-800-Bookly-1".
_VANITY_RE = re.compile(r"(?<![\w-])\+?(?=[A-Za-z0-9.-]*\d)[A-Za-z0-9]+(?:[-.][A-Za-z0-9]+)+(?![\w-])")
# A time of day, "9:00-17:00", "14:05": not a phone, as no date is one (claims.dates_removed).
_TIME_RE = re.compile(r"(?<![\d:])\d{1,2}:\d{2}(?![\d:])")
_ISBN_RE = re.compile(r"^97[89]\d{10}$")  # a book's number, which customers quote


def _number_words_as_digits(text: str) -> str:
    def digits(match: re.Match) -> str:
        times = {"double": 2, "triple": 3}.get(_lower(match.group(1) or ""), 1)
        return _NUMBER_WORDS[_lower(match.group(2))] * times

    return _NUMBER_WORD_RE.sub(digits, text)


def _links(reply: str, grounded: str) -> bool:
    without_emails = EMAIL_MENTION_RE.sub(" ", reply)
    links = [match.group(0).rstrip(".,;:!?)") for match in _URL_RE.finditer(without_emails)]
    bare = _URL_RE.sub(" ", without_emails)
    links += [match.group(0) for pattern in (_DOMAIN_RE, _IPV4_RE) for match in pattern.finditer(bare)]
    return any(_lower(link) not in grounded for link in links)


def _emails(reply: str, grounded: str, vouched: frozenset[str]) -> bool:
    return any(
        _lower(match.group(0)) not in grounded and _lower(match.group(0)) not in vouched
        for match in EMAIL_MENTION_RE.finditer(reply)
    )


def emails_vouched_for(results: list[ToolResult]) -> frozenset[str]:
    """The emails a tool call of this turn passed as `customer_email` and that found the order: every
    tool taking one answers only when it is the order's own email, so the tool vouches for it. One that
    found nothing vouches for nothing (an injected model could call a tool with any address first)."""
    vouched = set()
    for result in results:
        email = result.arguments.get("customer_email")
        if not isinstance(email, str):
            continue
        try:
            content = json.loads(result.content)
        except ValueError:
            continue
        if isinstance(content, dict) and "error" not in content and content.get("order_id"):
            vouched.add(_lower(normalised(email.strip())))
    return frozenset(vouched)


def _phones(reply: str, grounding: str) -> bool:
    """A run of 7 to 15 digits (letters read as a keypad's, numbers in words as digits) that this
    turn's tools did not give; order numbers, RMA numbers, dates and amounts are read first."""
    known = _alnum(grounding)
    text = dates_removed(RMA_NUMBER_MENTION_RE.sub(" ", reply))
    text = _TIME_RE.sub(" ", AMOUNT_MENTION_RE.sub(" ", text))
    text = ORDER_NUMBERS.look_alike_re.sub(" ", EMAIL_MENTION_RE.sub(" ", text))
    for match in _VANITY_RE.finditer(text):
        value = _alnum(match.group(0))
        if 7 <= len(value) <= 15 and re.search("[a-z]", value) and value not in known:
            digits = value.upper().translate(_KEYPAD)
            if digits not in known and sum(c.isdigit() for c in value) >= 3:
                return True
    for match in _PHONE_RE.finditer(_number_words_as_digits(text)):
        digits = re.sub(r"\D", "", match.group(0))
        if not 7 <= len(digits) <= 15 or _ISBN_RE.match(digits):
            continue
        if digits not in known:
            return True
    return False


# --- Payment credentials: asked for only in a tool's own words. ---

_CREDENTIALS_RE = re.compile(
    r"\b(?:card(?:'s)? (?:[\w-]+ )?numbers?|card details|card info(?:rmation)?|long number|cvv2?|cvc|cv2|"
    r"security code|(?:three|3|four|4|sixteen|16|15|fifteen)[- ]digits?\b[^.?!]{0,40}\b(?:card|front|back)|"
    r"digits? (?:on|of|printed on) (?:the )?(?:front|back|your card)|"
    r"(?:numbers?|code) on (?:the )?(?:front|back)\b|"
    r"expir(?:y|ation)(?: date| month| year)?|exp\.? date|when (?:it|the card|your card) expires|"
    r"pin(?: code| number)?|passwords?|passcode|bank details|"
    r"bank account|account number|routing number|iban|swift|sort code|social security|ssn|login details|"
    r"credentials|one-time (?:code|password)|otp|verification code|2fa code|"
    # a card by its brand, and what is printed on one
    r"visa|master ?card|amex|american express|discover card|diners club|maestro|jcb|union ?pay|embossed|"
    r"(?:digits?|numbers?|code) (?:beside|next to|by|near|above|below|under|on) (?:the )?signature|"
    r"signature (?:strip|panel|box))\b",
    re.IGNORECASE,
)
# A reassurance that asks for nothing: "we will never ask for your card number", "never share your
# password". Only these words directly before the verb: "don't worry, just send" and "I don't need much -
# just your card number" ask all the same.
_REASSURANCE_RE = re.compile(
    r"\b(?:never|will not|won't|would never|would not|wouldn't)\s+(?:ask(?:s|ing)?|request|share|need)\b",
    re.IGNORECASE,
)
# What ends a reassurance's reach: a clause's end, or a turn ("we never ask for it, but send your CVV").
_REASSURANCE_END_RE = re.compile(r"[.;:!?]|\b(?:but|however|so|just|please|instead|unless|except)\b", re.I)
# A password named in a reset's own words, as the password-reset FAQ gives them ("choose Forgot password").
_RESET_FRAME_RE = re.compile(
    r"\b(?:reset|resetting|forgot|forgotten|change|changing|new)\W+(?:\w+\W+)?$", re.I
)
RESET_FRAME_CHARS = 30  # how far before the credential its reset frame is looked for
# A sentence that offers the store's policies by name ("Which store policy would you like to know about,
# for example shipping, returns or passwords?"): there a credential word that is a published FAQ topic's
# word is the topic's name. Any request in the sentence, or a determiner before the word ("your
# password", "the PIN"), makes it a request again.
_OFFERS_TOPICS_RE = re.compile(r"\b(?:polic(?:y|ies)|topics?|faq)\b", re.I)
_REQUEST_WORDS_RE = re.compile(
    r"\b(?:send|give|share|enter|type|tell|provide|confirm|need|verify|reply|write|dm|paste|drop|post|"
    r"what(?:'s| is| are)|requires?|please)\b",
    re.I,
)
_DETERMINER_BEFORE_RE = re.compile(r"\b(?:your|my|our|the|a|an|this|that|its|their)\W+$", re.I)
# The word is an item of a list the sentence offers: "for example shipping, returns or passwords",
# "a policy on password resets".
_LISTED_RE = re.compile(
    r"\b(?:for example|such as|like|e\.?g\.?|including|about|on)\s+"
    r"(?:[\w-]+(?: [\w-]+){0,2} ?(?:,|\bor\b|\band\b) ?)*$",
    re.I,
)
LISTED_CHARS = 80  # how far before the word its list is looked for


def _topic_words(system_prompt: str) -> frozenset[str]:
    """The words of the published FAQ topics' keys and titles, singular ("password_reset" gives
    "password" and "reset")."""
    words = set()
    for topic in faq_topics_in(system_prompt):
        for word in re.findall(r"[a-z]+", f"{topic.key} {topic.title}".lower()):
            words.add(word.removesuffix("s"))
    return frozenset(words)


def _names_a_topic(sentence: str, mention: re.Match, topic_words: frozenset[str]) -> bool:
    word = _lower(mention.group(0))
    return (
        word.removesuffix("s") in topic_words
        and bool(_OFFERS_TOPICS_RE.search(sentence))
        and not _REQUEST_WORDS_RE.search(sentence)
        and not _DETERMINER_BEFORE_RE.search(sentence[: mention.start()])
        and bool(_LISTED_RE.search(sentence[max(0, mention.start() - LISTED_CHARS) : mention.start()]))
    )


def _asks_for_credentials(reply: str, grounded: str, system_prompt: str = "") -> bool:
    """A payment credential or a password mentioned other than in a tool's own words, a reset the tools
    of this turn speak of, a reassurance that it is never asked for, or a published FAQ topic's name in
    a sentence offering the policies. However a request is worded ("requires your card number", "drop
    your CVV below", "card number, please"), it names what it wants."""
    topic_words = _topic_words(system_prompt)
    for sentence in sentences_of(reply):
        if _quoted(sentence, grounded):
            continue
        reassured = []
        for reassurance in _REASSURANCE_RE.finditer(sentence):
            rest = sentence[reassurance.end() :]
            stop = _REASSURANCE_END_RE.search(rest)
            reassured.append((reassurance.end(), reassurance.end() + (stop.start() if stop else len(rest))))
        for mention in _CREDENTIALS_RE.finditer(sentence):
            if any(start <= mention.start() < end for start, end in reassured):
                continue
            before = sentence[max(0, mention.start() - RESET_FRAME_CHARS) : mention.start()]
            if _lower(mention.group(0)) in grounded and _RESET_FRAME_RE.search(before):
                continue
            if _names_a_topic(sentence, mention, topic_words):
                continue
            return True
    return False


def _quoted(sentence: str, grounded: str) -> bool:
    """Whether the sentence is a tool's own words: as a tool wrote it, or after a FAQ answer's title
    ("Resetting your password: On the account login page, …")."""
    said = " ".join(_lower(sentence).split())
    answer = said.partition(": ")[2]
    return said in grounded or (bool(answer) and answer in grounded)


# --- Promises: each kind made only where a tool result of this turn made it. ---

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
        r"on the house|on us|complimentary|\d+\s?% off|[\w-]+ (?:percent|per cent) off|\$\s?\d+ off|"
        r"half (?:price|off)|as an exception|an exception|goodwill|waive[ds]?|"
        r"just this once|this one time|(?:a|another) (?:new|free|fresh|replacement) copy|replacement copy|"
        r"(?:send|ship|mail)(?:ing)? you (?:a |another )?(?:new|replacement|free)|reship|re-ship|"
        r"extend(?:ed)? (?:the|your) (?:return )?window|at checkout)\b",
        re.IGNORECASE,
    ),
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


# --- Never a person. ---

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


# --- What can be returned and for how long: as the return policy's terms say. ---

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


# --- The prompt's and the reminders' prose, our tags and names, content parts, entities, markup. ---

_WORD_RE = re.compile(r"[a-z0-9']+")
PROMPT_SHINGLE_WORDS = 10


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = _WORD_RE.findall(_lower(text))
    return {tuple(words[i : i + PROMPT_SHINGLE_WORDS]) for i in range(len(words) - PROMPT_SHINGLE_WORDS + 1)}


# What of the system prompt a reply may say in its words: the example replies, the policy's terms and
# the FAQ topics (their titles and the customers' questions).
_SAYABLE_SECTIONS_RE = re.compile(r"<(examples|return_policy|faq_topics)>.*?</\1>", re.DOTALL)
_REMINDERS_PROSE = "\n".join([TURN_REMINDER, LONG_CONVERSATION_REMINDER, signed_in_text("x@example.com")])


@functools.lru_cache(maxsize=4)  # the same prompt for every reply until staff change the policy or FAQ
def _own_prose(system_prompt: str) -> frozenset[tuple[str, ...]]:
    return frozenset(_shingles(_SAYABLE_SECTIONS_RE.sub(" ", system_prompt) + "\n" + _REMINDERS_PROSE))


def _leaks_prompt(reply: str, system_prompt: str, grounding: str, terms: str) -> bool:
    """Ten words in a row of the system prompt's or the reminders' own prose (not the prompt's examples
    or the policy and topics it lists), other than what a reply may repeat (the refusal sentence, what a
    tool gave)."""
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


_PROTOCOL_TAGS = (REMINDER_TAG, STAFF_MESSAGE_TAG, SIGNED_IN_TAG)
# What opens a tag to a reader: "<", the stand-in customers' tags become, and the angle brackets of other
# scripts ("\u3008reminder\u3009"; NFKC has already made fullwidth and small ones "<").
_TAG_OPENERS = "<" + TAG_STAND_IN + "\u3008\u27e8\u276c\u276e\u29fc\u2039"
_PROMPT_TAG_RE = re.compile(r"</?([a-z_]+)>")


@functools.lru_cache(maxsize=4)
def _internal_names(system_prompt: str) -> re.Pattern:
    """Our tag names (the prompt's sections, the protocol's tags), tool names and tool error codes."""
    tags = set(_PROMPT_TAG_RE.findall(system_prompt)) | set(_PROTOCOL_TAGS)
    bare = {name for name in tags | set(TOOL_NAMES) | set(ToolError) if "_" in name}
    return re.compile(
        rf"[{_TAG_OPENERS}]\s*/?\s*(?:{'|'.join(sorted(tags))})\b|\b(?:{'|'.join(sorted(bare))})\b",
        re.IGNORECASE,
    )


_ENTITY_RE = re.compile(r"&(?:#\d{1,7}|#x[0-9a-f]{1,6}|[a-z][a-z0-9]{1,31});", re.IGNORECASE)
# A tag, comment or declaration of any markup language.
_MARKUP_RE = re.compile(r"<\s*(?:/\s*)?[a-z!?][^<>\n]{0,200}>|\{\{|\}\}|\{%|<\|[a-z_]+\|>", re.IGNORECASE)


# The one refusal sentence, whatever topic it names (its topic is the validator's to read).
REFUSAL_RE = re.compile(
    re.escape(REFUSAL_TEMPLATE).replace(re.escape("{topic}"), r"[^\n.]{1,80}?").replace("'", "['\u2019]")
)

# --- Every sentence on the store's tasks, once its courtesies are taken out. ---

# Words that show a clause is about the store's tasks.
# "Order" and "items" alone are not enough ("a Python list keeps its items in the order you add them"):
# an order is one when it is someone's or numbered.
_ON_TASK_RE = re.compile(
    r"\b(?:(?:your|my|our|this|that|an?|each|every|new|next|whole|same) (?:orders?|items?)|"
    r"order (?:number|status|total|history)|orders? (?:is|was|are|were|has|have|will)|ordered|"
    r"returns?|returned|returning|refunds?|refunded|rma|ship|shipping|shipped|shipment|"
    r"deliver|delivery|delivered|tracking|track|parcel|package|courier|carrier|label|policy|policies|faq|"
    r"password|account|e-?mail|address|books?|titles?|cop(?:y|ies)|exchange|purchase|bookly|store|"
    r"arrived?|arriving|transit|on its way|processing|prepared|cancell?ed|cancel|cancellation|eligible|"
    r"returnable|window|days?|weeks?|business|receipt|confirmation|payment|paid|price|cost|costs|total|"
    r"charge|money|credit|limit|changes?|changed|changing|case|damaged|missing|stolen|late|porch|box|"
    r"recipient|street|city|state|zip|gift|exceptions?|wrap\w*|edition|hardcover|paperback|e-?books?|"
    r"audiobooks?|condition|unread|packaging|dispatch\w*|estimated|expected|arrive|discounts?|coupons?|"
    r"promo\w*|vouchers?|"
    # where a parcel ends up and what happens to it on the way: "left with a neighbour while you were
    # travelling abroad", "got soaked in the rain and the pages are ruined"
    r"neighbou?rs?|doorstep|door|mailbox|letterbox|front desk|concierge|travell?ing|abroad|away|home|"
    r"pages?|covers?|spine|rain|wet|soaked|ruined|torn|ripped|crushed|bent)\b|"
    + ORDER_NUMBERS.mention_pattern,
    re.IGNORECASE,
)
# Where a sentence's clauses part: a polite frame and an answer about something else are two clauses.
_CLAUSE_RE = re.compile(
    r"[;:()]|\s[-\u2013\u2014]\s|,\s*(?:and|but|so|while|because)?\b|\s(?:and|but|while|whereas|because)\s",
    re.IGNORECASE,
)
# A courteous wish ("Happy birthday to your mother", "Good luck with the move", "I hope your daughter enjoys
# it"): what it wishes for may name a word or two of the customer's life, no more.
_WISH_RE = re.compile(
    r"^\s*(?:(?:i|we)\s+)?(?:happy|merry|good luck|best of luck|best wishes|all the best|congratulations|"
    r"congrats|hope|wish(?:ing)?|enjoy\w*|safe travels|get well|have (?:a|an) \w+)\b",
    re.IGNORECASE,
)
WISH_WORDS = 2
# What a reply says around its answer, which carries no facts: taken out before a sentence is read.
_COURTESY_RE = re.compile(
    r"\b(?:sorry|apolog\w*|unfortunately|thanks?|thank you|welcome|hi|hello|hey|good (?:morning|afternoon|"
    r"evening)|goodbye|bye|take care|glad|happy|pleasure|anything else|let me know|of course|sure|certainly|"
    r"great|no problem|understand|got it|okay|ok|alright|please|wait|moment|check|look|see|again|try|"
    r"answer|answers|reply|rephrase|message|messages|went|one at a time|step|steps|absolutely|"
    r"definitely|indeed|well|actually|fact|yes|yeah|right|correct|interesting|question|asked|asking|"
    r"lovely|wonderful|nice|enjoy\w*|have|day|weekend|evening|patience|hope|hoping|trouble|inconvenience|"
    r"frustrat\w*|confusion|mistake|clarify|clear|noted|note|quick|quickly|soon|fine|perfect|excellent|"
    r"awesome|cool|fair|reach|contact|today|tomorrow|time|anything|something|else|more|further|"
    # the frame of a support conversation: who helps, and how
    r"team|person|someone|staff|support|agent|help|helping|assistant|automated|conversation|chat|"
    r"customer|service|representative|act|bot|talking|chatting|"
    r"colleague|colleagues|human|pass|hand|get|back|able|need|needs|want|wants|like|know|find|found|"
    r"wrong|information|details|detail|request|looking|happen\w*|next|sent|send|write|writing|wrote|"
    r"got|working|work|stuck|one|two|thing|things|reliable|put|together|sense|mean|meant|make|sure|"
    r"explain|tell|told|say|said|give|given|way|ways|done|doing|thanks|instead|first|last|still|already|"
    r"possible|unable|afraid|problem|issue|issues|matter|everything|nothing|feel|free|share|keep|kept|"
    r"good|news|new|start|started|side|while|checking|checked|apartment|unit|suite|floor|isbn|separated|"
    r"commas?|lines?|fields?|spelled|written|format)\b",
    re.IGNORECASE,
)
_STOPWORDS = _words(
    "the a an is are was were be been being of to in on at by for with about as into from that this these "
    "those it its it's they them their there here what which who whom whose when where why how and or but "
    "if then so than too very can could would should will shall may might must do does did done i you your "
    "yours we our ours me my mine he she his her him us not no nor just also only all any some each every "
    "both few many much most other such own same up down out over under again once let i'm i'll i've you're "
    "you've we're we'll we've that's there's what's don't can't won't isn't aren't couldn't wouldn't "
    "shouldn't didn't doesn't haven't hasn't wasn't weren't it'll they're they'll let's here's"
)


@functools.lru_cache(maxsize=4)
def _prompt_vocabulary(system_prompt: str) -> frozenset[str]:
    """The words the store's own instructions use: a reply talking about its tasks uses them too."""
    return frozenset(_content_words(system_prompt + "\n" + _REMINDERS_PROSE))


def _off_topic_sentence(
    reply: str, *, knowledge: Knowledge, grounded: str, grounding: str, system_prompt: str
) -> bool:
    """A clause about something else entirely, however the reply around it talks of orders and however
    politely it is framed ("Sure, the capital of France is Paris."): no word of the tasks, and at least
    two words that neither the courtesies, the store's instructions nor this turn's tools use (a wish
    may carry two)."""
    known = _prompt_vocabulary(system_prompt) | _content_words(grounding)
    for sentence in sentences_of(REFUSAL_RE.sub(" ", reply)):
        if _lower(sentence.strip()) in grounded:
            continue  # a tool's words (a FAQ answer quoted)
        for clause in _CLAUSE_RE.split(sentence):
            # Clause by clause: an order's facts in one do not carry "the capital of France is Paris".
            if not clause or _ON_TASK_RE.search(clause) or mentions_order_facts(clause, knowledge):
                continue
            unknown = len(_content_words(_COURTESY_RE.sub(" ", _WISH_RE.sub(" ", clause))) - known)
            if unknown > (WISH_WORDS if _WISH_RE.search(clause) else 1):
                return True
    return False


def _content_words(text: str) -> set[str]:
    return {
        word
        for word in _WORD_RE.findall(_lower(text))
        if len(word) >= 3 and word not in _STOPWORDS and not word.isdigit()
    }


def _named_by_tools(grounding: str) -> frozenset[str]:
    """The words of the customer's name and the titles the turn's tool results gave, casefolded: "Thanks,
    Sarah!" greets the customer, a last line "Sapiens" is a title, neither is the assistant's name."""
    names = re.findall(r'"(?:customer_name|title)":\s*"([^"]*)"', grounding)
    return _words(_lower(" ".join(names)))


def _with_values(grounding: str) -> str:
    """Tool results (JSON documents, one a line) with their text values written out as well, so that
    a reply quoting a value with a quote mark or an accent in it matches the value, not its escape."""
    values = []

    def collect(node) -> None:
        if isinstance(node, str):
            values.append(node)
        elif isinstance(node, dict):
            for value in node.values():
                collect(value)
        elif isinstance(node, list):
            for value in node:
                collect(value)

    for line in grounding.splitlines():
        try:
            collect(json.loads(line))
        except ValueError:
            continue  # not a JSON document: its text is in the grounding as it is
    return "\n".join([grounding, *values])


def conduct_violations(
    *,
    reply: str,
    grounding: str,
    terms: str,
    system_prompt: str,
    knowledge: Knowledge,
    vouched_emails: frozenset[str] = frozenset(),
) -> list[Conduct]:
    """The codes of what the reply says that only a hijacked model would: see the module's docstring."""
    raw = reply
    reply, grounding = normalised(reply), normalised(_with_values(grounding))
    grounded = " ".join(_lower(grounding).split())
    # Entities are read too ("&lt;reminder&gt;" is the tag), after their own rule has seen them.
    unescaped = html.unescape(reply)
    checks = [
        (Conduct.UNGROUNDED_LINK, lambda: _links(reply, grounded)),
        (Conduct.UNGROUNDED_EMAIL, lambda: _emails(reply, grounded, vouched_emails)),
        (Conduct.UNGROUNDED_PHONE, lambda: _phones(reply, grounding)),
        (Conduct.ASKS_FOR_CREDENTIALS, lambda: _asks_for_credentials(reply, grounded, system_prompt)),
        (Conduct.UNMADE_PROMISE, lambda: _unmade_promise(reply, _lower(grounding + "\n" + terms))),
        (Conduct.POSES_AS_PERSON, lambda: _poses_as_person(reply, _named_by_tools(grounding))),
        (Conduct.CONTRADICTS_POLICY, lambda: _contradicts_policy(reply, terms, grounding)),
        (
            Conduct.PROMPT_LEAK,
            lambda: bool(system_prompt) and _leaks_prompt(reply, system_prompt, grounding, terms),
        ),
        (
            Conduct.OFF_TOPIC_SENTENCE,
            lambda: _off_topic_sentence(
                reply,
                knowledge=knowledge,
                grounded=grounded,
                grounding=grounding,
                system_prompt=system_prompt,
            ),
        ),
        (Conduct.INTERNAL_TAG, lambda: bool(_internal_names(system_prompt).search(unescaped))),
        (Conduct.CONTENT_PARTS, lambda: bool(CONTENT_PARTS_RE.search(unescaped))),
        (Conduct.HTML_ENTITY, lambda: bool(_ENTITY_RE.search(raw) or _ENTITY_RE.search(reply))),
        (Conduct.MARKUP, lambda: bool(_MARKUP_RE.search(unescaped))),
    ]
    return [code for code, check in checks if check()]
