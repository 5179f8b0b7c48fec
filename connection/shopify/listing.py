"""Shopify's order list (Admin REST API, `GET /admin/api/{version}/orders.json`): every status, changed
since a time, 250 a page, the next page's address in the `Link` header (cursor pagination: that
address carries everything else, and a page's request may add nothing to it). The shop's call limit
(a bucket of 40 calls, 2 a second back) is read from `X-Shopify-Shop-Api-Call-Limit` and a 429 waits
its `Retry-After`."""

from collections.abc import Iterator
from datetime import datetime

import httpx2 as httpx
from django.conf import settings

from connection.platform_http import TIMEOUT, Page, platform_address, platform_get, platform_json

PAGE_SIZE = 250
# When this share of the bucket is used, wait for it to drain a little (2 calls a second come back).
_NEARLY_FULL = 0.8


def _pace(response: httpx.Response) -> float:
    used, _, size = response.headers.get("X-Shopify-Shop-Api-Call-Limit", "").partition("/")
    try:
        return 1.0 if int(used) >= _NEARLY_FULL * int(size) else 0.0
    except ValueError:
        return 0.0


def shopify_client() -> tuple[httpx.Client, str]:
    """A client with the shop's Admin API token, and the Admin API's base address."""
    base = platform_address(
        settings.SHOPIFY_ADMIN_API_URL
        or f"https://{settings.SHOPIFY_SHOP_DOMAIN}/admin/api/{settings.SHOPIFY_API_VERSION}",
        "SHOPIFY_ADMIN_API_URL",
    )
    client = httpx.Client(
        headers={"X-Shopify-Access-Token": settings.SHOPIFY_ADMIN_ACCESS_TOKEN}, timeout=TIMEOUT
    )
    return client, base


def shopify_order_pages(*, client: httpx.Client, base: str, since: datetime, sleep) -> Iterator[Page]:
    query = {"status": "any", "updated_at_min": since.isoformat()}
    counted = platform_json(platform_get(client, f"{base}/orders/count.json", params=query, sleep=sleep))
    total = counted.get("count") if isinstance(counted, dict) else None
    url, params = f"{base}/orders.json", {**query, "limit": PAGE_SIZE}
    while url:
        response = platform_get(client, url, params=params, sleep=sleep, pace=_pace)
        body = platform_json(response)
        yield Page(orders=(body.get("orders") if isinstance(body, dict) else None) or [], total=total)
        url, params = response.links.get("next", {}).get("url"), None
