"""Prometheus metrics of webhook deliveries, read from the database when Prometheus scrapes: the worker
processes that send them are not the web processes that serve /metrics, and the rows are the truth.

Names are a contract with deploy/prometheus/webhook-alerts.yml; labels only take DeliveryStatus values.
"""

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from connection.models import DeliveryStatus
from connection.selectors import OutboxState, outbox_state


class OutboxCollector(Collector):
    def describe(self) -> list[Metric]:
        return list(self._families(None))

    def collect(self) -> list[Metric]:
        return list(self._families(outbox_state()))

    def _families(self, state: OutboxState | None) -> Iterator[Metric]:
        deliveries = GaugeMetricFamily(
            "bookly_webhook_deliveries",
            "Webhook deliveries by status: pending (waiting, a first or another attempt), sending, "
            "delivered, failed (gave up after about a day; staff can send them again).",
            labels=["status"],
        )
        for status in DeliveryStatus.values:
            deliveries.add_metric([status], state.by_status.get(status, 0) if state else 0)
        yield deliveries
        yield GaugeMetricFamily(
            "bookly_webhook_deliveries_retrying",
            "Deliveries waiting for another attempt after a failed one.",
            value=state.retrying if state else 0,
        )
        yield GaugeMetricFamily(
            "bookly_webhook_queue_age_seconds",
            "How long the most overdue delivery has waited past its time (0 when none is late): the "
            "queue's lag, not a back-off.",
            value=state.queue_age_seconds if state else 0,
        )
        yield GaugeMetricFamily(
            "bookly_events_undispatched",
            "Events recorded but not yet handed to the endpoints (the sweep's backlog).",
            value=state.events_undispatched if state else 0,
        )
        yield GaugeMetricFamily(
            "bookly_webhook_attempts",
            "Attempts made for the deliveries on record, every try counted (fewer when an endpoint and its "
            "deliveries are deleted: a gauge, not a counter).",
            value=state.attempts if state else 0,
        )
