"""The next step for the customer's latest message: answer a question the model asked, start or go on with a
task, or say why not.
"""

import re

from orders.models import EMAIL_MENTION_RE, DeliveryProblem
from orders.services import ITEMS_NEEDED
from support.assistant.builtin.history import (
    History,
    Intent,
    ToolCall,
)
from support.assistant.builtin.intents import (
    intents_of,
)
from support.assistant.builtin.reading import (
    address_in,
    email_in,
    latest_found,
    named_titles,
    order_id_in,
    plain,
    rma_in,
)
from support.assistant.builtin.replies import (
    eligibility_reply,
    returnable_titles,
)
from support.assistant.builtin.vocabulary import (
    BOTH_RE,
    GOT_IT_RE,
    MAX_REASON_CHARS,
    MAX_SUMMARY_CHARS,
    NO_RE,
    NOT_RECEIVED_RE,
    NOT_THE_PARCEL_RE,
    PASS_ON_RE,
    REASON_CLAUSE_RE,
    REASON_WORDS_RE,
    REFERS_BACK_RE,
    SMALL_TALK,
    STORE_CONTEXT_RE,
    STORE_TOPICS,
    STORE_WORDS_RE,
    TASKS,
    THE_OTHER_RE,
    WANTS_RETURN_RE,
    WORLD_QUESTION_RE,
)
from support.assistant.builtin.wording import (
    ASK_ADDRESS,
    ASK_EMAIL,
    ASK_ORDER_NUMBER,
    ASK_WHICH_POLICY,
    ASK_WHICH_TASK,
    DECLINED_ADDRESS_REPLY,
    DECLINED_CANCEL_REPLY,
    DECLINED_REPLY,
    GREETING_REPLY,
    NO_NUMBER_REPLY,
    NO_POLICY_REPLY,
    WHICH_TOPIC_OR_PERSON,
    Waiting,
    ask,
    last_asked,
)
from support.assistant.capabilities.registry import ORDER_TASKS
from support.llm.consent import HESITANT_RE, YES_RE, reads_as_yes
from support.llm.protocol import (
    HANDOFF_TOOL,
    OFFER_PERSON,
    REFUSAL_TEMPLATE,
    HandoffAsk,
)

# --- flow state ----------------------------------------------------------------------------------


def task_start(intents: list[Intent]) -> int | None:
    """Index of the customer message that started the current order task: the latest explicit one wins."""
    for index in range(len(intents) - 1, -1, -1):
        if intents[index].kind in TASKS:
            return index
    return None


def _order_for_task(
    units: list[str], intents: list[Intent], start: int, verified: tuple[str, ...] = ()
) -> str | None:
    """The order number for the task begun at `start`.

    Given since the task began; else the earlier order when the request points back to it ("return
    it"); else one given just before the request ("BK-10042" then "status please"); else, for "my
    order" or "my return", the one order a tool already found with the customer's email in this
    conversation (`verified`), as for a problem told without a number. Never a guess among several: a
    customer may have several orders.
    """
    if order_id := latest_found(order_id_in, units[start:]):
        return order_id
    if REFERS_BACK_RE.search(plain(units[start])):
        return latest_found(order_id_in, units[:start])
    for index in range(start - 1, -1, -1):
        if intents[index].kind not in ("info", "order_unclear"):
            break
        if order_id := order_id_in(units[index]):
            return order_id
    if len(verified) == 1 and (
        _MY_ORDER_OR_RETURN_RE.search(plain(units[start])) or intents[start].kind in ("problem", *ORDER_TASKS)
    ):
        # A problem told after a lookup ("it was late!") is that order's, and so is a capability's
        # request on one order ("please send the receipt again").
        return verified[0]
    return None


_MY_ORDER_OR_RETURN_RE = re.compile(
    r"\b(?:my|the|our) (?:\w+ )?(?:order|return|refund|package|parcel|books?)\b"
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


def _task_step(units: list[str], intents: list[Intent], start: int, history: History) -> str | ToolCall:
    """Ask for what the task still misses, or call its tool. A customer the store signed in is never
    asked for their email, and without an order number their recent orders are listed (once)."""
    task = intents[start].kind
    order_id = _order_for_task(units, intents, start, _verified_orders(history))
    # The customer's address holds for all their orders; the store's word for it, when signed in.
    email = latest_found(email_in, units) or history.signed_in
    rma_number = latest_found(rma_in, units[start:]) if task == "status" and not order_id else None
    if rma_number:
        # A return's status by its RMA number: found with the email on its order, no order number needed.
        if not email:
            return f"I can check that return for you. {ask(Waiting.EMAIL, ASK_EMAIL)}"
        return ToolCall("lookup_order", {"rma_number": rma_number, "customer_email": email})
    if not order_id and history.signed_in and not _listed(history):
        return ToolCall("list_recent_orders", {})
    if not order_id:
        lead = ORDER_TASKS[task].lead if task in ORDER_TASKS else _TASK_LEADS[task]
        return f"{lead} {ask(Waiting.ORDER_NUMBER, ASK_ORDER_NUMBER)}"
    if not email:
        return f"Thanks. {ask(Waiting.EMAIL, ASK_EMAIL)}"
    arguments = {"order_id": order_id, "customer_email": email}
    if task == "address":
        address = latest_found(address_in, units[start:])
        if address is None:
            return f"Thanks. {ask(Waiting.ADDRESS, ASK_ADDRESS)}"
        return ToolCall("check_address_change", {**arguments, "new_address": address})
    if task == "problem":
        return _problem_report(units, start, arguments, problem=intents[start].topic)
    return ToolCall(ORDER_TASKS[task].tool if task in ORDER_TASKS else _TASK_TOOLS[task], arguments)


def _problem_report(
    units: list[str], start: int, arguments: dict, *, problem: str, titles: list[str] | None = None
) -> ToolCall:
    """Report the problem told at `start`, in the customer's words (their email left out)."""
    details = " ".join(EMAIL_MENTION_RE.sub("", units[start]).split())
    if len(details) > MAX_REASON_CHARS:
        details = details[:MAX_REASON_CHARS].rsplit(" ", 1)[0]
    report = {**arguments, "problem": problem, "details": details or "Not given"}
    if titles:
        report["item_titles"] = titles
    return ToolCall("report_delivery_problem", report)


_TASK_LEADS = {
    "status": "I can check that for you.",
    "return": "I can help with a return.",
    "cancel": "I can check whether that order can still be cancelled.",
    "address": "I can check whether that order can still go to a new address.",
    "problem": "I'm sorry about that. I can report it to our team.",
}
_TASK_TOOLS = {"status": "lookup_order", "return": "check_return_eligibility", "cancel": "check_cancellation"}


def _return_reason(texts: list[str]) -> str:
    """Why the customer is returning, in their words, kept for staff (order number included, their email
    left out): a because-clause or a sentence naming a problem."""
    for text in texts:
        text = EMAIL_MENTION_RE.sub("", text)  # the order's email is on the order; the rest stays as written
        clause = REASON_CLAUSE_RE.search(text)
        sentences = [s for s in re.split(r"[.!?](?=\s|$)|\n+", text) if REASON_WORDS_RE.search(s)]
        candidate = clause.group("why") if clause else (sentences[0] if sentences else "")
        candidate = " ".join(candidate.split()).strip(" ,;:-")
        if len(candidate) > MAX_REASON_CHARS:
            candidate = candidate[:MAX_REASON_CHARS].rsplit(" ", 1)[0]
        if candidate:
            return candidate
    return "Not given"


def _answer_confirmation(history: History, intents: list[Intent]) -> str | ToolCall | None:
    """The answer to the return summary: start it, summarise again, decline, or None (not an answer)."""
    checks = [(use, result) for use, result in history.calls if use.get("name") == "check_return_eligibility"]
    if not checks or checks[-1][1].get("eligible") is not True:
        return None
    check_input, result = checks[-1][0].get("input", {}), checks[-1][1]
    units, latest = history.units, plain(history.units[-1])
    start = task_start(intents) or 0
    returnable = returnable_titles(result)
    summarised = named_titles(units[start:-1], returnable)
    named_now = named_titles(units[-1:], returnable)
    if not named_now and summarised and THE_OTHER_RE.search(latest):
        named_now = [title for title in returnable if title not in summarised] or None
    changed_choice = named_now and set(named_now) != set(summarised or returnable)
    if YES_RE.match(latest):
        # A different choice of books is not a yes to the summary just given: summarise again.
        if changed_choice:
            return eligibility_reply(result, named_now)
        if intents[-1].kind in ("person", "status", "policy", "no_number"):
            return None  # "yes, but let me talk to a person first": that request is answered first
        other_order = order_id_in(history.units[-1])
        if HESITANT_RE.search(latest) or (other_order and other_order != check_input.get("order_id")):
            return DECLINED_REPLY  # "ok, maybe later", "ok, I don't want to return it": nothing started
        arguments = {
            "order_id": check_input.get("order_id", ""),
            "customer_email": check_input.get("customer_email", ""),
            "reason": _return_reason(units[start:]),
        }
        if summarised:
            arguments["item_titles"] = summarised
        return ToolCall("initiate_return", arguments)
    if changed_choice:
        return eligibility_reply(result, named_now)  # "no, just the Goldfinch": a new summary, not a no
    if NO_RE.match(latest) and intents[-1].kind not in (*TASKS, "policy", "info", "no_number", "person"):
        return DECLINED_REPLY
    return None


def _answer_which_item(history: History) -> str | None:
    """The answer to "which would you like to return?": a summary of the titles named, or None."""
    checks = [result for use, result in history.calls if use.get("name") == "check_return_eligibility"]
    if not checks or checks[-1].get("eligible") is not True:
        return None
    returnable = returnable_titles(checks[-1])
    latest = plain(history.units[-1])
    named = named_titles(history.units[-1:], returnable) or (returnable if BOTH_RE.search(latest) else None)
    return eligibility_reply(checks[-1], named) if named else None


def _delivered_not_received(history: History) -> dict | None:
    """The order (number and email) the last lookup said was delivered, when the customer's latest
    message, right after it, says it never came; else None."""
    latest = plain(history.units[-1])
    if (
        not NOT_RECEIVED_RE.search(latest)
        or NOT_THE_PARCEL_RE.search(latest)
        or GOT_IT_RE.search(latest)
        or WANTS_RETURN_RE.search(latest)
        or order_id_in(history.units[-1])
    ):
        return None
    lookups = [(use, result) for use, result in history.calls if use.get("name") == "lookup_order"]
    if not lookups or lookups[-1][1].get("status") != "delivered" or history.calls[-1] != lookups[-1]:
        return None
    given = lookups[-1][0].get("input", {})
    return {key: given.get(key, "") for key in ("order_id", "customer_email")}


def _answer_which_books(history: History) -> ToolCall | None:
    """The answer to "which of the books?": the report again with the titles named, or None."""
    asked = [use for use, result in history.calls if use.get("name") == "report_delivery_problem"]
    results = [result for use, result in history.calls if use.get("name") == "report_delivery_problem"]
    if not asked or results[-1].get("error") != ITEMS_NEEDED:
        return None
    titles = results[-1].get("order_titles") or []
    latest = plain(history.units[-1])
    named = named_titles(history.units[-1:], titles) or (titles if BOTH_RE.search(latest) else None)
    if not named:
        return None
    return ToolCall("report_delivery_problem", {**asked[-1].get("input", {}), "item_titles": named})


def _answer_change(history: History, intents: list[Intent]) -> str | ToolCall | None:
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
    latest = plain(history.units[-1])
    if intents[-1].kind in ("person", "status", "return", "policy", "no_number"):
        return None  # another request: answered as such
    if not cancelling and (address := address_in(history.units[-1])):
        return ToolCall("check_address_change", {**arguments, "new_address": address})
    other_order = order_id_in(history.units[-1])
    if reads_as_yes(history.units[-1], to_cancel=cancelling) and other_order in (None, arguments["order_id"]):
        return ToolCall("cancel_order" if cancelling else "change_shipping_address", arguments)
    if NO_RE.match(latest) or HESITANT_RE.search(latest) or re.search(r"\bkeep it\b", latest):
        return DECLINED_CANCEL_REPLY if cancelling else DECLINED_ADDRESS_REPLY
    return None


# A signed-in customer asking for their orders as a list: "what are my recent orders?", "what did I buy?".
_ASKS_FOR_ORDERS_RE = re.compile(
    r"\b(?:(?:what|which) (?:are|were) (?:my|our) (?:\w+ )?orders|"
    r"(?:list|show|see|view)(?: me)? (?:all )?(?:of )?(?:my|our) (?:\w+ )?orders|"
    r"(?:my|our) (?:order history|(?:recent|last|latest|past|previous) orders)|"
    r"what (?:have|did) (?:i|we) (?:order(?:ed)?|bought|buy|purchased?)|"
    r"(?:do|did) (?:i|we) have (?:any )?(?:orders|an order)|(?:any|all) (?:of )?my orders)\b"
)


def respond(history: History) -> str | ToolCall:
    """The next step for the customer's latest message."""
    units = history.units
    if not units:
        return GREETING_REPLY
    intents = intents_of(units, history.topics, history.answering)
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
    if pending == Waiting.PASS_ON and len(units) > 1 and PASS_ON_RE.match(plain(units[-1])):
        # Yes to passing on a question no policy answers: staff get the question itself.
        return _handoff(HandoffAsk.NEEDS_STAFF, units[-2])
    if pending == Waiting.OFFER_PERSON and len(units) > 1 and PASS_ON_RE.match(plain(units[-1])):
        # Yes to a person offered for a request we cannot serve: staff get that request in its words.
        return _handoff(HandoffAsk.NEEDS_STAFF, _request_before(units, intents))
    listing = intent.kind not in TASKS and not order_id_in(units[-1])
    if listing and _ASKS_FOR_ORDERS_RE.search(plain(units[-1])):
        if history.signed_in:
            return ToolCall("list_recent_orders", {})  # asked for in so many words: listed again
        if intent.kind in ("order_unclear", "unknown", "offtopic"):
            return NO_NUMBER_REPLY  # no list without the store's word for who this is: the number, then
    start = task_start(intents)
    if (
        pending == Waiting.ADDRESS
        and start is not None
        and intents[start].kind == "address"
        and start < len(units) - 1
    ):
        # The new address asked for: read it, or ask again.
        step = _task_step(units, intents, start, history)
        if isinstance(step, str) and last_asked() == Waiting.ADDRESS:
            return f"Sorry, I couldn't read that as an address. {ask(Waiting.ADDRESS, ASK_ADDRESS)}"
        return step
    if intent.kind in ("status", "unknown", "order_unclear") and (
        looked_up := _delivered_not_received(history)
    ):
        # "It's not here" after being told the order was delivered: a parcel gone missing, reported.
        return _problem_report(units, len(units) - 1, looked_up, problem=DeliveryProblem.NOT_ARRIVED.value)
    if intent.kind in TASKS:
        return _task_step(units, intents, len(units) - 1, history)
    if intent.kind == "policy":
        return ToolCall("lookup_policy", {"topic": intent.topic}) if intent.topic else ASK_WHICH_POLICY
    if intent.kind == "which_topic":
        return _which_topic(history, intent.topic.split(","))
    start = task_start(intents)
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
            else NO_NUMBER_REPLY
        )
    replies = {kind: reply for kind, _, reply in SMALL_TALK}
    if intent.kind in replies:
        return replies[intent.kind]
    return _refusal("that request", units[-1])


def _which_topic(history: History, keys: list[str]) -> str:
    """The topics a question may be about, by their titles, and a person offered for anything else:
    the customer's answer is read afresh (a title named is that topic), a yes passes the question on."""
    titles = {topic.key: topic.title for topic in history.topics}
    named = [f"“{titles[key]}”" for key in keys if key in titles]
    listed = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} or {named[-1]}"
    return f"Is your question about {listed}? " + ask(Waiting.PASS_ON, WHICH_TOPIC_OR_PERSON)


def _refusal(topic: str, words: str) -> str:
    """The refusal sentence, with a person offered unless the request is plainly not for the store: a
    topic of its own (the weather, code) with nothing of the store in it, a question about the world
    ("what is the capital of France?"), or a few words of nothing ("purple elephants"). When in doubt,
    the customer gets a way on, not a dead end."""
    refusal = REFUSAL_TEMPLATE.format(topic=topic)
    text = plain(words)
    store = STORE_WORDS_RE.search(text) or order_id_in(words) or email_in(words)
    if topic in STORE_TOPICS:
        return f"{refusal} {ask(Waiting.OFFER_PERSON, OFFER_PERSON)}"
    if topic != "that request":
        about_store = STORE_CONTEXT_RE.search(text) or order_id_in(words)
        return f"{refusal} {ask(Waiting.OFFER_PERSON, OFFER_PERSON)}" if about_store else refusal
    if not store and (WORLD_QUESTION_RE.search(text) or len(text.split()) <= 4):
        return refusal  # a question about the world, or a few words that say nothing of the store
    return f"{refusal} {ask(Waiting.OFFER_PERSON, OFFER_PERSON)}"


def _request_before(units: list[str], intents: list[Intent]) -> str:
    """The customer's latest request before their last message: not an order's details or a yes."""
    for index in range(len(units) - 2, -1, -1):
        if intents[index].kind not in ("info", "ack", "thanks", "greeting", "unknown"):
            return units[index]
    return units[-2]


def _handoff(reason: HandoffAsk, words: str) -> ToolCall:
    summary = " ".join(words.split())
    if len(summary) > MAX_SUMMARY_CHARS:
        summary = summary[:MAX_SUMMARY_CHARS].rsplit(" ", 1)[0]
    return ToolCall(HANDOFF_TOOL, {"reason": reason, "summary": summary})
