"""Returns: whether an order can go back, item by item, and starting the return after a yes."""

import re
from dataclasses import replace
from typing import Annotated

from pydantic import Field

from orders.models import RETURN_REASON_NOT_GIVEN, ReturnRecord, ReturnStatus
from orders.patterns import EMAIL_MENTION_RE
from orders.selectors import order_return_eligibility
from orders.services import ReturnNotAllowed, ReturnRefusal
from store.clock import store_today
from support.assistant.capabilities.arguments import OrderArguments, ReasonArgument, TitlesArgument
from support.assistant.capabilities.base import (
    ELIGIBLE,
    NOT_ELIGIBLE,
    WINDOW_CLOSED,
    Capability,
    ClaimWordings,
    OrderTask,
    Tool,
    ToolContext,
    ToolOutcome,
    Trigger,
    check_key,
    error,
    items_titled,
    returns_of,
    titles_joined,
    verified_order,
)
from support.assistant.capabilities.steps import joined, returns_sentences
from support.assistant.understanding.customer_words import named_titles, order_id_in, plain
from support.assistant.understanding.history import Intent, ToolCall
from support.assistant.understanding.message import Message
from support.assistant.understanding.step import Reading, Step
from support.assistant.understanding.vocabulary import (
    BOTH_RE,
    GENERAL_Q_RE,
    HYPOTHETICAL_RE,
    MAX_REASON_CHARS,
    NO_RE,
    ONE_OF_RE,
    POLICY_WORD_RE,
    PROBLEM_RE,
    REASON_CLAUSE_RE,
    REASON_WORDS_RE,
    RETURN_RE,
    SPECIFIC_RE,
    THE_OTHER_RE,
    WANT_RE,
)
from support.assistant.understanding.wording import (
    ASK_WHICH_ITEM,
    CONFIRM_QUESTION,
    DECLINED_REPLY,
    Said,
    Waiting,
    ask,
    said,
)
from support.conversations.selectors import conversation_return_get_open
from support.conversations.services import conversation_return_create
from support.llm.consent import HESITANT_RE, YES_RE
from support.llm.protocol import ToolError

RETURN_NEXT_STEPS = (
    "We will email a prepaid return label to the address on the order. Pack the items in their original "
    "packaging, attach the label and drop the parcel off."
)


class InitiateReturnArguments(OrderArguments):
    reason: Annotated[ReasonArgument, Field(description="Why, in the customer's words (short).")]
    item_titles: (
        Annotated[TitlesArgument, Field(description="Exact titles from check_return_eligibility.")] | None
    ) = None


def check_return_eligibility(args: OrderArguments, context: ToolContext) -> ToolOutcome:
    order = verified_order(args, context)
    if isinstance(order, ToolOutcome):
        return order
    eligibility = order_return_eligibility(order=order, today=store_today())
    if eligibility.eligible:
        context.eligibility_verified.add(check_key(order))
    policy = eligibility.policy
    return ToolOutcome(
        {
            "order_id": order.number,
            "order_status": order.status,
            "eligible": eligibility.eligible,
            "reason": eligibility.reason,
            "delivered_on": order.delivered_on.isoformat() if order.delivered_on else None,
            "last_day_to_start_return": (
                eligibility.last_return_day.isoformat() if eligibility.last_return_day else None
            ),
            "items": [
                {"title": entry.item.title, "returnable": entry.returnable, "reason": entry.reason}
                for entry in eligibility.items
            ],
            # Returns already made (one staff granted outside the policy too): never contradicted.
            "returns": returns_of(order),
            "policy": {
                "return_window_days": policy.window_days,
                "condition_requirements": policy.condition_requirements,
                "refund_method": policy.refund_method,
                "refund_timeline_business_days": policy.refund_timeline_business_days,
                "not_returnable": policy.non_returnable_category_labels,
            },
        }
    )


def initiate_return(args: InitiateReturnArguments, context: ToolContext) -> ToolOutcome:
    order = verified_order(args, context)
    if isinstance(order, ToolOutcome):
        return order
    if check_key(order) not in context.eligibility_verified:
        return error(
            ToolError.ELIGIBILITY_NOT_VERIFIED,
            "Call check_return_eligibility for this order first; it must pass before a return can start.",
        )
    items = items_titled(order, args.item_titles)
    if isinstance(items, ToolOutcome):
        return items
    try:
        record = conversation_return_create(
            conversation=context.conversation,
            order=order,
            reason=args.reason,
            items=items,
            today=store_today(),
        )
    except ReturnNotAllowed as refused:
        # Asked again (a retry, or after a turn that failed once the return was made): the same
        # return, not a refusal the customer would read as "it did not work".
        earlier = (
            conversation_return_get_open(conversation=context.conversation, order=order, items=items)
            if refused.code == ReturnRefusal.ALREADY_INITIATED
            else None
        )
        if earlier is None:
            return error(refused.code, refused.message)
        return _return_started(earlier, already_started=True)
    return _return_started(record)


def _return_started(record: ReturnRecord, *, already_started: bool = False) -> ToolOutcome:
    titles = [line.order_item.title for line in record.lines.select_related("order_item")]
    result = {
        "rma_number": record.rma_number,
        "order_id": record.order.number,
        "status": record.status,
        "items": titles,
        "refund_method": record.refund_method,
        "refund_timeline_business_days": record.refund_timeline_business_days,
        "next_steps": RETURN_NEXT_STEPS,
    }
    if already_started:
        result["already_started"] = True
    receipt = (
        f"Your return for order {record.order.number} has started: RMA number {record.rma_number}, for "
        f"{titles_joined(titles)}. {RETURN_NEXT_STEPS} The refund goes to {record.refund_method} within "
        f"{record.refund_timeline_business_days} business days after we receive the items."
    )
    return ToolOutcome(result, receipt=receipt)


# --- The built-in model's steps ---


def _returnable_titles(result: dict) -> list[str]:
    return [item.get("title", "") for item in result.get("items", []) if item.get("returnable")]


def _refund_sentence(method: object, days: object) -> str:
    return f"The refund goes to {method} within {days} business days after we receive the items."


_IN_OPEN_RETURN = "This item is already part of an open return."


def _eligibility_reply(result: dict, chosen: list[str] | None) -> Said:
    order_id = result.get("order_id")
    if not result.get("eligible"):
        made = returns_sentences(result.get("returns", []))
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
    sentences: list[Said] = [
        f"Order {order_id} can be returned. {result.get('reason', '')}".strip(),
        f"I can start a return for {joined(chosen or _returnable_titles(result))}.",
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
    sentences.append(ask(Waiting.CONFIRM_RETURN, CONFIRM_QUESTION))
    return said(*sentences)


def _which_item_reply(result: dict, returnable: list[str]) -> Said:
    titles = ", ".join(returnable[:-1]) + " or " + returnable[-1]
    return said(
        f"Order {result.get('order_id')} can be returned. {result.get('reason', '')} "
        f"You can return {titles}.",
        ask(Waiting.WHICH_ITEM, ASK_WHICH_ITEM),
    )


def _eligibility_check_reply(reading: Reading, result: dict) -> Said:
    """The check's result, for the books named since the return was asked for; which of them, when the
    customer asked to return one of several."""
    units = reading.units[reading.start or 0 :]
    returnable = _returnable_titles(result)
    chosen = named_titles(units, returnable)
    asked_for_one = any(ONE_OF_RE.search(plain(unit)) for unit in units)
    if result.get("eligible") and not chosen and len(returnable) > 1 and asked_for_one:
        return _which_item_reply(result, returnable)
    return _eligibility_reply(result, chosen)


def _return_started_reply(_reading: Reading, result: dict) -> str:
    return " ".join(
        [
            f"Your return has started. Your RMA number is {result.get('rma_number')}, for "
            f"{joined(result.get('items', []))} from order {result.get('order_id')}.",
            result.get("next_steps", ""),
            _refund_sentence(result.get("refund_method"), result.get("refund_timeline_business_days")),
        ]
    )


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
    return RETURN_REASON_NOT_GIVEN


def _answer_confirmation(reading: Reading) -> Step | None:
    """The answer to the return summary: start it, summarise again, decline, or None (not an answer)."""
    history, intents = reading.history, reading.intents
    checks = [(use, result) for use, result in history.calls if use.get("name") == "check_return_eligibility"]
    if not checks or checks[-1][1].get("eligible") is not True:
        return None
    check_input, result = checks[-1][0].get("input", {}), checks[-1][1]
    units, latest = history.units, plain(history.units[-1])
    start = reading.start or 0
    returnable = _returnable_titles(result)
    summarised = named_titles(units[start:-1], returnable)
    named_now = named_titles(units[-1:], returnable)
    if not named_now and summarised and THE_OTHER_RE.search(latest):
        named_now = [title for title in returnable if title not in summarised] or None
    changed_choice = named_now and set(named_now) != set(summarised or returnable)
    if YES_RE.match(latest):
        # A different choice of books is not a yes to the summary just given: summarise again.
        if changed_choice:
            return _eligibility_reply(result, named_now)
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
        return _eligibility_reply(result, named_now)  # "no, just the Goldfinch": a new summary, not a no
    if NO_RE.match(latest) and intents[-1].kind not in (
        *reading.tasks,
        "policy",
        "info",
        "no_number",
        "person",
    ):
        return DECLINED_REPLY
    return None


def _answer_which_item(reading: Reading) -> Step | None:
    """The answer to "which would you like to return?": a summary of the titles named, or None."""
    history = reading.history
    checks = [result for use, result in history.calls if use.get("name") == "check_return_eligibility"]
    if not checks or checks[-1].get("eligible") is not True:
        return None
    returnable = _returnable_titles(checks[-1])
    latest = plain(history.units[-1])
    named = named_titles(history.units[-1:], returnable) or (returnable if BOTH_RE.search(latest) else None)
    return _eligibility_reply(checks[-1], named) if named else None


# --- The capability ---


def _asks_to_return(message: Message) -> Intent | None:
    """A return asked for; a question about returning in general is the returns policy's."""
    text = message.text
    if not (RETURN_RE.search(text) or (message.personal and PROBLEM_RE.search(text))):
        return None
    wants = (want := WANT_RE.search(text)) and not re.fullmatch(r"please", want.group())
    if (POLICY_WORD_RE.search(text) or HYPOTHETICAL_RE.search(text)) and not (wants or message.order_id):
        return Intent("policy", "returns_overview")  # "refund policy pls", "if I don't like it…"
    # "Can I return a book?" is a policy question; "I want to return my book" (or "send it back") is a
    # return.
    if message.personal or wants or SPECIFIC_RE.search(text) or not GENERAL_Q_RE.search(text):
        return Intent("return")
    return Intent("policy", "returns_overview")


CAPABILITY = Capability(
    name="returns",
    scope="returns",
    route="return",
    old_design=True,
    triggers=(Trigger(110, _asks_to_return, task="return", over=frozenset({"order_status"})),),
    tools=(
        Tool(
            name="check_return_eligibility",
            description=(
                "Whether an order can be returned today, item by item, with the reason and the policy "
                "terms. Must pass before initiate_return for that order."
            ),
            arguments=OrderArguments,
            handler=check_return_eligibility,
            progress=(
                "Checking whether order {order} can be returned…",
                "Checking whether your order can be returned…",
            ),
        ),
        Tool(
            name="initiate_return",
            description=(
                "Start a return; gives its RMA number. Only after check_return_eligibility passed for the "
                "order and the customer said yes to the summary. Without item_titles, all returnable items."
            ),
            arguments=InitiateReturnArguments,
            handler=initiate_return,
            progress=("Starting your return for order {order}…", "Starting your return…"),
            writes=True,
        ),
    ),
    prompt=(
        "- check_return_eligibility: when the customer wants to return something; give its result and "
        "reason. Its returns stand, one our team granted as an exception too: report them, never refuse "
        "them.\n"
        "- initiate_return: as rule 2; pass item_titles (exact titles from the eligibility result) when "
        "only some items go back; then give the RMA number and next steps."
    ),
    order_tasks=(
        OrderTask(
            kind="return",
            lead="I can help with a return.",
            tool="check_return_eligibility",
            takes_order_found=False,
        ),
    ),
    answers={Waiting.CONFIRM_RETURN: _answer_confirmation, Waiting.WHICH_ITEM: _answer_which_item},
    replies={"check_return_eligibility": _eligibility_check_reply, "initiate_return": _return_started_reply},
)


# --- What the validator reads as this capability's claims ---

_I, _L, _R, _F = ReturnStatus.INITIATED, ReturnStatus.LABEL_SENT, ReturnStatus.RECEIVED, ReturnStatus.REFUNDED
# A return's status in words, and the return statuses it is true of (said in a clause about a return).
_RETURN_WORDINGS = (
    (r"\b(?:has|have|was|were|got)\s+(?:been\s+)?(?:rejected|declined|refused)", {ReturnStatus.REJECTED}),
    (r"\b(?:has|have|was|were|is)\s+(?:been\s+)?(?:cancell?ed|withdrawn)", {ReturnStatus.CANCELLED}),
    (r"\brefund\s+is\s+(?:being|now being)\s+processed", {_R}),
    (
        r"\brefund\s+(?:has been|was)\s+(?:issued|processed|sent|paid)|\b(?:has been|was|were)\s+refunded",
        {_F},
    ),
    (r"\b(?:we(?:'ve| have)?|has been|have been|was|were)\s+(?:now\s+)?received\b", {_R, _F}),
    (r"\blabel\s+(?:has been|was|is)\s+(?:already\s+)?(?:sent|emailed)", {_L, _R, _F}),
    (r"\b(?:has been|was|is)\s+(?:approved|accepted|authori[sz]ed)", {_L, _R, _F}),
    (r"\b(?:has been|was|is)\s+(?:started|opened|initiated|created|open)\b|\bhas\s+started\b", {_I, _L, _R}),
)

# Return eligibility in words, and what it claims of the order or of the item it names.
_ELIGIBILITY_WORDINGS = (
    (
        r"\bwindow\s+(?:has\s+)?(?:already\s+)?(?:closed|expired|passed|ended)|\boutside\s+the\s+return",
        WINDOW_CLOSED,
    ),
    (r"\btoo late to (?:start a )?return", WINDOW_CLOSED),
    (
        r"\b(?:can't|cannot|can not|couldn't|could not|won't be able to)\s+(?:still\s+)?be\s+returned",
        NOT_ELIGIBLE,
    ),
    (r"\b(?:can't|cannot|can not)\s+return\b", NOT_ELIGIBLE),
    (
        r"(?:\bnot|n't|\bno longer)\s+(?:(?:\w+ly|yet|currently|still|quite)\s+)?(?:eligible|returnable)",
        NOT_ELIGIBLE,
    ),
    (r"\b(?:can|could)\s+(?:still\s+)?be\s+returned", ELIGIBLE),
    (r"\b(?:you\s+)?can\s+(?:still\s+)?return\b", ELIGIBLE),
    (r"\b(?:is|are)\s+(?:still\s+)?(?:eligible|returnable)\b|\beligible\s+for\s+(?:a\s+)?return", ELIGIBLE),
    (r"\bwithin\s+the\s+(?:\d+-day\s+)?return\s+window", ELIGIBLE),
)

CAPABILITY = replace(
    CAPABILITY,
    claims=ClaimWordings(
        return_progress=tuple((pattern, frozenset(statuses)) for pattern, statuses in _RETURN_WORDINGS),
        eligibility=_ELIGIBILITY_WORDINGS,
    ),
)
