"""WooCommerce's order list (REST API v3, `GET /wp-json/wc/v3/orders`): every status, changed since a
time (`modified_after`, WooCommerce 5.8 and later), by id, 100 a page, numbered pages with the count in
`X-WP-Total` and `X-WP-TotalPages` (read for no more pages than `X-WP-Total` needs:
platform_http.page_limit). Signed in with the REST API key (HTTP Basic, over HTTPS)."""

from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import httpx2 as httpx

from connection.platform_http import (
    Page,
    page_limit,
    pages_past_limit,
    platform_client,
    platform_get,
    platform_json,
)
from connection.shops import ShopKey

PAGE_SIZE = 100


def woocommerce_client(*, key: ShopKey) -> tuple[httpx.Client, str]:
    """A client with the shop's REST API key, and the API's base address."""
    auth = httpx.BasicAuth(key.consumer_key, key.consumer_secret)
    return platform_client(auth=auth), f"{key.address}/wp-json/wc/v3"


def woocommerce_order_pages(
    *, client: httpx.Client, base: str, since: datetime, sleep: Callable[[float], None]
) -> Iterator[Page]:
    page, pages = 1, 1
    while page <= pages:
        # In UTC, said so (else WooCommerce reads it in the site's own zone).
        params = {
            "status": "any",
            "modified_after": since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S"),
            "dates_are_gmt": "true",
            "orderby": "id",
            "order": "asc",
            "per_page": PAGE_SIZE,
            "page": page,
        }
        response = platform_get(client, f"{base}/orders", params=params, sleep=sleep)
        pages = int(response.headers.get("X-WP-TotalPages") or 1)
        total = response.headers.get("X-WP-Total")
        body = platform_json(response)
        counted = int(total) if total and total.isdigit() else None
        yield Page(orders=body if isinstance(body, list) else [], total=counted)
        # Checked once this page's orders are applied: they stay so when the sync stops here.
        if page < pages and page >= page_limit(counted, PAGE_SIZE):
            raise pages_past_limit(read=page, total=counted, size=PAGE_SIZE)
        page += 1
