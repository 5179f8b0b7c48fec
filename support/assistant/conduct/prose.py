"""Nothing of ours and nothing off the store's tasks: none of the system prompt's or the reminders'
prose, our tag and tool names, content parts, HTML entities or markup (the one refusal sentence is
the validator's to read); no clause about something else entirely once its courtesies are out.
"""

import functools
import re

from orders.numbers import ORDER_MENTION, numbered_re
from support.assistant.capabilities.registry import TOOL_NAMES
from support.assistant.claims import Knowledge, mentions_order_facts, sentences_of
from support.assistant.conduct.normalise import _lower, _words
from support.assistant.prompts import LONG_CONVERSATION_REMINDER, TURN_REMINDER
from support.llm.protocol import (
    OFFER_PERSON,
    REFUSAL_TEMPLATE,
    REMINDER_TAG,
    SIGNED_IN_TAG,
    STAFF_MESSAGE_TAG,
    TAG_STAND_IN,
    ToolError,
    signed_in_text,
)

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


# Words that show a clause is about the store's tasks.
# "Order" and "items" alone are not enough ("a Python list keeps its items in the order you add them"):
# an order is one when it is someone's or numbered.
_ON_TASK_RE = numbered_re(
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
    r"pages?|covers?|spine|rain|wet|soaked|ruined|torn|ripped|crushed|bent)\b|" + ORDER_MENTION,
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
            if not clause or _ON_TASK_RE().search(clause) or mentions_order_facts(clause, knowledge):
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
