"""Shopify's order list (Admin REST API, `GET /admin/api/{version}/orders.json`): every status, changed
since a time, 250 a page, the next page's address in the `Link` header (cursor pagination: that
address carries everything else, and a page's request may add nothing to it). The shop's call limit
(a bucket of 40 calls, 2 a second back) is read from `X-Shopify-Shop-Api-Call-Limit` and a 429 waits
its `Retry-After`. A next page is followed only at the shop's own address (the token goes with it), never
to one already read, and for no more pages than the shop's count needs (platform_http.page_limit)."""

import itertools
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime

import httpx2 as httpx

from connection.platform_http import (
    Page,
    PlatformError,
    page_limit,
    pages_past_limit,
    platform_client,
    platform_get,
    platform_json,
    platform_next_page,
)
from connection.shops import ShopKey

PAGE_SIZE = 250
# When this share of the bucket is used, wait for it to drain a little (2 calls a second come back).
_NEARLY_FULL = 0.8


def _pace(response: httpx.Response) -> float:
    used, _, size = response.headers.get("X-Shopify-Shop-Api-Call-Limit", "").partition("/")
    try:
        return 1.0 if int(used) >= _NEARLY_FULL * int(size) else 0.0
    except ValueError:
        return 0.0


def shopify_client(*, key: ShopKey) -> tuple[httpx.Client, str]:
    """A client with the shop's Admin API token, and the Admin API's base address."""
    return platform_client(headers={"X-Shopify-Access-Token": key.token}), key.address


def shopify_order_pages(
    *, client: httpx.Client, base: str, since: datetime, sleep: Callable[[float], None]
) -> Iterator[Page]:
    query = {"status": "any", "updated_at_min": since.isoformat()}
    counted = platform_json(platform_get(client, f"{base}/orders/count.json", params=query, sleep=sleep))
    total = counted.get("count") if isinstance(counted, dict) else None
    limit = page_limit(total, PAGE_SIZE)
    url = f"{base}/orders.json"
    params: Mapping | None = {**query, "limit": PAGE_SIZE}  # none on a next page: its address has them
    read: set[str] = set()
    for pages in itertools.count(1):
        response = platform_get(client, url, params=params, sleep=sleep, pace=_pace)
        read.add(str(response.url))
        body = platform_json(response)
        yield Page(orders=(body.get("orders") if isinstance(body, dict) else None) or [], total=total)
        link = response.links.get("next", {}).get("url")
        if not link:
            return
        # Checked once this page's orders are applied: they stay so when the sync stops here.
        url, params = platform_next_page(link, page=response.url, base=base), None
        if url in read:
            raise PlatformError(
                f"Shopify gave as the next page one already read ({url}): its pages go round in a loop; the "
                "orders read are applied"
            )
        if pages >= limit:
            raise pages_past_limit(read=pages, total=total, size=PAGE_SIZE)
