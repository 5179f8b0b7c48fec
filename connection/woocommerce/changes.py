"""A change Bookly asks of WooCommerce (REST API v3, `PUT /wp-json/wc/v3/orders/{id}`), for an order
WooCommerce keeps: `{"status": "cancelled"}` for a cancellation, the order's `shipping` for an address
change. Needs a REST API key with Read/Write permission. WooCommerce answers 400 or 404 with its
`code` and `message` when it will not: a PlatformError that is `refused`.
"""

from collections.abc import Callable

import httpx2 as httpx

from connection.platform_http import platform_request, recipient_names
from orders.models import Order, OrderChange, OrderChangeKind


def woocommerce_change_write(
    *, client: httpx.Client, base: str, order: Order, change: OrderChange, sleep: Callable[[float], None]
) -> None:
    if change.kind == OrderChangeKind.CANCELLED:
        body: dict = {"status": "cancelled"}
    else:
        address = change.after
        first, last = recipient_names(address["to"])
        body = {
            "shipping": {
                "first_name": first,
                "last_name": last,
                "address_1": address["line1"],
                "address_2": address["line2"],
                "city": address["city"],
                "state": address["state"],
                "postcode": address["zip"],
                "country": address["country"],
            }
        }
    platform_request(client, "PUT", f"{base}/orders/{order.shop_order_id}", json=body, sleep=sleep)
