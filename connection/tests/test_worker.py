"""Webhooks delivered by a real task-queue worker (`manage.py qcluster`, django-q2) in its own process,
on this test database: the change returns before anything is sent, a worker killed mid-delivery loses
nothing, two workers holding the same delivery send it once. On both of the suite's databases: the
SQLite test database is a file, which the worker opens too."""

import os
import signal
import subprocess
import sys
import time

import pytest
from django.conf import settings
from django.utils import timezone
from django_q.conf import Conf
from django_q.models import OrmQ
from django_q.tasks import async_task
from standardwebhooks.webhooks import Webhook

from connection.deliveries import event_dispatch
from connection.models import DeliveryStatus, WebhookDelivery
from connection.tasks import deliveries_sweep_task
from orders.models import Event
from orders.services import order_cancel
from orders.tests.factories import OrderFactory

# Committed data, so that the worker process sees it; the migrations' rows put back afterwards.
pytestmark = [pytest.mark.multiprocess, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


def _database_url() -> str:
    database = settings.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{database['NAME']}"
    return f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}"


# The worker's webhook timeout, and so its queue's task timeout and `retry` (bookly/settings.py's Q_CLUSTER).
_WORKER_WEBHOOK_TIMEOUT = 10
_WORKER_TIMEOUT = 4 * _WORKER_WEBHOOK_TIMEOUT + 60
_WORKER_RETRY = 4 * _WORKER_WEBHOOK_TIMEOUT + 120


class Worker:
    """`manage.py qcluster` on the test database, with two worker processes."""

    def __init__(self):
        environment = {
            **{key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "BOOKLY_"))},
            "DJANGO_SETTINGS_MODULE": "bookly.settings",
            "DJANGO_SECRET_KEY": settings.SECRET_KEY,  # the queue signs its tasks with it
            "DJANGO_DEBUG": "false",
            "DATABASE_URL": _database_url(),
            "BOOKLY_TASK_WORKERS": "2",
            "BOOKLY_WEBHOOKS_ALLOW_PRIVATE_URLS": "true",
            "BOOKLY_WEBHOOK_TIMEOUT_SECONDS": str(_WORKER_WEBHOOK_TIMEOUT),
        }
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "qcluster"],
            cwd=settings.BASE_DIR,
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    def kill(self) -> None:
        """As a machine dying would: no chance to finish or clean up."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()  # the cluster's own process stops its workers
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture
def queued(monkeypatch):
    """Tasks go on the real queue (the database) instead of running in this process."""
    monkeypatch.setattr(Conf, "SYNC", False)


@pytest.fixture
def worker(queued):
    workers = []

    def start() -> Worker:
        workers.append(Worker())
        return workers[-1]

    yield start
    for started in workers:
        started.stop()


def _wait_for(condition, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the worker did not get there in time")
        time.sleep(0.2)


def test_the_change_returns_before_anything_is_sent_and_a_worker_delivers_it(endpoint, receiver, worker):
    order_cancel(order=OrderFactory.create())  # commits (transactional test): its event goes on the queue

    assert receiver.received == []  # nothing was sent by the change itself
    assert WebhookDelivery.objects.count() == 0
    worker()
    _wait_for(lambda: WebhookDelivery.objects.filter(status=DeliveryStatus.DELIVERED).exists())
    (request,) = receiver.received
    payload = Webhook(endpoint.secret).verify(request.body, request.headers)
    assert payload["type"] == "order.cancelled"
    assert request.headers["webhook-id"] == Event.objects.get().public_id


def test_a_worker_killed_mid_delivery_loses_nothing(endpoint, receiver, worker):
    receiver.answers = [("slow", 30)]
    order_cancel(order=OrderFactory.create())
    first = worker()
    _wait_for(lambda: len(receiver.received) == 1)
    first.kill()
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.SENDING, 1)

    # Time passes beyond the attempt's lease; the sweep (every minute in production) queues it again
    # and another worker sends it.
    WebhookDelivery.objects.filter(pk=delivery.pk).update(lease_until=timezone.now())
    deliveries_sweep_task()
    worker()
    _wait_for(lambda: WebhookDelivery.objects.filter(status=DeliveryStatus.DELIVERED).exists())
    delivery.refresh_from_db()
    assert delivery.attempts == 2
    killed, again = receiver.received
    assert killed.headers["webhook-id"] == again.headers["webhook-id"]
    assert Webhook(endpoint.secret).verify(again.body, again.headers)["type"] == "order.cancelled"


def test_two_workers_holding_the_same_delivery_send_it_once(endpoint, receiver, queued, worker):
    order_cancel(order=OrderFactory.create())  # its dispatch is queued
    (delivery_id,) = event_dispatch(event_id=Event.objects.get().pk)  # and done here first
    for _ in range(6):  # the same attempt queued six times over, for two worker processes
        async_task("connection.tasks.delivery_attempt_task", delivery_id)
    worker()
    _wait_for(lambda: WebhookDelivery.objects.filter(status=DeliveryStatus.DELIVERED).exists())
    # Every copy ran out (each leaves the queue once done). A copy whose worker stalls is killed at the
    # task timeout (4 x 10 s + 60 s) and handed out again after the queue's `retry` (4 x 10 s + 120 s),
    # and then must not send either: the wait covers both (90 s, then 190 s, ran out in clean-clone
    # PostgreSQL legs; why a copy stalls is not found yet, see the session 26 note).
    _wait_for(lambda: not OrmQ.objects.exists(), seconds=_WORKER_TIMEOUT + _WORKER_RETRY + 40)
    assert len(receiver.received) == 1
    assert WebhookDelivery.objects.get().attempts == 1
