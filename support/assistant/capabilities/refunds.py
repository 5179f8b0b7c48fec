"""Refunds: the money the shop gave back on an order, as it recorded each refund (its amount in the
currency the customer paid in, its day, the books it was for, its note), how much of the order that is,
and the returns whose refund is still to come; and what else made the customer pay less: the shop's
discounts, or a payment released before it was taken (voided: not charged). "Was I refunded?", "why
was I charged less?" are answered from the order's record, never from the return policy."""

import re
from decimal import Decimal, InvalidOperation
from typing import Any

from orders.models import Order, ReturnStatus, store_currency
from orders.money import money_text
from support.assistant.capabilities.arguments import OrderArguments
from support.assistant.capabilities.base import (
    Capability,
    OrderTask,
    Tool,
    ToolContext,
    ToolOutcome,
    verified_order,
)
from support.assistant.capabilities.steps import joined

# Returns whose books the store has or will have and whose money has not gone back yet.
_REFUND_TO_COME = frozenset({ReturnStatus.INITIATED, ReturnStatus.LABEL_SENT, ReturnStatus.RECEIVED})


def copies(title: str, quantity: int) -> str:
    return title if quantity == 1 else f"{quantity} copies of {title}"


def refunds_of(order: Order) -> list[dict[str, Any]]:
    """The money the shop gave back on the order, as it recorded it, oldest first."""
    return [
        {
            "amount": str(refund.amount),
            "refunded_on": refund.refunded_on.isoformat() if refund.refunded_on else None,
            "items": [copies(line.item.title, line.quantity) for line in refund.lines.all()],
        }
        for refund in order.refunds.prefetch_related("lines__item")
    ]


def money_of(amount: object, currency: object) -> str:
    try:
        return money_text(amount=Decimal(str(amount)), currency=str(currency or store_currency()))
    except (InvalidOperation, ValueError):
        return str(amount)


def _amount(value: object) -> Decimal:
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return Decimal("0")


def refund_sentence(refund: dict, currency: str | None) -> str:
    """ "The store refunded $209.00 on 2016-06-20, for IPod Nano." """
    said = f"The store refunded {money_of(refund.get('amount'), currency)}"
    if refund.get("refunded_on"):
        said += f" on {refund['refunded_on']}"
    if refund.get("items"):
        said += f", for {joined(refund['items'])}"
    return said + "."


def lookup_refunds(args: OrderArguments, context: ToolContext) -> ToolOutcome:
    order = verified_order(args, context)
    if isinstance(order, ToolOutcome):
        return order
    refunds = refunds_of(order)
    refunded = sum((Decimal(refund["amount"]) for refund in refunds), Decimal("0.00"))
    returns = order.returns.filter(status__in=_REFUND_TO_COME | {ReturnStatus.REFUNDED}).order_by(
        "created_at"
    )
    to_come = [{"rma_number": record.rma_number, "status": record.status} for record in returns]
    result = {
        "order_id": order.number,
        "currency": order.currency,
        "order_total": str(order.total),
        "refunds": refunds,
        "refunded_total": str(refunded),
        # Returns refunded (a refund of ours, which a shop's record may not list) or to be.
        "returns": to_come,
        "discount_total": str(order.discount_total),
        "payment_voided": order.payment_voided,
    }
    return ToolOutcome({**result, "tell_the_customer": _told(result)})


def _told(result: dict) -> str:
    """The refunds in words, from the result alone (the built-in model's reply, and what the model may
    quote): each refund, the whole when more than one, and each return whose refund is to come."""
    currency = result.get("currency")
    refunds = result.get("refunds") or []
    sentences = [refund_sentence(refund, currency) for refund in refunds]
    if len(refunds) > 1:
        sentences.append(f"In all, {money_of(result.get('refunded_total'), currency)} was refunded.")
    returns = [record for record in result.get("returns") or [] if isinstance(record, dict)]
    refunded = [record for record in returns if record.get("status") == ReturnStatus.REFUNDED]
    if result.get("payment_voided"):
        # Nothing was taken, so nothing came back: said before any refund (a voided order has none).
        sentences.insert(
            0,
            f"The payment for order {result.get('order_id')} was voided: it was never taken, so you were "
            "not charged.",
        )
    elif not refunds and not refunded:
        sentences = [f"Order {result.get('order_id')} has no refund on record yet."]
    if _amount(result.get("discount_total")):
        sentences.append(
            f"The store took {money_of(result.get('discount_total'), currency)} off the price of order "
            f"{result.get('order_id')} as a discount."
        )
    for record in returns:
        if record in refunded:
            sentences.append(f"Return {record.get('rma_number')} for this order is refunded.")
            continue
        status = str(record.get("status", "")).replace("_", " ")
        sentences.append(
            f"Return {record.get('rma_number')} is {status}: its refund is made once the store has "
            "received and checked the books."
        )
    return " ".join(sentences)


CAPABILITY = Capability(
    name="refunds",
    scope="an order's refunds",
    route="refund",
    tools=(
        Tool(
            name="lookup_refunds",
            description=(
                "The money the store gave back on an order (each refund's amount in the order's "
                "currency, day and books), the returns whose refund is still to come, its discounts and "
                "a payment voided (not charged). For 'was I refunded?', 'how much did I get back?', 'why "
                "was I charged less?', 'was I charged?'. Say only what tell_the_customer says."
            ),
            arguments=OrderArguments,
            handler=lookup_refunds,
            progress=("Looking up the refunds on order {order}…", "Looking up your refunds…"),
        ),
    ),
    prompt=(
        "- lookup_refunds: for a refund already made or awaited on an order (not how refunds work: "
        "that is the FAQ's); say tell_the_customer."
    ),
    order_tasks=(
        OrderTask(
            kind="refund",
            # Money already given back on an order: "was I refunded?", "did I get my money back for …",
            # "how much did I get back?". Where a refund is ("where is my refund?", "has my refund gone
            # through?") is the order's status, which tells its returns and refunds.
            asks=re.compile(
                r"\b(?:refunded|reimbursed|credited)\b"
                r"|\b(?:did|have|has|was|were) (?:i|you|we) (?:\w+ ){0,3}"
                r"(?:refund|money back|get (?:\w+ )?back|paid back)\b"
                r"|\bhow much (?:\w+ ){0,4}(?:back|refund|refunded)\b"
                # What else made them pay less: "why was I charged less?", "was I charged?", "the
                # discount on my order", "the payment was voided".
                r"|\b(?:charged|paid) (?:\w+ ){0,2}less\b|\b(?:was|were|am|have) (?:i|we) (?:been )?charged\b"
                r"|\b(?:my|the|that|this) discount\b|\bdiscount (?:on|for) (?:my|the|this|order)\b"
                r"|\bvoid(?:ed)?\b"
            ),
            # How refunds work is the FAQ's: "how long do refunds take?", "will I be refunded if …".
            # A refund asked for ("I want to be refunded") is a return's or a problem's, not a lookup.
            unless=re.compile(
                r"\b(?:policy|how long (?:do|does|will)|how do (?:refunds|you refund)|if i\b|would i\b|"
                r"can i (?:get|have)|(?:want|like|need|wish|expect) (?:a|my|to be|to get)\b)"
            ),
            lead="I can look up the refunds on that order.",
            tool="lookup_refunds",
            read_first=True,
        ),
    ),
    replies={"lookup_refunds": lambda _reading, result: result["tell_the_customer"]},
)
