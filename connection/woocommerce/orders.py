"""A WooCommerce order (the REST API v3's `order` resource, as its webhooks `order.created` and
`order.updated` send it) in the shape Bookly's intake takes (orders.inbound): each field read where
WooCommerce documents it, nothing made up. What WooCommerce does not say is left out, for the intake to
name or default (no category: WooCommerce's products have none Bookly reads).

- number: the order's `number` as customers see it ("727", or with a numbering plugin's prefix);
- status: WooCommerce's core has no shipping: `completed` ("fulfilled and complete") is shipped, in one
  parcel sent on the day it was completed, and delivered WOOCOMMERCE_DELIVERED_AFTER_DAYS days later
  once that day has come (woocommerce_orders_delivered moves the ones whose day comes later);
  `cancelled` is cancelled; `refunded` is cancelled unless it was completed first (then shipped, never
  delivered: refunded, it has nothing left to return);
  any other (`pending`, `processing`, `on-hold`, `failed`) is processing;
- tracking: the WooCommerce Shipment Tracking extension's `_wc_shipment_tracking_items` in `meta_data`,
  the latest, when the shop has it;
- lines: `line_items` in WooCommerce's order, numbered from 1, their names unescaped ("&ndash;");
- amounts: as WooCommerce writes them, in the shop's own number of decimals ("2.000" when its settings
  show three): zeros past the cent are left out ("2.00"), any other digit is kept for the intake to refuse.
"""

import html
import re
from collections.abc import Mapping
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation

from django.conf import settings

from connection.payloads import as_list_or_sent, objects_in, text_of
from connection.platform_http import platform_id
from orders.models import OrderStatus
from store.clock import store_today

# The webhook topics whose body is the whole order (order.deleted sends only its id).
ORDER_TOPICS = frozenset({"order.created", "order.updated", "order.restored"})
_TRACKING_KEY = "_wc_shipment_tracking_items"


def _date(moment: object) -> str | None:
    try:
        return datetime.fromisoformat(str(moment)).date().isoformat()
    except ValueError:
        return None


# An amount written with more decimals than cents, all of them zeros past the cent ("2.000", "-9.0000").
_ZEROS_PAST_THE_CENT_RE = re.compile(r"(-?[0-9]+\.[0-9]{2})0+")


def _amount(value: object) -> object:
    """One of the order's amounts (`total`, `discount_total`, a refund's `total`) as the intake takes them:
    a shop set to show three decimals writes "2.000", which is 2.00; nothing is rounded ("2.005" is sent
    on as it is, for the intake to refuse by its field)."""
    if isinstance(value, str) and (zeros := _ZEROS_PAST_THE_CENT_RE.fullmatch(value)):
        return zeros.group(1)
    return value


def _price(value: object) -> object:
    """A line's unit price: WooCommerce writes it as a JSON number (3, 12.99); the intake takes a string."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    try:
        return str(Decimal(str(value)).quantize(Decimal("0.01")))
    except InvalidOperation:
        return value


def _name(*people: Mapping | None) -> str:
    for person in people:
        if isinstance(person, Mapping):
            name = " ".join(
                text_of(part) for part in (person.get("first_name"), person.get("last_name")) if part
            )
            if name:
                return name
    return ""


def _address(shipping: Mapping | None) -> dict | None:
    if not isinstance(shipping, Mapping) or not shipping.get("address_1"):
        return None  # nothing to ship (a download): no address on file
    return {
        "country": shipping.get("country") or "",
        "name": _name(shipping),
        "line1": shipping.get("address_1") or "",
        "line2": shipping.get("address_2") or "",
        "city": shipping.get("city") or "",
        "region": shipping.get("state") or "",
        "postal_code": shipping.get("postcode") or "",
    }


def _tracking(meta: object) -> Mapping:
    for entry in objects_in(meta):
        if entry.get("key") == _TRACKING_KEY and isinstance(entry.get("value"), list):
            shipped = objects_in(entry["value"])
            return max(shipped, key=lambda item: str(item.get("date_shipped")), default={})
    return {}


def _status(order: Mapping) -> str:
    status = order.get("status")
    if status == "completed":
        return OrderStatus.SHIPPED
    if status == "cancelled":
        return OrderStatus.CANCELLED
    if status == "refunded":
        return OrderStatus.SHIPPED if order.get("date_completed") else OrderStatus.CANCELLED
    return OrderStatus.PROCESSING


def _refunds(refunds: list) -> list[dict]:
    """The order's `refunds` as WooCommerce lists them: each one's `total` (negative: money out) and
    `reason`; no date or lines (the refund resource has them, the order's list does not)."""
    found = []
    for refund in refunds:
        if not isinstance(refund, Mapping):
            continue
        total = str(_amount(refund.get("total")) or "")
        reason = refund.get("reason") or refund.get("refund") or ""  # the docs' example names it "refund"
        found.append({"amount": total.removeprefix("-"), "reason": str(reason)})
    return found


def _items(line_items: list[Mapping], *, ships: bool = True) -> list[dict]:
    return [
        {
            "line_number": number,
            "title": html.unescape(str(line.get("name") or "")),
            "unit_price": _price(line.get("price")),
            "quantity": line.get("quantity"),
            "sku": str(line.get("sku") or "")[:100],
            "line_id": platform_id(line.get("id")),
            "requires_shipping": ships,
        }
        for number, line in enumerate(line_items, start=1)
    ]


def delivered_on_presumed(completed_on: date) -> date | None:
    """The day a completed order counts as delivered, or None when the store presumes none."""
    days = settings.WOOCOMMERCE_DELIVERED_AFTER_DAYS
    return completed_on + timedelta(days=days) if days else None


def _completed(payload: Mapping, items: object, tracking: Mapping) -> dict:
    """A completed order's parcel (its lines that ship, sent the day it was completed, with the Shipment
    Tracking extension's number), and, once its day has come, its delivery."""
    completed_on = _date(payload.get("date_completed_gmt") or payload.get("date_completed"))
    lines = [
        {"line_number": item["line_number"], "quantity": item["quantity"]}
        for item in (items if isinstance(items, list) else [])
        if item.get("requires_shipping") and isinstance(item.get("quantity"), int) and item["quantity"] > 0
    ]
    if completed_on is None or not lines:
        return {}
    delivered = delivered_on_presumed(date.fromisoformat(completed_on))
    delivered_on = delivered.isoformat() if delivered and delivered <= store_today() else None
    parcel = {
        "carrier": str(tracking.get("tracking_provider") or tracking.get("custom_tracking_provider") or "")[
            :40
        ],
        "tracking_number": str(tracking.get("tracking_number") or "")[:64],
        "shipped_on": completed_on,
        "delivered_on": delivered_on,
        "lines": lines,
    }
    if delivered_on is None:
        return {"shipments": [parcel]}
    return {"shipments": [parcel], "status": OrderStatus.DELIVERED, "delivered_on": delivered_on}


def woocommerce_order(payload: Mapping) -> tuple[object, dict]:
    """(the order's number, the order in the intake's shape) from WooCommerce's order resource. Nothing
    is checked here: orders.intake checks what this gives as it checks every order."""
    status = _status(payload)
    tracking = _tracking(payload.get("meta_data")) if status != OrderStatus.PROCESSING else {}
    billing = sent if isinstance(sent := payload.get("billing"), Mapping) else {}
    shipping = payload.get("shipping")
    modified = payload.get("date_modified_gmt")
    # WooCommerce's lines do not say whether they are virtual or downloadable; an order of only such
    # lines is one with no shipping at all (no shipping method, no address), and nothing of it ships.
    ships = not (payload.get("shipping_lines") == [] and _address(shipping) is None)
    items = as_list_or_sent(payload.get("line_items"), lambda listed: _items(listed, ships=ships))
    data = {
        "customer_name": _name(shipping, billing),
        "customer_email": billing.get("email"),
        "status": status,
        "ordered_on": _date(payload.get("date_created")),
        "tracking_number": tracking.get("tracking_number") or "",
        "carrier": tracking.get("tracking_provider") or tracking.get("custom_tracking_provider") or "",
        "total": _amount(payload.get("total")),
        "discount_total": _amount(payload.get("discount_total")),
        "currency": payload.get("currency"),
        "shipping_address": _address(shipping),
        "items": items,
        "refunds": as_list_or_sent(payload.get("refunds"), _refunds),
        "updated_at": f"{modified}Z" if isinstance(modified, str) and modified else None,  # GMT, unmarked
    }
    if payload.get("status") == "completed":  # not refunded: its money went back, there is nothing to return
        data.update(_completed(payload, items, tracking))
    return payload.get("number"), data
