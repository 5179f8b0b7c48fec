"""A Shopify order (the Admin REST API's `order` resource, as its webhooks `orders/create`,
`orders/updated` and `orders/cancelled` send it) in the shape Bookly's intake takes (orders.inbound):
each of Shopify's fields read where Shopify documents it, nothing made up. What Shopify does not say
is left out, for the intake to name or default (no category: Shopify's products have none).

- number: the order's `name` ("#1001", or with the shop's own prefix and suffix), as customers see it;
- status: `cancelled_at` set, cancelled; else a successful fulfilment whose `shipment_status` is
  "delivered" for every shipped line, delivered (on that fulfilment's last update); else a successful
  fulfilment, shipped; else processing;
- tracking and carrier: the latest successful fulfilment's `tracking_number` and `tracking_company`;
- shipments: each successful fulfilment, its `line_items` (by id) and their quantities, its tracking
  number, company and URL, shipped on its `created_at`, delivered on its last update once its
  `shipment_status` is "delivered";
- refunds: each of `refunds`, its successful refund transactions' amounts together, its day, its note
  and its `refund_line_items` (by line id);
- lines: `line_items` in Shopify's order, numbered from 1 (an order edit appends lines and keeps
  removed ones at quantity 0, so a line keeps its number); a line at quantity 0 is left out;
- money: as the customer paid it. When the customer paid in another currency than the shop's
  (`presentment_currency`), the total, the lines' prices and the refunds are Shopify's
  `presentment_money` (`current_total_price_set`, each line's `price_set`, refund transactions in that
  currency), and the shop's total and currency are kept beside them (shop_total, shop_currency).
"""

import re
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal, InvalidOperation

from connection.payloads import as_list_or_sent, objects_in, text_of
from connection.platform_http import platform_id
from orders.models import OrderStatus

_SHIPPED = "success"  # a fulfilment's status once its parcel left
# The webhook topics whose body is the whole order. A fulfilment's or a refund's change comes as
# orders/updated too (with its fulfillments), so the order is read whole each time.
ORDER_TOPICS = frozenset({"orders/create", "orders/updated", "orders/cancelled", "orders/fulfilled",
                          "orders/partially_fulfilled", "orders/paid"})  # fmt: skip


def _date(moment: object) -> str | None:
    """The calendar date of an ISO time, in the shop's own offset ("2008-01-10T11:00:00-05:00")."""
    try:
        return datetime.fromisoformat(str(moment)).date().isoformat()
    except ValueError:
        return None


def _name(*candidates: Mapping | None) -> str:
    for candidate in candidates:
        if not isinstance(candidate, Mapping):
            continue
        name = candidate.get("name") or " ".join(
            text_of(part) for part in (candidate.get("first_name"), candidate.get("last_name")) if part
        )
        if name:
            return str(name)
    return ""


def _address(address: Mapping | None) -> dict | None:
    if not isinstance(address, Mapping) or not address.get("address1"):
        return None  # nothing to ship (a gift card, an ebook): no address on file
    return {
        "country": address.get("country_code") or address.get("country") or "",
        "name": _name(address),
        "line1": address.get("address1") or "",
        "line2": address.get("address2") or "",
        "city": address.get("city") or "",
        "region": address.get("province_code") or address.get("province") or "",
        "postal_code": address.get("zip") or "",
    }


def _presentment(money: object) -> object:
    """The customer's amount of one of Shopify's money pairs (`{"shop_money": …, "presentment_money":
    {"amount": "115.90", "currency_code": "EUR"}}`), or None."""
    paid = money.get("presentment_money") if isinstance(money, Mapping) else None
    return paid.get("amount") if isinstance(paid, Mapping) else None


def _customer_money(payload: Mapping, line_items: list[Mapping]) -> str | None:
    """The customer's currency, when they paid in another than the shop's and Shopify says every amount
    in it (the total and each line's price); else None: the order is told in the shop's money."""
    paid_in, shop = payload.get("presentment_currency"), payload.get("currency")
    if not isinstance(paid_in, str) or not paid_in or paid_in == shop:
        return None
    total = payload.get("current_total_price_set") or payload.get("total_price_set")
    if _presentment(total) is None or any(_presentment(line.get("price_set")) is None for line in line_items):
        return None
    return paid_in


def _items(line_items: list, *, customer_money: bool = False) -> list[dict]:
    items = []
    for number, line in enumerate(line_items, start=1):
        quantity = line.get("current_quantity", line.get("quantity"))
        if quantity == 0:
            continue  # removed by an order edit: its number stays taken
        items.append(
            {
                "line_number": number,
                "title": line.get("title") or line.get("name") or "",
                "unit_price": _presentment(line.get("price_set")) if customer_money else line.get("price"),
                "quantity": quantity,
                # A gift card is never returnable (the return policy's kinds); Shopify says which lines are.
                **({"category": "gift_card"} if line.get("gift_card") is True else {}),
                "sku": _text(line.get("sku"), 100),
                "variant": _text(line.get("variant_title"), 200),
                "line_id": platform_id(line.get("id")),
                # A download, an ebook, a ticket: Shopify ships nothing of it.
                "requires_shipping": line.get("requires_shipping") is not False,
            }
        )
    return items


def _text(value: object, limit: int) -> str:
    """Free text staff typed in Shopify (a refund's note, a carrier's name), made to fit: on one line,
    without invisible characters, cut at `limit`; an order is never refused for its note."""
    text = "".join(char for char in str(value or "") if char.isprintable() or char.isspace())
    return " ".join(text.split())[:limit]


def _web_address(value: object) -> str:
    address = str(value or "").strip()
    return address if re.fullmatch(r"https?://[^\s]{1,490}", address) else ""


class _Lines:
    """The order's lines as the intake has them: Shopify's line ids to line numbers, and how many of each
    the order holds now (`current_quantity`: removals and refunds taken off). A parcel or a refund may
    name a line no longer there, or more of it than is left (a refunded copy): it names what is left,
    so that the order is never refused for its history."""

    def __init__(self, line_items: list[Mapping]):
        self.numbers = {
            platform_id(line.get("id")): number
            for number, line in enumerate(line_items, start=1)
            if platform_id(line.get("id"))
        }
        self.now = {
            number: quantity
            for number, line in enumerate(line_items, start=1)
            if isinstance(quantity := line.get("current_quantity", line.get("quantity")), int)
            and quantity > 0
        }

    def counted(self, parts: list[list[tuple[object, object]]]) -> list[list[dict]]:
        """Each part's (line id, quantity) pairs as the intake's lines, within what the order holds."""
        left = dict(self.now)
        counted = []
        for pairs in parts:
            lines = []
            for line_id, quantity in pairs:
                number = self.numbers.get(platform_id(line_id))
                if number not in left or not isinstance(quantity, int) or quantity < 1:
                    continue
                if taken := min(quantity, left[number]):
                    lines.append({"line_number": number, "quantity": taken})
                    left[number] -= taken
            counted.append(lines)
        return counted


def _shipments(shipped: list[Mapping], lines: _Lines, status: str) -> list[dict]:
    """Each successful fulfilment as a parcel: its lines (by line id), tracking and dates. A fulfilment
    with none of the order's lines left (all removed or refunded) is left out."""
    if status in (OrderStatus.PROCESSING, OrderStatus.CANCELLED):
        return []
    fulfilments = sorted(shipped, key=lambda fulfilment: str(fulfilment.get("created_at")))
    counted = lines.counted(
        [
            [(line.get("id"), line.get("quantity")) for line in objects_in(f.get("line_items"))]
            for f in fulfilments
        ]
    )
    shipments = []
    for fulfilment, parcel_lines in zip(fulfilments, counted, strict=True):
        if not parcel_lines:
            continue
        delivered = fulfilment.get("shipment_status") == "delivered"
        shipments.append(
            {
                "carrier": _text(fulfilment.get("tracking_company"), 40),
                "tracking_number": _text(fulfilment.get("tracking_number"), 64),
                "tracking_url": _web_address(fulfilment.get("tracking_url")),
                "shipped_on": _date(fulfilment.get("created_at")),
                "delivered_on": _date(fulfilment.get("updated_at")) if delivered else None,
                "lines": parcel_lines,
            }
        )
    return shipments


def _refunds(refunds: list, lines: _Lines, currency: object) -> list[dict]:
    """Each refund that gave money back: its successful refund transactions in the currency the order is
    told in together (the customer's, when they paid in another: Shopify's transactions are in it), its
    day, its note and its `refund_line_items` (by line id)."""
    refunds = [refund for refund in refunds if isinstance(refund, Mapping)]
    counted = lines.counted(
        [
            [
                (line.get("line_item_id"), line.get("quantity"))
                for line in objects_in(refund.get("refund_line_items"))
            ]
            for refund in refunds
        ]
    )
    found = []
    for refund, refund_lines in zip(refunds, counted, strict=True):
        try:
            amount = sum(
                (
                    Decimal(str(transaction.get("amount")))
                    for transaction in objects_in(refund.get("transactions"))
                    if transaction.get("kind") == "refund"
                    and transaction.get("status") == "success"
                    and transaction.get("currency", currency) == currency
                ),
                Decimal("0.00"),
            )
        except InvalidOperation:
            amount = None  # the intake names it
        if amount == 0:
            continue  # a restock, or a refund not paid yet: no money given back
        found.append(
            {
                "amount": str(amount) if amount is not None else None,
                "refunded_on": _date(refund.get("created_at")),
                "reason": _text(refund.get("note"), 300),
                "lines": refund_lines,
            }
        )
    return found


def _parcels(fulfilments: list[Mapping], line_items: list[Mapping]) -> list[Mapping]:
    """The fulfilments that are parcels: with their lines nothing is shipped of left out (an ebook is
    fulfilled at once, no parcel, no delivery), and a fulfilment of only such lines with them; all of
    them as they are in an order of only such lines (it is complete when they are)."""
    ships = {platform_id(line.get("id")) for line in line_items if line.get("requires_shipping") is not False}
    if not ships:
        return fulfilments
    parcels: list[Mapping] = []
    for fulfilment in fulfilments:
        lines = [
            line for line in objects_in(fulfilment.get("line_items")) if platform_id(line.get("id")) in ships
        ]
        if lines:
            parcels.append({**fulfilment, "line_items": lines})
    return parcels


def _status(order: Mapping, shipped: list[Mapping]) -> tuple[str, str | None]:
    """The status and, when delivered, the day."""
    if order.get("cancelled_at"):
        return OrderStatus.CANCELLED, None
    if not shipped:
        return OrderStatus.PROCESSING, None
    everything_shipped = order.get("fulfillment_status") == "fulfilled"
    if everything_shipped and all(fulfilment.get("shipment_status") == "delivered" for fulfilment in shipped):
        return OrderStatus.DELIVERED, _date(max(str(fulfilment.get("updated_at")) for fulfilment in shipped))
    return OrderStatus.SHIPPED, None


def shopify_order(payload: Mapping) -> tuple[object, dict]:
    """(the order's number, the order in the intake's shape) from Shopify's order resource. Nothing is
    checked here: orders.intake checks what this gives as it checks every order."""
    fulfilments = objects_in(payload.get("fulfillments"))
    shipped = _parcels(
        [fulfilment for fulfilment in fulfilments if fulfilment.get("status") == _SHIPPED],
        objects_in(payload.get("line_items")),
    )
    status, delivered_on = _status(payload, shipped)
    latest = max(shipped, key=lambda fulfilment: str(fulfilment.get("created_at")), default={})
    customer = sent if isinstance(sent := payload.get("customer"), Mapping) else {}
    shipping = payload.get("shipping_address")
    line_items = objects_in(payload.get("line_items"))
    lines = _Lines(line_items)
    paid_in = _customer_money(payload, line_items)
    currency = paid_in or payload.get("currency")
    data = {
        "customer_name": _name(shipping, payload.get("billing_address"), customer),
        "customer_email": payload.get("email") or payload.get("contact_email") or customer.get("email"),
        "status": status,
        "ordered_on": _date(payload.get("created_at")),
        "delivered_on": delivered_on,
        "tracking_number": (latest.get("tracking_number") or "") if status != OrderStatus.PROCESSING else "",
        "carrier": (latest.get("tracking_company") or "") if status != OrderStatus.PROCESSING else "",
        "total": payload.get("current_total_price") or payload.get("total_price"),
        "currency": currency,
        "shipping_address": _address(shipping),
        "items": as_list_or_sent(
            payload.get("line_items"), lambda listed: _items(listed, customer_money=paid_in is not None)
        ),
        "shipments": _shipments(shipped, lines, status),
        "refunds": as_list_or_sent(
            payload.get("refunds"), lambda refunds: _refunds(refunds, lines, currency)
        ),
        "discount_total": payload.get("current_total_discounts") or payload.get("total_discounts"),
        # Authorised, then released: the customer was never charged (Shopify's test notification's).
        "payment_voided": payload.get("financial_status") == "voided",
        "updated_at": payload.get("updated_at"),
    }
    if paid_in:
        data["shop_currency"], data["shop_total"] = payload.get("currency"), data["total"]
        data["total"] = _presentment(payload.get("current_total_price_set") or payload.get("total_price_set"))
        discounts = payload.get("current_total_discounts_set") or payload.get("total_discounts_set")
        data["discount_total"] = _presentment(discounts) if discounts else data["discount_total"]
    return payload.get("name"), data
