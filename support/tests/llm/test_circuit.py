"""While the provider is down, the built-in model answers at once; the provider is tried again after
a back-off. Through the customer's chat API, with the real SDK against the local Messages stub."""

import time

import pytest

from support.assistant.capabilities import base
from support.llm.circuit import CircuitRecorded, circuit_failure, circuit_lets_turn_through, circuit_open
from support.llm.types import ModelUnavailable
from support.models import ModelCall
from support.testing.messages_stub import ErrorReply, message, text, tool_use
from support.testing.metric_counts import Counts

DOWN = [ErrorReply(529, "overloaded_error")] * 2  # a turn's call and its one retry

# The circuit lives in the cache (Redis in the PostgreSQL + Redis leg): every test here is given the
# database so that it runs in both legs (docs/contributors.md, "Two legs").
pytestmark = pytest.mark.django_db


@pytest.fixture
def threshold(settings):
    settings.BOOKLY_MODEL_CIRCUIT_FAILURES = 2
    settings.BOOKLY_MODEL_CIRCUIT_SECONDS = 30


def _outage_opens_the_circuit(claude, customer):
    for _ in range(2):
        claude.reset(*DOWN)
        assert customer.send("Where is my order?").status_code == 503


def test_after_repeated_outages_the_built_in_model_answers_at_once_and_says_so(
    claude, customer, threshold, demo_data
):
    counts = Counts()
    _outage_opens_the_circuit(claude, customer)
    assert circuit_open()

    claude.reset()  # the provider is not called at all
    response = customer.send("Where is BK-10042? My email is sarah.chen@example.com")
    assert response.status_code == 200
    body = response.json()
    assert body["offline"] is True and "BK-10042" in body["reply"] and "delivered" in body["reply"]
    assert claude.requests == []
    assert counts.moved("bookly_turns_on_fallback_total") == 1
    assert ModelCall.objects.latest("id").offline  # staff see it in the trace


def test_staff_are_told_the_provider_is_down_not_how_to_connect_one(
    claude, customer, threshold, client, staff_user
):
    client.force_login(staff_user)
    assert "provider-down-notice" not in client.get("/admin/").content.decode()
    _outage_opens_the_circuit(claude, customer)
    page = client.get("/admin/").content.decode()
    assert "Claude (" in page and "is not answering: customers are answered by the built-in model" in page
    assert "To connect Claude" not in page


def test_one_outage_is_not_enough_and_a_success_forgets_it(claude, customer, threshold):
    claude.reset(*DOWN)
    assert customer.send("Where is my order?").status_code == 503
    claude.reset(message(text("What is the order number?")))
    assert customer.send("Where is my order?").status_code == 200
    claude.reset(*DOWN)
    assert customer.send("Where is my order?").status_code == 503
    assert not circuit_open()


class _Clock:
    """The circuit's clock, moved by the test."""

    def __init__(self):
        self.ahead = 0.0

    def __call__(self) -> float:
        return time.time() + self.ahead


@pytest.fixture
def clock(monkeypatch):
    moved = _Clock()
    monkeypatch.setattr("support.llm.circuit._now", moved)
    return moved


def test_after_the_back_off_one_turn_tries_the_provider_and_a_failure_doubles_the_wait(
    claude, customer, threshold, clock
):
    _outage_opens_the_circuit(claude, customer)
    clock.ahead = 31
    assert not circuit_open()
    assert circuit_lets_turn_through() is True  # this turn tries the provider
    assert circuit_lets_turn_through() is False  # the others stay with the built-in model meanwhile
    circuit_failure()  # still down: open again at once, for 60 s
    clock.ahead = 31 + 55
    assert circuit_open()
    clock.ahead = 31 + 65
    assert not circuit_open()
    claude.reset(message(text("What is the order number?")))
    response = customer.send("Where is my order?")
    assert response.json()["offline"] is False and len(claude.requests) == 1
    assert not circuit_open() and circuit_lets_turn_through() is True  # closed for everyone


def test_turns_that_were_already_waiting_when_it_opened_do_not_lengthen_it(threshold, clock):
    circuit_failure()
    circuit_failure()
    assert circuit_open()
    for _ in range(5):
        circuit_failure()  # the turns that were waiting on the dead provider end now
    clock.ahead = 31
    assert not circuit_open()  # still the first 30 s, not 300


def test_a_turn_that_ran_out_of_its_own_time_is_no_outage(threshold):
    class OutOfTime:
        offline, name, provider, keeps_state = False, "slow", "test", False

        def create(self, **kwargs):
            raise ModelUnavailable("turn deadline reached", retry_after=5, outage=False)

    model = CircuitRecorded(OutOfTime())
    for _ in range(3):
        with pytest.raises(ModelUnavailable):
            model.create()
    assert not circuit_open()


def test_a_cache_that_is_down_leaves_the_provider_answering(claude, customer, monkeypatch):
    class Down:
        def __getattr__(self, name):
            def fails(*args, **kwargs):
                raise ConnectionError("Redis is down")

            return fails

    monkeypatch.setattr("support.llm.circuit.cache", Down())
    claude.reset(*DOWN, message(text("What is the order number?")))
    assert customer.send("Where is my order?").status_code == 503
    response = customer.send("Where is my order?")
    assert response.status_code == 200 and response.json()["offline"] is False


def test_a_turn_keeps_its_model_when_the_circuit_opens_midway(
    claude, customer, threshold, demo_data, monkeypatch
):
    looked_up = base.orders_get_for_customer

    def while_other_turns_find_it_down(**kwargs):
        circuit_failure()
        circuit_failure()  # two turns on other workers found the provider down meanwhile
        return looked_up(**kwargs)

    monkeypatch.setattr(base, "orders_get_for_customer", while_other_turns_find_it_down)
    claude.reset(
        message(
            tool_use("lookup_order", {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com"})
        ),
        message(text("Order BK-10042 has been delivered.")),
    )
    response = customer.send("Where is BK-10042? My email is sarah.chen@example.com")
    assert response.json()["reply"] == "Order BK-10042 has been delivered." and len(claude.requests) == 2
