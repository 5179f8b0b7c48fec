"""Backfill from the platforms' order lists (`manage.py shop_sync`): a real HTTP server on 127.0.0.1
standing in for Shopify's Admin API and WooCommerce's REST API, serving their documented orders with
their documented pagination and limits; nothing leaves loopback."""

import base64
import copy
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from connection import platform_http
from connection.models import ShopEvent, ShopEventOutcome
from connection.platform_http import PlatformError
from connection.shop_sync import shop_sync
from connection.shops import connected_shop
from orders.models import Order, OrderSource

PLATFORMS = Path(__file__).with_name("platforms")
SINCE = datetime(2026, 1, 1, tzinfo=UTC)
TOKEN = "shpat_0123456789abcdef"

pytestmark = pytest.mark.django_db


def _shopify_orders() -> list[dict]:
    """Shopify's documented order three times, as three orders of a shop numbering them BK-2001…"""
    order = json.loads((PLATFORMS / "shopify_order.json").read_text())["order"]
    return [{**copy.deepcopy(order), "id": 450789469 + index, "name": f"BK-{2001 + index}",
             "updated_at": f"2026-02-0{index + 1}T10:00:00-05:00"} for index in range(3)]  # fmt: skip


def _woocommerce_orders() -> list[dict]:
    order = json.loads((PLATFORMS / "woocommerce_order_br.json").read_text())
    return [{**copy.deepcopy(order), "id": 723 + index, "number": f"BK-{3001 + index}",
             "date_modified_gmt": f"2026-02-0{index + 1}T10:00:00"} for index in range(3)]  # fmt: skip


@dataclass
class Platform:
    """What the stand-in serves, and every request it was sent (path, query, headers)."""

    url: str = ""
    requests: list[tuple[str, dict, dict]] = field(default_factory=list)
    # Answers taken one a request before the normal ones: (status, headers).
    failures: list[tuple[int, dict]] = field(default_factory=list)
    # Shopify's Link instead of the documented one, given a page's page_info (None for the first); its
    # pages after the first have no orders.
    links: Callable[[str | None], str | None] | None = None
    # WooCommerce's X-WP-TotalPages instead of the documented 2; past page 30 it answers 404.
    total_pages: str = "2"
    # The order pages sent a byte at a time (0.3 s each).
    trickle: bool = False


@pytest.fixture
def platform(loopback):
    state = Platform()
    shopify, woocommerce = _shopify_orders(), _woocommerce_orders()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            parts = urlsplit(self.path)
            query = {key: values[0] for key, values in parse_qs(parts.query).items()}
            state.requests.append((parts.path, query, dict(self.headers.items())))
            if state.failures:
                status, headers = state.failures.pop(0)
                return self.answer(status, {"errors": "Exceeded 2 calls per second"}, headers)
            if parts.path == "/admin/api/2025-07/orders/count.json":
                return self.answer(200, {"count": len(shopify)})
            if parts.path == "/admin/api/2025-07/orders.json" and state.links:
                link = state.links(query.get("page_info"))
                orders = [] if query.get("page_info") else shopify[:2]
                return self.answer(200, {"orders": orders}, {"Link": link} if link else {})
            if parts.path == "/admin/api/2025-07/orders.json":
                # Cursor pagination as Shopify does it: the next page's address in Link, nothing else.
                if query.get("page_info") == "page-2":
                    return self.answer(
                        200, {"orders": shopify[2:]}, {"X-Shopify-Shop-Api-Call-Limit": "3/40"}
                    )
                link = f'<{state.url}/admin/api/2025-07/orders.json?limit=250&page_info=page-2>; rel="next"'
                calls = {"Link": link, "X-Shopify-Shop-Api-Call-Limit": "39/40"}
                return self.answer(200, {"orders": shopify[:2]}, calls)
            if parts.path == "/wp-json/wc/v3/orders":
                page = int(query.get("page", 1))
                if page > 30:
                    return self.answer(404, {"code": "rest_no_route"})
                pages = {"X-WP-Total": "3", "X-WP-TotalPages": state.total_pages}
                return self.answer(200, woocommerce[:2] if page == 1 else woocommerce[2:], pages)
            return self.answer(404, {"errors": "Not Found"})

        def answer(self, status, body, headers=None):
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            if not (state.trickle and "orders" in self.path and "count" not in self.path):
                self.wfile.write(payload)
                return
            try:
                for byte in payload:
                    self.wfile.write(bytes([byte]))
                    time.sleep(0.3)
            except OSError:
                pass  # cut off: Bookly hung up

        def log_message(self, *args):
            pass

    state.url = loopback(Handler)
    return state


@pytest.fixture
def shopify(platform, settings):
    settings.SHOPIFY_ADMIN_ACCESS_TOKEN = TOKEN
    settings.SHOPIFY_ADMIN_API_URL = f"{platform.url}/admin/api/2025-07"
    return platform


@pytest.fixture
def woocommerce(platform, settings):
    settings.WOOCOMMERCE_URL = platform.url
    settings.WOOCOMMERCE_CONSUMER_KEY = "ck_123"
    settings.WOOCOMMERCE_CONSUMER_SECRET = "cs_456"
    return platform


def _sync(**given):
    """The Shopify shop's sync, read with the settings' key."""
    shop = connected_shop(platform="shopify")
    assert shop is not None
    return shop_sync(shop=shop, since=SINCE, **given)


def test_shopify_s_orders_are_read_page_by_page_within_its_limits(shopify):
    waited: list[float] = []

    report = _sync(sleep=waited.append)

    assert report.outcomes == {ShopEventOutcome.CREATED: 3} and report.total == 3
    orders = Order.objects.filter(source=OrderSource.SHOPIFY).order_by("number")
    assert [order.number for order in orders] == ["BK-2001", "BK-2002", "BK-2003"]
    paths = [(path, query) for path, query, _ in shopify.requests]
    assert paths[1] == (
        "/admin/api/2025-07/orders.json",
        {"status": "any", "updated_at_min": SINCE.isoformat(), "limit": "250"},
    )
    assert paths[2] == ("/admin/api/2025-07/orders.json", {"limit": "250", "page_info": "page-2"})
    assert all(headers["X-Shopify-Access-Token"] == TOKEN for _, _, headers in shopify.requests)
    assert waited == [1.0]  # 39 of 40 calls used: a second for the bucket to drain


def test_a_429_waits_what_shopify_asks_and_is_tried_again(shopify):
    shopify.failures = [(429, {"Retry-After": "2.0"})]
    waited: list[float] = []

    report = _sync(sleep=waited.append)

    assert report.outcomes == {ShopEventOutcome.CREATED: 3}
    assert waited[0] == 2.0
    assert [path for path, _, _ in shopify.requests[:2]] == ["/admin/api/2025-07/orders/count.json"] * 2


def test_run_again_what_was_received_is_skipped(shopify):
    _sync(sleep=lambda seconds: None)

    again = _sync(sleep=lambda seconds: None)

    assert again.already == 3 and not again.outcomes
    assert ShopEvent.objects.count() == 3


def test_woocommerce_s_orders_are_read_page_by_page_with_its_key(woocommerce, capsys):
    call_command("shop_sync", "--since", "2026-01-01", "--no-progress")

    assert "(WooCommerce): 3 order created; 0 already received." in capsys.readouterr().out
    assert Order.objects.filter(source=OrderSource.WOOCOMMERCE).count() == 3
    queries = [query for _, query, _ in woocommerce.requests]
    assert [query["page"] for query in queries] == ["1", "2"]
    midnight = timezone.make_aware(datetime(2026, 1, 1))  # the store's midnight, said in UTC
    assert queries[0]["modified_after"] == midnight.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")
    assert queries[0]["dates_are_gmt"] == "true"
    assert queries[0]["status"] == "any" and queries[0]["orderby"] == "id"
    authorization = woocommerce.requests[0][2]["Authorization"]
    assert base64.b64decode(authorization.removeprefix("Basic ")) == b"ck_123:cs_456"


def test_a_platform_that_refuses_stops_the_sync_with_its_answer(shopify):
    shopify.failures = [(401, {})]

    with pytest.raises(CommandError, match=r"\(Shopify\): the sync stopped: .* answered 401.*Run it again"):
        call_command("shop_sync", "--since", "2026-01-01", "--no-progress")
    assert not Order.objects.exists()


def test_without_a_platform_configured_the_sync_says_what_to_set():
    with pytest.raises(CommandError, match="SHOPIFY_ADMIN_ACCESS_TOKEN"):
        call_command("shop_sync", "--since", "2026-01-01")


def test_a_since_that_is_no_date_is_refused():
    with pytest.raises(CommandError, match="is not a date like 2026-01-01"):
        call_command("shop_sync", "--since", "last tuesday")


def test_one_order_that_fails_stops_no_other_and_is_applied_on_the_next_run(shopify, monkeypatch):
    from connection import shop_sync as sync

    applied = sync.shop_event_apply
    failed = False

    def failing_once(*, event_id):
        nonlocal failed
        if ShopEvent.objects.get(pk=event_id).order_number == "" and not failed:
            failed = True
            raise RuntimeError("the database went away")
        return applied(event_id=event_id)

    monkeypatch.setattr(sync, "shop_event_apply", failing_once)
    first = _sync(sleep=lambda seconds: None)
    assert (first.failed, first.outcomes) == (1, {ShopEventOutcome.CREATED: 2})
    again = _sync(sleep=lambda seconds: None)
    assert (again.already, again.outcomes) == (2, {ShopEventOutcome.CREATED: 1})
    assert Order.objects.count() == 3


@pytest.mark.parametrize("retry_after", ["Wed, 21 Oct 2015 07:28:00 GMT", "soon"])
def test_a_retry_after_as_a_date_or_as_nonsense_still_waits_and_tries_again(shopify, retry_after):
    shopify.failures = [(503, {"Retry-After": retry_after})]
    waited: list[float] = []
    assert _sync(sleep=waited.append).outcomes == {ShopEventOutcome.CREATED: 3}
    assert waited[0] in (0.0, 1.0)  # a date gone by: no wait; nonsense: the back-off's first second


def test_a_platform_address_without_https_is_refused(settings):
    settings.WOOCOMMERCE_URL = "http://shop.example.com"
    settings.WOOCOMMERCE_CONSUMER_KEY, settings.WOOCOMMERCE_CONSUMER_SECRET = "ck_1", "cs_1"
    with pytest.raises(CommandError, match="WOOCOMMERCE_URL must be an https address"):
        call_command("shop_sync", "--since", "2026-01-01", "--no-progress")


def test_a_next_page_at_another_address_is_not_followed_and_the_token_never_goes_there(shopify, loopback):
    """Another port of the same machine, over plain http: another address all the same."""
    sent = []

    class Elsewhere(BaseHTTPRequestHandler):
        def do_GET(self):
            sent.append(dict(self.headers.items()))
            self.send_response(200)
            self.send_header("Content-Length", "15")
            self.end_headers()
            self.wfile.write(b'{"orders": []}\n')

        def log_message(self, *args):
            pass

    elsewhere = loopback(Elsewhere)
    shopify.links = lambda page: f'<{elsewhere}/admin/api/2025-07/orders.json?page_info=2>; rel="next"'

    with pytest.raises(
        CommandError, match=rf"next page's address is at {re.escape(elsewhere)}, not at the configured"
    ):
        call_command("shop_sync", "--since", "2026-01-01", "--no-progress")
    assert sent == []
    assert Order.objects.count() == 2  # the first page's orders, applied


def test_a_next_page_already_read_stops_the_sync(shopify):
    page_2 = f"{shopify.url}/admin/api/2025-07/orders.json?limit=250&page_info=page-2"
    shopify.links = lambda page: f'<{page_2}>; rel="next"'

    with pytest.raises(
        PlatformError, match=r"as the next page one already read .*page-2.*go round in a loop"
    ):
        _sync(sleep=lambda seconds: None)
    assert len(shopify.requests) == 3  # the count, the first page, the second
    assert Order.objects.count() == 2


def test_shopify_s_pages_are_read_no_further_than_its_count_needs(shopify):
    """3 orders counted: a page of 250, and PAGES_SLACK more for orders changed while it is read."""

    def link(page):
        number = int((page or "page-1").removeprefix("page-")) + 1
        url = f"{shopify.url}/admin/api/2025-07/orders.json?limit=250&page_info=page-{number}"
        return f'<{url}>; rel="next"' if number <= 40 else None  # 40 pages, then the end

    shopify.links = link

    with pytest.raises(PlatformError, match=r"stopped after 11 pages of 250 orders.*counted 3 orders"):
        _sync(sleep=lambda seconds: None)
    assert len(shopify.requests) == 1 + 1 + platform_http.PAGES_SLACK


def test_woocommerce_s_billion_pages_are_read_no_further_than_its_count_needs(woocommerce):
    woocommerce.total_pages = "1000000000"

    with pytest.raises(CommandError, match=r"stopped after 11 pages of 100 orders.*counted 3 orders"):
        call_command("shop_sync", "--since", "2026-01-01", "--no-progress")
    assert len(woocommerce.requests) == 1 + platform_http.PAGES_SLACK
    assert Order.objects.filter(source=OrderSource.WOOCOMMERCE).count() == 3  # applied, kept


def test_a_page_trickled_a_byte_at_a_time_stops_the_sync_at_the_deadline(shopify, monkeypatch):
    monkeypatch.setattr(platform_http, "ATTEMPT_SECONDS", 1.0)
    monkeypatch.setattr(platform_http, "ATTEMPTS", 2)
    shopify.trickle = True
    started = time.monotonic()

    with pytest.raises(PlatformError, match=r"orders.json: no whole answer within 1 seconds, at each of 2"):
        _sync(sleep=lambda seconds: None)
    assert time.monotonic() - started < 3.5
