"""The words and phrases the built-in model's rules read a request by."""

import re

from orders.models import DeliveryProblem
from support.assistant.understanding.history import (
    Intent,
)
from support.assistant.understanding.wording import (
    ANYTHING_ELSE_REPLY,
    DECLINE_REPLY,
    GOODBYE_REPLY,
    GREETING_REPLY,
    HELP_REPLY,
    THANKS_REPLY,
)

MY_ORDER_RE = re.compile(
    r"\b(?:my|our) (?:\w+ ){0,2}(?:orders?|package|parcel|delivery|shipment|purchase|books?|items?)\b"
    r"|\bi (?:ordered|bought|purchased|received|got)\b"
)
REFERS_BACK_RE = re.compile(
    r"\b(?:return|send|track|check|refund|cancel)\s+(?:it|them|this|that|those|these)\b"
    r"|\b(?:this|that|the same|same) (?:order|one)\b|\bwhere is it\b"
    r"|\b(?:will|did|has|is) it\b.{0,20}\b(?:arrive|ship|come|get here|delivered)"
    r"|\bthe other (?:one|book|item|title)s?\b|\b(?:it|them|one) too\b"
)
# "One of the books": which one, asked before a summary of all of them.
ONE_OF_RE = re.compile(
    r"\bone of (?:the|my|them|those|these)\b|\bone (?:book|item|title)\b|\bjust one\b|\bnot (?:all|both)\b"
)
THE_OTHER_RE = re.compile(r"\bthe other (?:one|book|item|title)\b")
BOTH_RE = re.compile(r"\b(?:both|all of them|all|everything|the two)\b")
RETURN_RE = re.compile(
    r"\b(?:return|returns|returning|returned|refund|refunds|money back|exchange)\b"
    r"|\b(?:send|sending|give|giving|bring|take) (?:\w+ ){0,3}back\b|\breturnable\b"
    r"|\b(?:replacement|replace it|a new one|a new copy)\b"
)
# A book's release or stock, not an order's progress: "when is the next … book coming out?".
BOOK_RELEASE_RE = re.compile(
    r"\b(?:coming out|come out|released?|release date|available|in stock|pre-?order)\b"
    r"|\b(?:next|new) (?:\w+ ){0,3}book\b"
)
# A return talked about, not asked for: "if I don't like it, can I return it?".
HYPOTHETICAL_RE = re.compile(r"\bif (?:i|you|someone|they|the person|a book)\b|\bbefore i buy\b|\bin case\b")
# Words that point at something the customer has (so "can I send it back" is a return, not a question).
SPECIFIC_RE = re.compile(
    r"(?<!is )\b(?:it|them|this|these|this one|that one|mine|i (?:bought|got|ordered|received|purchased))\b"
    r"|\b(?:my|our) (?:\w+ ){0,2}(?:daughter|son|wife|husband|kid|copy|copies)\b|\bby mistake\b|\btwice\b"
)
WANT_RE = re.compile(
    r"\b(?:i want|i'd like|i would like|i need|i wish|help me|please)\b"
    r"|\b(?:start|initiate|begin|process) (?:a |the |my )?(?:return|refund)"
)
GENERAL_Q_RE = re.compile(
    r"\b(?:how|what|which|can|could|do you|does|is it|is there|are|may|within|whether|wondering)\b|^do\b|\?"
)
POLICY_WORD_RE = re.compile(r"\b(?:polic(?:y|ies)|rules|faq)\b")
NAMED_POLICY_RE = re.compile(r"\b([a-z]{3,}) polic(?:y|ies)\b")
GENERIC_POLICY_WORDS = {"your", "the", "store", "any", "what", "bookly", "company", "shop", "our", "all"}
POLICY_ALIASES = {"return": "returns_overview", "returns": "returns_overview", "refund": "returns_overview"}
POLICY_ALIASES |= {"shipping": "shipping", "delivery": "shipping", "password": "password_reset"}
STATUS_RE = re.compile(
    r"\b(?:status|track|tracking|shipped|dispatched|arrive|arrives|arrived|arriving|delivered|in transit|"
    r"on its way|hasn't come|not (?:yet )?(?:arrived|received|here)|haven't (?:received|got)|"
    r"never (?:received|got|arrived|came)|didn't (?:arrive|come|get))\b"
    r"|\bwhere(?:'s| is| are)?\b.{0,25}\b(?:order|package|parcel|books?|delivery|shipment|it|bk)\b"
    r"|\bwhen will\b.{0,25}\b(?:order|package|parcel|books?|it|bk)\b"
    r"|\bcheck (?:on )?(?:my|the|an|this|that) order\b"
    r"|\b(?:the )?other (?:parcel|package|shipment|box)\b"
    r"|\bstill (?:no|not|isn't|hasn't|haven't|nothing|waiting)\b|\bany (?:news|updates?)\b"
    r"|\bwaiting (?:for )?(?:my|the|an|our) (?:order|package|parcel|books?|delivery)"
    r"|\b(?:not|isn't|hasn't|haven't|didn't|it not) (?:yet )?(?:come|here|arrived|shown up|turned up)"
    r"|\b(?:go|gone|going|sent|went) out\b|\bleft the warehouse\b|\b(?:is it|it's|is my order) stuck\b"
    r"|\bwhen (?:is|will|does|do) (?:my|the|it|our)\b.{0,25}\b(?:order|package|parcel|books?|delivery|coming)"
    r"|\bwhere(?:'s| is| are) my stuff\b"
)
RETURN_STATUS_RE = re.compile(
    r"\bstatus of (?:my|the|our|that) (?:return|refund|rma)\b|\b(?:return|refund|rma)(?:'s)? status\b"
    r"|\bwhere(?:'s| is) (?:my|the) (?:return|refund)\b|\b(?:has|did|is) my (?:return|refund)\b"
    r"|\b(?:received|got) my (?:return|returned)\b|\brma-[a-z0-9]{8}\b"
    r"|\b(?:my|the) (?:return|refund)\b.{0,60}\b(?:status|update|progress|news|yet|shown up|come through)\b"
    r"|\b(?:status|update|progress|news) (?:on|of|about|for) (?:my|the) (?:return|refund)"
    r"|\b(?:sent|mailed|posted) (?:\w+ ){0,3}back\b.{0,60}\b(?:update|status|yet|news|received|arrived|got)\b"
)
SHIPPING_RE = re.compile(
    r"\b(?:ship|ships|shipping|postage|expedited|express|overnight|international(?:ly)?|overseas|abroad|"
    r"delivery|deliver)\b"
    r"|\bsend (?:books? |orders? )?(?:here|to me|to (?:canada|mexico|the uk|uk|europe|australia|germany))"
)
PASSWORD_RE = re.compile(r"\b(?:password|passcode|log ?in(?:to)?|sign ?in(?:to)?|locked out)\b")
PROBLEM_RE = re.compile(
    r"\b(?:damaged|broken|torn|ripped|defective|faulty|misprint(?:ed)?|wrong (?:book|item|edition))\b"
)
CHANGE_ORDER_RE = re.compile(
    r"\bcancel|\bswitch my order\b"
    # "an update on my order" asks how it is going; "update my order" changes it.
    r"|\b(?:change|modify|edit|(?<!an )(?<!any )update(?! on\b)|set up|add|new)\b"
    r".{0,30}\b(?:order|address|it|account|payment)\b"
)
NO_NUMBER_RE = re.compile(
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
PERSON_RE = re.compile(
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


def asks_for_someone(text: str) -> bool:
    """Whether the rules' reading of a request for a person rests on more than a mention of people."""
    for found in PERSON_RE.finditer(text):
        words = found.group()
        if _CUSTOMER_SERVICE_RE.fullmatch(words):
            continue
        if _CALL_ME_RE.fullmatch(words) and _NOT_ASKING_TO_BE_CALLED_RE.search(text):
            continue
        return True
    return False


ARE_YOU_HUMAN_RE = re.compile(
    r"\bare you (?:a |an )?(?:real )?(?:bot|robot|human|person|ai|machine)\b"
    r"(?: or (?:a |an )?(?:real )?(?:bot|robot|human|person|ai|machine)\b)?"
)
MAX_SUMMARY_CHARS = 200

# (words, topic for the refusal sentence)
# (words, topic for the refusal sentence). A topic that is about the store (an invoice, a payment, an
# account) is one staff can take up: its refusal offers a person. The others keep the refusal alone.
OFF_TOPICS = [
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
        (r"\b(?:invoices?|receipts?|vat)\b", "invoice corrections"),
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
SMALL_TALK = [
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
PASS_ON_RE = re.compile(
    r"^(?:yes|yeah|yep|yup|sure|please do|please|go ahead|do that|ok(?:ay)?,? please)\b(?!.*\bbye)"
)
NO_RE = re.compile(r"^(?:no|nope|nah|not now|don't|do not|cancel|never ?mind|stop|wait)\b")
REASON_CLAUSE_RE = re.compile(r"\b(?:because|since|due to|as (?:it|they|the))\b\s*(?P<why>[^.!?\n]+)", re.I)
REASON_WORDS_RE = re.compile(
    r"\b(?:damaged|broken|torn|ripped|defective|faulty|wrong|duplicate|twice|changed my mind|no longer|"
    r"don't (?:want|need|like)|didn't (?:like|want)|not what|missing|misprint(?:ed)?|gift)\b",
    re.I,
)
MAX_REASON_CHARS = 200

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
    r"\b(?:fees?|charged?|charges|cost|costs|penal\w*|free|pay|money|expensive|restocking)\b"
    r"|\bkeep (?:part|some)\b|\bwithout paying\b"
    r"|\bhow much (?:do|does|will|would) (?:you|it|bookly|i)\b.{0,20}\b(?:keep|cost|charge|lose|pay)\b"
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
ORDER_CHANGE_POLICY = "order_change"
# Refusals that offer a person: requests about the store that staff can take up.
STORE_TOPICS = frozenset(
    {
        "book prices or availability",
        "discounts or promotions",
        "invoice corrections",
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
STORE_CONTEXT_RE = re.compile(
    r"\b(?:my order|your (?:e-?mail|site|website|app|store|shop)|checkout|cart|promo|discount|coupon|invoice|"
    r"payment|charged|delivery|package|parcel|label|account)\b"
)
# A question about the world, asked of nobody in particular.
WORLD_QUESTION_RE = re.compile(r"^(?:what|who|when|where|which|why|how|is|are|was|were|does|did)\b")
STORE_WORDS_RE = re.compile(
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
COMPLAINT_RE = re.compile(
    r"\b(?:complain\w*|complaint|unacceptable|disgrace\w*|appalling|terrible service|awful service|"
    r"worst (?:service|company|store|experience)|worst \w+ ever|very disappointed|extremely disappointed|"
    r"poor service|rude|ridiculous|not impressed|fed up|"
    r"not happy with (?:the|your) service)\b"
)
# A number that belongs to an address, not to an order ("the apartment number is missing").
ADDRESS_NUMBER_RE = re.compile(
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
ASKS_WHERE_RE = re.compile(
    r"\bwhere(?:'s| is| are)\b|\bwhen will\b|\bhas (?:it|my order|bk)\b.{0,20}\b(?:shipped|arrived)\b"
)
# What asks for a return rather than a case ("damaged, I want my money back"), or asks about policy.
WANTS_RETURN_RE = re.compile(
    r"\b(?:return|returned|returning|refund|refunded|money back|exchange|swap|reimburs\w*)\b"
    r"|\b(?:don't|do not) want to keep\b"
    r"|\b(?:send (?:\w+ ){0,3}|give (?:\w+ ){0,2})back\b"
)
_ASKS_POLICY_RE = re.compile(
    r"\bhow do(?:es)?\b.{0,40}\bwork\b|\bwhat (?:is|are|happens)\b.{0,30}\bif\b"
    r"|\bdo you (?:offer|have|provide|do)\b"
)


def delivery_problem(text: str) -> str | None:
    """The delivery problem a customer reports (a DeliveryProblem value), or None."""
    if POLICY_WORD_RE.search(text) or HYPOTHETICAL_RE.search(text) or _ASKS_POLICY_RE.search(text):
        return None
    problem = next((problem.value for problem, pattern in _PROBLEMS if pattern.search(text)), None)
    if problem == DeliveryProblem.LATE and ASKS_WHERE_RE.search(text):
        return None
    return problem


def order_cancel_in(text: str) -> "Intent | None":
    """Cancelling an order, or asking what cancelling costs; or None."""
    if _CANCEL_ASK_RE.search(text) and not _NOT_ORDER_CANCEL_RE.search(text):
        return Intent("no_policy", ORDER_CHANGE_POLICY) if _CANCEL_FEE_RE.search(text) else Intent("cancel")
    return None


def order_readdress_in(text: str) -> "Intent | None":
    """Sending an order to another address; or None."""
    if (
        _ADDRESS_WORD_RE.search(text)
        and _ADDRESS_FIX_RE.search(text)
        and not _ACCOUNT_ADDRESS_RE.search(text)
    ):
        return Intent("address")
    return None


# The customer has not got it: "it's not here", "I never got it", "nothing came".
NOT_RECEIVED_RE = re.compile(
    r"\b(?:not|isn't|never|nothing|haven't|hasn't|didn't|did not|no sign)\b.{0,25}"
    r"\b(?:here|got|get|received|receive|arrived|arrive|came|come|there|seen|see|delivered)\b"
)


# Things a customer may not have received that are no parcel: "I didn't get the confirmation email".
NOT_THE_PARCEL_RE = re.compile(r"\b(?:confirmation|refund|link|password|code)\b")
GOT_IT_RE = re.compile(r"\b(?:got it|found it|never ?mind|it's here|it turned up|it showed up)\b")
