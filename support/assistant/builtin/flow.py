"""The next step for the customer's latest message: the answer to a question a capability's reply asked,
a capability's task on one order started or carried on, or the built-in model's own steps (a policy, a
person, small talk, a refusal). What a capability does is its own module's
(support/assistant/capabilities/, through the registry): this module dispatches to it, by what the
last reply waits for (`History.waiting`) and by the kind of task the customer asks for.
"""

import re

from orders.numbers import ORDER_NUMBERS
from support.assistant.builtin.faq import LIKELY, faq_match
from support.assistant.builtin.intents import (
    intents_of,
)
from support.assistant.capabilities.base import OrderTask
from support.assistant.capabilities.registry import AFTER_RESULT, ANSWERS, TASK_STEPS, TASKS
from support.assistant.check_codes import CODE_RE
from support.assistant.understanding.customer_words import (
    email_in,
    latest_found,
    order_id_in,
    plain,
)
from support.assistant.understanding.history import (
    History,
    Intent,
    ToolCall,
)
from support.assistant.understanding.step import Reading, Step, TaskAt
from support.assistant.understanding.vocabulary import (
    MAX_SUMMARY_CHARS,
    NO_RE,
    PASS_ON_RE,
    REFERS_BACK_RE,
    SMALL_TALK,
    STORE_CONTEXT_RE,
    STORE_TOPICS,
    STORE_WORDS_RE,
    WORLD_QUESTION_RE,
)
from support.assistant.understanding.wording import (
    ASK_EMAIL,
    ASK_WHICH_POLICY,
    ASK_WHICH_TASK,
    GREETING_REPLY,
    NO_POLICY_REPLY,
    WHICH_TOPIC_LEAD,
    WHICH_TOPIC_ONE,
    WHICH_TOPIC_SEVERAL,
    Asked,
    Said,
    Waiting,
    ask,
    ask_order_number,
    no_number_reply,
    said,
)
from support.assistant.validator import reply_validate
from support.llm.consent import YES_RE
from support.llm.protocol import (
    HANDOFF_TOOL,
    OFFER_PERSON,
    REFUSAL_TEMPLATE,
    HandoffAsk,
)

# --- flow state ----------------------------------------------------------------------------------


def _intents(history: History) -> list[Intent]:
    return intents_of(history.units, history.topics, history.answering)


def reading_of(history: History) -> Reading:
    """The conversation as the steps read it, every capability's tasks on one order among its intents."""
    return Reading(history, read=_intents, tasks=TASKS)


def _order_for_task(
    units: list[str],
    intents: list[Intent],
    start: int,
    task: OrderTask,
    verified: tuple[str, ...] = (),
    confirmed: dict[int, str] | None = None,
    codes: set[int] | None = None,
) -> str | None:
    """The order number for the task begun at `start`.

    Given since the task began; else the earlier order when the request points back to it ("return
    it"); else one given just before the request ("BK-10042" then "status please"); else, for "my
    order" or "my return" or a task that takes it (`OrderTask.takes_order_found`), the one order a tool
    already found with the customer's email in this conversation (`verified`). Never a guess among
    several: a customer may have several orders.
    """
    confirmed = confirmed or {}
    for index in range(len(units) - 1, start - 1, -1):
        # Written as an order's, or one the customer said yes to ("Is 1050 your order number?"); a
        # one-time code typed when asked for is none.
        words = CODE_RE.sub(" ", units[index]) if index in (codes or ()) else units[index]
        if order_id := order_id_in(words) or confirmed.get(index):
            return order_id
    if REFERS_BACK_RE.search(plain(units[start])):
        return latest_found(order_id_in, units[:start])
    for index in range(start - 1, -1, -1):
        if intents[index].kind not in ("info", "order_unclear"):
            break
        if order_id := order_id_in(units[index]):
            return order_id
    if len(verified) == 1 and (_MY_ORDER_OR_RETURN_RE.search(plain(units[start])) or task.takes_order_found):
        # A problem told after a lookup ("it was late!") is that order's, and so is a capability's
        # request on one order ("please send the receipt again").
        return verified[0]
    return None


# "My order", "the return", and a detail of the order just looked up: "the tracking number?", "and the
# other parcel?", "the delivery date" (the order the conversation is about is the one found).
_MY_ORDER_OR_RETURN_RE = re.compile(
    r"\b(?:my|the|our|its) (?:\w+ )?"
    r"(?:order|return|refund|package|parcel|books?|tracking|shipment|delivery)\b"
)


def _listed(history: History) -> bool:
    """Whether the assistant's last words listed the signed-in customer's orders: then the customer is
    answering "which one?", and an order number is asked for rather than a second list. Any later
    request lists them afresh."""
    return history.waiting == Waiting.WHICH_ORDER


def _verified_orders(history: History) -> tuple[str, ...]:
    """The orders a tool found with the customer's email in this conversation, in order."""
    found: list[str] = []
    for _, result in history.calls:
        order_id = result.get("order_id")
        if "error" not in result and isinstance(order_id, str) and order_id not in found:
            found.append(order_id)
    return tuple(found)


def _task_step(reading: Reading, start: int) -> Step:
    """The step of the task begun at `start`: its own first step if it has one, else ask for what it
    still misses, or its step with the order's number and email. A customer the store signed in is never
    asked for their email, and without an order number their recent orders are listed (once)."""
    units, intents, history = reading.units, reading.intents, reading.history
    task = TASK_STEPS[intents[start].kind]
    order_id = _order_for_task(
        units, intents, start, task, _verified_orders(history), history.confirmed, history.codes
    )
    # The customer's address holds for all their orders; the store's word for it, when signed in.
    email = latest_found(email_in, units) or history.signed_in
    at = TaskAt(reading=reading, start=start, order_id=order_id, email=email)
    if task.first and (step := task.first(at)):
        return step
    if not order_id and (maybe := ORDER_NUMBERS.unsure(units[-1])):
        # A number that may be the order's, though nothing said so ("where is 1050?"): asked, not taken.
        return ask(Waiting.CONFIRM_ORDER_NUMBER, f"Is {maybe[0]} your order number?")
    if not order_id and history.signed_in and not _listed(history):
        return ToolCall("list_recent_orders", {})
    if not order_id:
        return said(task.lead, ask(Waiting.ORDER_NUMBER, ask_order_number()))
    if not email:
        return said("Thanks.", ask(Waiting.EMAIL, ASK_EMAIL))
    if task.call:
        return task.call(at)
    return ToolCall(task.tool, at.arguments)


# A signed-in customer asking for their orders as a list: "what are my recent orders?", "what did I buy?".
_ASKS_FOR_ORDERS_RE = re.compile(
    r"\b(?:(?:what|which) (?:are|were) (?:my|our) (?:\w+ )?orders|"
    r"(?:list|show|see|view)(?: me)? (?:all )?(?:of )?(?:my|our) (?:\w+ )?orders|"
    r"(?:my|our) (?:order history|(?:recent|last|latest|past|previous) orders)|"
    r"what (?:have|did) (?:i|we) (?:order(?:ed)?|bought|buy|purchased?)|"
    r"(?:do|did) (?:i|we) have (?:any )?(?:orders|an order)|(?:any|all) (?:of )?my orders)\b"
)


def respond(reading: Reading) -> Step:
    """The next step for the customer's latest message."""
    history, units = reading.history, reading.units
    if not units:
        return GREETING_REPLY
    intents = reading.intents
    intent = intents[-1]
    pending = history.waiting
    if pending in ANSWERS and (answer := ANSWERS[pending](reading)) is not None:
        return answer  # the answer to a capability's question (a yes to a return, which books)
    if pending == Waiting.PASS_ON and len(units) > 1 and PASS_ON_RE.match(plain(units[-1])):
        # Yes to passing on a question no policy answers: staff get the question itself.
        return _handoff(HandoffAsk.NEEDS_STAFF, units[-2])
    if pending == Waiting.WHICH_TOPIC and (answer := _which_topic_answer(reading)) is not None:
        return answer
    if pending == Waiting.OFFER_PERSON and len(units) > 1 and PASS_ON_RE.match(plain(units[-1])):
        # Yes to a person offered for a request we cannot serve: staff get that request in its words.
        return _handoff(HandoffAsk.NEEDS_STAFF, _request_before(units, intents))
    listing = intent.kind not in TASKS and not order_id_in(units[-1])
    if listing and _ASKS_FOR_ORDERS_RE.search(plain(units[-1])):
        if history.signed_in:
            return ToolCall("list_recent_orders", {})  # asked for in so many words: listed again
        if intent.kind in ("order_unclear", "unknown", "offtopic"):
            return no_number_reply()  # no list without the store's word for who this is: the number, then
    start = reading.start
    under_way = TASK_STEPS[intents[start].kind] if start is not None else None
    if (
        under_way
        and start is not None
        and under_way.detail
        and pending == under_way.detail
        and start < len(units) - 1
        and intent.kind != "decline"
    ):
        # The detail the task asked for (a new address): read it, or ask again ("no thanks" ends it).
        step = _task_step(reading, start)
        if isinstance(step, Asked) and step.waiting == pending:
            return ask(pending, under_way.detail_again)
        return step
    if pending == Waiting.WHICH_SHOP and start is not None and intent.kind in _YES_OR_NO:
        # The answer to "Which shop is it from?": the task again, its tool reading the shop from it.
        return _task_step(reading, start)
    if pending == Waiting.CODE and start is not None and len(units) - 1 in history.codes:
        # A code typed after "Please type the code", however worded: the task again, its tool reading it.
        return _task_step(reading, start)
    for after in AFTER_RESULT:
        # Right after a capability's result ("it's not here" after "delivered": a parcel gone missing).
        if answer := after(reading):
            return answer
    if intent.kind in TASKS:
        return _task_step(reading, len(units) - 1)
    if intent.kind == "policy":
        return ToolCall("lookup_policy", {"topic": intent.topic}) if intent.topic else ASK_WHICH_POLICY
    if intent.kind == "which_topic":
        return _which_topic(history, intent.topic.split(","))
    if intent.kind == "info" and start is not None:
        return _task_step(reading, start)
    if pending == Waiting.CONFIRM_ORDER_NUMBER and start is not None and intent.kind in _YES_OR_NO:
        # The answer to "Is 1050 your order number?": a yes takes it (History.confirmed), a no asks for it.
        return _task_step(reading, start)
    waiting = pending in (
        Waiting.ORDER_NUMBER,
        Waiting.CONFIRM_ORDER_NUMBER,
        Waiting.WHICH_ORDER,
        Waiting.EMAIL,
    )
    if intent.kind in ("ack", "unknown", "order_unclear") and waiting and start is not None:
        # Still waiting for an order detail: ask again rather than refuse or change the subject.
        step = _task_step(reading, start)
        return step if isinstance(step, ToolCall) else said("Sorry, I didn't catch that.", step)
    if intent.kind in ("info", "order_unclear"):
        return f"I can help with that order. {ASK_WHICH_TASK}"
    if intent.kind == "person":
        return _handoff(HandoffAsk.CUSTOMER_ASKED, units[-1])
    if intent.kind == "no_policy":
        return ask(Waiting.PASS_ON, NO_POLICY_REPLY)
    if intent.kind == "complaint":
        return _handoff(HandoffAsk.NEEDS_STAFF, units[-1])
    if intent.kind == "offtopic":
        return _refusal(intent.topic, units[-1])
    if intent.kind == "no_number":
        # "I don't have the order number": a customer the store signed in is shown their orders.
        return (
            ToolCall("list_recent_orders", {})
            if history.signed_in and not _listed(history)
            else no_number_reply()
        )
    replies = {kind: reply for kind, _, reply in SMALL_TALK}
    if intent.kind in replies:
        return replies[intent.kind]
    return _refusal("that request", units[-1])


_YES_OR_NO = frozenset({"ack", "decline", "unknown", "info", "order_unclear"})


def _which_topic(history: History, keys: list[str]) -> Asked:
    """The topics a question may be about, by their titles, and a person offered for anything else. A
    title staff wrote that the validator would not let through in our words (a price, a link, a PIN) is
    not named; with none left, the question gets the honest "no policy" answer and a person offered."""
    titles = {topic.key: topic.title for topic in history.topics}
    named = [f"“{titles[key]}”" for key in _named(history, keys, asked=history.units[-1])]
    if not named:
        return ask(Waiting.PASS_ON, NO_POLICY_REPLY)
    if len(named) == 1:
        return ask(Waiting.WHICH_TOPIC, f"{WHICH_TOPIC_LEAD} {named[0]}? {WHICH_TOPIC_ONE}")
    listed = f"{', '.join(named[:-1])} or {named[-1]}"
    return ask(Waiting.WHICH_TOPIC, f"{WHICH_TOPIC_LEAD} {listed}? {WHICH_TOPIC_SEVERAL}")


def _named(history: History, keys: list[str], *, asked: str) -> list[str]:
    """The topics the which-topic question names, in its order: those with a title the validator lets
    through (a title with a price, a link or a PIN would have the question replaced by the fallback).
    `asked` is the customer's message the question answered."""
    titles = {topic.key: topic.title for topic in history.topics}
    return [key for key in keys if key in titles and _sayable(f"“{titles[key]}”", history, asked=asked)]


def _sayable(title: str, history: History, *, asked: str) -> bool:
    """Whether the question naming `title` passes the validator (layer 4), which would replace it."""
    question = f"{WHICH_TOPIC_LEAD} {title}? {WHICH_TOPIC_ONE}"
    verdict = reply_validate(
        reply=question, customer_message=asked, customer_words=history.units, tool_results=[]
    )
    return not verdict.violations


# "the first", "the 2nd one", "the last": a topic by its place in the question; a digit only as the whole
# answer ("2", "number 2"), not within one ("I have 2 questions").
_PLACE_RE = re.compile(r"\b(?:(first|1st)|(second|2nd)|(third|3rd)|(last))\b")
_PLACE_DIGIT_RE = re.compile(r"^(?:the |number |option |no\.? ?|#)?([123])(?: one| please)?[.!]?$")


def _place(answer: str, count: int) -> int | None:
    """The index of the topic an answer names by its place among `count`, if it does."""
    if digit := _PLACE_DIGIT_RE.match(answer.strip()):
        index = int(digit.group(1)) - 1
    elif place := _PLACE_RE.search(answer):
        index = count - 1 if place.group(4) else next(n for n in range(3) if place.group(n + 1))
    else:
        return None
    return index if index < count else None


_SOMETHING_ELSE_RE = re.compile(r"\b(?:none|neither|something else|other|not (?:those|these|that|it))\b")


def _which_topic_answer(reading: Reading) -> Step | None:
    """The answer to "Is your question about “A” or “B”?": the topic named by its words or its place, a
    yes to the one topic asked about; "neither" has a person offered for the question. The topics asked
    about are those the question was read as (the same words and topics read the same); None for a
    message that answers nothing of it."""
    units, intents = reading.units, reading.intents
    if len(units) < 2 or intents[-2].kind != "which_topic":
        return None
    keys = intents[-2].topic.split(",")
    latest = plain(units[-1])
    # By place among the topics the question named (a title it could not name was not counted).
    named = _named(reading.history, keys, asked=units[-2])
    if (index := _place(latest, len(named))) is not None:
        return ToolCall("lookup_policy", {"topic": named[index]})
    scores = faq_match(units[-1], reading.history.topics).scores
    if scores and scores[0][0] in keys and scores[0][1] >= LIKELY:
        return ToolCall("lookup_policy", {"topic": scores[0][0]})  # "the payment one", "newsletter"
    if len(keys) == 1 and YES_RE.match(latest) and not _SOMETHING_ELSE_RE.search(latest):
        return ToolCall("lookup_policy", {"topic": keys[0]})
    if NO_RE.match(latest) or _SOMETHING_ELSE_RE.search(latest):
        return ask(Waiting.OFFER_PERSON, NO_POLICY_REPLY)  # a yes passes on the question asked before
    return None


def _refusal(topic: str, words: str) -> Said:
    """The refusal sentence, with a person offered unless the request is plainly not for the store: a
    topic of its own (the weather, code) with nothing of the store in it, a question about the world
    ("what is the capital of France?"), or a few words of nothing ("purple elephants"). When in doubt,
    the customer gets a way on, not a dead end."""
    refusal = REFUSAL_TEMPLATE.format(topic=topic)
    text = plain(words)
    store = STORE_WORDS_RE.search(text) or order_id_in(words) or email_in(words)
    if topic in STORE_TOPICS:
        return said(refusal, ask(Waiting.OFFER_PERSON, OFFER_PERSON))
    if topic != "that request":
        about_store = STORE_CONTEXT_RE.search(text) or order_id_in(words)
        return said(refusal, ask(Waiting.OFFER_PERSON, OFFER_PERSON)) if about_store else refusal
    if not store and (WORLD_QUESTION_RE.search(text) or len(text.split()) <= 4):
        return refusal  # a question about the world, or a few words that say nothing of the store
    return said(refusal, ask(Waiting.OFFER_PERSON, OFFER_PERSON))


def _request_before(units: list[str], intents: list[Intent]) -> str:
    """The customer's latest request before their last message: not an order's details or a yes."""
    for index in range(len(units) - 2, -1, -1):
        if intents[index].kind not in ("info", "ack", "decline", "thanks", "greeting", "unknown"):
            return units[index]
    return units[-2]


def _handoff(reason: HandoffAsk, words: str) -> ToolCall:
    summary = " ".join(words.split())
    if len(summary) > MAX_SUMMARY_CHARS:
        summary = summary[:MAX_SUMMARY_CHARS].rsplit(" ", 1)[0]
    return ToolCall(HANDOFF_TOOL, {"reason": reason, "summary": summary})
