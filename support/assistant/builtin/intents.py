"""What a customer's message asks for: the rules, the classifier trained on typical phrasings, and how the
two are reconciled.
"""

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from orders.models import DeliveryProblem
from orders.numbers import ORDER_NUMBERS
from orders.patterns import EMAIL_MENTION_RE
from support.assistant.builtin.faq import LIKELY, faq_match
from support.assistant.builtin.words import STOP_WORDS, stem, stems, topic_matching
from support.assistant.capabilities.base import EVERY_CAPABILITY, Trigger
from support.assistant.capabilities.registry import ORDER_TASKS, TASKS, TRIGGERS
from support.assistant.understanding.customer_words import (
    latest_found,
    order_id_in,
    plain,
)
from support.assistant.understanding.history import (
    Intent,
)
from support.assistant.understanding.message import Message
from support.assistant.understanding.vocabulary import (
    ADDRESS_NUMBER_RE,
    ARE_YOU_HUMAN_RE,
    ASKS_WHERE_RE,
    COMPLAINT_RE,
    GENERIC_POLICY_WORDS,
    NAMED_POLICY_RE,
    NO_NUMBER_RE,
    NOT_RECEIVED_RE,
    NOT_THE_PARCEL_RE,
    OFF_TOPICS,
    ORDER_CHANGE_POLICY,
    PASSWORD_RE,
    POLICY_ALIASES,
    POLICY_WORD_RE,
    REFERS_BACK_RE,
    SHIPPING_RE,
    SMALL_TALK,
    STATUS_RE,
    WANTS_RETURN_RE,
    asks_for_someone,
)
from support.llm.protocol import (
    FaqTopic,
)

if TYPE_CHECKING:  # imported when the classifier is first trained, not with this module
    from sklearn.pipeline import FeatureUnion
    from sklearn.svm import LinearSVC

# --- intents -------------------------------------------------------------------------------------


def _policy_topic(text: str) -> str | None:
    """The FAQ topic key a question is about, "" for policies in general, None for no policy question."""
    if SHIPPING_RE.search(text):
        return "shipping"
    if PASSWORD_RE.search(text):
        return "password_reset"
    named = NAMED_POLICY_RE.search(text)
    if named and named.group(1) not in GENERIC_POLICY_WORDS:
        return POLICY_ALIASES.get(named.group(1), named.group(1))
    return "" if POLICY_WORD_RE.search(text) else None


# A question about the store itself ("do you offer…", "is there a…"), which a FAQ topic might answer.
_STORE_QUESTION_RE = re.compile(
    r"\b(?:do|does|can|will) (?:you|bookly|the store|your (?:store|shop))\b|\bis there (?:a|an|any)\b"
    r"|\bare (?:there|you able)\b|\bpolic(?:y|ies)\b"
)
# What customers ask for, learned from typical phrasings of each request (phrasings.json beside this file,
# about 6,500 written for this model by nine authors in different styles, kept apart from the evaluation
# sets): a linear classifier over their words, word pairs and letter sequences, the last so that a
# misspelled word still shares most of its features with the word.
_PHRASINGS = Path(__file__).with_name("phrasings.json")
_ROUTE_INTENTS = {
    "order_status": Intent("status"),
    "return": Intent("return"),
    "policy_shipping": Intent("policy", "shipping"),
    "policy_returns": Intent("policy", "returns_overview"),
    "policy_password": Intent("policy", "password_reset"),
    "person": Intent("person"),
    "greeting": Intent("greeting"),
    "thanks": Intent("thanks"),
    "goodbye": Intent("goodbye"),
    "no_number": Intent("no_number"),
    # Not "offtopic": while the model waits for an order's details, a message it cannot place is asked
    # again, and otherwise answered with the same refusal.
    "out_of_scope": Intent("unknown"),
    # A delivery gone wrong, one route per problem: the case is reported with it.
    **{f"problem_{problem.value}": Intent("problem", problem.value) for problem in DeliveryProblem},
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
    return " ".join(stem(word) for word in re.findall(r"[a-z][a-z']*|\?", text))


# The phrasings' routes for a delivery problem (one per problem) start so; the others are everyday requests.
_PROBLEM_ROUTE = "problem_"


@dataclass(frozen=True)
class _Classifiers:
    """Two linear classifiers over the same features: one for the everyday routes, trained without the
    problems' phrasings (so that a thousand reports of damaged books move no boundary between, say, a
    goodbye and a request for a person), and one telling a delivery problem, by kind, from the rest."""

    features: "FeatureUnion"
    routes: "LinearSVC"
    problems: "LinearSVC"


@functools.cache
def classifier_trained() -> tuple[_Classifiers, frozenset[str]]:
    """The classifiers trained on the phrasings, and those of their words that tell something: about
    3 s of CPU with the import, once per process (gunicorn spends it before a worker's first customer)."""
    # Imported here: a process that talks to Claude never loads them.
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_union
    from sklearn.svm import LinearSVC

    phrasings = json.loads(_PHRASINGS.read_text())
    texts = [_classifier_words(plain(text)) for route in phrasings for text in phrasings[route]]
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


_STOP_STEMS = frozenset(stem(word) for word in STOP_WORDS)  # "this" is read "thi", "does" "doe"


def _tells_something(word: str) -> bool:
    """Whether a word as the classifier reads it (stemmed) is more than a small one ("or", "this", "i'm")."""
    head = word.split("'")[0]
    return len(head) > 2 and head not in STOP_WORDS and head not in _STOP_STEMS


@functools.lru_cache(maxsize=1024)  # every call reads the whole history again
def _classified(words: str, *, problems: bool = True) -> tuple[str, float] | None:
    """The route of the phrasings most like a message (as `_classifier_words` gives it), and its lead
    over the next route; None when no phrasing uses any word of it but the small ones ("or", "is it"):
    too little to tell, or letters typed at random."""
    classifiers, telling = classifier_trained()
    if not telling.intersection(words.split()):
        return None
    features = classifiers.features.transform([words])
    everyday = _best_two(classifiers.routes, features)
    problem, lead = _best_two(classifiers.problems, features)
    if (
        problems
        and problem.startswith(_PROBLEM_ROUTE)
        and (lead >= _CLEAR_MARGIN or everyday[1] < _CLEAR_MARGIN)
        and not WANTS_RETURN_RE.search(words)
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


# --- the rules: the capabilities' triggers and the built-in model's own, by precedence ---------------


def _no_number(message: Message) -> Intent | None:
    no_number = NO_NUMBER_RE.search(ADDRESS_NUMBER_RE.sub(" ", message.text))
    return Intent("no_number") if no_number and not message.order_id else None


def _password(message: Message) -> Intent | None:
    # "the reset email never came" is no order's
    return (
        Intent("policy", "password_reset")
        if PASSWORD_RE.search(message.text) and not message.order_id
        else None
    )


def _complaint(message: Message) -> Intent | None:
    return Intent("complaint") if COMPLAINT_RE.search(message.text) else None


def _changing_the_items(message: Message) -> Intent | None:
    """Changing an order's items: refused (a request to staff), unless a return or a status comes first."""
    change = message.change
    return (
        Intent("offtopic", CHANGING_ORDERS)
        if change and not message.asks_a_task_before(change.start())
        else None
    )


def _task_read_first(message: Message) -> Intent | None:
    # "did I get my money back for …": the refunds made, not a new return; but "send me the receipt, was
    # I refunded?" asks for the receipt first, which waits for its own turn (120).
    asked = _order_task_asked(message.text)
    return Intent(asked[0]) if asked and ORDER_TASKS[asked[0]].read_first else None


def _task_in_its_words(message: Message) -> Intent | None:
    """A capability's own request, named in its own words. The tasks above come first ("can I cancel
    BK-10042? I don't need a receipt" is a cancellation); of it and an order's status, the one asked
    first ("where is my order? I have the receipt"), or it when both are one clause ("where is my
    receipt?", "I never got the receipt for my order")."""
    status = STATUS_RE.search(message.text)
    task = _order_task_asked(message.text)
    return Intent(task[0]) if task and not (status and _first_of_two(status, task[1], message.text)) else None


def _talk(message: Message) -> Intent:
    """No task: a policy, something refused, an order's details alone, small talk, or nothing known."""
    text, topics = message.text, message.topics
    topic = _policy_topic(text)
    keys = {known.key for known in topics}
    if topic and keys and topic not in keys:
        # "Your privacy policy": a topic staff may have added under another key, or none at all.
        topic = topic_matching(text, topics)
        if not topic:
            return Intent("no_policy")
    if topic is not None:
        return Intent("policy", topic)
    if matched := topic_matching(text, topics):
        return Intent("policy", matched)
    for pattern, off_topic in OFF_TOPICS:
        if pattern.search(text):
            return Intent("offtopic", off_topic)
    if message.order_id or message.email:
        return Intent("info")
    if _STORE_QUESTION_RE.search(text):
        return Intent("no_policy")  # "can you gift wrap my order?": a service no topic covers
    if message.personal:
        return Intent("order_unclear")
    for kind, said, _ in SMALL_TALK:
        if re.search(said, text):
            return Intent(kind)
    return Intent("unknown")


# The built-in model's own readings, among the capabilities' triggers (capabilities/base.Trigger): a
# message without an order number, a password, a complaint, a change of the order's items, and the tasks
# asked in their own words (OrderTask.asks: those read before a return's or a status's words first).
_OWN = "built-in model"
_OWN_TRIGGERS = (
    Trigger(20, _no_number, over=EVERY_CAPABILITY),
    Trigger(30, _password, over=EVERY_CAPABILITY),
    Trigger(40, _complaint, over=EVERY_CAPABILITY, stands=True),
    Trigger(60, _changing_the_items, over=EVERY_CAPABILITY),
    Trigger(80, _task_read_first, over=EVERY_CAPABILITY, stands=True),
    Trigger(120, _task_in_its_words, over=EVERY_CAPABILITY, stands=True),
)


def _in_precedence(triggers: list[tuple[str, Trigger]]) -> tuple[tuple[str, Trigger], ...]:
    """The triggers, lowest precedence first; two at one precedence are refused (which would win would be
    the registry's order, said nowhere)."""
    by_precedence: dict[int, str] = {}
    for owner, trigger in triggers:
        if trigger.precedence in by_precedence:
            other = by_precedence[trigger.precedence]
            raise ValueError(f"Triggers of {other} and {owner} share precedence {trigger.precedence}.")
        by_precedence[trigger.precedence] = owner
    return tuple(sorted(triggers, key=lambda pair: pair[1].precedence))


RULES = _in_precedence([*TRIGGERS, *((_OWN, trigger) for trigger in _OWN_TRIGGERS)])


def _rule_reading(
    raw: str, *, has_prior_order: bool, topics: list[FaqTopic]
) -> tuple[Intent, Trigger | None]:
    """What the hand-written rules read a message as: the first trigger that reads it (and which), else
    talk."""
    message = Message(raw, has_prior_order=has_prior_order, topics=topics)
    for _, trigger in RULES:
        if (intent := trigger.reads(message)) is not None:
            return intent, trigger
    return _talk(message), None


# Where a second request starts: "where is my order, and also how do I reset my password", "…? And …".
_SECOND_REQUEST_RE = re.compile(r"(?:\band |[,.?!] *)also\b|\bas well as\b|[,.?!] *plus\b|\? *and\b")


def _first_request(text: str) -> str:
    """The first of several requests in one message, to be answered first (the whole message when the
    words before the second are too few to ask anything)."""
    second = _SECOND_REQUEST_RE.search(text)
    if second and len(stems(text[: second.start()])) >= 2:
        return text[: second.start()]
    return text


# What ends a request: "where is my order? and send the invoice", "has it shipped, also a receipt".
_CLAUSE_BREAK_RE = re.compile(r"[.?!;]|\b(?:and|also|plus|then)\b")


def _order_task_asked(text: str) -> tuple[str, re.Match] | None:
    """The capability's order task this message asks for in its words (its kind and where), or None; of
    several, the one asked first in the message (the registry's order is no precedence)."""
    found: list[tuple[int, str, re.Match]] = []
    for task in ORDER_TASKS.values():
        asked = task.asks.search(text) if task.asks else None  # ORDER_TASKS: those with words of their own
        if asked and not (task.unless and task.unless.search(text)):
            found.append((asked.start(), task.kind, asked))
    if not found:
        return None
    _, kind, asked = min(found, key=lambda where: where[0])
    return kind, asked


def _first_of_two(first: re.Match, then: re.Match, text: str) -> bool:
    """Whether `first` is a request of its own before `then`: earlier, and a clause apart."""
    return first.start() < then.start() and bool(_CLAUSE_BREAK_RE.search(text, first.end(), then.start()))


# Changing an order's items: a request to staff, which no FAQ answer serves.
CHANGING_ORDERS = "changing orders"
_AN_ORDER_RE = re.compile(r"\border\b", re.IGNORECASE)
_WENT_WRONG_WITH_MY_ORDER_RE = re.compile(
    r"\bmy (?:\w+ )?order\b.*\b(?:was|were|got|been|twice|wrong|didn't|never|still)\b"
    r"|\b(?:was|were|got|been|twice|wrong|didn't|never|still)\b.*\bmy (?:\w+ )?order\b"
)
# A task for one order ("a receipt for my last purchase"): no question of how it works.
_FOR_AN_ORDER_RE = re.compile(r"\bfor (?:my|this|that|the) (?:\w+ )?(?:order|purchase)\b")
# What the store's FAQ may answer instead: anything that is no request of the model's own (an order's
# task, a person, small talk) and no answer to its question.
_FAQ_MAY_ANSWER = frozenset({"unknown", "offtopic", "no_policy", "policy", "help"})


# What a message with a number that may be an order's is read as otherwise: nothing the store does.
_NOT_A_TASK = frozenset({"unknown", "offtopic", "order_unclear", "no_policy", "help", "info"})
# Words of a message about where an order is ("where is 10042?", "can u check 20417"), not about a book
# whose title has a number ("do you have fahrenheit 451?").
_ABOUT_AN_ORDER_RE = re.compile(
    r"\b(?:where|arriv\w*|ship\w*|deliver\w*|update|track\w*|status|check|came|come|coming|here|wait\w*|"
    r"late|receiv\w*|got)\b"
)
# ... unless it is about a book ("when will 1984 come back in stock?", "1984 in paperback").
_ABOUT_A_BOOK_RE = re.compile(
    r"\b(?:in stock|back in|paperback|hardcover|hardback|edition|copies|copy of|by [a-z]+)\b"
)


# A detail of an order just looked up, asked after it: its parcels and tracking.
_ORDER_DETAIL_RE = re.compile(
    r"\b(?:other (?:parcel|package|shipment|box)|tracking (?:number|no|code|link))\b"
)


def _detect_intent(raw: str, *, has_prior_order: bool, answering: bool, topics: list[FaqTopic]) -> Intent:
    """What a customer's message asks for: a task, or else what the store's FAQ answers, which comes
    before every built-in refusal. The FAQ's reader (faq.py) is the one reader of which topic a
    question is about: when it is sure, that topic; when it only finds it likely, the customer is asked
    which (kind "which_topic", the topics' keys in `topic`, comma-separated); otherwise the reading
    stands (a built-in topic named plainly, the refusal, no policy with a person offered)."""
    intent = _task_or_talk(raw, has_prior_order=has_prior_order, answering=answering, topics=topics)
    if (
        intent.kind in _NOT_A_TASK
        and not answering
        and _ABOUT_AN_ORDER_RE.search(plain(raw))
        and not _ABOUT_A_BOOK_RE.search(plain(raw))
        and ORDER_NUMBERS.unsure(raw)
    ):
        # "where is 10042?", "can u check 20417": about an order whose number it may be, which the
        # status task asks about ("Is 10042 your order number?") rather than refuse.
        return Intent("status")
    # A task in words that may ask how it works, neither asked to be done nor of one order ("is the
    # receipt emailed?"), is the FAQ's when its reader is sure of a topic, and the task's otherwise
    # (OrderTask.requested).
    text = plain(raw)
    task = ORDER_TASKS.get(intent.kind)
    how_it_works = (
        task is not None
        and task.requested is not None
        and not (
            order_id_in(raw)
            or task.requested.search(text)
            or _FOR_AN_ORDER_RE.search(text)
            or (has_prior_order and REFERS_BACK_RE.search(text))
        )
    )
    # A greeting with a question after it ("Good morning. Kindly explain how to purchase books") is the
    # question's when the FAQ's reader is sure of a topic, and a greeting otherwise.
    greeting = intent.kind == "greeting"
    sure_only = how_it_works or greeting
    if answering or (
        not how_it_works
        and (
            (intent.kind not in _FAQ_MAY_ANSWER and not greeting)
            or (intent.topic == CHANGING_ORDERS and _AN_ORDER_RE.search(raw))
            # A request about one order that no task serves, or what went wrong with "my order" ("I was
            # charged twice for my order"): staff's, with a person offered.
            or ((order_id_in(raw) or _WENT_WRONG_WITH_MY_ORDER_RE.search(text)) and intent.kind != "policy")
        )
    ):
        return intent  # and a message answering the model's question for an order's details answers it
    match = faq_match(raw, topics)
    if (
        intent.kind == "policy"
        and intent.topic
        and match.score(intent.topic) >= LIKELY
        and (intent.topic in _PHRASED_TOPICS or match.without(_PHRASED_TOPICS).sure in (None, intent.topic))
    ):
        return intent  # the topic named plainly ("your gift wrapping policy"), which the FAQ finds likely
    # The built-in topics (shipping, returns, passwords) the phrasings read already, and read this message
    # as none of them: the FAQ's reader tells apart the topics staff wrote ("I don't know how to pay for
    # my books" is near "refunds go to the original payment method", and nearer payment methods').
    match = match.without(_PHRASED_TOPICS)
    if match.sure:
        return Intent("policy", match.sure)
    if (intent.kind == "policy" and intent.topic) or sure_only:
        return intent
    if match.likely:
        return Intent("which_topic", ",".join(match.likely))
    return intent


def _task_or_talk(raw: str, *, has_prior_order: bool, answering: bool, topics: list[FaqTopic]) -> Intent:
    """What a customer's message asks for, as the rules and the phrasings read it. The rules keep what
    only they can read or what must never be lost: an order's details given when asked for, yes and no,
    asking for a person in so many words, a topic staff added, "are you a person?", cancelling an order,
    a delivery problem named plainly. Otherwise the phrasings decide when they are clear, and the rules
    when they are not; a message more like a reported delivery problem than like anything else is one."""
    rule, trigger = _rule_reading(raw, has_prior_order=has_prior_order, topics=topics)
    text = plain(raw)
    if (trigger and trigger.stands) or rule.kind in ("ack", "decline") or rule.topic == ORDER_CHANGE_POLICY:
        return rule  # cancellations, new addresses, a delivery problem named plainly: the rules read those
    if rule.kind == "status" and _order_task_asked(text):
        return rule  # the status asked before a receipt: the phrasings would read the receipt's words
    if (
        rule.kind == "status"
        and has_prior_order
        and _ORDER_DETAIL_RE.search(text)
        and not NOT_RECEIVED_RE.search(text)
    ):
        return rule  # "and the other parcel?" after a lookup: that order's parcels, not one reported lost
    if rule.kind == "policy" and rule.topic not in _PHRASED_TOPICS:
        return rule
    if rule.kind == "person" and asks_for_someone(text):
        return rule
    if rule.kind in TASKS and has_prior_order and REFERS_BACK_RE.search(text):
        return rule  # "can I return it?" after a lookup: that order, not the returns FAQ
    details = ORDER_NUMBERS.replace(" ", EMAIL_MENTION_RE.sub(" ", text))
    if rule.kind == "info" and (answering or not stems(details)):
        # An order's details given when the model asked for them answer its question, however worded
        # ("the order number is …"); details alone ask which task.
        return rule
    words = _classifier_words(_first_request(text))
    classified = _classified(words)
    if (
        classified is not None
        and classified[0].startswith(_PROBLEM_ROUTE)
        and (
            NOT_THE_PARCEL_RE.search(text)
            or (classified[0] == f"{_PROBLEM_ROUTE}{DeliveryProblem.LATE}" and ASKS_WHERE_RE.search(text))
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
        and intent.kind not in (*TASKS, "person", "policy", "no_number")
    ):
        return rule  # "BK-10103 as well": another order for the task under way, not a request refused
    if (
        intent.kind == "unknown"
        and rule.kind in ("greeting", "thanks", "goodbye", "decline")
        and len(stems(text)) <= 2
    ):
        return rule  # "laters", "so long": a few words of small talk, which the rules know by heart
    if intent.kind in ("unknown", "greeting") and rule.kind in ("help", "no_policy", "offtopic"):
        return rule  # the rules name what is refused, offer a person for store questions, say what it does
    if intent.kind in TASKS and rule.kind == "offtopic" and re.search(r"\bcancel", text):
        return rule  # "cancel BK-10042 and refund me": the first request is refused, and nothing started
    if intent.kind == "person" and ARE_YOU_HUMAN_RE.search(text):
        return rule  # "are you a real person?" asks about the assistant, not for someone
    if intent.kind == "no_number" and order_id_in(raw):
        return rule  # "the order number is BK-10042" gives what it seems to be missing
    if intent.kind == "policy" and topics and intent.topic not in (keys := {topic.key for topic in topics}):
        # A built-in topic staff took down: the rules' topic if that one is published, else none.
        return rule if rule.kind == "policy" and rule.topic in keys else Intent("no_policy")
    return intent


def intents_of(units: list[str], topics: list[FaqTopic], answering: list[bool]) -> list[Intent]:
    return [
        _detect_intent(
            text,
            has_prior_order=latest_found(order_id_in, units[:index]) is not None,
            answering=answering[index],
            topics=topics,
        )
        for index, text in enumerate(units)
    ]
