"""Operators and staff see the outbox: Prometheus metrics read from the rows, the admin home's line."""

import re
from datetime import timedelta

import pytest
import yaml
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from connection.metrics import OutboxCollector
from connection.models import DeliveryStatus, WebhookDelivery
from orders.services import order_cancel
from orders.tests.factories import OrderFactory

pytestmark = pytest.mark.django_db


def _scraped(client) -> dict[tuple[str, tuple], float]:
    text = client.get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name.startswith(("bookly_webhook", "bookly_events"))
    }


@pytest.fixture
def two_events(endpoint, receiver, django_capture_on_commit_callbacks):
    """Two orders cancelled: their events sent once each, the receiver answering as the test set."""

    def send(*answers):
        receiver.answers = list(answers)
        with django_capture_on_commit_callbacks(execute=True):
            order_cancel(order=OrderFactory.create())
            order_cancel(order=OrderFactory.create())

    return send


def test_the_scrape_counts_deliveries_by_status_and_the_age_of_the_oldest_waiting(client, two_events):
    two_events(200, 500)
    # Due ten minutes ago and not yet taken: the queue is ten minutes behind.
    WebhookDelivery.objects.filter(status=DeliveryStatus.PENDING).update(
        next_attempt_at=timezone.now() - timedelta(minutes=10)
    )
    scraped = _scraped(client)
    assert scraped[("bookly_webhook_deliveries", (("status", "pending"),))] == 1
    assert scraped[("bookly_webhook_deliveries", (("status", "delivered"),))] == 1
    assert scraped[("bookly_webhook_deliveries_retrying", ())] == 1
    assert 600 <= scraped[("bookly_webhook_queue_age_seconds", ())] < 700
    assert scraped[("bookly_webhook_attempts", ())] == 2
    assert scraped[("bookly_events_undispatched", ())] == 0


def test_the_webhook_alert_rules_read_only_metrics_that_exist(settings):
    rules = yaml.safe_load((settings.BASE_DIR / "deploy/prometheus/webhook-alerts.yml").read_text())
    exposed = set()
    for family in OutboxCollector().describe():
        exposed.add(family.name)
    alerts = [rule for group in rules["groups"] for rule in group["rules"]]
    assert {rule["alert"] for rule in alerts} == {"BooklyWebhookDeliveriesFailed", "BooklyWebhookQueueStale"}
    for rule in alerts:
        referenced = set(re.findall(r"\bbookly_[a-z_]+", rule["expr"]))
        assert referenced and referenced <= exposed, rule["alert"]


def test_the_admin_home_shows_failed_and_waiting_deliveries_to_superusers(
    superuser_client, endpoint, two_events
):
    two_events(500, 500)
    latest = WebhookDelivery.objects.first()
    assert latest is not None
    WebhookDelivery.objects.filter(pk=latest.pk).update(status=DeliveryStatus.FAILED)
    home = superuser_client.get("/admin/").content.decode()
    found = re.search(r'id="webhook-outbox".*?</p>', home, re.S)
    assert found is not None
    line = found.group(0)
    assert "<strong>1</strong> webhook delivery failed" in line
    assert "1 waiting" in line and endpoint.url in line


def test_the_admin_home_says_nothing_of_webhooks_to_support_staff(staff_client, endpoint):
    assert 'id="webhook-outbox"' not in staff_client.get("/admin/").content.decode()
