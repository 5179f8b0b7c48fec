"""Reading the conversation's tool results: what the successful ones established about each order,
and the terms (days, refund timelines and methods) a reply may state without a tool.
"""

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

from orders.models import OrderStatus
from orders.patterns import ISO_DATE_MENTION_RE
from support.assistant.claims.dates import _iso_date
from support.assistant.claims.text import (
    _REFUND_RE,
    _amount,
    _business_days,
    _compact,
    day_counts_in,
    order_number,
    sentences_of,
)
from support.llm.protocol import policy_quote

_ORDER_STATUSES = frozenset(OrderStatus.values)


@dataclass(frozen=True)
class ToolResult:
    """One tool result of the conversation, as the model read it, with the arguments of its call."""

    tool: str
    content: str
    arguments: Mapping[str, Any] = field(default_factory=dict, compare=False)


@dataclass
class OrderFacts:
    """What successful tool results said about one order (the latest where it can change)."""

    statuses: frozenset[str] | None = None  # None: no tool said
    dates: set[date] = field(default_factory=set)
    amounts: set[Decimal] = field(default_factory=set)
    currency: str | None = None  # what its amounts are in (ISO 4217), as the lookup said
    titles: set[str] = field(default_factory=set)  # casefolded
    tracking: set[str] = field(default_factory=set)
    rmas: set[str] = field(default_factory=set)
    return_statuses: dict[str, str | None] = field(default_factory=dict)  # by RMA number, the latest
    eligible: bool | None = None  # None: no eligibility check
    window_closed: bool = False  # the check said the return window has ended
    delivered_on: set[date] = field(default_factory=set)
    ordered_on: set[date] = field(default_factory=set)
    returnable: set[str] = field(default_factory=set)  # casefolded titles
    not_returnable: set[str] = field(default_factory=set)
    # An order shipped in parts: each parcel's state (shipped, or delivered) and its books (casefolded
    # titles), by its number from 1.
    parcels: dict[int, str] = field(default_factory=dict)
    parcel_items: dict[int, set[str]] = field(default_factory=dict)
    # The latest change said a change was asked of the shop that keeps the order, not made yet.
    change_asked: bool = False
    # Changes a tool made in this conversation ("cancel", "address").
    changes_made: set[str] = field(default_factory=set)
    # The sentences the tools wrote in their results about it ("tell_the_customer", a case's news, next
    # steps): the tools' own words, which claim nothing of the model's.
    tool_sentences: list[str] = field(default_factory=list)
    # Where it ships, as the tools wrote it (casefolded one-line addresses), and an address a change was
    # only asked (or checked) for.
    addresses: set[str] = field(default_factory=set)
    asked_addresses: set[str] = field(default_factory=set)
    # A tool said money was given back on it, and how much (each refund, and their sum).
    refunded: bool = False
    refund_amounts: set[Decimal] = field(default_factory=set)


@dataclass
class Knowledge:
    """Everything the conversation's tool results established, by order number."""

    orders: dict[str, OrderFacts] = field(default_factory=dict)
    policy_texts: list[str] = field(default_factory=list)
    # Words of the tools themselves (FAQ answers, the customer-facing message of a refusal): a
    # sentence quoting them claims nothing of its own.
    quotable: list[str] = field(default_factory=list)
    # A FAQ answer's first sentence as the customer reads it, under the topic's title ("Cancellation fee:
    # Cancelling an order that has not shipped yet is free."): staff's words too, matched whole.
    policy_openings: set[str] = field(default_factory=set)
    latest_order: str | None = None  # the order of the most recent successful result

    day_counts: set[int] = field(default_factory=set)  # "30-day window", "7 business days"
    refund_methods: list[str] = field(default_factory=list)  # as the tools word them
    refund_days: set[int] = field(default_factory=set)  # refund timelines, in business days

    def order(self, number: str) -> OrderFacts:
        return self.orders.setdefault(number, OrderFacts())

    def titles_owned(self) -> dict[str, str]:
        """Each title only one order of the conversation has, with that order."""
        owners: dict[str, set[str]] = {}
        for number, facts in self.orders.items():
            for title in facts.titles:
                owners.setdefault(title, set()).add(number)
        return {title: next(iter(orders)) for title, orders in owners.items() if len(orders) == 1}


def knowledge_of(results: list[ToolResult], *, instructions: str = "") -> Knowledge:
    """Order facts from the successful tool results, oldest first; unreadable results are ignored.

    `instructions` is what the model is told in its system prompt (the return policy's window,
    refund method and timeline): terms a reply may state without a tool."""
    known = Knowledge()
    day_counts, refund_days, lowered = _terms_of(instructions)
    known.day_counts |= day_counts
    known.refund_days |= refund_days
    known.refund_methods.append(lowered)
    for result in results:
        try:
            data = json.loads(result.content)
        except (TypeError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        known.day_counts |= day_counts_in(result.content)
        known.day_counts |= {int(n) for n in re.findall(r'_days"\s*:\s*(\d+)', result.content)}
        known.refund_days |= {
            int(n) for n in re.findall(r'"refund_timeline_business_days"\s*:\s*(\d+)', result.content)
        }
        if "error" in data:
            known.quotable.append(str(data.get("message", "")))
            continue
        known.refund_methods += [
            m.casefold() for m in re.findall(r'"refund_method"\s*:\s*"([^"]*)"', result.content)
        ]
        if result.tool == "lookup_policy":
            known.policy_texts.append(str(data.get("text", "")))
            known.refund_methods.append(known.policy_texts[-1].casefold())
            known.refund_days |= {
                n
                for sentence in sentences_of(known.policy_texts[-1])
                if _REFUND_RE.search(sentence)
                for n in _business_days(sentence)
            }
            known.quotable.append(known.policy_texts[-1])
            quoted = sentences_of(policy_quote(title=str(data.get("title", "")), text=known.policy_texts[-1]))
            known.policy_openings.update(quoted[:1])
            continue
        if result.tool == "list_recent_orders":
            # A signed-in customer's orders, each as its own lookup's summary would state it.
            for listed in data.get("orders") or []:
                number = order_number(str(listed.get("order_id", ""))) if isinstance(listed, dict) else None
                if number is not None:
                    summary = {**listed, "items": listed.get("titles") or []}
                    try:
                        _read_order_result(known.order(number), result.tool, summary, json.dumps(listed))
                    except (TypeError, AttributeError, ValueError):
                        continue  # an odd shape: whatever was read before it stands
            continue
        number = order_number(str(data.get("order_id", "")))
        if number is None:
            continue
        try:
            _read_order_result(known.order(number), result.tool, data, result.content)
        except (TypeError, AttributeError, ValueError):
            continue  # an odd shape: whatever was read before it stands
        known.latest_order = number
    return known


# What a result holds that the customer or the shop wrote (an address, titles, a reason): not our words.
_NOT_OURS = frozenset(
    {
        "new_address",
        "shipping_address",
        "items",
        "titles",
        "title",
        "reason",
        "details",
        "customer_name",
        "summary",
    }
)


def _sentences_in(value: Any) -> list[str]:
    """Every string of a result that reads as a sentence (four words or more), however deep, but what the
    customer or the shop wrote."""
    if isinstance(value, str):
        return [value] if len(value.split()) >= 4 else []
    if isinstance(value, dict):
        return [
            sentence
            for key, inner in value.items()
            if key not in _NOT_OURS
            for sentence in _sentences_in(inner)
        ]
    if isinstance(value, list):
        return [sentence for inner in value for sentence in _sentences_in(inner)]
    return []


@functools.lru_cache(maxsize=4)
def _terms_of(instructions: str) -> tuple[frozenset[int], frozenset[int], str]:
    """Day counts, refund timelines and the lowered text of the system prompt: read once per prompt
    (it changes only when staff edit the policy or the FAQ topics), not once per reply."""
    refund_days = {
        n
        for sentence in sentences_of(instructions)
        if _REFUND_RE.search(sentence)
        for n in _business_days(sentence)
    }
    return frozenset(day_counts_in(instructions)), frozenset(refund_days), instructions.casefold()


# "2 copies of Dune": a parcel's item as the lookup writes it, its title after the count.
_COPIES_RE = re.compile(r"^\d+ copies of ")

# The tools whose results give an order's status now: as "order_status" (the checks) or "status".
_CHECKS = frozenset({"check_return_eligibility", "check_cancellation", "check_address_change"})
_STATUS_TOOLS = _CHECKS | {"lookup_order", "list_recent_orders", "cancel_order", "change_shipping_address"}


def _read_refunds_result(facts: OrderFacts, data: dict) -> None:
    """The refunds on an order (the refunds capability): each one's amount and books, the whole
    refunded and the discount, in its currency (not the order's total: no refund of it is said by this
    result). Its returns are read as every tool's are."""
    if isinstance(data.get("currency"), str):
        facts.currency = data["currency"]
    # The discount is an amount of the order too ("why was I charged less?"); which role an amount plays
    # (refund or discount) is not read here: that is layer 4 by meaning's (issue 50).
    amounts = [data.get("refunded_total"), data.get("discount_total")]
    refunded = [data.get("refunded_total")]
    for refund in data.get("refunds") or []:
        if isinstance(refund, dict):
            facts.refunded = True
            amounts.append(refund.get("amount"))
            refunded.append(refund.get("amount"))
            facts.titles |= {_COPIES_RE.sub("", str(title)).casefold() for title in refund.get("items") or []}
    facts.amounts |= {amount for sent in amounts if (amount := _amount(sent)) is not None}
    if facts.refunded:
        facts.refund_amounts |= {amount for sent in refunded if (amount := _amount(sent)) is not None}


def _read_order_result(facts: OrderFacts, tool: str, data: dict, raw: str) -> None:
    facts.tool_sentences += _sentences_in(data)
    facts.dates |= {
        day
        for found in ISO_DATE_MENTION_RE.finditer(raw)
        if (day := _iso_date(found.group(0))) is not None  # the whole match, whatever its groups
    }
    for role in ("delivered_on", "ordered_on"):
        if (day := _iso_date(data.get(role))) is not None:
            getattr(facts, role).add(day)
    status = data.get("order_status" if tool in _CHECKS else "status")
    if tool in _STATUS_TOOLS and status in _ORDER_STATUSES:
        facts.statuses = frozenset({status})
        facts.change_asked = bool(
            data.get("cancellation_asked")
            or data.get("address_change_asked")
            or data.get("store_is_changing")
        )
        if tool == "cancel_order" and not facts.change_asked:
            facts.changes_made.add("cancel")
        if tool == "change_shipping_address" and not facts.change_asked:
            facts.changes_made.add("address")
    if isinstance(data.get("shipping_address"), str):
        facts.addresses.add(data["shipping_address"].casefold())
    if isinstance(data.get("new_address"), str):
        facts.asked_addresses.add(data["new_address"].casefold())
    items = data.get("items") or []
    for item in items:
        title = item.get("title") if isinstance(item, dict) else item
        if isinstance(title, str):
            facts.titles.add(title.casefold())
        if isinstance(item, dict) and tool == "lookup_order":
            price, quantity = _amount(item.get("unit_price")), item.get("quantity") or 1
            if price is not None:
                facts.amounts |= {price, price * int(quantity)}
    for record in data.get("returns") or []:  # lookup_order's and check_return_eligibility's
        facts.rmas.add(_compact(str(record.get("rma_number", ""))))
        facts.return_statuses[_compact(str(record.get("rma_number", "")))] = record.get("status")
        facts.titles |= {str(title).casefold() for title in record.get("items") or []}
    if tool == "lookup_order":
        if (total := _amount(data.get("total"))) is not None:
            facts.amounts.add(total)
        if isinstance(data.get("currency"), str):
            facts.currency = data["currency"]
        if data.get("tracking_number"):
            facts.tracking.add(_compact(str(data["tracking_number"])))
        for refund in data.get("refunds") or []:  # what the shop gave back
            if isinstance(refund, dict) and (amount := _amount(refund.get("amount"))) is not None:
                facts.amounts.add(amount)
                facts.refund_amounts.add(amount)
                facts.refunded = True
        for number, shipment in enumerate(data.get("shipments") or [], start=1):  # an order shipped in parts
            if not isinstance(shipment, dict):
                continue
            if shipment.get("tracking_number"):
                facts.tracking.add(_compact(str(shipment["tracking_number"])))
            if (day := _iso_date(shipment.get("delivered_on"))) is not None:
                facts.delivered_on.add(day)
            facts.parcels[number] = "delivered" if day is not None else "shipped"
            facts.parcel_items[number] = {
                _COPIES_RE.sub("", str(title)).casefold() for title in shipment.get("items") or []
            }
    elif tool == "lookup_refunds":
        _read_refunds_result(facts, data)
    elif tool == "check_return_eligibility":
        facts.eligible = bool(data.get("eligible"))
        facts.window_closed = not facts.eligible and bool(data.get("last_day_to_start_return"))
        facts.returnable = {
            i["title"].casefold() for i in items if isinstance(i, dict) and i.get("returnable")
        }
        facts.not_returnable = {
            i["title"].casefold() for i in items if isinstance(i, dict) and not i.get("returnable")
        }
    elif tool == "initiate_return":
        facts.rmas.add(_compact(str(data.get("rma_number", ""))))
        facts.return_statuses[_compact(str(data.get("rma_number", "")))] = data.get("status")
