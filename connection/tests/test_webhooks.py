"""Bookly's changes reach the store's webhook receiver, signed as Standard Webhooks says, at least once.

The receiver is a real HTTP server (the `receiver` fixture) and verifies every request with the
`standardwebhooks` package, as the README shows a store's receiver doing. Tasks run at once here
(the test settings' sync queue); test_worker.py runs them in a real worker process.
"""

import contextlib
import json
import re
import socket
from datetime import date, timedelta
from typing import Any

import pytest
from django.db import transaction
from django.utils import timezone
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from connection.deliveries import (
    HOLD_NEW_EVENTS,
    MAX_ATTEMPTS,
    RETRY_DELAYS,
    EndpointRefused,
    _claim,
    delivery_attempt,
    delivery_claim,
    delivery_record,
    delivery_send_again,
    event_dispatch,
    webhook_endpoint_create,
    webhook_url_problem,
)
from connection.models import DeliveryStatus, WebhookDelivery
from connection.tasks import deliveries_sweep_task
from orders.models import Event, EventType, Order, OrderSource, ReturnRecord
from orders.services import (
    order_cancel,
    return_record_create,
)
from orders.shops import shop_of_platform
from orders.tests.factories import OrderFactory, delivered_order, one_change_of_each_kind

TODAY = date(2026, 4, 14)
ADDRESS = {
    "to": "Ana Diaz",
    "line1": "12 Elm St",
    "line2": "",
    "city": "Springfield",
    "state": "IL",
    "zip": "62701",
    "country": "US",
}

pytestmark = pytest.mark.django_db


def verified(receiver, endpoint) -> list[dict]:
    """What the receiver got, each request verified with the endpoint's secret."""
    return [Webhook(endpoint.secret).verify(request.body, request.headers) for request in receiver.received]


def _make_due(delivery: WebhookDelivery) -> None:
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        next_attempt_at=timezone.now() - timedelta(seconds=1)
    )


def test_every_change_bookly_makes_reaches_the_receiver_signed(
    endpoint, receiver, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        made = one_change_of_each_kind(today=TODAY)
    order, record, to_cancel = made["order"], made["record"], made["cancelled"]
    assert isinstance(order, Order) and isinstance(record, ReturnRecord) and isinstance(to_cancel, Order)

    payloads = verified(receiver, endpoint)
    assert [payload["type"] for payload in payloads] == [
        EventType.RETURN_CREATED,
        EventType.RETURN_STATUS_CHANGED,
        EventType.ORDER_CANCELLED,
        EventType.ORDER_ADDRESS_CHANGED,
        EventType.DELIVERY_CASE_OPENED,
        EventType.DELIVERY_CASE_RESOLVED,
    ]
    created, moved, cancelled, address, opened, resolved = (payload["data"] for payload in payloads)
    assert created["return"]["rma_number"] == record.rma_number and created["return"]["status"] == "initiated"
    assert (moved["from_status"], moved["to_status"]) == ("initiated", "label_sent")
    assert cancelled["order"] == {**cancelled["order"], "number": to_cancel.number, "status": "cancelled"}
    assert (
        address["order"]["shipping_address"]["line1"] == "12 Elm St" and address["previous_address"] is None
    )
    assert opened["case"]["problem"] == "damaged" and opened["case"]["order_number"] == order.number
    assert resolved["case"]["resolution"] == "A new copy is on its way."
    ids = [request.headers["webhook-id"] for request in receiver.received]
    assert ids == list(Event.objects.order_by("id").values_list("public_id", flat=True))
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {DeliveryStatus.DELIVERED}


def test_a_body_changed_on_the_way_or_signed_with_another_secret_fails_verification(
    endpoint, receiver, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order=OrderFactory.create())
    request = receiver.received[0]
    with pytest.raises(WebhookVerificationError):
        Webhook(endpoint.secret).verify(request.body.replace(b"cancelled", b"delivered"), request.headers)
    other = webhook_endpoint_create(url=receiver.url, event_types=[])
    with pytest.raises(WebhookVerificationError):
        Webhook(other.secret).verify(request.body, request.headers)


def test_a_change_that_rolls_back_sends_nothing_and_keeps_no_event(
    endpoint, receiver, django_capture_on_commit_callbacks
):
    order = OrderFactory.create()
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError), transaction.atomic():
        order_cancel(order=order)
        raise RuntimeError("something after the cancellation failed")
    assert not Event.objects.exists()
    assert receiver.received == []


def test_an_endpoint_receives_only_the_types_it_chose_and_an_inactive_one_nothing(
    receiver, django_capture_on_commit_callbacks
):
    returns_only = webhook_endpoint_create(url=receiver.url, event_types=[EventType.RETURN_CREATED])
    webhook_endpoint_create(url=receiver.url + "/off", event_types=[]).__class__.objects.filter(
        url=receiver.url + "/off"
    ).update(is_active=False)
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order=OrderFactory.create())
        return_record_create(order=delivered_order(days_ago=5, today=TODAY), reason="Too big", today=TODAY)
    assert [payload["type"] for payload in verified(receiver, returns_only)] == [EventType.RETURN_CREATED]


def test_a_shops_endpoint_receives_its_orders_events_alone_each_naming_its_shop(
    receiver, django_capture_on_commit_callbacks
):
    """Two shops may each have an order of one number: a shop's backend gets its own orders' events, an
    endpoint for every shop gets all, and each event says whose order it is."""
    ours = shop_of_platform(platform=OrderSource.SHOPIFY, address="books.myshopify.com")
    theirs = shop_of_platform(platform=OrderSource.WOOCOMMERCE, address="https://books.example")
    for_ours = webhook_endpoint_create(url=receiver.url + "/ours", event_types=[], shop=ours)
    for_all = webhook_endpoint_create(url=receiver.url + "/all", event_types=[])
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order=OrderFactory.create(number="BK-40001", shop=ours))
        order_cancel(order=OrderFactory.create(number="BK-40001", shop=theirs))

    def signed_for(endpoint) -> list[dict]:  # one receiver, two endpoints: each its own secret's
        got = []
        for request in receiver.received:
            with contextlib.suppress(WebhookVerificationError):
                got.append(Webhook(endpoint.secret).verify(request.body, request.headers))
        return got

    assert [(p["data"]["shop"], p["data"]["order"]["number"]) for p in signed_for(for_ours)] == [
        ("books.myshopify.com", "BK-40001")
    ]
    assert sorted(p["data"]["shop"] for p in signed_for(for_all)) == ["books.example", "books.myshopify.com"]


def test_an_unknown_event_type_is_refused_by_name():
    with pytest.raises(EndpointRefused, match=r"order\.shipped"):
        webhook_endpoint_create(url="http://127.0.0.1:9/hooks", event_types=["order.shipped"])


@pytest.mark.parametrize(
    ("answer", "seen"),
    [
        (500, "receiver says no"),
        (("slow", 3), "No answer within 2 seconds."),
        (
            ("redirect", "http://127.0.0.1:9/elsewhere"),
            "Redirected to http://127.0.0.1:9/elsewhere: not followed.",
        ),
    ],
)
def test_a_receiver_that_fails_gets_the_same_event_again_after_its_back_off(
    endpoint, receiver, django_capture_on_commit_callbacks, answer, seen
):
    receiver.answers = [answer]
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order=OrderFactory.create())
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_response) == (DeliveryStatus.PENDING, 1, seen)
    assert timedelta(seconds=50) < delivery.next_attempt_at - timezone.now() <= timedelta(minutes=1)

    deliveries_sweep_task()  # not due yet: nothing is sent
    assert len(receiver.received) == 1
    _make_due(delivery)
    deliveries_sweep_task()
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == (
        DeliveryStatus.DELIVERED,
        2,
        200,
    )
    first, second = receiver.received
    assert first.headers["webhook-id"] == second.headers["webhook-id"] and first.body == second.body
    assert len(verified(receiver, endpoint)) == 2


def test_an_unreachable_receiver_is_kept_trying(db, django_capture_on_commit_callbacks):
    endpoint = webhook_endpoint_create(url="http://127.0.0.1:9/hooks", event_types=[])  # the discard port
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order=OrderFactory.create())
    delivery = WebhookDelivery.objects.get(endpoint=endpoint)
    assert delivery.status == DeliveryStatus.PENDING and delivery.last_status_code is None
    assert delivery.last_response.startswith("Could not connect")


def test_after_about_a_day_of_failures_the_delivery_fails_and_staff_can_send_it_again(
    endpoint, receiver, django_capture_on_commit_callbacks
):
    receiver.answers = [503] * MAX_ATTEMPTS
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order=OrderFactory.create())
    delivery = WebhookDelivery.objects.get()
    waits = []
    while delivery.status == DeliveryStatus.PENDING:
        assert delivery.last_attempt_at is not None
        waits.append(delivery.next_attempt_at - delivery.last_attempt_at)
        _make_due(delivery)
        delivery_attempt(delivery_id=delivery.pk)
        delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.FAILED, MAX_ATTEMPTS)
    # Each wait is counted from the end of its attempt: the attempt's own time (a slow POST on a loaded
    # machine) comes on top of the delay.
    assert len(waits) == len(RETRY_DELAYS)
    assert all(
        delay <= wait < delay + timedelta(seconds=30) for wait, delay in zip(waits, RETRY_DELAYS, strict=True)
    )
    assert timedelta(hours=24) < sum(waits, timedelta()) < timedelta(hours=30)
    deliveries_sweep_task()
    assert len(receiver.received) == MAX_ATTEMPTS  # failed: not tried again by itself

    assert delivery_send_again(delivery=delivery)
    deliveries_sweep_task()
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.DELIVERED
    assert len({request.headers["webhook-id"] for request in receiver.received}) == 1


def test_two_workers_holding_the_same_due_delivery_send_it_once(endpoint, receiver):
    order_cancel(order=OrderFactory.create())  # no commit callbacks: dispatched by the sweep below
    (delivery_id,) = event_dispatch(event_id=Event.objects.get().pk)
    now = timezone.now()
    first = delivery_claim(delivery_id=delivery_id, now=now)
    second = delivery_claim(delivery_id=delivery_id, now=now)
    assert first is not None and first.attempts == 1
    assert second is None


def test_an_attempt_whose_worker_died_is_sent_again_with_the_same_id(endpoint, receiver):
    order_cancel(order=OrderFactory.create())
    deliveries_sweep_task()  # dispatches the event whose commit signal this test never sent
    assert len(receiver.received) == 1
    delivery = WebhookDelivery.objects.get()
    # A worker claims the next attempt and is killed before it records anything: the row stays SENDING.
    WebhookDelivery.objects.filter(pk=delivery.pk).update(status=DeliveryStatus.PENDING)
    claimed = delivery_claim(delivery_id=delivery.pk, now=timezone.now())
    assert claimed is not None and claimed.status == DeliveryStatus.SENDING
    deliveries_sweep_task()  # its lease has not run out: left alone
    assert len(receiver.received) == 1
    WebhookDelivery.objects.filter(pk=delivery.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    deliveries_sweep_task()
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.DELIVERED, 3)
    assert receiver.received[0].headers["webhook-id"] == receiver.received[1].headers["webhook-id"]


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/hooks",
        "http://localhost:8000/hooks",
        "http://10.0.0.5/hooks",
        "http://192.168.1.20/hooks",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/hooks",
        "http://[::ffff:127.0.0.1]/hooks",
        "http://0.0.0.0/hooks",
        "http://[64:ff9b::a00:5]/hooks",  # NAT64 of 10.0.0.5
        "http://[2002:7f00:1::]/hooks",  # 6to4 of 127.0.0.1
        "http://[::127.0.0.1]/hooks",
        "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hooks",  # Teredo, client 127.0.0.1
        "http://[64:ff9b:1::808:808]/hooks",  # NAT64 for local use: a translator of one's own network
        "http://[::ffff:0:a00:1]/hooks",  # IPv4-translated (SIIT) 10.0.0.1
        "http://[::ffff:0:0]/hooks",  # IPv4-mapped 0.0.0.0
        "http://192.0.0.9/hooks",  # IETF protocol assignments, which Python calls global
        "http://192.0.0.170/hooks",
        "http://224.0.0.1/hooks",  # multicast
        "http://239.255.255.250/hooks",
        "http://[ff0e::1]/hooks",
        "http://[::ffff:239.1.1.1]/hooks",
    ],
)
def test_a_url_reaching_into_bookly_s_own_network_is_refused(settings, url):
    settings.BOOKLY_WEBHOOKS_ALLOW_PRIVATE_URLS = False
    with pytest.raises(EndpointRefused, match="loopback, private or link-local"):
        webhook_endpoint_create(url=url, event_types=[])


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("ftp://shop.example/hooks", "http:// or https://"),
        ("https://user:pw@shop.example/hooks", "user name or password"),
        ("https://shop.example:99999/hooks", "not a valid URL"),
    ],
)
def test_a_url_bookly_cannot_send_to_says_why(url, problem):
    assert problem in (webhook_url_problem(url) or "")


def test_a_public_address_is_accepted(settings):
    settings.BOOKLY_WEBHOOKS_ALLOW_PRIVATE_URLS = False
    assert webhook_url_problem("https://93.184.215.14/hooks") is None


def test_an_endpoint_whose_address_turned_private_is_not_contacted(
    endpoint, receiver, settings, django_capture_on_commit_callbacks
):
    settings.BOOKLY_WEBHOOKS_ALLOW_PRIVATE_URLS = False  # as if its name now resolved to 127.0.0.1
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order=OrderFactory.create())
    delivery = WebhookDelivery.objects.get()
    assert receiver.received == []
    assert delivery.status == DeliveryStatus.PENDING and "private" in delivery.last_response


def test_the_body_is_the_event_as_recorded(endpoint, receiver, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        order = OrderFactory.create()
        order_cancel(order=order)
    event = Event.objects.get()
    body = json.loads(receiver.received[0].body)
    assert body == {"type": "order.cancelled", "timestamp": event.occurred_at.isoformat(), "data": event.data}


def test_the_readme_s_receiver_verifies_a_real_delivery_and_handles_it_once(
    endpoint, receiver, settings, monkeypatch, django_capture_on_commit_callbacks
):
    readme = (settings.BASE_DIR / "docs" / "store-developers.md").read_text()
    found = re.search(r"A receiver in Python.*?```python\n(.*?)```", readme, re.S)
    assert found is not None
    code = found.group(1)
    monkeypatch.setenv("BOOKLY_WEBHOOK_SECRET", endpoint.secret)
    seen: set[str] = set()
    handled: list[tuple[object, ...]] = []

    def first_time(id: str) -> bool:
        if id in seen:
            return False
        seen.add(id)
        return True

    # What the README's code defines is the README's.
    namespace: dict[str, Any] = {"first_time": first_time, "handle": lambda *event: handled.append(event)}
    exec(code, namespace)  # noqa: S102 - the README's own example
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order=OrderFactory.create())
    request = receiver.received[0]
    headers = dict(request.headers)

    assert namespace["receive"](request.body, headers) == 200
    assert namespace["receive"](request.body, headers) == 200  # the same event again
    assert [event_type for event_type, _ in handled] == ["order.cancelled"]
    assert namespace["receive"](request.body.replace(b"cancelled", b"delivered"), headers) == 400


def test_an_endpoint_turned_off_is_not_sent_its_waiting_deliveries(
    endpoint, receiver, django_capture_on_commit_callbacks
):
    receiver.answers = [500]
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order=OrderFactory.create())
    delivery = WebhookDelivery.objects.get()
    endpoint.__class__.objects.filter(pk=endpoint.pk).update(is_active=False)
    _make_due(delivery)
    deliveries_sweep_task()
    assert len(receiver.received) == 1
    assert WebhookDelivery.objects.get().status == DeliveryStatus.PENDING  # kept, should it be turned on


def test_an_attempt_that_crashes_is_recorded_and_tried_again(
    endpoint, receiver, monkeypatch, django_capture_on_commit_callbacks
):
    def broken(*args, **kwargs):
        raise RuntimeError("a bug in the HTTP client")

    monkeypatch.setattr("httpx2.Client.stream", broken)
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order=OrderFactory.create())
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.PENDING, 1)
    assert delivery.last_response == "Could not send (RuntimeError)."


def test_an_attempt_abandoned_on_the_last_try_fails_instead_of_going_on(endpoint, receiver):
    order_cancel(order=OrderFactory.create())
    (delivery_id,) = event_dispatch(event_id=Event.objects.get().pk)
    WebhookDelivery.objects.filter(pk=delivery_id).update(
        status=DeliveryStatus.SENDING,
        attempts=MAX_ATTEMPTS,
        lease_until=timezone.now() - timedelta(seconds=1),
        queued_at=None,  # as its claim left it
    )
    deliveries_sweep_task()
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, receiver.received) == (
        DeliveryStatus.FAILED,
        MAX_ATTEMPTS,
        [],
    )


def test_a_claim_made_on_a_stale_read_takes_nothing(endpoint, receiver):
    order_cancel(order=OrderFactory.create())
    (delivery_id,) = event_dispatch(event_id=Event.objects.get().pk)
    as_read_by_both = WebhookDelivery.objects.get(pk=delivery_id)
    now = timezone.now()
    assert _claim(as_read_by_both, now) is not None
    assert _claim(as_read_by_both, now) is None  # the other worker's copy still says attempts=0
    assert WebhookDelivery.objects.get().attempts == 1


def test_an_attempt_whose_lease_was_taken_back_does_not_record_over_the_newer_one(endpoint, receiver):
    order_cancel(order=OrderFactory.create())
    (delivery_id,) = event_dispatch(event_id=Event.objects.get().pk)
    slow = delivery_claim(delivery_id=delivery_id, now=timezone.now())
    WebhookDelivery.objects.filter(pk=delivery_id).update(lease_until=timezone.now() - timedelta(seconds=1))
    newer = delivery_claim(delivery_id=delivery_id, now=timezone.now())
    assert slow is not None and newer is not None
    assert delivery_record(delivery=newer, status_code=200, answer="ok") == DeliveryStatus.DELIVERED
    assert delivery_record(delivery=slow, status_code=500, answer="late") is None
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_response) == (DeliveryStatus.DELIVERED, 2, "ok")


@pytest.fixture
def names(monkeypatch):
    """A resolver that knows the names a test gives it (no DNS here): an address, or a list of them
    given out one a lookup (a name that rebinds), the last one from then on."""
    known: dict[str, str | list[str]] = {}
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host in known:
            given = known[host]
            answers = given if isinstance(given, list) else [given]
            address = answers.pop(0) if len(answers) > 1 else answers[0]
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return known


def test_a_host_is_checked_as_the_http_client_reads_it(settings, names):
    settings.BOOKLY_WEBHOOKS_ALLOW_PRIVATE_URLS = False
    names.update({"fass.example": "93.184.215.14", "xn--fa-hia.example": "10.0.0.5"})  # IDNA 2003 vs 2008
    assert "private" in (webhook_url_problem("https://faß.example/hooks") or "")


def test_an_attempt_connects_to_the_address_that_was_checked(
    endpoint, receiver, names, django_capture_on_commit_callbacks
):
    port = receiver.url.split(":")[2].split("/")[0]
    # Checked at 127.0.0.1, where the receiver listens; looked up again it would say 127.0.0.9.
    names["receiver.test"] = ["127.0.0.1", "127.0.0.9"]
    endpoint.__class__.objects.filter(pk=endpoint.pk).update(url=f"http://receiver.test:{port}/hooks")
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order=OrderFactory.create())
    (request,) = receiver.received
    assert {name.lower(): value for name, value in request.headers.items()}["host"] == f"receiver.test:{port}"
    assert WebhookDelivery.objects.get().status == DeliveryStatus.DELIVERED


def test_an_event_an_endpoint_fails_does_not_hold_up_another_to_it(
    endpoint, receiver, django_capture_on_commit_callbacks
):
    receiver.answers = [503]
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order=OrderFactory.create())
        order_cancel(order=OrderFactory.create())
    failing, other = WebhookDelivery.objects.order_by("id")
    assert (failing.status, failing.attempts) == (DeliveryStatus.PENDING, 1)
    assert failing.next_attempt_at > timezone.now()  # its back-off
    assert (other.status, other.attempts) == (DeliveryStatus.DELIVERED, 1)  # at once, not after the retry
    assert [json.loads(request.body)["data"]["order"]["number"] for request in receiver.received] == [
        failing.event.data["order"]["number"],
        other.event.data["order"]["number"],
    ]

    _make_due(failing)
    deliveries_sweep_task()
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {DeliveryStatus.DELIVERED}
    assert len(receiver.received) == 3


def test_an_endpoint_that_does_not_answer_gets_new_events_with_its_next_retry(
    db, django_capture_on_commit_callbacks
):
    endpoint = webhook_endpoint_create(url="http://127.0.0.1:9/hooks", event_types=[])  # the discard port
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order=OrderFactory.create())
        order_cancel(order=OrderFactory.create())
    first, second = WebhookDelivery.objects.filter(endpoint=endpoint).order_by("id")
    assert first.attempts == 1 and first.last_status_code is None
    # Not one wasted attempt per event on a dead endpoint: the new one waits with the retry.
    assert (second.attempts, second.next_attempt_at) == (0, first.next_attempt_at)


def test_an_endpoint_that_answers_again_is_sent_new_events_at_once_whatever_waits_from_before(
    endpoint, receiver, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order=OrderFactory.create())
        order_cancel(order=OrderFactory.create())
    old, latest = WebhookDelivery.objects.order_by("id")
    now = timezone.now()
    # An event that got no answer 40 minutes ago waits for its 2-hour retry; the endpoint answered since.
    WebhookDelivery.objects.filter(pk=old.pk).update(
        status=DeliveryStatus.PENDING,
        attempts=3,
        last_status_code=None,
        last_attempt_at=now - timedelta(minutes=40),
        next_attempt_at=now + timedelta(hours=2),
    )
    WebhookDelivery.objects.filter(pk=latest.pk).update(last_attempt_at=now - timedelta(minutes=1))
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order=OrderFactory.create())
    assert WebhookDelivery.objects.latest("id").status == DeliveryStatus.DELIVERED

    # Had its latest attempt got no answer, a new event would wait (at most HOLD_NEW_EVENTS).
    WebhookDelivery.objects.filter(pk=latest.pk).update(
        status=DeliveryStatus.PENDING,
        attempts=1,
        last_status_code=None,
        last_attempt_at=timezone.now(),
        next_attempt_at=now + timedelta(hours=1),
    )
    with django_capture_on_commit_callbacks(execute=True):
        order_cancel(order=OrderFactory.create())
    held = WebhookDelivery.objects.latest("id")
    assert held.attempts == 0 and held.next_attempt_at <= timezone.now() + HOLD_NEW_EVENTS
