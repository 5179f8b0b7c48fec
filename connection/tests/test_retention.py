"""The events' retention: `purge_events` deletes what is done with and keeps what is still owed, events out
and what shop platforms sent in alike."""

import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from connection.models import DeliveryStatus, ShopEvent, WebhookDelivery
from orders.models import Event
from orders.services import order_cancel
from orders.tests.factories import OrderFactory


@pytest.fixture
def events(endpoint, receiver, django_capture_on_commit_callbacks):
    """Five cancellations, each an event delivered to the receiver, then told apart."""
    receiver.answers = [200, 200, 500, 200, 200]
    with django_capture_on_commit_callbacks(execute=True):
        for _ in range(5):
            order_cancel(order=OrderFactory.create())
    delivered, failed, owed, undispatched, recent = Event.objects.order_by("id")
    WebhookDelivery.objects.filter(event=failed).update(status=DeliveryStatus.FAILED)
    assert WebhookDelivery.objects.get(event=owed).status == DeliveryStatus.PENDING  # tried again later
    WebhookDelivery.objects.filter(event=undispatched).delete()
    Event.objects.filter(pk=undispatched.pk).update(dispatched_at=None)
    old = timezone.now() - timedelta(days=31)
    Event.objects.exclude(pk=recent.pk).update(occurred_at=old)
    return delivered, failed, owed, undispatched, recent


def test_old_events_done_with_go_with_their_deliveries_and_the_rest_stay(events):
    delivered, failed, owed, undispatched, recent = events
    out = io.StringIO()
    call_command("purge_events", stdout=out)
    assert "Deleted 2 event(s) older than 30 days" in out.getvalue()
    assert not Event.objects.filter(pk__in=[delivered.pk, failed.pk]).exists()
    assert set(Event.objects.values_list("pk", flat=True)) == {owed.pk, undispatched.pk, recent.pk}
    assert set(WebhookDelivery.objects.values_list("event_id", flat=True)) == {owed.pk, recent.pk}


def test_the_period_is_the_operator_s(events):
    call_command("purge_events", "--days", "40", stdout=io.StringIO())
    assert Event.objects.count() == 5


def test_what_a_shop_sent_goes_once_applied_and_old_and_what_is_pending_stays(db):
    old = timezone.now() - timedelta(days=31)
    fields = {"platform": "shopify", "topic": "orders/create", "body": {"email": "ada@example.com"}}
    applied = ShopEvent.objects.create(delivery_id="a", received_at=old, applied_at=old, **fields)
    pending = ShopEvent.objects.create(delivery_id="p", received_at=old, **fields)
    recent = ShopEvent.objects.create(delivery_id="r", applied_at=timezone.now(), **fields)
    out = io.StringIO()

    call_command("purge_events", stdout=out)

    assert "Deleted 1 shop event(s) applied" in out.getvalue()
    assert set(ShopEvent.objects.values_list("pk", flat=True)) == {pending.pk, recent.pk}
    assert not ShopEvent.objects.filter(pk=applied.pk).exists()
