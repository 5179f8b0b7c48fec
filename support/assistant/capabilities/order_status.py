"""Order status: one order by its number (or a return's RMA number) and the email on it, or a signed-in
customer's recent orders."""

import re
from dataclasses import dataclass, replace
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, WithJsonSchema

from orders.models import DeliveryProblem, Order, OrderChangeKind, OrderStatus
from orders.numbers import ORDER_MENTION
from orders.patterns import RMA_NUMBER_PATTERN
from orders.selectors import (
    ChangeCode,
    order_change_check,
    order_get_for_customer_by_rma,
    order_list_for_customer,
)
from support.assistant.capabilities.arguments import (
    EmailArgument,
    OrderNumberArgument,
    ToolArguments,
    clean_text,
    shaped,
)
from support.assistant.capabilities.base import (
    Capability,
    ClaimWordings,
    OrderTask,
    Tool,
    ToolContext,
    ToolOutcome,
    Trigger,
    current_address_line,
    error,
    order_checked,
    returns_of,
    verified_order,
)
from support.assistant.capabilities.delivery_problems import problem_report
from support.assistant.capabilities.refunds import copies, money_of, refund_sentence, refunds_of
from support.assistant.capabilities.steps import joined, returns_sentences
from support.assistant.understanding.customer_words import latest_found, order_id_in, plain, rma_in
from support.assistant.understanding.history import Intent, ToolCall
from support.assistant.understanding.message import Message
from support.assistant.understanding.step import Reading, Step, TaskAt
from support.assistant.understanding.vocabulary import (
    BOOK_RELEASE_RE,
    GOT_IT_RE,
    NOT_RECEIVED_RE,
    NOT_THE_PARCEL_RE,
    RETURN_STATUS_RE,
    SHIPPING_RE,
    STATUS_RE,
    WANTS_RETURN_RE,
)
from support.assistant.understanding.wording import (
    ASK_EMAIL,
    WHICH_ORDER,
    Said,
    Waiting,
    ask,
    ask_order_number,
    said,
)
from support.llm.protocol import ToolError

_RMA_RE = re.compile(RMA_NUMBER_PATTERN)


def _rma(value: str) -> str | None:
    value = value.upper()
    return value if _RMA_RE.fullmatch(value) else None


RmaNumber = Annotated[
    str,
    Field(min_length=1, max_length=12),
    BeforeValidator(clean_text),  # after Field: cleaned, then measured as a string
    shaped(_rma, "RMA-AB12CD34"),
    WithJsonSchema({"type": "string", "pattern": RMA_NUMBER_PATTERN}),
]


class LookupOrderArguments(ToolArguments):
    one_of_required = ("order_id", "rma_number")

    order_id: OrderNumberArgument | None = None
    rma_number: RmaNumber | None = None
    customer_email: EmailArgument


class NoArguments(ToolArguments):
    pass


def order_summary(order: Order) -> dict[str, Any]:
    return {
        "order_id": order.number,
        "customer_name": order.customer_name,
        "status": order.status,
        "ordered_on": order.ordered_on.isoformat(),
        "delivered_on": order.delivered_on.isoformat() if order.delivered_on else None,
        "tracking_number": order.tracking_number or None,
        "items": [
            {
                "title": item.title,
                "author": item.author,
                "quantity": item.quantity,
                "unit_price": str(item.unit_price),
                "category": item.category,
                **({} if item.requires_shipping else {"digital": True}),  # never in a parcel
            }
            for item in order.items.all()
        ],
        "total": str(order.total),
        "currency": order.currency,
        **({"payment_voided": True} if order.payment_voided else {}),  # authorised, never taken
        "shipping_address": current_address_line(order),
        "returns": returns_of(order),
        **_nothing_ships(order),
        **_shipments_of(order),
        **_refunds_of(order),
        **_asked_of_the_store(order),
    }


NOTHING_SHIPS = "Nothing in this order is shipped: its items are digital (a download, an ebook, a ticket)."


def _nothing_ships(order: Order) -> dict[str, Any]:
    """An order of digital items only: told as complete, never as shipped or in parcels."""
    items = list(order.items.all())
    return {"delivery": NOTHING_SHIPS} if items and not any(item.requires_shipping for item in items) else {}


def _asked_of_the_store(order: Order) -> dict[str, Any]:
    """A change the shop that keeps the order is making at Bookly's request, in the store's words (not
    made yet: the order is told as it is until then)."""
    check = order_change_check(order=order, kind=OrderChangeKind.CANCELLED)
    return {"store_is_changing": check.reason} if check.code == ChangeCode.AWAITING_SHOP else {}


def _refunds_of(order: Order) -> dict[str, Any]:
    """The money the shop gave back on the order, as it recorded it. Nothing when it gave none."""
    refunds = refunds_of(order)
    return {"refunds": refunds} if refunds else {}


def _shipments_of(order: Order) -> dict[str, Any]:
    """An order the shop ships in parts: each parcel (what it holds, carrier, tracking, dates) and what
    is still to come (neither sent nor refunded). Nothing for an order the shop sends no parcels of."""
    shipments = list(order.shipments.prefetch_related("lines__item"))
    if not shipments:
        return {}
    sent: dict[int, int] = {}
    parcels = []
    for shipment in shipments:
        for line in shipment.lines.all():
            sent[line.item_id] = sent.get(line.item_id, 0) + line.quantity
        parcels.append(
            {
                "items": [copies(line.item.title, line.quantity) for line in shipment.lines.all()],
                "carrier": shipment.carrier or None,
                "tracking_number": shipment.tracking_number or None,
                "tracking_url": shipment.tracking_url or None,
                "shipped_on": shipment.shipped_on.isoformat() if shipment.shipped_on else None,
                "delivered_on": shipment.delivered_on.isoformat() if shipment.delivered_on else None,
            }
        )
    # A copy the shop refunded without sending it is not to come (out of print, out of stock).
    for refund in order.refunds.prefetch_related("lines"):
        for refunded in refund.lines.all():
            sent[refunded.item_id] = sent.get(refunded.item_id, 0) + refunded.quantity
    waiting = [
        copies(item.title, item.quantity - sent.get(item.pk, 0))
        for item in order.items.all()
        if item.requires_shipping and item.quantity > sent.get(item.pk, 0)
    ]
    return {"shipments": parcels, "not_shipped": waiting if order.status != OrderStatus.CANCELLED else []}


_RETURN_NOT_FOUND = (
    ToolError.ORDER_NOT_FOUND,
    "No return matches that RMA number together with that email address. Ask the customer to check "
    "both, or for the order number.",
)


@dataclass(frozen=True)
class _OrderNamed:
    """The order lookup_order was given the number of (its arguments name it or a return)."""

    order_id: str
    customer_email: str


def lookup_order(args: LookupOrderArguments, context: ToolContext) -> ToolOutcome:
    if args.order_id is None:
        # A return's status by its RMA number (given when the order's is not): found with the email on
        # its order.
        rma_number = args.rma_number
        assert rma_number is not None  # one_of_required
        order = order_checked(
            context,
            number=rma_number,
            email=args.customer_email,
            find=lambda: order_get_for_customer_by_rma(rma_number=rma_number, email=args.customer_email),
            not_found=_RETURN_NOT_FOUND,
        )
        return order if isinstance(order, ToolOutcome) else ToolOutcome(order_summary(order))
    order = verified_order(_OrderNamed(args.order_id, args.customer_email), context)
    if isinstance(order, ToolOutcome):
        return order
    return ToolOutcome(order_summary(order))


def list_recent_orders(args: NoArguments, context: ToolContext) -> ToolOutcome:
    if not context.signed_in_email:
        return error(
            ToolError.NOT_SIGNED_IN,
            "Only a customer the store signed in has their orders listed. Ask for the order number and "
            "the email on the order.",
        )
    orders = list(order_list_for_customer(email=context.signed_in_email))
    for order in orders:
        context.orders_found[order.pk] = order.customer_email
    return ToolOutcome(
        {
            "customer_email": context.signed_in_email,
            "orders": [
                {
                    "order_id": order.number,
                    "status": order.status,
                    "ordered_on": order.ordered_on.isoformat(),
                    "delivered_on": order.delivered_on.isoformat() if order.delivered_on else None,
                    "titles": [item.title for item in order.items.all()],
                }
                for order in orders
            ],
        }
    )


# --- The built-in model's steps ---


# What an order came to: "how much did I pay for order #1029?", "what was my order total?".
_TOTAL_ASKED_RE = re.compile(
    r"\bhow much (?:did|do|have|had) (?:i|we) (?:\w+ ){0,2}(?:pay|paid|spend|spent)\b"
    r"|\bhow much (?:was|is|were|did) (?:my|the|this|that|our) (?:\w+ ){0,2}(?:order|books?|purchase)"
    r"(?: cost| come to)?\b"
    r"|\b(?:order|my) total\b|\btotal (?:of|for|on) (?:my|the|this|that|our|order)\b"
    r"|\bwhat did (?:i|we) pay\b|\bhow much (?:was|were|am|have) (?:i|we) (?:been )?(?:charged|billed)\b"
)


def _total_reply(result: dict) -> str:
    """What the order came to, in the currency the customer paid in, and what came back of it."""
    sentences = [
        f"Order {result.get('order_id')} came to {money_of(result.get('total'), result.get('currency'))}."
    ]
    if result.get("payment_voided"):
        sentences.append("Its payment was voided: it was never taken, so you were not charged.")
    sentences += [refund_sentence(refund, result.get("currency")) for refund in result.get("refunds") or []]
    return " ".join(sentences)


def _order_reply(reading: Reading, result: dict) -> str:
    if reading.start is not None and reading.intents[reading.start].kind == "total" and result.get("total"):
        return _total_reply(result)
    if result.get("delivery") == NOTHING_SHIPS and result.get("status") in ("shipped", "delivered"):
        # Digital items only, which the shop marks sent when they are available: complete, no parcel.
        sentences = [f"Order {result.get('order_id')} is complete. {NOTHING_SHIPS}"]
        items = [copies(item["title"], item.get("quantity", 1)) for item in result.get("items", [])]
        if items:
            sentences.append(f"It contains {joined(items)}.")
        sentences += returns_sentences(result.get("returns", []))
        sentences += [
            refund_sentence(refund, result.get("currency")) for refund in result.get("refunds") or []
        ]
        return " ".join(sentences)
    # The status word exactly as the result gives it (processing, shipped, delivered, cancelled).
    sentences = [f"The status of order {result.get('order_id')} is {result.get('status')}."]
    if result.get("ordered_on"):
        delivered = f" and delivered on {result['delivered_on']}" if result.get("delivered_on") else ""
        sentences.append(f"It was ordered on {result['ordered_on']}{delivered}.")
    parcels = [parcel for parcel in result.get("shipments") or [] if isinstance(parcel, dict)]
    if len(parcels) > 1 or result.get("not_shipped"):
        # Shipped in parts: what each parcel holds and where it is, then what has not left yet.
        sentences += [_parcel_sentence(number, parcel) for number, parcel in enumerate(parcels, start=1)]
        if result.get("not_shipped"):
            sentences.append(f"Still to come in another parcel: {joined(result['not_shipped'])}.")
        sentences += returns_sentences(result.get("returns", []))
        sentences += [
            refund_sentence(refund, result.get("currency")) for refund in result.get("refunds") or []
        ]
        return " ".join(sentences)
    if result.get("tracking_number"):
        sentences.append(f"The tracking number is {result['tracking_number']}.")
    items = [copies(item["title"], item.get("quantity", 1)) for item in result.get("items", [])]
    if items:
        sentences.append(f"It contains {joined(items)}.")
    if result.get("shipping_address") and result.get("status") == "processing":
        # While it can still be sent elsewhere; once shipped, the tracking number says where it is.
        sentences.append(f"It is going to {result['shipping_address']}.")
    if result.get("store_is_changing"):
        sentences.append(result["store_is_changing"])
    sentences += returns_sentences(result.get("returns", []))
    sentences += [refund_sentence(refund, result.get("currency")) for refund in result.get("refunds") or []]
    return " ".join(sentences)


def _parcel_sentence(number: int, parcel: dict) -> str:
    """ "Parcel 1 (Dune) was shipped on 2026-04-02 with UPS, tracking number 1Z…, and delivered on …" """
    said = f"Parcel {number} ({joined(parcel.get('items') or [])}) was shipped"
    if parcel.get("shipped_on"):
        said += f" on {parcel['shipped_on']}"
    if parcel.get("carrier"):
        said += f" with {parcel['carrier']}"
    if parcel.get("tracking_number"):
        said += f", tracking number {parcel['tracking_number']}"
    if parcel.get("delivered_on"):
        said += f", and delivered on {parcel['delivered_on']}"
    return said + "."


def _recent_orders_reply(_reading: Reading, result: dict) -> Said:
    """The signed-in customer's recent orders, one sentence each, then which one they mean."""
    orders = [order for order in result.get("orders", []) if isinstance(order, dict)]
    if not orders:
        return said("I found no recent orders for you.", ask(Waiting.ORDER_NUMBER, ask_order_number()))
    lines = [
        f"Order {order.get('order_id')}, ordered on {order.get('ordered_on')}, is "
        f"{str(order.get('status', '')).replace('_', ' ')}: {joined(order.get('titles') or [])}."
        for order in orders
    ]
    return said("Here are your recent orders.", *lines, ask(Waiting.WHICH_ORDER, WHICH_ORDER))


def _return_by_rma(task: TaskAt) -> Step | None:
    """A return's status by its RMA number, given without an order number: found with the email on its
    order."""
    rma_number = latest_found(rma_in, task.reading.units[task.start :]) if not task.order_id else None
    if not rma_number:
        return None
    if not task.email:
        return said("I can check that return for you.", ask(Waiting.EMAIL, ASK_EMAIL))
    return ToolCall("lookup_order", {"rma_number": rma_number, "customer_email": task.email})


def _delivered_not_received(reading: Reading) -> Step | None:
    """A parcel gone missing, reported: the customer says it never came right after the last lookup said
    the order was delivered; else None."""
    history = reading.history
    if reading.intents[-1].kind not in ("status", "unknown", "order_unclear"):
        return None
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
    looked_up = {key: given.get(key, "") for key in ("order_id", "customer_email")}
    return problem_report(
        history.units, len(history.units) - 1, looked_up, problem=DeliveryProblem.NOT_ARRIVED.value
    )


# --- The capability ---


def _asks_a_returns_status(message: Message) -> Intent | None:
    """A return already started, looked up with its order."""
    return Intent("status") if RETURN_STATUS_RE.search(message.text) else None


def _asks_an_orders_status(message: Message) -> Intent | None:
    """Where an order is (not shipping in general, nor when a book comes out)."""
    if (
        STATUS_RE.search(message.text)
        and (message.personal or not SHIPPING_RE.search(message.text))
        and not (BOOK_RELEASE_RE.search(message.text) and not message.order_id)
    ):
        return Intent("status")
    return None


CAPABILITY = Capability(
    name="order_status",
    scope="order status",
    route="order_status",
    old_design=True,
    triggers=(
        Trigger(100, _asks_a_returns_status, task="status", over=frozenset({"returns"})),
        Trigger(130, _asks_an_orders_status, task="status"),
    ),
    tools=(
        Tool(
            name="lookup_order",
            description=(
                "An order's status, dates, tracking, items, returns, and its parcels if shipped in parts "
                "(say 'Parcel N' of each). Needs the order number (or a return's rma_number) and the "
                "email on the order, from the customer. order_not_found if either is wrong, never saying "
                "which."
            ),
            arguments=LookupOrderArguments,
            handler=lookup_order,
            progress=("Looking up order {order}…", "Looking up your order…"),
        ),
        Tool(
            name="list_recent_orders",
            description=(
                "The signed-in customer's recent orders, newest first: number, status, dates, titles. Only "
                "for a customer the store signed in (their reminder says so); not_signed_in otherwise."
            ),
            arguments=NoArguments,
            handler=list_recent_orders,
            progress=("Looking up your recent orders…", "Looking up your recent orders…"),
        ),
    ),
    prompt=(
        "- lookup_order: on order_not_found, say no order matches that number and email together and ask "
        "the customer to check both; you cannot know which one is wrong. On too_many_failed_checks, say "
        "you cannot check more now and offer a person; ask for no more guesses. On which_shop (any "
        "order tool), ask which of the shops named it is from, then call again.\n"
        "- No tool lists a customer's orders or finds one by email alone, on purpose: an email address "
        "proves nothing. Without an order number, say it is in the order confirmation "
        "email{order_number_starts}. The exception: a customer the store signed in (their turns say so); "
        "list_recent_orders lists theirs."
    ),
    order_tasks=(
        OrderTask(
            kind="status",
            lead="I can check that for you.",
            tool="lookup_order",
            first=_return_by_rma,
            takes_order_found=False,
        ),
        OrderTask(
            # Read before the refusal of payments questions: what an order came to is its own record.
            kind="total",
            lead="I can look up what that order came to.",
            tool="lookup_order",
            asks=_TOTAL_ASKED_RE,
            # A total said to be wrong is staff's to put right ("the total on my invoice is wrong").
            # A part of it (shipping, taxes) or why it differs is not what the order came to.
            unless=re.compile(
                r"\b(?:wrong|incorrect|mistake|error|invoice|overcharg\w*|double|twice|too much|refund\w*|"
                r"shipping|postage|delivery fee|tax|taxes|vat|duty|duties|why|different|differ)\b"
            ),
            read_first=True,
        ),
    ),
    replies={"lookup_order": _order_reply, "list_recent_orders": _recent_orders_reply},
    after=_delivered_not_received,
)


# --- What the validator reads as this capability's claims ---

_P, _S, _D, _C = OrderStatus.PROCESSING, OrderStatus.SHIPPED, OrderStatus.DELIVERED, OrderStatus.CANCELLED
# A status wording and the order statuses it is true of. Longer, negated wordings come first: the
# first that matches a stretch of text is the claim.
_NOT = r"(?:\bnot|n't|\bnever|\bno longer)"
# What a bare "shipped" or "arrived" is said of.
_SUBJECT = rf"(?:\b(?:it|they|order|parcel|package|books?|items?)|{ORDER_MENTION})"
_STATUS_WORDINGS = (
    (rf"{_NOT}\s+(?:yet\s+)?(?:been\s+)?(?:shipped|dispatched|sent out)", {_P}),
    (r"\b(?:hasn't|has not|haven't|have not)\s+(?:yet\s+)?(?:shipped|left)", {_P}),
    (rf"{_NOT}\s+(?:yet\s+)?(?:been\s+)?delivered", {_P, _S}),
    (
        r"\b(?:hasn't|has not|haven't|have not|didn't|did not|never)\s+(?:yet\s+)?(?:been\s+)?"
        r"(?:arrived|arrive|come(?!\s+up)|got|gotten|get|received|receive|reached you)",
        {_P, _S},
    ),
    (
        rf"{_NOT}\s+(?:yet\s+|anymore\s+|any longer\s+)?"
        r"(?:in transit|on (?:its|their|the) way|out for delivery)",
        {_P, _D, _C},
    ),
    (r"\b(?:hasn't|has not|haven't|have not)\s+(?:yet\s+)?gone\s+out", {_P}),
    (r"\b(?:still\s+)?being\s+(?:processed|prepared|packed)", {_P}),
    (
        r"\b(?:was|were|got|has been|have been)\s+dropped\s+off|\breached\s+you\b",
        {_D},
    ),
    (r"\bleft\s+(?:our|the)\s+warehouse|\b(?:has|have)\s+gone\s+out", {_S, _D}),
    (_SUBJECT + r"\s+(?:is|are)\s+(?:now\s+)?in\s+the\s+mail\b", {_S}),
    (r"\b(?:is|are|still)\s+(?:still\s+)?(?:processing|in processing|being processed)", {_P}),
    (
        r"(?:\b(?:was|were|has been|have been|is|got)|" + _SUBJECT + r"(?:['\u2019]s|\s+are))"
        r"\s+(?:now\s+|already\s+|successfully\s+)?(?:been\s+)?cancell?ed"
        r"|\bI(?:['\u2019]ve|\s+have)?\s+(?:now\s+|just\s+|successfully\s+)?cancell?ed",
        {_C},
    ),
    (r"\b(?:on (?:its|their|the) way|in transit|out for delivery|en route)", {_S}),
    (
        r"\b(?:has|have|was|were|has been|have been|got)\s+(?:already\s+)?(?:shipped|dispatched|sent out)",
        {_S, _D},
    ),
    (r"\bshipped on\b", {_S, _D}),
    (_SUBJECT + r"\s+(?:already\s+)?shipped\b", {_S, _D}),
    (_SUBJECT + r"\s+(?:already\s+)?arrived\b", {_D}),
    (r"\b(?:was|were|has been|have been|got|is|are)\s+(?:already\s+)?delivered", {_D}),
    (r"\bdelivered on\b", {_D}),
    (r"\b(?:has|have|had)\s+(?:already\s+)?arrived|\barrived on\b", {_D}),
    (r"\bstatus\b[^.;]{0,40}?\bis\s+(?:now\s+|currently\s+|still\s+)?[\"'\u201c]?(processing)\b", {_P}),
    (r"\bstatus\b[^.;]{0,40}?\bis\s+(?:now\s+|currently\s+|still\s+)?[\"'\u201c]?(shipped)\b", {_S}),
    (r"\bstatus\b[^.;]{0,40}?\bis\s+(?:now\s+|currently\s+|still\s+)?[\"'\u201c]?(delivered)\b", {_D}),
    (r"\bstatus\b[^.;]{0,40}?\bis\s+(?:now\s+|currently\s+|still\s+)?[\"'\u201c]?(cancell?ed)\b", {_C}),
)

CAPABILITY = replace(
    CAPABILITY,
    claims=ClaimWordings(
        statuses=tuple((pattern, frozenset(statuses)) for pattern, statuses in _STATUS_WORDINGS)
    ),
)
