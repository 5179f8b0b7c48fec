"""Write-back: a cancellation or an address change of an order a shop platform keeps is made in the shop
first (through its API, on the task queue) and is Bookly's, and the customer's email, only once the shop
made it. A real HTTP server on 127.0.0.1 stands in for Shopify's Admin API and WooCommerce's REST API,
answering as they document; nothing leaves loopback."""

import base64
import time
from dataclasses import dataclass, field
from datetime import timedelta

import pytest
from django.core import mail
from django.test import override_settings
from django.utils import timezone

from connection import platform_http, write_back
from connection.models import ShopWrite, ShopWriteOutcome
from connection.write_back import SHOP_WRITE_ATTEMPTS, shop_write_attempt, shop_writes_take_due
from orders.addresses import OrderAddress
from orders.models import (
    Event,
    EventType,
    Order,
    OrderChangeKind,
    OrderChangeState,
    OrderSource,
    OrderStatus,
)
from orders.selectors import ChangeCode, order_change_check
from orders.services import (
    order_cancel,
    order_change_shop_failed,
    order_change_shop_made,
    order_shipping_address_change,
)
from orders.shops import shop_of_platform
from orders.tests.factories import OrderFactory

pytestmark = pytest.mark.django_db

TOKEN = "shpat_0123456789abcdef"
NEW_ADDRESS = OrderAddress(
    to="Maria de Souza", line1="Rua Augusta 500", line2="Apto 12", city="São Paulo", state="SP",
    zip="01305-000", country="BR",
)  # fmt: skip


@dataclass
class Shop:
    """What the stand-in was sent (method, path, headers, JSON body), and its answers: taken one a
    request (status, body), then 200 with the order."""

    url: str = ""
    requests: list[tuple[str, str, dict, object]] = field(default_factory=list)
    answers: list[tuple] = field(default_factory=list)  # (status, body) or (status, body, headers)
    cancelled_at: str | None = None  # what a GET of the Shopify order says
    stalled: float = 0.0  # seconds it takes before answering a write


@pytest.fixture
def shop(json_api):
    state = Shop()

    def answer(method, path, headers, body):
        state.requests.append((method, path, headers, body))
        if method != "GET" and state.stalled:
            time.sleep(state.stalled)
        if method == "GET":
            return 200, {"order": {"id": 450789469, "cancelled_at": state.cancelled_at}}, {}
        if state.answers:
            status, said, *more = state.answers.pop(0)
            return status, said, (more[0] if more else {})
        return 200, {"order": {"id": 450789469}}, {}

    state.url = json_api(answer)
    return state


@pytest.fixture
def shopify(shop):
    with override_settings(
        SHOPIFY_ADMIN_ACCESS_TOKEN=TOKEN,
        SHOPIFY_ADMIN_API_URL=f"{shop.url}/admin/api/2025-07",
        BOOKLY_CHANGES_THROUGH_SHOP=["shopify"],
    ):
        yield shop


@pytest.fixture
def woocommerce(shop):
    with override_settings(
        WOOCOMMERCE_URL=shop.url,
        WOOCOMMERCE_CONSUMER_KEY="ck_key",
        WOOCOMMERCE_CONSUMER_SECRET="cs_secret",
        BOOKLY_CHANGES_THROUGH_SHOP=["woocommerce"],
    ):
        yield shop


def _shopify_order(**fields):
    return OrderFactory.create(
        source="shopify", shop_order_id="450789469", customer_email="bob@example.com", **fields
    )


def _cancel_queued(order, django_capture_on_commit_callbacks):
    """The customer's cancellation, committed: its write runs on the (synchronous, in tests) queue."""
    with django_capture_on_commit_callbacks(execute=True):
        return order_cancel(order=order)


def test_a_cancellation_is_made_in_shopify_before_it_is_booklys(shopify, django_capture_on_commit_callbacks):
    order = _shopify_order()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        change = order_cancel(order=order)
    # Asked, not made: the order, the customer's inbox and the store's events are as they were.
    order.refresh_from_db()
    assert (change.state, order.status) == (OrderChangeState.AWAITING_SHOP, OrderStatus.PROCESSING)
    assert mail.outbox == [] and not Event.objects.exists()
    assert order_change_check(order=order, kind=OrderChangeKind.CANCELLED).code == ChangeCode.AWAITING_SHOP
    with django_capture_on_commit_callbacks(execute=True):
        for callback in callbacks:
            callback()  # the commit: the write goes on the queue, which runs it here

    [(method, path, headers, body)] = shopify.requests
    assert (method, path) == ("POST", "/admin/api/2025-07/orders/450789469/cancel.json")
    assert headers["X-Shopify-Access-Token"] == TOKEN
    assert body == {"reason": "customer", "email": False}  # Bookly's own email says it, once
    change.refresh_from_db()
    order.refresh_from_db()
    assert (change.state, order.status) == (OrderChangeState.MADE, OrderStatus.CANCELLED)
    assert [message.to for message in mail.outbox] == [["bob@example.com"]]
    assert list(Event.objects.values_list("type", flat=True)) == [EventType.ORDER_CANCELLED]
    assert ShopWrite.objects.get(change=change).outcome == ShopWriteOutcome.MADE


def test_an_address_change_is_sent_to_shopify_as_its_shipping_address(
    shopify, django_capture_on_commit_callbacks
):
    order = _shopify_order(ship_to="Maria Souza", ship_line1="Av. Paulista 1000", ship_city="São Paulo",
                           ship_state="SP", ship_zip="01310-100", ship_country="BR")  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        change = order_shipping_address_change(order=order, address=NEW_ADDRESS)

    [(method, path, _, body)] = shopify.requests
    assert (method, path) == ("PUT", "/admin/api/2025-07/orders/450789469.json")
    assert body == {
        "order": {
            "id": 450789469,
            "shipping_address": {
                "first_name": "Maria de", "last_name": "Souza", "address1": "Rua Augusta 500",
                "address2": "Apto 12", "city": "São Paulo", "province_code": "SP", "zip": "01305-000",
                "country_code": "BR",
            },
        }
    }  # fmt: skip
    order.refresh_from_db()
    change.refresh_from_db()
    assert change.state == OrderChangeState.MADE
    assert (order.ship_line1, order.ship_zip) == ("Rua Augusta 500", "01305-000")
    assert len(mail.outbox) == 1


def test_an_order_of_another_shopify_shop_is_never_sent_to_the_shop_the_credentials_reach(
    shopify, settings, django_capture_on_commit_callbacks
):
    """Two Shopify shops and the token of one (SHOPIFY_SHOP_DOMAIN's): the other's order, whose id may
    be an order of the first, is not changed there; it is kept for staff, saying why."""
    settings.SHOPIFY_SHOP_DOMAIN = "our-books.myshopify.com"
    other = shop_of_platform(platform=OrderSource.SHOPIFY, address="other-books.myshopify.com")
    theirs = _shopify_order(shop=other)
    ours = _shopify_order(
        shop=shop_of_platform(platform=OrderSource.SHOPIFY, address=settings.SHOPIFY_SHOP_DOMAIN)
    )

    refused = _cancel_queued(theirs, django_capture_on_commit_callbacks)
    made = _cancel_queued(ours, django_capture_on_commit_callbacks)

    refused.refresh_from_db()
    made.refresh_from_db()
    assert (refused.state, made.state) == (OrderChangeState.SHOP_FAILED, OrderChangeState.MADE)
    assert (
        "reaches other-books.myshopify.com" in refused.shop_answer and "another shop's" in refused.shop_answer
    )
    [(method, path, _, _)] = shopify.requests  # ours alone
    assert (method, path) == ("POST", "/admin/api/2025-07/orders/450789469/cancel.json")


def test_a_change_shopify_refuses_is_kept_for_staff_and_never_told_as_done(
    shopify, django_capture_on_commit_callbacks
):
    order = _shopify_order()
    shopify.answers = [(422, {"errors": {"base": ["Cannot cancel an order that has been fulfilled"]}})]
    change = _cancel_queued(order, django_capture_on_commit_callbacks)

    change.refresh_from_db()
    order.refresh_from_db()
    assert change.state == OrderChangeState.SHOP_FAILED
    assert change.shop_answer == "422: Cannot cancel an order that has been fulfilled"  # Shopify's words
    assert order.status == OrderStatus.PROCESSING and not Event.objects.exists()
    # The customer, told it was asked, is emailed that it was not: our words, not Shopify's (staff's).
    [email] = mail.outbox
    assert (email.to, email.subject) == (
        ["bob@example.com"],
        f"Your order {order.number} could not be cancelled",
    )
    assert (
        f"The store could not cancel order {order.number}. A member of our team can help: reply to this "
        "email, or ask for a person in our chat." in email.body
    )
    assert "fulfilled" not in email.body
    write = ShopWrite.objects.get(change=change)
    assert (write.outcome, write.attempts) == (ShopWriteOutcome.REFUSED, 1)  # a refusal is not retried
    # The order can be cancelled again (by staff, or the customer): the one-cancellation rule holds
    # only for a cancellation made or asked.
    assert order_change_check(order=order, kind=OrderChangeKind.CANCELLED).allowed
    _cancel_queued(order, django_capture_on_commit_callbacks)
    order.refresh_from_db()
    assert order.status == OrderStatus.CANCELLED


def test_a_cancellation_whose_answer_was_lost_is_made_when_shopify_says_it_is_cancelled(
    shopify, django_capture_on_commit_callbacks
):
    order = _shopify_order()
    shopify.answers = [(422, {"error": "Order has already been cancelled"})]
    shopify.cancelled_at = "2026-11-27T10:00:00-05:00"
    change = _cancel_queued(order, django_capture_on_commit_callbacks)

    change.refresh_from_db()
    assert change.state == OrderChangeState.MADE
    assert [request[0] for request in shopify.requests] == ["POST", "GET"]


def test_a_shop_that_cannot_be_reached_is_asked_again_on_a_back_off_then_staff_see_it(shopify):
    order = _shopify_order()
    change = order_cancel(order=order)  # its commit's signal lost: the sweep finds it
    now = timezone.now()
    assert shop_writes_take_due(now=now) == []  # not yet: its signal may still come
    later = now + timedelta(minutes=2)
    [write_id] = shop_writes_take_due(now=later)
    shopify.answers = [(503, {"errors": "Unavailable"})] * 5 * SHOP_WRITE_ATTEMPTS

    write = shop_write_attempt(write_id=write_id, now=later, sleep=lambda seconds: None)
    assert (write.attempts, write.outcome) == (1, ShopWriteOutcome.PENDING)
    assert "503" in write.answer
    # A second task for the same write (the queue and the sweep both) finds no attempt due.
    assert shop_write_attempt(write_id=write_id, now=later, sleep=lambda seconds: None).attempts == 1
    assert shop_writes_take_due(now=later) == []
    when = later
    for _ in range(SHOP_WRITE_ATTEMPTS - 1):
        when = ShopWrite.objects.get(pk=write_id).next_attempt_at
        assert shop_writes_take_due(now=when) == [write_id]
        write = shop_write_attempt(write_id=write_id, now=when, sleep=lambda seconds: None)
    assert (write.attempts, write.outcome) == (SHOP_WRITE_ATTEMPTS, ShopWriteOutcome.FAILED)
    assert when - later >= timedelta(minutes=60)  # over an hour of the shop's outage, not five minutes
    change.refresh_from_db()
    order.refresh_from_db()
    assert change.state == OrderChangeState.SHOP_FAILED
    assert change.shop_answer.startswith(
        f"the shop could not be reached after {SHOP_WRITE_ATTEMPTS} attempts"
    )
    assert order.status == OrderStatus.PROCESSING and mail.outbox == []


def test_woocommerce_is_asked_with_its_rest_api_key(woocommerce, django_capture_on_commit_callbacks):
    order = OrderFactory.create(source="woocommerce", shop_order_id="723", customer_email="joao@example.com",
                         ship_to="João Silva", ship_line1="Av. Brasil 432", ship_city="Rio de Janeiro",
                         ship_state="RJ", ship_zip="12345-000", ship_country="BR")  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        order_shipping_address_change(order=order, address=NEW_ADDRESS)
    _cancel_queued(order, django_capture_on_commit_callbacks)

    (_, path, headers, readdressed), (_, _, _, cancelled) = woocommerce.requests
    assert path == "/wp-json/wc/v3/orders/723"
    assert headers["Authorization"] == "Basic " + base64.b64encode(b"ck_key:cs_secret").decode()
    assert readdressed == {
        "shipping": {
            "first_name": "Maria de", "last_name": "Souza", "address_1": "Rua Augusta 500",
            "address_2": "Apto 12", "city": "São Paulo", "state": "SP", "postcode": "01305-000",
            "country": "BR",
        }
    }  # fmt: skip
    assert cancelled == {"status": "cancelled"}
    order.refresh_from_db()
    assert (order.status, order.ship_line1) == (OrderStatus.CANCELLED, "Rua Augusta 500")


def test_an_order_no_platform_sent_is_changed_in_bookly_alone(shopify):
    order = OrderFactory.create(source="api")
    change = order_cancel(order=order)
    assert change.state == OrderChangeState.MADE
    assert shopify.requests == [] and not ShopWrite.objects.exists()


def test_the_shops_own_updates_while_it_is_asked_are_taken(shopify, django_capture_on_commit_callbacks):
    """A change waiting for the shop is not Bookly's yet: the shop's next version (still processing,
    a new total) is no conflict with it."""
    from orders.intake import incoming_order_clean, order_upsert

    order = _shopify_order()
    with django_capture_on_commit_callbacks(execute=False):
        order_cancel(order=order)
    data = {"customer_name": "Bob", "customer_email": "bob@example.com", "status": "processing",
            "ordered_on": "2026-04-01", "total": "12.00",
            "items": [{"line_number": 1, "title": "Dune", "author": "Frank Herbert", "unit_price": "12.00",
                       "quantity": 1}]}  # fmt: skip
    _, outcome = order_upsert(
        incoming=incoming_order_clean(number=order.number, data=data),
        source=OrderSource.SHOPIFY,
        shop=order.shop,
    )
    assert outcome == "updated"


@pytest.mark.parametrize("status", [OrderStatus.SHIPPED, OrderStatus.DELIVERED])
def test_an_order_shipped_before_the_shop_was_asked_is_not_asked_and_staff_see_why(shopify, status):
    order = _shopify_order()
    change = order_cancel(order=order)
    delivered_on = order.ordered_on if status == OrderStatus.DELIVERED else None
    Order.objects.filter(pk=order.pk).update(
        status=status, tracking_number="1Z999", delivered_on=delivered_on
    )  # the shop's webhook, meanwhile
    [write_id] = shop_writes_take_due(now=timezone.now() + timedelta(minutes=2))
    shop_write_attempt(write_id=write_id, now=timezone.now() + timedelta(minutes=2))

    assert shopify.requests == []
    change.refresh_from_db()
    assert (change.state, change.shop_answer) == (
        OrderChangeState.SHOP_FAILED, f"not asked: the order is {status} now",
    )  # fmt: skip
    assert mail.outbox == []


def test_an_order_the_shop_cancelled_meanwhile_is_cancelled_here_without_asking(
    shopify, django_capture_on_commit_callbacks
):
    order = _shopify_order()
    change = order_cancel(order=order)
    Order.objects.filter(pk=order.pk).update(status=OrderStatus.CANCELLED)
    [write_id] = shop_writes_take_due(now=timezone.now() + timedelta(minutes=2))
    with django_capture_on_commit_callbacks(execute=True):
        shop_write_attempt(write_id=write_id, now=timezone.now() + timedelta(minutes=2))

    assert shopify.requests == []
    change.refresh_from_db()
    assert change.state == OrderChangeState.MADE and len(mail.outbox) == 1


def test_a_change_made_is_made_once_whoever_says_so_again(shopify, django_capture_on_commit_callbacks):
    order = _shopify_order()
    change = _cancel_queued(order, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        order_change_shop_made(change_id=change.pk)  # a late duplicate task, or the sweep
        order_change_shop_failed(change_id=change.pk, answer="late")
    change.refresh_from_db()
    assert change.state == OrderChangeState.MADE and change.shop_answer == ""
    assert len(mail.outbox) == 1 and Event.objects.count() == 1
    write = ShopWrite.objects.get()
    write.next_attempt_at = timezone.now()
    write.save()
    shop_write_attempt(write_id=write.pk, now=timezone.now() + timedelta(minutes=1))
    assert len(shopify.requests) == 1  # asked once


def test_a_last_attempt_that_never_ended_is_recorded_as_failed(shopify):
    """Its worker killed at the queue's timeout: the sweep finds it due again, with no attempts left."""
    order = _shopify_order()
    change = order_cancel(order=order)
    later = timezone.now() + timedelta(minutes=2)
    [write_id] = shop_writes_take_due(now=later)
    ShopWrite.objects.filter(pk=write_id).update(attempts=SHOP_WRITE_ATTEMPTS, next_attempt_at=later)
    write = shop_write_attempt(write_id=write_id, now=later)

    assert write.outcome == ShopWriteOutcome.FAILED and shopify.requests == []
    change.refresh_from_db()
    assert change.state == OrderChangeState.SHOP_FAILED


def test_an_attempt_ends_within_a_minute_whatever_the_shop_asks_to_wait(shopify):
    """Within the queue's task timeout: a Retry-After past the minute ends this attempt (the next comes
    by the back-off), never the worker."""
    order = _shopify_order()
    order_cancel(order=order)
    later = timezone.now() + timedelta(minutes=2)
    [write_id] = shop_writes_take_due(now=later)
    shopify.answers = [(429, {"errors": "Exceeded 2 calls per second"}, {"Retry-After": "90"})]
    waited: list[float] = []
    write = shop_write_attempt(write_id=write_id, now=later, sleep=waited.append)

    assert waited == [] and write.outcome == ShopWriteOutcome.PENDING
    assert "no answer within 60 seconds" in write.answer


def test_an_attempt_at_a_stalled_shop_ends_within_its_budget_and_is_tried_again_later(shopify, monkeypatch):
    """Each try cut at its deadline (a second here), and the attempt, all its tries and waits, at the
    write's budget (2.5 s here, 60 s in production): it ends as an unreachable shop's does, well before
    the queue would kill its worker."""
    monkeypatch.setattr(platform_http, "ATTEMPT_SECONDS", 1.0)
    monkeypatch.setattr(write_back, "_ATTEMPT_SECONDS", 2.5)
    order = _shopify_order()
    order_cancel(order=order)
    later = timezone.now() + timedelta(minutes=2)
    [write_id] = shop_writes_take_due(now=later)
    shopify.stalled = 10.0
    started = time.monotonic()

    write = shop_write_attempt(write_id=write_id, now=later, sleep=lambda seconds: None)

    # Well before the shop's 10 s (not a timing measure: a loaded machine may take longer than 2.5 s).
    assert time.monotonic() - started < 8.0
    assert (write.attempts, write.outcome) == (1, ShopWriteOutcome.PENDING)
    assert write.answer == "no answer within 2.5 seconds"
    # A second each: two tries fit the budget (one, on a machine slow to connect); never the third.
    assert 1 <= len(shopify.requests) <= 2


def test_an_attempt_takes_at_most_its_share_of_the_queue_s_task_timeout(settings):
    assert write_back._attempt_seconds() == 60.0 < settings.Q_CLUSTER["timeout"]  # 100 s
    settings.Q_CLUSTER = {**settings.Q_CLUSTER, "timeout": 40}
    assert write_back._attempt_seconds() == 24.0
