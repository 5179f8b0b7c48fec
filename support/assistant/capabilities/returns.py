"""Returns: whether an order can go back, item by item, and starting the return after a yes."""

from dataclasses import replace

from orders.models import ReturnRecord, ReturnStatus
from orders.selectors import order_return_eligibility
from orders.services import ReturnNotAllowed, ReturnRefusal
from store.clock import store_today
from support.assistant.capabilities.base import (
    ELIGIBLE,
    MAX_REASON_LENGTH,
    NOT_ELIGIBLE,
    WINDOW_CLOSED,
    Capability,
    ClaimWordings,
    OrderArguments,
    Text,
    Titles,
    Tool,
    ToolContext,
    ToolOutcome,
    error,
    items_titled,
    returns_of,
    titles_joined,
    verified_order,
)
from support.conversations.selectors import conversation_return_get_open
from support.conversations.services import conversation_return_create
from support.llm.protocol import ToolError

RETURN_NEXT_STEPS = (
    "We will email a prepaid return label to the address on the order. Pack the items in their original "
    "packaging, attach the label and drop the parcel off."
)


class InitiateReturnArguments(OrderArguments):
    reason: Text(MAX_REASON_LENGTH, "Why, in the customer's words (short).")
    item_titles: Titles("Exact titles from check_return_eligibility.") | None = None


def check_return_eligibility(args: OrderArguments, context: ToolContext) -> ToolOutcome:
    order = verified_order(args, context)
    if isinstance(order, ToolOutcome):
        return order
    eligibility = order_return_eligibility(order=order, today=store_today())
    if eligibility.eligible:
        context.eligibility_verified.add(order.number)
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
    if order.number not in context.eligibility_verified:
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


CAPABILITY = Capability(
    name="returns",
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
