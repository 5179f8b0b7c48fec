"""A change Bookly asks of Shopify (Admin REST API), for an order Shopify keeps:

- a cancellation: `POST /orders/{id}/cancel.json` with the reason ("customer" when the customer asked
  through the assistant, "other" when staff did) and `email: false` (Bookly emails the customer itself,
  once Shopify made it);
- an address change: `PUT /orders/{id}.json` with the order's `shipping_address` (Shopify's own
  example: "Update the shipping address of an order").

Needs the app's write_orders scope. Shopify answers 422 with its reason when it will not (an order
fulfilled since, say): a PlatformError that is `refused`. A cancellation Shopify refuses is checked
against the order: one already cancelled (an earlier attempt whose answer was lost) is made.
"""

import re
from collections.abc import Callable

import httpx2 as httpx

from connection.platform_http import PlatformError, platform_json, platform_request, recipient_names
from orders.models import Order, OrderChange, OrderChangeKind

_IS_CODE_RE = re.compile(r"[A-Z0-9]{1,3}")


def _cancelled(client: httpx.Client, url: str, sleep: Callable[[float], None]) -> bool:
    body = platform_json(
        platform_request(client, "GET", f"{url}.json", params={"fields": "cancelled_at"}, sleep=sleep)
    )
    return (
        isinstance(body, dict)
        and isinstance(body.get("order"), dict)
        and bool(body["order"].get("cancelled_at"))
    )


def shopify_change_write(
    *, client: httpx.Client, base: str, order: Order, change: OrderChange, sleep: Callable[[float], None]
) -> None:
    url = f"{base}/orders/{order.shop_order_id}"
    if change.kind == OrderChangeKind.CANCELLED:
        reason = "other" if change.changed_by_id else "customer"
        try:
            platform_request(
                client, "POST", f"{url}/cancel.json", json={"reason": reason, "email": False}, sleep=sleep
            )
        except PlatformError as error:
            # An attempt whose answer was lost may have cancelled it: then this one's refusal is a yes.
            if not error.refused or not _cancelled(client, url, sleep):
                raise
        return
    address = change.after
    shipping_address = {
        **dict(zip(("first_name", "last_name"), recipient_names(address["to"]), strict=True)),
        "address1": address["line1"],
        "address2": address["line2"],
        "city": address["city"],
        # Shopify reads a region's code as province_code ("IL", "SP"), a name as province.
        ("province_code" if _IS_CODE_RE.fullmatch(address["state"]) else "province"): address["state"],
        "zip": address["zip"],
        "country_code": address["country"],
    }
    platform_request(
        client,
        "PUT",
        f"{url}.json",
        json={"order": {"id": int(order.shop_order_id), "shipping_address": shipping_address}},
        sleep=sleep,
    )
