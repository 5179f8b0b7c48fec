"""A deterministic stand-in for Claude, used when no Anthropic API key is set.

It speaks the Messages API protocol (text and tool_use blocks, stop reasons,
usage), so the tool loop, guards, validator and storage run unchanged behind
it. Like a real model it is stateless: every decision is derived from the
message history it is sent. Replies repeat only values found in tool results
or in the customer's own words, and never contain markdown.

What a customer asks for is read twice: by hand-written rules, which also
follow the conversation (an order number given in answer, a yes to a
question), and by a classifier trained on typical phrasings of each request.
Where the phrasings are clear they decide; where they are not, the rules do.
"""

import functools
import json
import math
import re
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from orders.addresses import state_code
from orders.models import EMAIL_MENTION_RE, RMA_NUMBER_MENTION_RE, DeliveryProblem
from orders.numbers import ORDER_NUMBERS
from orders.selectors import ChangeCode, ProblemCode
from orders.services import ITEMS_NEEDED, ReturnRefusal
from support.llm.consent import HESITANT_RE, YES_RE, reads_as_yes
from support.llm.protocol import (
    HANDOFF_TOOL,
    OFFER_PERSON,
    REFUSAL_TEMPLATE,
    FaqTopic,
    HandoffAsk,
    ToolError,
    faq_topics_in,
    is_reminder,
    is_staff_message,
    policy_quote,
    signed_in_email_in,
)
from support.llm.types import ModelReply

# The questions this model asks. Asking one records what the model then waits for (Waiting), as data
# stored with the reply: the next turn reads that, never these words.
ASK_ORDER_NUMBER = ORDER_NUMBERS.starts_with(
    "What is the order number? It starts with {prefix} and is in your order confirmation email.",
    "What is the order number? It is in your order confirmation email.",
)
ASK_EMAIL = "What is the email address on the order?"
WHICH_ORDER = "Which order is it about?"
CONFIRM_QUESTION = "Would you like me to start this return? Please reply yes or no."
ASK_WHICH_ITEM = "Which would you like to return?"
ASK_WHICH_BOOKS = "Which of the books does this concern?"
ASK_WHICH_TASK = "Would you like me to check the status of that order, or start a return?"
ASK_ADDRESS = (
    "What is the new shipping address? Please send the street, apartment or unit if any, city, state and "
    "ZIP code, separated by commas, and the recipient's name first if it changes."
)
CANCEL_CONFIRM_QUESTION = "Would you like me to cancel this order? Please reply yes or no."
ADDRESS_CONFIRM_QUESTION = "Shall I send the order to this new address? Please reply yes or no."
ASK_WHICH_POLICY = (
    "Which store policy would you like to know about, for example shipping, returns or passwords?"
)

GREETING_REPLY = (
    "Hello! I'm Bookly's automated support assistant. I can help with order status, returns, changing "
    "an order before it ships, delivery problems and store policies. How can I help?"
)
HELP_REPLY = GREETING_REPLY.removeprefix("Hello! ")
THANKS_REPLY = (
    "You're welcome! If you need anything else with an order, a return, a delivery or a store policy, "
    "just ask."
)
DECLINE_REPLY = "No problem. If you need anything else with an order, a return or a store policy, just ask."
GOODBYE_REPLY = "Goodbye, and thanks for visiting Bookly! Come back any time you need help with an order."
ANYTHING_ELSE_REPLY = (
    "Is there anything else I can help with? I can check an order, start a return or share a policy."
)
NO_NUMBER_REPLY = (
    "I'm not able to look up orders by email alone. Your order number is in your order confirmation email"
    + ORDER_NUMBERS.starts_with(" and starts with {prefix}.", ".")
    + " Once you have it, I can help with that order."
)
DECLINED_REPLY = (
    "Okay, I have not started a return. If you change your mind, just ask and I can check the order again."
)
ORDER_NOT_FOUND_REPLY = (
    "I couldn't find an order that matches that order number together with that email address. Could you "
    "check both and send them again?"
)
# Too many order/email checks failed: no more guesses, a person offered (a yes hands over).
CHECKS_SPENT_REPLY = (
    "I'm sorry, I can't check any more order numbers or email addresses right now. " + OFFER_PERSON
)
# A question about the store that no FAQ topic answers: said honestly, with a person offered.
INVALID_ORDER_NUMBER_REPLY = (
    "That order number doesn't look quite right."
    + ORDER_NUMBERS.starts_with(" Order numbers start with {prefix} followed by digits.", "")
    + " Could you check your order confirmation email and send it again?"
)
INVALID_EMAIL_REPLY = (
    "That email address doesn't look right. Could you send the email address on the order again?"
)
NO_POLICY_REPLY = (
    "I don't have a store policy on that, so I can't answer it myself. Would you like me to pass your "
    "question to a member of our support team?"
)
DECLINED_CANCEL_REPLY = "Okay, I have not cancelled the order. It will ship as planned."
DECLINED_ADDRESS_REPLY = "Okay, I have not changed the address. The order still goes to the address on file."
GENERIC_ERROR_REPLY = (
    "Sorry, something went wrong on my side while checking that. Could you try again? I can help with an "
    "order, a return or a store policy."
)


# Intent vocabulary, matched against lower-cased text with straight apostrophes.
class Waiting(StrEnum):
    """What the model waits for after its reply: recorded when it asks (_ask), read back next turn."""

    ORDER_NUMBER = "order_number"
    EMAIL = "email"
    DETAILS_AGAIN = "details_again"  # the number and email found nothing, or one was malformed
    WHICH_ORDER = "which_order"  # the signed-in customer's orders were listed
    CONFIRM_RETURN = "confirm_return"
    WHICH_ITEM = "which_item"
    WHICH_BOOKS = "which_books"
    CONFIRM_CANCEL = "confirm_cancel"
    CONFIRM_ADDRESS = "confirm_address"
    ADDRESS = "address"
    PASS_ON = "pass_on"  # noqa: S105 (no password) a store question no policy answers, offered to staff
    OFFER_PERSON = "offer_person"


# What a reply asks, in the order it asks it: set for each reply the model writes (OfflineModel.create),
# so that any part of it that asks a question records so, without the question passed back up.
_ASKED: ContextVar[list[Waiting] | None] = ContextVar("asked", default=None)
# Messages that answer a question for an order's details (read as such, however worded).
_ASKS_FOR_DETAILS = frozenset(
    {Waiting.ORDER_NUMBER, Waiting.EMAIL, Waiting.DETAILS_AGAIN, Waiting.WHICH_ORDER}
)


def _ask(waiting: Waiting, sentence: str) -> str:
    """The sentence that asks, with what the model then waits for recorded."""
    asked = _ASKED.get()
    if asked is not None:
        asked.append(waiting)
    return sentence


def _last_asked() -> Waiting | None:
    asked = _ASKED.get()
    return asked[-1] if asked else None


_MY_ORDER_RE = re.compile(
    r"\b(?:my|our) (?:\w+ ){0,2}(?:orders?|package|parcel|delivery|shipment|purchase|books?|items?)\b"
    r"|\bi (?:ordered|bought|purchased|received|got)\b"
)
_REFERS_BACK_RE = re.compile(
    r"\b(?:return|send|track|check|refund|cancel)\s+(?:it|them|this|that|those|these)\b"
    r"|\b(?:this|that|the same|same) (?:order|one)\b|\bwhere is it\b"
    r"|\b(?:will|did|has|is) it\b.{0,20}\b(?:arrive|ship|come|get here|delivered)"
    r"|\bthe other (?:one|book|item|title)s?\b|\b(?:it|them|one) too\b"
)
# "One of the books": which one, asked before a summary of all of them.
_ONE_OF_RE = re.compile(
    r"\bone of (?:the|my|them|those|these)\b|\bone (?:book|item|title)\b|\bjust one\b|\bnot (?:all|both)\b"
)
_THE_OTHER_RE = re.compile(r"\bthe other (?:one|book|item|title)\b")
_BOTH_RE = re.compile(r"\b(?:both|all of them|all|everything|the two)\b")
_RETURN_RE = re.compile(
    r"\b(?:return|returns|returning|returned|refund|refunds|money back|exchange)\b"
    r"|\b(?:send|sending|give|giving|bring|take) (?:\w+ ){0,3}back\b|\breturnable\b"
    r"|\b(?:replacement|replace it|a new one|a new copy)\b"
)
# A book's release or stock, not an order's progress: "when is the next … book coming out?".
_BOOK_RELEASE_RE = re.compile(
    r"\b(?:coming out|come out|released?|release date|available|in stock|pre-?order)\b"
    r"|\b(?:next|new) (?:\w+ ){0,3}book\b"
)
# A return talked about, not asked for: "if I don't like it, can I return it?".
_HYPOTHETICAL_RE = re.compile(r"\bif (?:i|you|someone|they|the person|a book)\b|\bbefore i buy\b|\bin case\b")
# Words that point at something the customer has (so "can I send it back" is a return, not a question).
_SPECIFIC_RE = re.compile(
    r"(?<!is )\b(?:it|them|this|these|this one|that one|mine|i (?:bought|got|ordered|received|purchased))\b"
    r"|\b(?:my|our) (?:\w+ ){0,2}(?:daughter|son|wife|husband|kid|copy|copies)\b|\bby mistake\b|\btwice\b"
)
_WANT_RE = re.compile(
    r"\b(?:i want|i'd like|i would like|i need|i wish|help me|please)\b"
    r"|\b(?:start|initiate|begin|process) (?:a |the |my )?(?:return|refund)"
)
_GENERAL_Q_RE = re.compile(
    r"\b(?:how|what|which|can|could|do you|does|is it|is there|are|may|within|whether|wondering)\b|^do\b|\?"
)
_POLICY_WORD_RE = re.compile(r"\b(?:polic(?:y|ies)|rules|faq)\b")
_NAMED_POLICY_RE = re.compile(r"\b([a-z]{3,}) polic(?:y|ies)\b")
_GENERIC_POLICY_WORDS = {"your", "the", "store", "any", "what", "bookly", "company", "shop", "our", "all"}
_POLICY_ALIASES = {"return": "returns_overview", "returns": "returns_overview", "refund": "returns_overview"}
_POLICY_ALIASES |= {"shipping": "shipping", "delivery": "shipping", "password": "password_reset"}
_STATUS_RE = re.compile(
    r"\b(?:status|track|tracking|shipped|dispatched|arrive|arrives|arrived|arriving|delivered|in transit|"
    r"on its way|hasn't come|not (?:yet )?(?:arrived|received|here)|haven't (?:received|got)|"
    r"never (?:received|got|arrived|came)|didn't (?:arrive|come|get))\b"
    r"|\bwhere(?:'s| is| are)?\b.{0,25}\b(?:order|package|parcel|books?|delivery|shipment|it|bk)\b"
    r"|\bwhen will\b.{0,25}\b(?:order|package|parcel|books?|it|bk)\b"
    r"|\bcheck (?:on )?(?:my|the|an|this|that) order\b"
    r"|\bstill (?:no|not|isn't|hasn't|haven't|nothing|waiting)\b|\bany (?:news|updates?)\b"
    r"|\bwaiting (?:for )?(?:my|the|an|our) (?:order|package|parcel|books?|delivery)"
    r"|\b(?:not|isn't|hasn't|haven't|didn't|it not) (?:yet )?(?:come|here|arrived|shown up|turned up)"
    r"|\b(?:go|gone|going|sent|went) out\b|\bleft the warehouse\b|\b(?:is it|it's|is my order) stuck\b"
    r"|\bwhen (?:is|will|does|do) (?:my|the|it|our)\b.{0,25}\b(?:order|package|parcel|books?|delivery|coming)"
    r"|\bwhere(?:'s| is| are) my stuff\b"
)
_RETURN_STATUS_RE = re.compile(
    r"\bstatus of (?:my|the|our|that) (?:return|refund|rma)\b|\b(?:return|refund|rma)(?:'s)? status\b"
    r"|\bwhere(?:'s| is) (?:my|the) (?:return|refund)\b|\b(?:has|did|is) my (?:return|refund)\b"
    r"|\b(?:received|got) my (?:return|returned)\b|\brma-[a-z0-9]{8}\b"
    r"|\b(?:my|the) (?:return|refund)\b.{0,60}\b(?:status|update|progress|news|yet|shown up|come through)\b"
    r"|\b(?:status|update|progress|news) (?:on|of|about|for) (?:my|the) (?:return|refund)"
    r"|\b(?:sent|mailed|posted) (?:\w+ ){0,3}back\b.{0,60}\b(?:update|status|yet|news|received|arrived|got)\b"
)
_SHIPPING_RE = re.compile(
    r"\b(?:ship|ships|shipping|postage|expedited|express|overnight|international(?:ly)?|overseas|abroad|"
    r"delivery|deliver)\b"
    r"|\bsend (?:books? |orders? )?(?:here|to me|to (?:canada|mexico|the uk|uk|europe|australia|germany))"
)
_PASSWORD_RE = re.compile(r"\b(?:password|passcode|log ?in(?:to)?|sign ?in(?:to)?|locked out)\b")
_PROBLEM_RE = re.compile(
    r"\b(?:damaged|broken|torn|ripped|defective|faulty|misprint(?:ed)?|wrong (?:book|item|edition))\b"
)
_CHANGE_ORDER_RE = re.compile(
    r"\bcancel|\bswitch my order\b"
    # "an update on my order" asks how it is going; "update my order" changes it.
    r"|\b(?:change|modify|edit|(?<!an )(?<!any )update(?! on\b)|set up|add|new)\b"
    r".{0,30}\b(?:order|address|it|account|payment)\b"
)
_NO_NUMBER_RE = re.compile(
    r"\b(?:don't|do not|can't|cannot|couldn't|didn't) (?:know|have|find|remember|see)\b.{0,30}\bnumber\b"
    r"|\b(?:forgot|lost|no idea)\b.{0,30}\bnumber\b|\b(?:without|no) (?:an |the |my )?order number\b"
    r"|\b(?:where|how)\b.{0,30}\border number\b"
    r"|\b(?:find|look ?up|search)\b.{0,40}\b(?:by|with|using) (?:just |only )?(?:my |an |the )?e-?mail\b"
    r"|\b(?:misplaced|deleted|lost|forgot|can't find|don't have|do not have|don't know|no idea|threw away|"
    r"binned)\b.{0,40}(?:\bnumber|#|\bconfirmation|\border id|\breference|\bpacking slip)"
    r"|\bnumber\b.{0,10}\b(?:lost|missing|gone)\b|\bnumber (?:isn't|is not|not) in\b"
    r"|\b(?:look ?up|find|locate|search)\b.{0,30}\b(?:under|using|by|with) (?:my |the )?e-?mail\b"
    r"|\b(?:by|with|under|using|from) (?:just |only )?(?:my |the )?(?:name|phone|address|phone number)\b"
    r"|\border (?:number|#)\W{0,3}(?:no idea|i don't|i dont|dunno|not sure|don't have|no clue)"
)
# Asking for a person: to be put in touch with someone, or customer service itself.
_PEOPLE = (
    r"(?:human(?: being)?|person|agent|representative|rep|operator|somebody|someone|staff|manager|"
    r"supervisor|employee|team member|member of (?:staff|your team|the team))"
)
_PERSON_RE = re.compile(
    # A verb of getting in touch, a few small words, then someone: "talk to one of your agents".
    r"\b(?:talk|speak|chat|connect|transfer|put|get|reach|contact|escalate|call|phone|need|want)\b"
    r"(?: (?:to|with|me|us|through|in|touch|a|an|the|your|some|one|of|real|live|actual|human|please|"
    r"directly|now|right|away|i|can|could|speak|talk|chat))*? " + _PEOPLE + r"s?\b"
    r"|\bcustomer (?:service|services|support|care)\b|\bsupport (?:team|staff|desk)\b"
    r"|\b(?:real|live|actual) (?:person|human|agent|people)\b"
    r"|^\W*(?:a |an )?(?:human|agent|person|representative|operator)(?: please)?\W*$"
    r"|\bcall ?back\b|\bcall me\b|\b(?:contact|phone|ring) me\b"
    r"|\bsomeone (?:i|to) (?:can )?(?:call|talk|speak)"
    r"|\bstaff member\b|\bwant an? (?:actual|real) (?:person|human)\b"
    r"|\b(?:talk|speak) to\b.{0,30}\b(?:a human|a person|an agent|someone|somebody|anyone|a real)\b"
    r"|^\W*(?:a |an )?(?:human|real|live) (?:agent|person|rep|representative)(?: please)?\W*$"
    r"|\bescalate (?:this|it|that)\b"
    r"|(?:^|[.!?,]\s*)(?:human|agent|representative|operator)\W*(?:now|please|pls)?\W*(?:[.!?,]|$)"
)
# Words that ask for a person only now and then: "your customer service is great, where is my order?",
# and "call me" when someone else is to call ("will the courier call me?") or is not to.
_CUSTOMER_SERVICE_RE = re.compile(r"customer (?:service|services|support|care)")
_CALL_ME_RE = re.compile(r"call ?back|call me|(?:contact|phone|ring) me")
_NOT_ASKING_TO_BE_CALLED_RE = re.compile(
    r"\b(?:will|would|does|did|do|can|should)\b (?:the |your |a )?(?:courier|driver|post(?:man|woman)|"
    r"mail ?(?:man|carrier)|carrier|delivery \w+|they|he|she)\b[^.?!]{0,25}\b(?:call|phone|ring|contact)\b"
    r"|\b(?:don't|do not|no need to|never) (?:call|phone|ring|contact)\b"
)


def _asks_for_someone(text: str) -> bool:
    """Whether the rules' reading of a request for a person rests on more than a mention of people."""
    for found in _PERSON_RE.finditer(text):
        words = found.group()
        if _CUSTOMER_SERVICE_RE.fullmatch(words):
            continue
        if _CALL_ME_RE.fullmatch(words) and _NOT_ASKING_TO_BE_CALLED_RE.search(text):
            continue
        return True
    return False


_ARE_YOU_HUMAN_RE = re.compile(
    r"\bare you (?:a |an )?(?:real )?(?:bot|robot|human|person|ai|machine)\b"
    r"(?: or (?:a |an )?(?:real )?(?:bot|robot|human|person|ai|machine)\b)?"
)
MAX_SUMMARY_CHARS = 200

# (words, topic for the refusal sentence)
# (words, topic for the refusal sentence). A topic that is about the store (an invoice, a payment, an
# account) is one staff can take up: its refusal offers a person. The others keep the refusal alone.
_OFF_TOPICS = [
    (re.compile(pattern), topic)
    for pattern, topic in [
        (r"\b(?:weather|forecast|temperature|raining)\b", "the weather"),
        (r"\b(?:recipes?|cook|cooking|bake|baking)\b", "recipes"),
        (
            r"\b(?:recommend\w*|suggest\w*|what should i read|good books?|bestsellers?)\b",
            "book recommendations",
        ),
        (r"\b(?:jokes?|funny|make me laugh)\b", "jokes"),
        (r"\b(?:price|prices|in stock|available|availability)\b", "book prices or availability"),
        (r"\b(?:discount|coupon|promo|voucher)\b", "discounts or promotions"),
        (r"\b(?:coding|programming|python|javascript|sql|code|script|algorithm)\b", "programming questions"),
        (r"\b(?:reviews?|rate a book|ratings?|rev\w{1,3}w)\b", "book reviews"),
        (r"\b(?:invoices?|receipts?|vat)\b", "invoices and receipts"),
        (
            r"\b(?:payments?|pay|paid|charged?|overcharged?|overchrged|double charged|billing|billed|"
            r"card (?:was |got )?declined|declined|credit card|paypal|checkout)\b",
            "payments",
        ),
        (
            r"\b(?:account|sign ?up|register|registration|profile|username|newsletter|subscription|"
            r"unsubscribe|mailing list)\b",
            "accounts",
        ),
        (r"\bsell (?:my|our|books?|a book)\b|\bself[- ]published\b", "selling books with us"),
        (r"\b(?:jobs?|hiring|careers?|vacanc(?:y|ies))\b", "jobs at Bookly"),
        (r"\b(?:place|placing|make) (?:an |a )?order\b|\border \d+ copies\b|\bbulk order", "placing orders"),
        (
            r"\bwrite (?:me |us )?(?:my|an?|the|some)\b|\bessays?\b|\bbook report\b|\bhomework\b|\bpoems?\b|"
            r"\bhaikus?\b|\blyrics\b|\blimericks?\b",
            "writing tasks",
        ),
        (
            r"\bwhich edition\b|\bbest (?:book|edition)s?\b|\b(?:next|new) (?:\w+ ){0,3}book\b",
            "books themselves",
        ),
        (r"\bgift ?cards?\b", "gift cards"),
        (r"\b\d+ (?:times|plus|minus|divided by) \d+\b", "maths"),
    ]
]
# (kind, words, reply): greetings, thanks and the like, answered in kind.
_SMALL_TALK = [
    (
        "help",
        r"\bwhat can you (?:do|help)|^help\W*$|\bwho are you\b"
        r"|\bare you (?:a |an )?(?:real )?(?:bot|robot|human|person|ai|machine)\b",
        HELP_REPLY,
    ),
    (
        "greeting",
        r"^(?:hi+|hello+|hey+o?|hiya|howdy|greetings|yo|sup|hola|waves?|morning|evening|afternoon|"
        r"good (?:morning|afternoon|evening|day))\b",
        GREETING_REPLY,
    ),
    (
        "goodbye",
        r"^(?:ok |okay |no,? |thanks,? )?(?:bye+|goodbye|good bye|see (?:you|ya)|cya|"
        r"that's (?:all|it|everything)|all done|laters|have to go|"
        r"that is all|that will be all|take care|talk later|ttyl|later|good ?night|farewell|adios|"
        r"catch you later|im done|i'm done|nothing else|gotta go|"
        r"have a (?:good|nice|great) (?:day|one|night))\b"
        r"|\b(?:bye|goodbye)(?: then| now| for now)?\W*$|^signing off\b",
        GOODBYE_REPLY,
    ),
    (
        # "No thanks" declines what was offered: nothing to be welcome for.
        "decline",
        r"^(?:no|nope|nah)\W*(?:thanks|thank you|thank u|thx|ty|i'm good|im good|i'm fine|that's ok|"
        r"that's fine)\b",
        DECLINE_REPLY,
    ),
    (
        "thanks",
        r"\b(?:thanks|thank you|thank u|thx|tysm|tyvm|cheers|much appreciated|appreciate)\b",
        THANKS_REPLY,
    ),
    (
        "ack",
        r"^(?:ok|okay|great|cool|got it|perfect|alright|all right|sounds good|fine|nice|yes|no)\b",
        ANYTHING_ELSE_REPLY,
    ),
]
# Yes to passing a question on to staff: a plain yes, not "ok bye".
_PASS_ON_RE = re.compile(
    r"^(?:yes|yeah|yep|yup|sure|please do|please|go ahead|do that|ok(?:ay)?,? please)\b(?!.*\bbye)"
)
_NO_RE = re.compile(r"^(?:no|nope|nah|not now|don't|do not|cancel|never ?mind|stop|wait)\b")
_REASON_CLAUSE_RE = re.compile(r"\b(?:because|since|due to|as (?:it|they|the))\b\s*(?P<why>[^.!?\n]+)", re.I)
_REASON_WORDS_RE = re.compile(
    r"\b(?:damaged|broken|torn|ripped|defective|faulty|wrong|duplicate|twice|changed my mind|no longer|"
    r"don't (?:want|need|like)|didn't (?:like|want)|not what|missing|misprint(?:ed)?|gift)\b",
    re.I,
)
MAX_REASON_CHARS = 200

# The order tasks, each begun by a request and carried out with the order's number and email.
_TASKS = ("status", "return", "cancel", "address", "problem")
# What a change of an order asks for: to cancel it, or to send it elsewhere. Cancelling a return or an
# account is no cancellation of an order; adding an address to an account sends no order elsewhere.
_CANCEL_ASK_RE = re.compile(
    r"\bcancell?(?:ing|ed|ation|s)?\b|\bstop (?:my|the|this) (?:order|purchase|shipment)\b"
    r"|\bstop\b.{0,25}\bfrom being (?:sent|shipped|delivered)\b"
)
_NOT_ORDER_CANCEL_RE = re.compile(
    r"\bcancel\w*\s+(?:my |the |this |a |an |that )?(?:\w+ )?"
    r"(?:return|rma|account|subscription|newsletter|membership|e-?mails?)\b"
)
# Asking what cancelling costs is a question of policy, not a request to cancel.
_CANCEL_FEE_RE = re.compile(
    r"\b(?:fees?|charged?|charges|cost|costs|penalty|penalties|free|pay|money|expensive|restocking)\b"
    r"|\bkeep (?:part|some)\b"
)
_ADDRESS_WORD_RE = re.compile(
    r"\b(?:ad{1,2}r?e{1,2}s{1,3}(?:es)?|ship-to|zip(?: code)?|street|apartment number)\b"
    r"|\b(?:redirect|reroute|route)\b"
    r"|\bwhere (?:my|the) (?:order|package|parcel) is (?:being )?(?:deliver|sen|ship)\w*"
    r"|\b(?:going|sent|go|delivered|shipped|ship|send|deliver)\b (?:it |them )?to (?:my |the |a |another )?"
    r"(?:old |new |other |different |work |parents'? |sister'?s? |friend'?s? )?"
    r"(?:house|home|place|office|address|apartment|flat)\b"
)
_ADDRESS_FIX_RE = re.compile(
    r"\b(?:change|changed|changing|update|updating|corr?ect|fix|amend|edit|modify|wrong|typo|mistake|old|"
    r"moved?|moving|relocat\w*|redirect|reroute|route|different|missing|instead|sent to|go to)\b"
)
_ACCOUNT_ADDRESS_RE = re.compile(
    r"\b(?:set ?up|setting up|add|adding|save|saved|store|register|enter|creat\w*|default|profile|account|"
    r"future|multiple|second|billing|e-?mail address|po box|records)\b"
)
_ORDER_CHANGE_POLICY = "order_change"
# Refusals that offer a person: requests about the store that staff can take up.
_STORE_TOPICS = frozenset(
    {
        "book prices or availability",
        "discounts or promotions",
        "invoices and receipts",
        "payments",
        "accounts",
        "selling books with us",
        "jobs at Bookly",
        "placing orders",
        "gift cards",
        "changing orders",
        "book reviews",
    }
)
# Words of a request to the store (its orders, payments, accounts, emails, site), or of customers speaking
# of themselves or to us: a refusal of such a request offers a person. Without them ("what is the capital
# of France?") the refusal stands alone, as it does for a topic that is not the store's (the weather).
# What puts a topic that is not the store's in the store's hands after all: "the code from your email
# doesn't work" is no programming question.
_STORE_CONTEXT_RE = re.compile(
    r"\b(?:my order|your (?:e-?mail|site|website|app|store|shop)|checkout|cart|promo|discount|coupon|invoice|"
    r"payment|charged|delivery|package|parcel|label|account)\b"
)
# A question about the world, asked of nobody in particular.
_WORLD_QUESTION_RE = re.compile(r"^(?:what|who|when|where|which|why|how|is|are|was|were|does|did)\b")
_STORE_WORDS_RE = re.compile(
    r"\b(?:i|i'm|im|i've|ive|i'd|id|my|me|mine|you|your|you're|youre|yours|u|ur|we|our|us)\b"
    r"|\b(?:orders?|ordering|ordered|buy|buying|by a book|purchas\w*|inv\w{2,5}e|invoices|receipts?|reciept|"
    r"bill|billing|pay\w*|charged?|card|checkout|cart|accounts?|acc+o+unt|sign(?:ing)?[ -]?up|signup|"
    r"regist\w*|log ?in|profile|user|members?|membership|newsletters?|news letter|e-?mails?|emmails|eamils|"
    r"unsub\w*|subs?c\w*|reviews?|rev\w{1,3}w|rate|feedback|suggestions?|opinion|website|site|app|bookly|"
    r"store|shop|personal (?:data|details)|data|delivery|shipping|address|phone number|notifications?|"
    r"preferences|books?|stars?|cover|pages?|binding|jacket|volumes?|edition|paperback|hardcover|cop(?:y|ies)|"
    r"titles?|authors?|sent|send|received|delivered|arriv\w*|late|wa?i?ti?ng|twice|money|codes?|coupo?ns?|"
    r"sales?|discounts?|promo\w*|wrap\w*|gift|present|inscription|profi?le|deactivate|delete|box|label|"
    r"pre-?orders?|upgrade|next day|here)\b"
)
# A complaint wants a person, however it is worded.
_COMPLAINT_RE = re.compile(
    r"\b(?:complain\w*|complaint|unacceptable|disgrace\w*|appalling|terrible service|awful service|"
    r"worst (?:service|company|store|experience)|worst \w+ ever|very disappointed|extremely disappointed|"
    r"poor service|rude|ridiculous|not impressed|fed up|"
    r"not happy with (?:the|your) service)\b"
)
# A number that belongs to an address, not to an order ("the apartment number is missing").
_ADDRESS_NUMBER_RE = re.compile(
    r"\b(?:apartment|apt|unit|house|street|suite|flat|building|zip) (?:number|#|no)\b"
)


# A delivery gone wrong, reported: the problem, for staff to take up as a case. Each reads what happened
# to this customer's parcel, not a question of policy ("how do refunds work for damaged books?").
# What "late" may describe that is no late delivery: "a late birthday present", "a late fee".
_LATE_WHAT = (
    r" (?:birthday|present|gift|christmas|xmas|anniversary|night|fee|charge|payment|reply|response)\b"
)
_PROBLEMS = (
    (
        DeliveryProblem.MISSING_ITEM,
        re.compile(
            r"\b(?:one|two|a|an|some) (?:of the )?(?:books?|items?|titles?)\b.{0,30}"
            r"\b(?:is |are |was |were )?"
            r"(?:missing|not (?:in|there)|wasn't (?:in|there))\b"
            r"|\bmissing (?:one|a|an|two) (?:books?|items?|titles?)\b"
            r"|\bonly (?:got|received|came with) (?:one|two|\d|half) (?:of (?:the|my) )?"
            r"(?:books?|items?|titles?)\b"
            r"|\b(?:books?|items?) (?:is |are |was |were )?missing from (?:the|my) "
            r"(?:box|parcel|package|order)\b"
        ),
    ),
    (
        DeliveryProblem.WRONG_ITEM,
        re.compile(
            r"\b(?:got|received|sent|came|arrived|delivered|gave|shipped|"
            r"in (?:my|the) (?:box|parcel|package))\b"
            r".{0,40}\b(?:(?:wrong|incorrect) (?:books?|items?|titles?|edition|copy|author|volume)|"
            r"someone else's (?:books?|order|parcel|package))\b"
            r"|\bwrong (?:books?|items?|titles?|edition) (?:in|came|arrived|was sent|sent|delivered)\b"
            r"|\bnot (?:the (?:book|one|title|edition) )?(?:what )?i (?:ordered|paid for|bought)\b"
            r"|^wrong (?:books?|items?|titles?|edition)\b"
        ),
    ),
    (
        DeliveryProblem.NOT_ARRIVED,
        re.compile(
            r"\b(?:says|said|shows?|showed|showing|marked|listed|status (?:is|says)|tracking says|app says)\b"
            r"(?: (?:as|it|it's|was|is|been|has been))*\W{0,3}delivered\b"
            r"(?=.{0,80}\b(?:never|not|no|didn't|did not|haven't|hasn't|isn't|wasn't|nowhere|missing|nothing|"
            r"stolen)\b(?! sure\b| certain\b))"
            r"|\b(?:never|not|didn't|haven't|hasn't)\b.{0,40}\b(?:even though|although|but)\b"
            r".{0,40}\bdelivered\b"
            r"|\b(?:package|parcel|order|box|delivery|books?|it)\b.{0,30}\b(?:stolen|lost in (?:the )?"
            r"(?:post|mail|transit))\b|\bstolen (?:from|off)\b"
            r"|\bdeliver(?:ed)? to (?:the |a )?wrong (?:house|address|door|building|person|flat|apartment)\b"
        ),
    ),
    (
        DeliveryProblem.DAMAGED,
        re.compile(
            # A book or its parcel, then how it came: "the cover arrived torn", "my box was crushed".
            r"\b(?:books?|cover|copy|spine|jacket|binding|box|parcel|package|hardcover|paperback|"
            r"novel|corners?)\b(?: \w+){0,3} (?:arrived|came|was|were|is|are|got|showed up) "
            r"(?:\w+ )?(?:damaged|broken|torn|ripped|crushed|bent|soaked|wet|stained|cracked|dented|smashed|"
            r"creased|falling apart|water[- ]damaged?)\b"
            r"|\b(?:it|they) (?:arrived|came|showed up) (?:\w+ )?(?:damaged|broken|torn|ripped|crushed|bent|"
            r"soaked|wet|water[- ]damaged?)\b"
            r"|\b(?:damaged|broken|torn|ripped|crushed|bent|soaked|cracked|creased|stained|"
            r"water[- ]damaged?) "
            r"(?:books?|cover|copy|spine|parcel|package|pages?|corners?|jacket|binding)\b"
            r"|\bwater damage\b|^damaged\b"
            r"|\b(?:pages?|\d+ pages) (?:are |were )?(?:missing|torn|ripped|stuck|blank|upside down)\b"
            r"|\bmissing (?:\d+ |some |a few )?pages\b|\bmisprint(?:ed)?\b|\bdefective (?:book|copy)\b"
        ),
    ),
    (
        DeliveryProblem.LATE,
        re.compile(
            # Late as how it came, not "a late birthday present", nor an order still on its way.
            r"\b(?:arrived|came|got (?:it|them|here)|delivered|showed up|turned up|received (?:it|them))\b"
            r".{0,30}\b(?:late|too late|after (?:the|my|his|her) (?:birthday|party|trip|event))\b(?!"
            + _LATE_WHAT
            + ")"
            r"|\b(?:it|they|the order|my order|the parcel|the package|delivery) (?:was|were) (?:so |very )?"
            r"late\b(?!" + _LATE_WHAT + ")"
        ),
    ),
)
# A question about where an order is now: not a problem with a delivery that came ("last time my order
# was late, so where is BK-10042 now?").
_ASKS_WHERE_RE = re.compile(
    r"\bwhere(?:'s| is| are)\b|\bwhen will\b|\bhas (?:it|my order|bk)\b.{0,20}\b(?:shipped|arrived)\b"
)
# What asks for a return rather than a case ("damaged, I want my money back"), or asks about policy.
_WANTS_RETURN_RE = re.compile(
    r"\b(?:return|returned|returning|refund|refunded|money back|exchange|swap|reimburs\w*)\b"
    r"|\b(?:don't|do not) want to keep\b"
    r"|\b(?:send (?:\w+ ){0,3}|give (?:\w+ ){0,2})back\b"
)
_ASKS_POLICY_RE = re.compile(
    r"\bhow do(?:es)?\b.{0,40}\bwork\b|\bwhat (?:is|are|happens)\b.{0,30}\bif\b"
    r"|\bdo you (?:offer|have|provide|do)\b"
)


def _delivery_problem(text: str) -> str | None:
    """The delivery problem a customer reports (a DeliveryProblem value), or None."""
    if _POLICY_WORD_RE.search(text) or _HYPOTHETICAL_RE.search(text) or _ASKS_POLICY_RE.search(text):
        return None
    problem = next((problem.value for problem, pattern in _PROBLEMS if pattern.search(text)), None)
    if problem == DeliveryProblem.LATE and _ASKS_WHERE_RE.search(text):
        return None
    return problem


def _order_change(text: str) -> "_Intent | None":
    """Cancelling an order, sending it to another address, or asking what cancelling costs; or None."""
    if _CANCEL_ASK_RE.search(text) and not _NOT_ORDER_CANCEL_RE.search(text):
        return (
            _Intent("no_policy", _ORDER_CHANGE_POLICY) if _CANCEL_FEE_RE.search(text) else _Intent("cancel")
        )
    if (
        _ADDRESS_WORD_RE.search(text)
        and _ADDRESS_FIX_RE.search(text)
        and not _ACCOUNT_ADDRESS_RE.search(text)
    ):
        return _Intent("address")
    return None


@dataclass(frozen=True)
class _Intent:
    kind: str  # person, status, return, policy, info, order_unclear, no_number, offtopic, help, ...
    topic: str = ""


@dataclass(frozen=True)
class _ToolCall:
    name: str
    input: dict


@dataclass
class _History:
    """What a model reads from the messages: customer words, its own last question, tool calls."""

    units: list[str] = field(default_factory=list)  # one entry per customer message, oldest first
    # Per message: whether it answers the model's question for an order number or email.
    answering: list[bool] = field(default_factory=list)
    # What the model's last reply waits for, as it recorded it (None after anyone else's words).
    waiting: Waiting | None = None
    calls: list[tuple[dict, dict]] = field(default_factory=list)  # (tool_use block, parsed result)
    new_calls: list[tuple[dict, dict]] = field(default_factory=list)  # results in the last message
    tool_use_count: int = 0
    topics: list[FaqTopic] = field(default_factory=list)  # the FAQ topics the system prompt lists
    signed_in: str = ""  # the email the store signed the customer in with, as the reminder says


# --- reading the history -------------------------------------------------------------------------


def _result_of(block: dict) -> dict:
    content = block.get("content", "")
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    try:
        result = json.loads(content)
    except (TypeError, ValueError):
        result = {}
    return result if isinstance(result, dict) else {}


def _waiting_in(state) -> Waiting | None:
    """What a stored state says the model waits for; None for anything else (a state is data we wrote,
    but a history is input all the same)."""
    waiting = state.get("waiting_for") if isinstance(state, dict) else None
    return Waiting(waiting) if waiting in Waiting.__members__.values() else None


def _read_history(system: list[dict], messages: list[dict]) -> _History:
    history = _History(topics=faq_topics_in("".join(block.get("text", "") for block in system)))
    tool_uses: dict[str, dict] = {}
    for position, message in enumerate(messages):
        blocks = message.get("content") or []
        if isinstance(blocks, str):
            blocks = [{"type": "text", "text": blocks}]
        last = position == len(messages) - 1
        if message.get("role") == "assistant":
            history.waiting = _waiting_in(message.get("state"))
            for block in blocks:
                if block.get("type") == "tool_use":
                    tool_uses[block.get("id", "")] = block
                    history.tool_use_count += 1
            continue
        for block in blocks:
            if block.get("type") == "text" and is_reminder(block.get("text", "")):
                history.signed_in = signed_in_email_in(block["text"]) or history.signed_in
        # The per-turn reminder (rules for the model) and staff replies are not the customer's words.
        texts = [
            block.get("text", "").strip()
            for block in blocks
            if block.get("type") == "text"
            and not is_reminder(block.get("text", ""))
            and not is_staff_message(block.get("text", ""))
        ]
        if any(text for text in texts):
            history.units.append("\n".join(text for text in texts if text))
            history.answering.append(history.waiting in _ASKS_FOR_DETAILS)
        for block in blocks:
            if block.get("type") == "tool_result" and block.get("tool_use_id") in tool_uses:
                call = (tool_uses[block["tool_use_id"]], _result_of(block))
                history.calls.append(call)
                if last:
                    history.new_calls.append(call)
    return history


@functools.lru_cache(maxsize=1024)  # every call reads the whole history again
def _plain(text: str) -> str:
    """The customer's words as the intent rules read them: lower case, straight apostrophes, without
    markup or emoji, text-speak spelled out, words run together split, and misspellings of the words
    the rules look for corrected."""
    text = text.replace("\u2019", "'").replace("\u2018", "'").lower()
    text = _MARKUP_RE.sub(" ", text.replace("#", " number "))
    words = [_respelled(word) for word in _TOKEN_RE.findall(text)]
    text = re.sub(r"\s+([?.!,])", r"\1", " ".join(word for word in words if word)).strip()
    return _WERE_RE.sub(r"where \1", text)


# Reading customers' words: tags and emphasis marks, and anything but letters, digits and punctuation.
_MARKUP_RE = re.compile(r"<[^>]{0,40}>|[*_~`#]+|[^\w\s'@.,?!:/-]+")
_TOKEN_RE = re.compile(r"[\w'@.-]+|[?!,]")
_WERE_RE = re.compile(r"^were (is|are|my|r)\b")  # "were is my order": "were" is a word, so respelled here
_TEXT_SPEAK = {
    "u": "you",
    "ur": "your",
    "r": "are",
    "pls": "please",
    "plz": "please",
    "thx": "thanks",
    "ty": "thanks",
    "thnx": "thanks",
    "tnx": "thanks",
    "im": "i'm",
    "ive": "i've",
    "dont": "don't",
    "cant": "can't",
    "wont": "won't",
    "didnt": "didn't",
    "doesnt": "doesn't",
    "isnt": "isn't",
    "havent": "haven't",
    "hasnt": "hasn't",
    "wasnt": "wasn't",
    "wheres": "where's",
    "whats": "what's",
    "hows": "how's",
    "wanna": "want to",
    "gonna": "going to",
    "gotta": "have to",
    "hv": "have",
    "abt": "about",
    "b4": "before",
    "2day": "today",
    "pw": "password",
    "pwd": "password",
    "acct": "account",
    "info": "information",
    "asap": "soon",
    "rn": "now",
    "smth": "something",
    "sth": "something",
    "ppl": "people",
    "msg": "message",
    "hi!": "hi",
    "thats": "that's",
    "thanx": "thanks",
    "thanq": "thanks",
    "hav": "have",
    "wen": "when",
    "pword": "password",
    "num": "number",
    "eta": "when will it arrive",
    "gm": "good morning",
    "heyo": "hey",
}
# The words the intent rules look for: a word that is one or two letters off one of these (and is not an
# everyday word of its own) is read as it; two of them run together are read apart.
_VOCABULARY = frozenset(
    re.findall(
        r"\S+",
        """
        order orders ordered return returns returning returned refund refunds refunded exchange
        shipping ship shipped shipment delivery deliver delivered package parcel tracking track
        arrive arrived arriving status password passwords login account reset forgot forgotten
        human person agent representative someone somebody customer service support cancel change
        address recommend recommendation books book where when hello thanks thank goodbye policy
        policies damaged broken wrong received receive number email want need please money back help
        talk speak store purchase item items international express free cost costs long days still yet
        send sent hasn't haven't didn't never come came my the a to is it me of and for in on your you
        can how do i what get log sign coming staff invoice receipt payment review newsletter unsubscribe
        subscribe register registration feedback
        """,
    )
)
_EVERYDAY = frozenset(
    re.findall(
        r"\S+",
        """
        were there here their they then than that this these those with went wont worder older border
        bored story short sort sure some same home hope hole whole whose shop stop step tips trip drop
        cold could would should word work world bookstore reader retail refer report record reorder
        sender render wonder stuff rest seat deal care card hold mail talking chance think thing things
        receipt receipts shopping personal personally customs reason reasons
        """,
    )
)


# No customer runs more than a few words together, and no misspelling is this long: a longer "word" is
# read as it is, so the work per word stays bounded (`"whereismyorder" * 280` once recursed past Python's
# limit and broke every later turn of its conversation).
_LONGEST_WORD_READ = 40


@functools.lru_cache(maxsize=8192)
def _respelled(word: str) -> str:
    if word in _TEXT_SPEAK:
        return _TEXT_SPEAK[word]
    if (
        not word.isalpha()
        or word in _VOCABULARY
        or word in _EVERYDAY
        or not 4 <= len(word) <= _LONGEST_WORD_READ
    ):
        return word
    if halves := _split_run_together(word):
        return halves
    # Only the slips that make a misspelling rather than another word: letters left out ("pasword",
    # "oder", "shiping") or two swapped ("retrun", "recieve"), the first letter kept. A changed or an
    # added letter usually makes a word of its own ("think", "chance", "shopping", "personal").
    allowed = 1 if len(word) <= 6 else 2
    slips = {
        known: len(known) - len(word) or 1  # letters left out, or one swap
        for known in _VOCABULARY
        if known[0] == word[0] and (_letters_left_out(word, known, allowed) or _two_swapped(word, known))
    }
    fewest = min(slips.values(), default=0)
    closest = [known for known, count in slips.items() if count == fewest]
    return closest[0] if len(closest) == 1 else word  # "pasword": password, not passwords


def _letters_left_out(word: str, known: str, allowed: int) -> bool:
    """Whether `word` is `known` with one to `allowed` of its letters left out."""
    if not 0 < len(known) - len(word) <= allowed:
        return False
    letters = iter(known)
    return all(char in letters for char in word)


def _two_swapped(word: str, known: str) -> bool:
    """Whether `word` is `known` with two neighbouring letters swapped."""
    if len(word) != len(known):
        return False
    differ = [i for i, (a, b) in enumerate(zip(word, known, strict=True)) if a != b]
    return (
        len(differ) == 2
        and differ[1] == differ[0] + 1
        and word[differ[0]] == known[differ[1]]
        and word[differ[1]] == known[differ[0]]
    )


@functools.lru_cache(maxsize=8192)  # a tail is tried from many heads
def _split_run_together(word: str, *, inner: bool = False) -> str | None:
    """Vocabulary words run together ("myorder", "whereismyorder", "talktoahuman"), read apart; "a"
    starts only an inner part, or "along" would read "a long"."""
    for cut in range(1, len(word) - 1):
        head, tail = word[:cut], _TEXT_SPEAK.get(word[cut:], word[cut:])
        if head == "a" and not inner:
            continue
        if head not in _VOCABULARY or len(head) + len(tail) < 5:
            continue
        if tail in _VOCABULARY:
            return f"{head} {tail}"
        if len(tail) >= 4 and (rest := _split_run_together(tail, inner=True)):
            return f"{head} {rest}"
    return None


def _order_id_in(text: str) -> str | None:
    return ORDER_NUMBERS.last_mention(text)


def _rma_in(text: str) -> str | None:
    """A return's RMA number as the customer wrote it, in the store's shape (RMA- and 8 characters)."""
    found = [
        mention.upper().replace("RMA", "", 1).lstrip("-") for mention in RMA_NUMBER_MENTION_RE.findall(text)
    ]
    found = [f"RMA-{code}" for code in found if len(code) == 8]
    return found[-1] if found else None


def _email_in(text: str) -> str | None:
    found = EMAIL_MENTION_RE.findall(text)
    return found[-1] if found else None


def _latest(finder, texts: list[str]) -> str | None:
    for text in reversed(texts):
        if value := finder(text):
            return value
    return None


# --- intents -------------------------------------------------------------------------------------


def _policy_topic(text: str) -> str | None:
    """The FAQ topic key a question is about, "" for policies in general, None for no policy question."""
    if _SHIPPING_RE.search(text):
        return "shipping"
    if _PASSWORD_RE.search(text):
        return "password_reset"
    named = _NAMED_POLICY_RE.search(text)
    if named and named.group(1) not in _GENERIC_POLICY_WORDS:
        return _POLICY_ALIASES.get(named.group(1), named.group(1))
    return "" if _POLICY_WORD_RE.search(text) else None


# A question about the store itself ("do you offer…", "is there a…"), which a FAQ topic might answer.
_STORE_QUESTION_RE = re.compile(
    r"\b(?:do|does|can|will) (?:you|bookly|the store|your (?:store|shop))\b|\bis there (?:a|an|any)\b"
    r"|\bare (?:there|you able)\b|\bpolic(?:y|ies)\b"
)
_WORD_RE = re.compile(r"[a-z]+")
_STOP_WORDS = frozenset(
    re.findall(
        r"\w+",
        "a an the i im me my we our you your it its is are was were be been am do does did can could would "
        "should will shall may might must have has had of to in on at for with about from by as or and but "
        "if so that this these those there here what which who how when where why please any some get got "
        "just also not no yes ok hi hello bookly store shop",
    )
)
# A topic answers a question only if words it owns (its key, title and example questions) carry at least
# this share of the question's words, weighted so that words several topics share count for less.
_TOPIC_COVERAGE = 0.6


def _stem(word: str) -> str:
    """A rough stem, enough to match "wrapping", "wrapped" and "wraps" with "wrap"."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiousl":
                word = word[:-1]  # wrapp -> wrap, shipp -> ship
            break
    return word


def _stems(text: str, known: frozenset[str] = frozenset()) -> set[str]:
    """The stems of a text's words; a word run together from two `known` ones ("giftwrapping") counts as
    both."""
    stems = set()
    for word in _WORD_RE.findall(text.lower()):
        if word in _STOP_WORDS or len(word) <= 2:
            continue
        stem = _stem(word)
        if known and stem not in known:
            halves = next(
                (
                    (_stem(word[:cut]), _stem(word[cut:]))
                    for cut in range(3, len(word) - 2)
                    if _stem(word[:cut]) in known and _stem(word[cut:]) in known
                ),
                None,
            )
            if halves:
                stems.update(halves)
                continue
        stems.add(stem)
    return stems


@functools.lru_cache(maxsize=16)  # the same topics, every message of every call, until staff change one
def _topic_words(topics: tuple[FaqTopic, ...]) -> dict[str, set[str]]:
    """Each topic's words: its key's, its title's and its questions' stems."""
    return {
        topic.key: _stems(" ".join([topic.key.replace("_", " "), topic.title, *topic.questions]))
        for topic in topics
    }


def _topic_matching(text: str, topics: list[FaqTopic]) -> str | None:
    """The key of the FAQ topic a question is about, from the words of its title and example questions."""
    if not topics:
        return None
    owned = _topic_words(tuple(topics))
    asked = _stems(text, frozenset().union(*owned.values()))
    if not asked:
        return None
    sharing = {word: sum(word in words for words in owned.values()) for word in asked}
    weight = {word: 1 / max(1, count) for word, count in sharing.items()}
    total = sum(weight.values())
    best, best_share = None, 0.0
    for key, words in owned.items():
        if len(asked) == 1 and not asked & _stems(key.replace("_", " ")):
            continue  # one word alone ("times") names a topic only if it is the topic's own name
        share = sum(weight[word] for word in asked & words) / total
        # At least one word only this topic has: a shared word alone ("order") names no topic.
        if share > best_share and any(sharing[word] == 1 for word in asked & words):
            best, best_share = key, share
    return best if best_share >= _TOPIC_COVERAGE else None


# What customers ask for, learned from typical phrasings of each request (support/llm/offline_phrasings.json,
# about 6,500 written for this model by nine authors in different styles, kept apart from the evaluation
# sets): a linear classifier over their words, word pairs and letter sequences, the last so that a
# misspelled word still shares most of its features with the word.
_PHRASINGS = Path(__file__).with_name("offline_phrasings.json")
_ROUTE_INTENTS = {
    "order_status": _Intent("status"),
    "return": _Intent("return"),
    "policy_shipping": _Intent("policy", "shipping"),
    "policy_returns": _Intent("policy", "returns_overview"),
    "policy_password": _Intent("policy", "password_reset"),
    "person": _Intent("person"),
    "greeting": _Intent("greeting"),
    "thanks": _Intent("thanks"),
    "goodbye": _Intent("goodbye"),
    "no_number": _Intent("no_number"),
    # Not "offtopic": while the model waits for an order's details, a message it cannot place is asked
    # again, and otherwise answered with the same refusal.
    "out_of_scope": _Intent("unknown"),
    # A delivery gone wrong, one route per problem: the case is reported with it.
    **{f"problem_{problem.value}": _Intent("problem", problem.value) for problem in DeliveryProblem},
}
_PHRASED_TOPICS = frozenset(intent.topic for intent in _ROUTE_INTENTS.values() if intent.kind == "policy")
# How far the best route's score must lead the next one's (the classifier's decision units) to settle a
# message; closer than that, the rules' reading stands. Leaving each of three evaluation sets out of the
# phrasings in turn, 0.2 to 0.4 route alike and higher leaves more to the rules; below 0.4 "Return BK-10042
# for <email>" reads as a status question.
_CLEAR_MARGIN = 0.4


def _classifier_words(text: str) -> str:
    """A plain message as the classifier reads it: stemmed words, an order number or email as one word."""
    text = ORDER_NUMBERS.replace(" ordernumber ", text)
    text = EMAIL_MENTION_RE.sub(" emailaddress ", text)
    return " ".join(_stem(word) for word in re.findall(r"[a-z][a-z']*|\?", text))


# The phrasings' routes for a delivery problem (one per problem) start so; the others are everyday requests.
_PROBLEM_ROUTE = "problem_"


@dataclass(frozen=True)
class _Classifiers:
    """Two linear classifiers over the same features: one for the everyday routes, trained without the
    problems' phrasings (so that a thousand reports of damaged books move no boundary between, say, a
    goodbye and a request for a person), and one telling a delivery problem, by kind, from the rest."""

    features: object
    routes: object
    problems: object


@functools.cache
def _classifier() -> tuple[_Classifiers, frozenset[str]]:
    """The classifiers trained on the phrasings, and those of their words that tell something: about
    3 s of CPU with the import, once per process (gunicorn spends it before a worker's first customer)."""
    # Imported here: a process that talks to Claude never loads them.
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_union
    from sklearn.svm import LinearSVC

    phrasings = json.loads(_PHRASINGS.read_text())
    texts = [_classifier_words(_plain(text)) for route in phrasings for text in phrasings[route]]
    routes = [route for route in phrasings for _ in phrasings[route]]
    features = make_union(
        TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, tokenizer=str.split, token_pattern=None),
        TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True),
    )
    matrix = features.fit_transform(texts)
    everyday = [index for index, route in enumerate(routes) if not route.startswith(_PROBLEM_ROUTE)]
    classifiers = _Classifiers(
        features=features,
        routes=LinearSVC(random_state=0).fit(matrix[everyday], [routes[index] for index in everyday]),
        problems=LinearSVC(random_state=0).fit(
            matrix, [route if route.startswith(_PROBLEM_ROUTE) else "other" for route in routes]
        ),
    )
    telling = frozenset(word for text in texts for word in text.split() if _tells_something(word))
    return classifiers, telling


_STOP_STEMS = frozenset(_stem(word) for word in _STOP_WORDS)  # "this" is read "thi", "does" "doe"


def _tells_something(word: str) -> bool:
    """Whether a word as the classifier reads it (stemmed) is more than a small one ("or", "this", "i'm")."""
    head = word.split("'")[0]
    return len(head) > 2 and head not in _STOP_WORDS and head not in _STOP_STEMS


@functools.lru_cache(maxsize=1024)  # every call reads the whole history again
def _classified(words: str, *, problems: bool = True) -> tuple[str, float] | None:
    """The route of the phrasings most like a message (as `_classifier_words` gives it), and its lead
    over the next route; None when no phrasing uses any word of it but the small ones ("or", "is it"):
    too little to tell, or letters typed at random."""
    classifiers, telling = _classifier()
    if not telling.intersection(words.split()):
        return None
    features = classifiers.features.transform([words])
    everyday = _best_two(classifiers.routes, features)
    problem, lead = _best_two(classifiers.problems, features)
    if (
        problems
        and problem.startswith(_PROBLEM_ROUTE)
        and (lead >= _CLEAR_MARGIN or everyday[1] < _CLEAR_MARGIN)
        and not _WANTS_RETURN_RE.search(words)
    ):
        # More like a report of a delivery gone wrong than like anything else, and no everyday request
        # clearer ("has my order arrived?" asks its status): a problem (a return asked for in so many words
        # stays a return).
        return problem, max(lead, _CLEAR_MARGIN)
    return everyday


def _best_two(classifier, features) -> tuple[str, float]:
    """A classifier's best route for the features, and its lead over the next one."""
    scores = classifier.decision_function(features)[0]
    (best, route), (second, _) = sorted(zip(scores, classifier.classes_, strict=True), reverse=True)[:2]
    return str(route), float(best - second)


def _apart(one: re.Match, other: re.Match) -> bool:
    return one.start() >= other.end() or one.end() <= other.start()


def _rule_intent(raw: str, *, has_prior_order: bool, topics: list[FaqTopic]) -> _Intent:
    """What the hand-written rules read a message as."""
    text = _plain(raw)
    asking_if_human = _ARE_YOU_HUMAN_RE.search(text)
    if any(not asking_if_human or _apart(found, asking_if_human) for found in _PERSON_RE.finditer(text)):
        return _Intent("person")
    order_id, email = _order_id_in(raw), _email_in(raw)
    personal = bool(
        order_id or _MY_ORDER_RE.search(text) or (has_prior_order and _REFERS_BACK_RE.search(text))
    )
    if _NO_NUMBER_RE.search(_ADDRESS_NUMBER_RE.sub(" ", text)) and not order_id:
        return _Intent("no_number")
    if _PASSWORD_RE.search(text) and not order_id:
        return _Intent("policy", "password_reset")  # "the reset email never came" is no order's
    # Several requests in one message: the first is answered.
    change = _CHANGE_ORDER_RE.search(text)
    task = _RETURN_STATUS_RE.search(text) or _RETURN_RE.search(text) or _STATUS_RE.search(text)
    if _COMPLAINT_RE.search(text):
        return _Intent("complaint")
    order_change = _order_change(text)
    if order_change and not (task and task.start() < (change.start() if change else len(text))):
        return order_change
    if change and not (task and task.start() < change.start()):
        return _Intent("offtopic", "changing orders")
    if order_id and _address_in(raw) and re.search(r"\b(?:send|ship|deliver|redirect|reroute|route)\b", text):
        return _Intent("address")  # "can you send BK-10089 to <an address>?"
    problem = _delivery_problem(text)
    if problem and not _WANTS_RETURN_RE.search(text) and not _RETURN_STATUS_RE.search(text):
        return _Intent("problem", problem)  # reported for staff to put right, not refused or looked up
    if _RETURN_STATUS_RE.search(text):
        return _Intent("status")  # a return already started: looked up with its order
    if _RETURN_RE.search(text) or (personal and _PROBLEM_RE.search(text)):
        wants = _WANT_RE.search(text) and not re.fullmatch(r"please", _WANT_RE.search(text).group())
        if (_POLICY_WORD_RE.search(text) or _HYPOTHETICAL_RE.search(text)) and not (wants or order_id):
            return _Intent("policy", "returns_overview")  # "refund policy pls", "if I don't like it…"
        # "Can I return a book?" is a policy question; "I want to return my book" (or "send it back")
        # is a return.
        if personal or wants or _SPECIFIC_RE.search(text) or not _GENERAL_Q_RE.search(text):
            return _Intent("return")
        return _Intent("policy", "returns_overview")
    if (
        _STATUS_RE.search(text)
        and (personal or not _SHIPPING_RE.search(text))
        and not (_BOOK_RELEASE_RE.search(text) and not order_id)
    ):
        return _Intent("status")
    topic = _policy_topic(text)
    keys = {known.key for known in topics}
    if topic and keys and topic not in keys:
        # "Your privacy policy": a topic staff may have added under another key, or none at all.
        topic = _topic_matching(text, topics)
        if not topic:
            return _Intent("no_policy")
    if topic is not None:
        return _Intent("policy", topic)
    if matched := _topic_matching(text, topics):
        return _Intent("policy", matched)
    for pattern, off_topic in _OFF_TOPICS:
        if pattern.search(text):
            return _Intent("offtopic", off_topic)
    if order_id or email:
        return _Intent("info")
    if _STORE_QUESTION_RE.search(text):
        return _Intent("no_policy")  # "can you gift wrap my order?": a service no topic covers
    if personal:
        return _Intent("order_unclear")
    for kind, pattern, _ in _SMALL_TALK:
        if re.search(pattern, text):
            return _Intent(kind)
    return _Intent("unknown")


# Where a second request starts: "where is my order, and also how do I reset my password", "…? And …".
_SECOND_REQUEST_RE = re.compile(r"(?:\band |[,.?!] *)also\b|\bas well as\b|[,.?!] *plus\b|\? *and\b")


def _first_request(text: str) -> str:
    """The first of several requests in one message, to be answered first (the whole message when the
    words before the second are too few to ask anything)."""
    second = _SECOND_REQUEST_RE.search(text)
    if second and len(_stems(text[: second.start()])) >= 2:
        return text[: second.start()]
    return text


def _detect_intent(raw: str, *, has_prior_order: bool, answering: bool, topics: list[FaqTopic]) -> _Intent:
    """What a customer's message asks for. The rules keep what only they can read or what must never be
    lost: an order's details given when asked for, yes and no, asking for a person in so many words, a
    topic staff added, "are you a person?", cancelling an order, a delivery problem named plainly.
    Otherwise the phrasings decide when they are clear, and the rules when they are not; a message more
    like a reported delivery problem than like anything else is one."""
    rule = _rule_intent(raw, has_prior_order=has_prior_order, topics=topics)
    text = _plain(raw)
    if (
        rule.kind in ("ack", "decline", "cancel", "address", "complaint", "problem")
        or rule.topic == _ORDER_CHANGE_POLICY
    ):
        return rule  # cancellations, new addresses, a delivery problem named plainly: the rules read those
    if rule.kind == "policy" and rule.topic not in _PHRASED_TOPICS:
        return rule
    if rule.kind == "person" and _asks_for_someone(text):
        return rule
    if rule.kind in _TASKS and has_prior_order and _REFERS_BACK_RE.search(text):
        return rule  # "can I return it?" after a lookup: that order, not the returns FAQ
    details = ORDER_NUMBERS.replace(" ", EMAIL_MENTION_RE.sub(" ", text))
    if rule.kind == "info" and (answering or not _stems(details)):
        # An order's details given when the model asked for them answer its question, however worded
        # ("the order number is …"); details alone ask which task.
        return rule
    words = _classifier_words(_first_request(text))
    classified = _classified(words)
    if (
        classified is not None
        and classified[0].startswith(_PROBLEM_ROUTE)
        and (
            _NOT_THE_PARCEL_RE.search(text)
            or (classified[0] == f"{_PROBLEM_ROUTE}{DeliveryProblem.LATE}" and _ASKS_WHERE_RE.search(text))
            or re.search(r"\b(?:not sure|never ?mind|found it)\b", text)
        )
    ):
        # Like a problem in its words, but about an email, a link, or where an order is now: not a case.
        classified = _classified(words, problems=False)
    if classified is None or classified[1] < _CLEAR_MARGIN:
        return rule
    intent = _ROUTE_INTENTS[classified[0]]
    if (
        rule.kind == "info"
        and has_prior_order
        and intent.kind not in (*_TASKS, "person", "policy", "no_number")
    ):
        return rule  # "BK-10103 as well": another order for the task under way, not a request refused
    if (
        intent.kind == "unknown"
        and rule.kind in ("greeting", "thanks", "goodbye", "decline")
        and len(_stems(text)) <= 2
    ):
        return rule  # "laters", "so long": a few words of small talk, which the rules know by heart
    if intent.kind in ("unknown", "greeting") and rule.kind in ("help", "no_policy", "offtopic"):
        return rule  # the rules name what is refused, offer a person for store questions, say what it does
    if intent.kind in _TASKS and rule.kind == "offtopic" and re.search(r"\bcancel", text):
        return rule  # "cancel BK-10042 and refund me": the first request is refused, and nothing started
    if intent.kind == "person" and _ARE_YOU_HUMAN_RE.search(text):
        return rule  # "are you a real person?" asks about the assistant, not for someone
    if intent.kind == "no_number" and _order_id_in(raw):
        return rule  # "the order number is BK-10042" gives what it seems to be missing
    if intent.kind == "policy" and topics and intent.topic not in (keys := {topic.key for topic in topics}):
        # A built-in topic staff took down: the rules' topic if that one is published, else none.
        return rule if rule.kind == "policy" and rule.topic in keys else _Intent("no_policy")
    return intent


def _intents(units: list[str], topics: list[FaqTopic], answering: list[bool]) -> list[_Intent]:
    return [
        _detect_intent(
            text,
            has_prior_order=_latest(_order_id_in, units[:index]) is not None,
            answering=answering[index],
            topics=topics,
        )
        for index, text in enumerate(units)
    ]


# --- flow state ----------------------------------------------------------------------------------


def _task_start(intents: list[_Intent]) -> int | None:
    """Index of the customer message that started the current order task: the latest explicit one wins."""
    for index in range(len(intents) - 1, -1, -1):
        if intents[index].kind in _TASKS:
            return index
    return None


def _order_for_task(
    units: list[str], intents: list[_Intent], start: int, verified: tuple[str, ...] = ()
) -> str | None:
    """The order number for the task begun at `start`.

    Given since the task began; else the earlier order when the request points back to it ("return
    it"); else one given just before the request ("BK-10042" then "status please"); else, for "my
    order" or "my return", the one order a tool already found with the customer's email in this
    conversation (`verified`), as for a problem told without a number. Never a guess among several: a
    customer may have several orders.
    """
    if order_id := _latest(_order_id_in, units[start:]):
        return order_id
    if _REFERS_BACK_RE.search(_plain(units[start])):
        return _latest(_order_id_in, units[:start])
    for index in range(start - 1, -1, -1):
        if intents[index].kind not in ("info", "order_unclear"):
            break
        if order_id := _order_id_in(units[index]):
            return order_id
    if len(verified) == 1 and (
        _MY_ORDER_OR_RETURN_RE.search(_plain(units[start])) or intents[start].kind == "problem"
    ):
        return verified[0]  # a problem told after a lookup ("it was late!") is that order's
    return None


_MY_ORDER_OR_RETURN_RE = re.compile(
    r"\b(?:my|the|our) (?:\w+ )?(?:order|return|refund|package|parcel|books?)\b"
)


def _listed(history: _History) -> bool:
    """Whether the assistant's last words listed the signed-in customer's orders: then the customer is
    answering "which one?", and an order number is asked for rather than a second list. Any later
    request lists them afresh."""
    return history.waiting == Waiting.WHICH_ORDER


def _verified_orders(history: _History) -> tuple[str, ...]:
    """The orders a tool found with the customer's email in this conversation, in order."""
    found: list[str] = []
    for _, result in history.calls:
        order_id = result.get("order_id")
        if "error" not in result and isinstance(order_id, str) and order_id not in found:
            found.append(order_id)
    return tuple(found)


def _task_step(units: list[str], intents: list[_Intent], start: int, history: _History) -> str | _ToolCall:
    """Ask for what the task still misses, or call its tool. A customer the store signed in is never
    asked for their email, and without an order number their recent orders are listed (once)."""
    task = intents[start].kind
    order_id = _order_for_task(units, intents, start, _verified_orders(history))
    # The customer's address holds for all their orders; the store's word for it, when signed in.
    email = _latest(_email_in, units) or history.signed_in
    rma_number = _latest(_rma_in, units[start:]) if task == "status" and not order_id else None
    if rma_number:
        # A return's status by its RMA number: found with the email on its order, no order number needed.
        if not email:
            return f"I can check that return for you. {_ask(Waiting.EMAIL, ASK_EMAIL)}"
        return _ToolCall("lookup_order", {"rma_number": rma_number, "customer_email": email})
    if not order_id and history.signed_in and not _listed(history):
        return _ToolCall("list_recent_orders", {})
    if not order_id:
        return f"{_TASK_LEADS[task]} {_ask(Waiting.ORDER_NUMBER, ASK_ORDER_NUMBER)}"
    if not email:
        return f"Thanks. {_ask(Waiting.EMAIL, ASK_EMAIL)}"
    arguments = {"order_id": order_id, "customer_email": email}
    if task == "address":
        address = _latest(_address_in, units[start:])
        if address is None:
            return f"Thanks. {_ask(Waiting.ADDRESS, ASK_ADDRESS)}"
        return _ToolCall("check_address_change", {**arguments, "new_address": address})
    if task == "problem":
        return _problem_report(units, start, arguments, problem=intents[start].topic)
    return _ToolCall(_TASK_TOOLS[task], arguments)


def _problem_report(
    units: list[str], start: int, arguments: dict, *, problem: str, titles: list[str] | None = None
) -> _ToolCall:
    """Report the problem told at `start`, in the customer's words (their email left out)."""
    details = " ".join(EMAIL_MENTION_RE.sub("", units[start]).split())
    if len(details) > MAX_REASON_CHARS:
        details = details[:MAX_REASON_CHARS].rsplit(" ", 1)[0]
    report = {**arguments, "problem": problem, "details": details or "Not given"}
    if titles:
        report["item_titles"] = titles
    return _ToolCall("report_delivery_problem", report)


_TASK_LEADS = {
    "status": "I can check that for you.",
    "return": "I can help with a return.",
    "cancel": "I can check whether that order can still be cancelled.",
    "address": "I can check whether that order can still go to a new address.",
    "problem": "I'm sorry about that. I can report it to our team.",
}
_TASK_TOOLS = {"status": "lookup_order", "return": "check_return_eligibility", "cancel": "check_cancellation"}

# An address as people type it: "Ana Diaz, 12 Elm St, Apt 3, Springfield, IL 62701", on one line or
# several; the ZIP code ends it. What the store needs of each field is the tool's to say.
_ZIP_RE = re.compile(r"(?:^|[\s,])(\d{5}(?:-\d{4})?)(?![\w-])")
# Words that lead into an address ("change the address of BK-10103 to …", "the new one is …").
_ADDRESS_LEAD_RE = re.compile(r"\b(?:to|is|at|address)\b|:", re.IGNORECASE)


def _state_at_end(text: str) -> tuple[str, str] | None:
    """(what comes before, the state's code) when the text ends with a state's code or name."""
    words = text.strip(" ,.").split()
    for size in (3, 2, 1):
        if len(words) < size:
            continue
        said = " ".join(words[-size:]).strip(" ,.")
        code = state_code(said)
        if code:
            return " ".join(words[:-size]).strip(" ,"), code
    return None


def _address_in(text: str) -> dict | None:
    """The address fields in a message that ends with a ZIP code, or None."""
    text = EMAIL_MENTION_RE.sub(" ", ORDER_NUMBERS.replace(" ", text)).strip()
    zip_codes = list(_ZIP_RE.finditer(text))
    if not zip_codes:
        return None
    zip_code = zip_codes[-1]  # what follows it ("my email is …") is no part of the address
    text = text[: zip_code.start()]
    lines = [part.strip() for part in re.split(r"[\n;]+", text) if part.strip()]
    parts = [part.strip(" .") for line in lines for part in line.split(",") if part.strip(" .")]
    if parts and (leads := list(_ADDRESS_LEAD_RE.finditer(parts[0]))):
        parts[0] = parts[0][leads[-1].end() :].strip(" .!?")
        if not parts[0]:
            parts.pop(0)
    if not parts:
        return None
    found = _state_at_end(parts[-1])
    if found is None and len(parts) >= 3 and parts[-1].replace(" ", "").isalpha():
        found = ("", parts[-1])  # a state we do not ship to, or misspelt: the tool says which field
    if found is None:
        return None
    before, state = found
    if before:
        parts[-1] = before
    else:
        parts.pop()
    if len(parts) < 2:
        return None
    city = parts.pop()
    name = parts.pop(0) if len(parts) > 1 and not re.match(r"\d", parts[0]) else ""
    # No name given: the recipient on the order stays (the tool keeps what is left out).
    address = {"line1": parts[0], "city": city, "state": state, "zip": zip_code.group(1)}
    if name:
        address["to"] = name
    if len(parts) > 1:
        address["line2"] = ", ".join(parts[1:])
    return address


def _title_named(title: str, text: str) -> bool:
    key = re.sub(r"^(?:the|a|an) ", "", title.casefold())
    return bool(key) and re.search(r"\b" + re.escape(key) + r"\b", text.casefold()) is not None


def _named_titles(texts: list[str], titles: list[str]) -> list[str] | None:
    """The titles named in the latest message that names any of them, in the order's order."""
    for text in reversed(texts):
        named = [title for title in titles if _title_named(title, text)]
        if named:
            return named
    return None


def _returnable(result: dict) -> list[str]:
    return [item.get("title", "") for item in result.get("items", []) if item.get("returnable")]


def _return_reason(texts: list[str]) -> str:
    """Why the customer is returning, in their words, kept for staff (order number included, their email
    left out): a because-clause or a sentence naming a problem."""
    for text in texts:
        text = EMAIL_MENTION_RE.sub("", text)  # the order's email is on the order; the rest stays as written
        clause = _REASON_CLAUSE_RE.search(text)
        sentences = [s for s in re.split(r"[.!?](?=\s|$)|\n+", text) if _REASON_WORDS_RE.search(s)]
        candidate = clause.group("why") if clause else (sentences[0] if sentences else "")
        candidate = " ".join(candidate.split()).strip(" ,;:-")
        if len(candidate) > MAX_REASON_CHARS:
            candidate = candidate[:MAX_REASON_CHARS].rsplit(" ", 1)[0]
        if candidate:
            return candidate
    return "Not given"


def _answer_confirmation(history: _History, intents: list[_Intent]) -> str | _ToolCall | None:
    """The answer to the return summary: start it, summarise again, decline, or None (not an answer)."""
    checks = [(use, result) for use, result in history.calls if use.get("name") == "check_return_eligibility"]
    if not checks or checks[-1][1].get("eligible") is not True:
        return None
    check_input, result = checks[-1][0].get("input", {}), checks[-1][1]
    units, latest = history.units, _plain(history.units[-1])
    start = _task_start(intents) or 0
    returnable = _returnable(result)
    summarised = _named_titles(units[start:-1], returnable)
    named_now = _named_titles(units[-1:], returnable)
    if not named_now and summarised and _THE_OTHER_RE.search(latest):
        named_now = [title for title in returnable if title not in summarised] or None
    changed_choice = named_now and set(named_now) != set(summarised or returnable)
    if YES_RE.match(latest):
        # A different choice of books is not a yes to the summary just given: summarise again.
        if changed_choice:
            return _eligibility_reply(result, named_now)
        if intents[-1].kind in ("person", "status", "policy", "no_number"):
            return None  # "yes, but let me talk to a person first": that request is answered first
        other_order = _order_id_in(history.units[-1])
        if HESITANT_RE.search(latest) or (other_order and other_order != check_input.get("order_id")):
            return DECLINED_REPLY  # "ok, maybe later", "ok, I don't want to return it": nothing started
        arguments = {
            "order_id": check_input.get("order_id", ""),
            "customer_email": check_input.get("customer_email", ""),
            "reason": _return_reason(units[start:]),
        }
        if summarised:
            arguments["item_titles"] = summarised
        return _ToolCall("initiate_return", arguments)
    if changed_choice:
        return _eligibility_reply(result, named_now)  # "no, just the Goldfinch": a new summary, not a no
    if _NO_RE.match(latest) and intents[-1].kind not in (*_TASKS, "policy", "info", "no_number", "person"):
        return DECLINED_REPLY
    return None


def _answer_which_item(history: _History) -> str | None:
    """The answer to "which would you like to return?": a summary of the titles named, or None."""
    checks = [result for use, result in history.calls if use.get("name") == "check_return_eligibility"]
    if not checks or checks[-1].get("eligible") is not True:
        return None
    returnable = _returnable(checks[-1])
    latest = _plain(history.units[-1])
    named = _named_titles(history.units[-1:], returnable) or (returnable if _BOTH_RE.search(latest) else None)
    return _eligibility_reply(checks[-1], named) if named else None


# The customer has not got it: "it's not here", "I never got it", "nothing came".
_NOT_RECEIVED_RE = re.compile(
    r"\b(?:not|isn't|never|nothing|haven't|hasn't|didn't|did not|no sign)\b.{0,25}"
    r"\b(?:here|got|get|received|receive|arrived|arrive|came|come|there|seen|see|delivered)\b"
)


# Things a customer may not have received that are no parcel: "I didn't get the confirmation email".
_NOT_THE_PARCEL_RE = re.compile(r"\b(?:confirmation|refund|link|password|code)\b")
_GOT_IT_RE = re.compile(r"\b(?:got it|found it|never ?mind|it's here|it turned up|it showed up)\b")


def _delivered_not_received(history: _History) -> dict | None:
    """The order (number and email) the last lookup said was delivered, when the customer's latest
    message, right after it, says it never came; else None."""
    latest = _plain(history.units[-1])
    if (
        not _NOT_RECEIVED_RE.search(latest)
        or _NOT_THE_PARCEL_RE.search(latest)
        or _GOT_IT_RE.search(latest)
        or _WANTS_RETURN_RE.search(latest)
        or _order_id_in(history.units[-1])
    ):
        return None
    lookups = [(use, result) for use, result in history.calls if use.get("name") == "lookup_order"]
    if not lookups or lookups[-1][1].get("status") != "delivered" or history.calls[-1] != lookups[-1]:
        return None
    given = lookups[-1][0].get("input", {})
    return {key: given.get(key, "") for key in ("order_id", "customer_email")}


def _answer_which_books(history: _History) -> _ToolCall | None:
    """The answer to "which of the books?": the report again with the titles named, or None."""
    asked = [use for use, result in history.calls if use.get("name") == "report_delivery_problem"]
    results = [result for use, result in history.calls if use.get("name") == "report_delivery_problem"]
    if not asked or results[-1].get("error") != ITEMS_NEEDED:
        return None
    titles = results[-1].get("order_titles") or []
    latest = _plain(history.units[-1])
    named = _named_titles(history.units[-1:], titles) or (titles if _BOTH_RE.search(latest) else None)
    if not named:
        return None
    return _ToolCall("report_delivery_problem", {**asked[-1].get("input", {}), "item_titles": named})


def _answer_change(history: _History, intents: list[_Intent]) -> str | _ToolCall | None:
    """The answer to "cancel this order?" or "send it to this address?": do it, decline, check another
    address, or None (not an answer)."""
    checks = [
        (use, result)
        for use, result in history.calls
        if use.get("name") in ("check_cancellation", "check_address_change")
    ]
    if not checks:
        return None
    use = checks[-1][0]
    arguments = {key: use.get("input", {}).get(key, "") for key in ("order_id", "customer_email")}
    cancelling = use.get("name") == "check_cancellation"
    latest = _plain(history.units[-1])
    if intents[-1].kind in ("person", "status", "return", "policy", "no_number"):
        return None  # another request: answered as such
    if not cancelling and (address := _address_in(history.units[-1])):
        return _ToolCall("check_address_change", {**arguments, "new_address": address})
    other_order = _order_id_in(history.units[-1])
    if reads_as_yes(history.units[-1], to_cancel=cancelling) and other_order in (None, arguments["order_id"]):
        return _ToolCall("cancel_order" if cancelling else "change_shipping_address", arguments)
    if _NO_RE.match(latest) or HESITANT_RE.search(latest) or re.search(r"\bkeep it\b", latest):
        return DECLINED_CANCEL_REPLY if cancelling else DECLINED_ADDRESS_REPLY
    return None


# A signed-in customer asking for their orders as a list: "what are my recent orders?", "what did I buy?".
_ASKS_FOR_ORDERS_RE = re.compile(
    r"\b(?:(?:my|our) (?:recent |last |latest |past |previous |other |current |open )?orders\b(?! number)|"
    r"order history|what (?:have|did) (?:i|we) (?:order(?:ed)?|bought|buy|purchased?|get)\b|"
    r"(?:any|all) (?:of )?(?:my )?orders\b|orders? (?:i|we) (?:have )?(?:placed|made)\b)"
)


def _respond(history: _History) -> str | _ToolCall:
    """The next step for the customer's latest message."""
    units = history.units
    if not units:
        return GREETING_REPLY
    intents = _intents(units, history.topics, history.answering)
    intent = intents[-1]
    pending = history.waiting
    if pending == Waiting.CONFIRM_RETURN and (answer := _answer_confirmation(history, intents)) is not None:
        return answer
    if pending in (Waiting.CONFIRM_CANCEL, Waiting.CONFIRM_ADDRESS) and (
        answer := _answer_change(history, intents)
    ):
        return answer
    if pending == Waiting.WHICH_ITEM and (answer := _answer_which_item(history)):
        return answer
    if pending == Waiting.WHICH_BOOKS and (answer := _answer_which_books(history)):
        return answer
    if pending == Waiting.PASS_ON and len(units) > 1 and _PASS_ON_RE.match(_plain(units[-1])):
        # Yes to passing on a question no policy answers: staff get the question itself.
        return _handoff(HandoffAsk.NEEDS_STAFF, units[-2])
    if pending == Waiting.OFFER_PERSON and len(units) > 1 and _PASS_ON_RE.match(_plain(units[-1])):
        # Yes to a person offered for a request we cannot serve: staff get that request in its words.
        return _handoff(HandoffAsk.NEEDS_STAFF, _request_before(units, intents))
    if _ASKS_FOR_ORDERS_RE.search(_plain(units[-1])) and not _order_id_in(units[-1]):
        if history.signed_in:
            return _ToolCall("list_recent_orders", {})  # asked for in so many words: listed again
        if intent.kind in ("order_unclear", "unknown", "offtopic"):
            return NO_NUMBER_REPLY  # no list without the store's word for who this is: the number, then
    start = _task_start(intents)
    if (
        pending == Waiting.ADDRESS
        and start is not None
        and intents[start].kind == "address"
        and start < len(units) - 1
    ):
        # The new address asked for: read it, or ask again.
        step = _task_step(units, intents, start, history)
        if isinstance(step, str) and _last_asked() == Waiting.ADDRESS:
            return f"Sorry, I couldn't read that as an address. {_ask(Waiting.ADDRESS, ASK_ADDRESS)}"
        return step
    if intent.kind in ("status", "unknown", "order_unclear") and (
        looked_up := _delivered_not_received(history)
    ):
        # "It's not here" after being told the order was delivered: a parcel gone missing, reported.
        return _problem_report(units, len(units) - 1, looked_up, problem=DeliveryProblem.NOT_ARRIVED.value)
    if intent.kind in _TASKS:
        return _task_step(units, intents, len(units) - 1, history)
    if intent.kind == "policy":
        return _ToolCall("lookup_policy", {"topic": intent.topic}) if intent.topic else ASK_WHICH_POLICY
    start = _task_start(intents)
    if intent.kind == "info" and start is not None:
        return _task_step(units, intents, start, history)
    waiting = pending in (Waiting.ORDER_NUMBER, Waiting.WHICH_ORDER, Waiting.EMAIL) and start is not None
    if intent.kind in ("ack", "unknown", "order_unclear") and waiting:
        # Still waiting for an order detail: ask again rather than refuse or change the subject.
        step = _task_step(units, intents, start, history)
        return f"Sorry, I didn't catch that. {step}" if isinstance(step, str) else step
    if intent.kind in ("info", "order_unclear"):
        return f"I can help with that order. {ASK_WHICH_TASK}"
    if intent.kind == "person":
        return _handoff(HandoffAsk.CUSTOMER_ASKED, units[-1])
    if intent.kind == "no_policy":
        return _ask(Waiting.PASS_ON, NO_POLICY_REPLY)
    if intent.kind == "complaint":
        return _handoff(HandoffAsk.NEEDS_STAFF, units[-1])
    if intent.kind == "offtopic":
        return _refusal(intent.topic, units[-1])
    if intent.kind == "no_number":
        # "I don't have the order number": a customer the store signed in is shown their orders.
        return (
            _ToolCall("list_recent_orders", {})
            if history.signed_in and not _listed(history)
            else NO_NUMBER_REPLY
        )
    replies = {kind: reply for kind, _, reply in _SMALL_TALK}
    if intent.kind in replies:
        return replies[intent.kind]
    return _refusal("that request", units[-1])


def _refusal(topic: str, words: str) -> str:
    """The refusal sentence, with a person offered unless the request is plainly not for the store: a
    topic of its own (the weather, code) with nothing of the store in it, a question about the world
    ("what is the capital of France?"), or a few words of nothing ("purple elephants"). When in doubt,
    the customer gets a way on, not a dead end."""
    refusal = REFUSAL_TEMPLATE.format(topic=topic)
    text = _plain(words)
    store = _STORE_WORDS_RE.search(text) or _order_id_in(words) or _email_in(words)
    if topic in _STORE_TOPICS:
        return f"{refusal} {_ask(Waiting.OFFER_PERSON, OFFER_PERSON)}"
    if topic != "that request":
        about_store = _STORE_CONTEXT_RE.search(text) or _order_id_in(words)
        return f"{refusal} {_ask(Waiting.OFFER_PERSON, OFFER_PERSON)}" if about_store else refusal
    if not store and (_WORLD_QUESTION_RE.search(text) or len(text.split()) <= 4):
        return refusal  # a question about the world, or a few words that say nothing of the store
    return f"{refusal} {_ask(Waiting.OFFER_PERSON, OFFER_PERSON)}"


def _request_before(units: list[str], intents: list[_Intent]) -> str:
    """The customer's latest request before their last message: not an order's details or a yes."""
    for index in range(len(units) - 2, -1, -1):
        if intents[index].kind not in ("info", "ack", "thanks", "greeting", "unknown"):
            return units[index]
    return units[-2]


def _handoff(reason: HandoffAsk, words: str) -> _ToolCall:
    summary = " ".join(words.split())
    if len(summary) > MAX_SUMMARY_CHARS:
        summary = summary[:MAX_SUMMARY_CHARS].rsplit(" ", 1)[0]
    return _ToolCall(HANDOFF_TOOL, {"reason": reason, "summary": summary})


# --- replies to tool results ---------------------------------------------------------------------


def _join(values: list[str]) -> str:
    if len(values) <= 1:
        return "".join(values)
    return ", ".join(values[:-1]) + " and " + values[-1]


def _refund_sentence(method, days) -> str:
    return f"The refund goes to {method} within {days} business days after we receive the items."


def _order_reply(result: dict) -> str:
    # The status word exactly as the result gives it (processing, shipped, delivered, cancelled).
    sentences = [f"The status of order {result.get('order_id')} is {result.get('status')}."]
    if result.get("ordered_on"):
        delivered = f" and delivered on {result['delivered_on']}" if result.get("delivered_on") else ""
        sentences.append(f"It was ordered on {result['ordered_on']}{delivered}.")
    if result.get("tracking_number"):
        sentences.append(f"The tracking number is {result['tracking_number']}.")
    items = [
        item["title"] if item.get("quantity", 1) == 1 else f"{item['quantity']} copies of {item['title']}"
        for item in result.get("items", [])
    ]
    if items:
        sentences.append(f"It contains {_join(items)}.")
    if result.get("shipping_address") and result.get("status") == "processing":
        # While it can still be sent elsewhere; once shipped, the tracking number says where it is.
        sentences.append(f"It is going to {result['shipping_address']}.")
    sentences += _returns_sentences(result.get("returns", []))
    return " ".join(sentences)


def _returns_sentences(returns: list) -> list[str]:
    sentences = []
    for record in returns:
        status = str(record.get("status", "")).replace("_", " ")
        granted = f" {record['exception']}" if isinstance(record.get("exception"), str) else ""
        if isinstance(record.get("our_reason"), str):
            granted += f" Our team's reason: {record['our_reason']}"
        sentences.append(f"Return {record.get('rma_number')} for this order is {status}.{granted}")
    return sentences


def _eligibility_reply(result: dict, chosen: list[str] | None) -> str:
    order_id = result.get("order_id")
    if not result.get("eligible"):
        made = _returns_sentences(result.get("returns", []))
        if made and all(item.get("reason") == _IN_OPEN_RETURN for item in result.get("items", [])):
            # Every item is on its way back already (staff may have granted it outside the policy).
            return " ".join([f"Every item of order {order_id} is already part of an open return.", *made])
        return " ".join(
            [
                f"I checked order {order_id}, and it can't be returned. {result.get('reason', '')}".strip(),
                *made,
            ]
        )
    policy = result.get("policy", {})
    sentences = [
        f"Order {order_id} can be returned. {result.get('reason', '')}".strip(),
        f"I can start a return for {_join(chosen or _returnable(result))}.",
    ]
    for item in result.get("items", []):
        if item.get("returnable"):
            continue
        if item.get("reason") == _IN_OPEN_RETURN:
            sentences.append(f"{item.get('title')} is already part of an open return.")
        else:
            sentences.append(f"{item.get('title')} can't be returned. {item.get('reason', '')}".strip())
    if policy.get("condition_requirements"):
        sentences.append(policy["condition_requirements"])
    sentences.append(
        _refund_sentence(policy.get("refund_method"), policy.get("refund_timeline_business_days"))
    )
    sentences.append(_ask(Waiting.CONFIRM_RETURN, CONFIRM_QUESTION))
    return " ".join(sentences)


_IN_OPEN_RETURN = "This item is already part of an open return."


def _which_item_reply(result: dict, returnable: list[str]) -> str:
    titles = ", ".join(returnable[:-1]) + " or " + returnable[-1]
    return (
        f"Order {result.get('order_id')} can be returned. {result.get('reason', '')} "
        f"You can return {titles}. {_ask(Waiting.WHICH_ITEM, ASK_WHICH_ITEM)}"
    )


def _return_started_reply(result: dict) -> str:
    return " ".join(
        [
            f"Your return has started. Your RMA number is {result.get('rma_number')}, for "
            f"{_join(result.get('items', []))} from order {result.get('order_id')}.",
            result.get("next_steps", ""),
            _refund_sentence(result.get("refund_method"), result.get("refund_timeline_business_days")),
        ]
    )


_ADDRESS_FIELD_WORDS = {
    "to": "recipient's name",
    "line1": "street",
    "line2": "apartment or unit",
    "city": "city",
    "state": "state",
    "zip": "ZIP code",
}


def _recent_orders_reply(result: dict) -> str:
    """The signed-in customer's recent orders, one sentence each, then which one they mean."""
    orders = [order for order in result.get("orders", []) if isinstance(order, dict)]
    if not orders:
        return f"I found no recent orders for you. {_ask(Waiting.ORDER_NUMBER, ASK_ORDER_NUMBER)}"
    lines = [
        f"Order {order.get('order_id')}, ordered on {order.get('ordered_on')}, is "
        f"{str(order.get('status', '')).replace('_', ' ')}: {_join(order.get('titles') or [])}."
        for order in orders
    ]
    return " ".join(["Here are your recent orders.", *lines, _ask(Waiting.WHICH_ORDER, WHICH_ORDER)])


def _error_reply(result: dict) -> str:
    """A plain sentence for a tool error; repeats only customer-facing messages from the result."""
    code, message = result.get("error"), result.get("message", "")
    fields = {problem.get("field") for problem in result.get("problems", []) if isinstance(problem, dict)}
    if code == ITEMS_NEEDED:
        titles = result.get("order_titles") or []
        asked = _ask(Waiting.WHICH_BOOKS, ASK_WHICH_BOOKS)
        return f"{asked} The order has {_join(titles)}." if titles else asked
    match code:
        case ToolError.ORDER_NOT_FOUND:
            return _ask(Waiting.DETAILS_AGAIN, ORDER_NOT_FOUND_REPLY)
        case ToolError.TOO_MANY_FAILED_CHECKS:
            return _ask(Waiting.OFFER_PERSON, CHECKS_SPENT_REPLY)
        case ToolError.INVALID_ARGUMENTS if "order_id" in fields:
            return _ask(Waiting.DETAILS_AGAIN, INVALID_ORDER_NUMBER_REPLY)
        case ToolError.INVALID_ARGUMENTS if "customer_email" in fields:
            return _ask(Waiting.DETAILS_AGAIN, INVALID_EMAIL_REPLY)
        case ToolError.NOT_SIGNED_IN:
            return _ask(Waiting.ORDER_NUMBER, ASK_ORDER_NUMBER)
        case ToolError.TOPIC_NOT_SUPPORTED:
            return (
                "I'm sorry, but I don't have a published policy answer for that. I can help with an order, "
                "a return, or another store policy question."
            )
        case ToolError.ELIGIBILITY_NOT_VERIFIED:
            return (
                "Before I can start a return, I need to check that the order can be returned. Please tell "
                "me again that you'd like to return it, and I will check it first."
            )
        case ReturnRefusal.ALREADY_INITIATED:
            return "Those items are already part of an open return, so I did not start a new one."
        case ReturnRefusal.NOT_ELIGIBLE | ReturnRefusal.ITEM_NOT_RETURNABLE:
            return f"I couldn't start that return. {message}".strip()
        case ReturnRefusal.ITEM_NOT_IN_ORDER:
            titles = result.get("order_titles") or []
            listed = f" The items in this order are {_join(titles)}." if titles else ""
            return f"One of those items isn't part of this order, so I did not start a return.{listed}"
        case ToolError.CHECK_NOT_DONE:
            return (
                "Before I can change that order, I need to check it first. Please tell me again what you'd "
                "like to change."
            )
        case ToolError.NOT_CONFIRMED:
            return "I haven't changed your order yet. Please reply yes or no."
        case ToolError.INVALID_ADDRESS:
            named = [
                words for field, words in _ADDRESS_FIELD_WORDS.items() if f"new_address.{field}" in fields
            ]
            verb = "are" if len(named) > 1 else "is"
            missing = _join(named) or "address"
            asked = _ask(Waiting.ADDRESS, ASK_ADDRESS)
            return f"I couldn't use that address: the {missing} {verb} missing or not right. {asked}"
        case ChangeCode.SHIPPED | ChangeCode.DELIVERED | ChangeCode.CANCELLED | ChangeCode.HAS_RETURNS:
            return f"I couldn't make that change. {message}".strip()
        case ProblemCode.NOT_SHIPPED | ProblemCode.NOT_DELIVERED | ProblemCode.CANCELLED:
            return f"{message} {_ask(Waiting.OFFER_PERSON, OFFER_PERSON)}".strip()
        case ReturnRefusal.REASON_REQUIRED:
            return "Could you tell me briefly why you are returning the items? Then I can start the return."
    return GENERIC_ERROR_REPLY


def _cannot_change_reply(result: dict) -> str:
    """An order that can no longer change: the store's reason, and a person offered when it is on its way
    (staff may still reach the carrier)."""
    reason = result.get("reason", "")
    offer = f" {_ask(Waiting.OFFER_PERSON, OFFER_PERSON)}" if result.get("order_status") == "shipped" else ""
    return f"I checked order {result.get('order_id')}. {reason}{offer}".strip()


def _cancellation_check_reply(result: dict) -> str:
    if not result.get("cancellable"):
        return _cannot_change_reply(result)
    items = [
        item.get("title", "")
        if item.get("quantity", 1) == 1
        else f"{item['quantity']} copies of {item['title']}"
        for item in result.get("items", [])
    ]
    contents = f" It contains {_join(items)}." if items else ""
    return (
        f"Order {result.get('order_id')} has not shipped yet, so it can still be cancelled.{contents} "
        f"{_ask(Waiting.CONFIRM_CANCEL, CANCEL_CONFIRM_QUESTION)}"
    )


def _address_check_reply(result: dict) -> str:
    if not result.get("changeable"):
        return _cannot_change_reply(result)
    if result.get("unchanged"):
        return f"Order {result.get('order_id')} already ships to that address, so there is nothing to change."
    current = f" instead of {result['current_address']}" if result.get("current_address") else ""
    asked = _ask(Waiting.CONFIRM_ADDRESS, ADDRESS_CONFIRM_QUESTION)
    return (
        f"Order {result.get('order_id')} has not shipped yet, so it can still go to a new address. It would "
        f"go to {result.get('new_address')}{current}. {asked}"
    )


def _cancelled_reply(result: dict) -> str:
    done = "was already cancelled" if result.get("already_cancelled") else "is now cancelled"
    return f"Order {result.get('order_id')} {done}. {result.get('next_steps', '')}".strip()


def _address_changed_reply(result: dict) -> str:
    return f"Done. Order {result.get('order_id')} will now ship to {result.get('shipping_address')}."


_CHANGE_REPLIES = {
    "check_cancellation": _cancellation_check_reply,
    "check_address_change": _address_check_reply,
    "cancel_order": _cancelled_reply,
    "change_shipping_address": _address_changed_reply,
}


def _reply_to_result(history: _History, tool_use: dict, result: dict) -> str:
    name = tool_use.get("name")
    if "error" in result or not result:
        return _error_reply(result)
    if name == "lookup_order":
        return _order_reply(result)
    if name == "check_return_eligibility":
        intents = _intents(history.units, history.topics, history.answering)
        start = _task_start(intents) or 0
        returnable = _returnable(result)
        chosen = _named_titles(history.units[start:], returnable)
        asked_for_one = any(_ONE_OF_RE.search(_plain(unit)) for unit in history.units[start:])
        if result.get("eligible") and not chosen and len(returnable) > 1 and asked_for_one:
            return _which_item_reply(result, returnable)
        return _eligibility_reply(result, chosen)
    if name == "initiate_return":
        return _return_started_reply(result)
    if name in _CHANGE_REPLIES:
        return _CHANGE_REPLIES[name](result)
    if name == "lookup_policy":
        return policy_quote(title=result.get("title", ""), text=result.get("text", ""))
    if name == "list_recent_orders":
        return _recent_orders_reply(result)
    if name in (HANDOFF_TOOL, "report_delivery_problem"):
        return result.get("tell_the_customer") or GENERIC_ERROR_REPLY
    return GENERIC_ERROR_REPLY


# --- the model -----------------------------------------------------------------------------------


def _tokens(payload) -> int:
    return math.ceil(len(json.dumps(payload, ensure_ascii=False, default=str)) / 4)


class OfflineModel:
    """Rule-based answers in the Messages API's shapes, for running Bookly without an API key."""

    offline = True
    keeps_state = True
    provider = "built-in offline model"
    name = "bookly-offline"

    def __init__(self) -> None:
        _classifier()  # trained once per process, so that no customer waits for it

    def create(
        self, *, system: list[dict], tools: list[dict], messages: list[dict], deadline: float
    ) -> ModelReply:
        history = _read_history(system, messages)
        asked: list[Waiting] = []
        recording = _ASKED.set(asked)
        try:
            if history.new_calls:
                text = " ".join(_reply_to_result(history, use, result) for use, result in history.new_calls)
                step: str | _ToolCall = text
            else:
                step = _respond(history)
        finally:
            _ASKED.reset(recording)
        state = None
        if isinstance(step, _ToolCall):
            # Unique within the conversation: stored tool calls only ever accumulate.
            tool_id = f"toolu_offline_{history.tool_use_count + 1:04d}"
            content = [{"type": "tool_use", "id": tool_id, "name": step.name, "input": step.input}]
            stop_reason = "tool_use"
        else:
            content = [{"type": "text", "text": step}]
            stop_reason = "end_turn"
            state = {"waiting_for": asked[-1].value if asked else None}
        return ModelReply(
            content=content,
            stop_reason=stop_reason,
            model=self.name,
            offline=True,
            request_id="",
            usage={
                "input_tokens": _tokens({"system": system, "tools": tools, "messages": messages}),
                "output_tokens": _tokens(content),
                "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0,
            },
            duration_ms=0,
            state=state,
        )
