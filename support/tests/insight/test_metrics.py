"""Prometheus metrics: counted from real turns through the SDK, served only to operators."""

import re

import pytest
import yaml
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from support.llm.protocol import REFUSAL_TEMPLATE
from support.testing.chat_client import ChatClient
from support.testing.messages_stub import ErrorReply, message, text, tool_use
from support.testing.metric_counts import Counts

SARAH = {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com"}
pytestmark = pytest.mark.usefixtures("demo_data")


def test_a_lookup_turn_counts_its_outcome_calls_tool_and_tokens(claude, customer):
    counts = Counts()
    claude.reset(message(tool_use("lookup_order", SARAH)), message(text("Order BK-10042 was delivered.")))
    customer.send("Where is BK-10042? sarah.chen@example.com")

    assert counts.moved("bookly_turns_total", outcome="answered") == 1
    assert counts.moved("bookly_model_calls_total", result="ok") == 2
    assert counts.moved("bookly_tool_calls_total", tool="lookup_order", result="ok") == 1
    assert counts.moved("bookly_model_tokens_total", kind="input") > 0
    assert counts.moved("bookly_turn_seconds_count") == 1
    assert counts.moved("bookly_turn_server_seconds_count") == 1


@pytest.mark.parametrize(
    ("script", "outcome", "extra"),
    [
        (
            [message(text("Your order BK-55555 has shipped."))],
            "fallback",
            ("bookly_validator_rejections_total", {"code": "ungrounded_order_number"}),
        ),
        (
            [
                message(tool_use("lookup_order", {**SARAH, "customer_email": "x@example.com"})),
                message(text("I couldn't find that order with that email.")),
            ],
            "answered",
            ("bookly_tool_calls_total", {"tool": "lookup_order", "result": "order_not_found"}),
        ),
        (
            [message(tool_use("drop_tables", {})), message(text("I can help with your order."))],
            "answered",
            ("bookly_tool_calls_total", {"tool": "unknown", "result": "unknown_tool"}),
        ),
        (
            [ErrorReply(529, "overloaded_error")] * 2,
            "error",
            ("bookly_model_calls_total", {"result": "unavailable"}),
        ),
        (
            [message(text(REFUSAL_TEMPLATE.format(topic="the weather")))],
            "refused",
            None,
        ),
        (
            [
                message(
                    tool_use("hand_off_to_person", {"reason": "customer_asked", "summary": "Wants a person"})
                ),
                message(text("Done.")),
            ],
            "handed_off",
            ("bookly_handoffs_total", {"reason": "customer_asked"}),
        ),
    ],
    ids=["fallback", "tool_error", "unknown_tool", "model_unavailable", "refused", "handed_off"],
)
def test_each_outcome_is_counted(claude, customer, script, outcome, extra):
    counts = Counts()
    claude.reset(*script)
    customer.send("Hello, where is my order, and what's the weather?")

    assert counts.moved("bookly_turns_total", outcome=outcome) == 1
    if extra:
        name, labels = extra
        assert counts.moved(name, **labels) >= 1


@pytest.mark.parametrize("chatted_first", [False, True])
def test_the_talk_to_a_person_button_counts_one_handoff(claude, chatted_first):
    customer = ChatClient()
    if chatted_first:
        claude.reset(message(text("What is your order number?")))
        customer.send("Where is my order?")
    counts = Counts()
    customer.handoff()
    customer.handoff()  # already waiting
    assert counts.moved("bookly_handoffs_total", reason="customer_button") == 1


def test_a_rate_limited_message_is_counted(claude, settings):
    settings.BOOKLY_RATELIMIT_IP = "1/m"
    claude.reset(message(text("What is your order number?")))
    counts = Counts()
    ChatClient().send("Where is my order?")
    assert ChatClient().send("Where is my order?").status_code == 429
    assert counts.moved("bookly_rate_limited_total", scope="ip") == 1


def _scrape(client, **extra):
    return client.get("/metrics", **extra)


def test_metrics_are_served_to_this_machine_in_prometheus_text(client):
    response = _scrape(client, REMOTE_ADDR="127.0.0.1")
    assert response.status_code == 200
    names = {family.name for family in text_string_to_metric_families(response.content.decode())}
    assert {"bookly_turns", "bookly_turn_seconds", "bookly_model_calls", "bookly_handoffs"} <= names


@pytest.mark.parametrize(
    ("token", "remote", "headers"),
    [
        ("the-operators-token", "203.0.113.9", {}),
        # A proxy on this machine passes a public request on from loopback.
        ("the-operators-token", "127.0.0.1", {"HTTP_X_FORWARDED_FOR": "203.0.113.9"}),
        ("the-operators-token", "127.0.0.1", {"HTTP_X_REAL_IP": "203.0.113.9"}),
        ("the-operators-token", "127.0.0.1", {"HTTP_FORWARDED": "for=203.0.113.9"}),
        ("the-operators-token", "203.0.113.9", {"HTTP_AUTHORIZATION": "Bearer wrong-token"}),
        # No token configured: an empty one offered is no key.
        ("", "203.0.113.9", {"HTTP_AUTHORIZATION": "Bearer "}),
    ],
    ids=["public", "through_a_local_proxy", "x_real_ip", "forwarded", "wrong_token", "no_token_configured"],
)
def test_metrics_are_refused_to_anyone_else(client, settings, token, remote, headers):
    settings.BOOKLY_METRICS_TOKEN = token
    response = _scrape(client, REMOTE_ADDR=remote, **headers)
    assert response.status_code == 403
    assert b"bookly_" not in response.content


@pytest.mark.parametrize(
    ("remote", "headers"),
    [
        ("10.0.0.7", {}),
        ("203.0.113.9", {"HTTP_AUTHORIZATION": "Bearer the-operators-token"}),
    ],
    ids=["allowed_network", "token"],
)
def test_metrics_are_served_to_allowed_addresses_and_the_token(client, settings, remote, headers):
    settings.BOOKLY_TRUSTED_PROXIES = []
    settings.BOOKLY_METRICS_TOKEN = "the-operators-token"
    settings.BOOKLY_METRICS_ALLOWED_IPS = ["10.0.0.0/8"]
    assert _scrape(client, REMOTE_ADDR=remote, **headers).status_code == 200


def test_the_example_alert_rules_read_only_metrics_that_exist(settings):
    rules = yaml.safe_load((settings.BASE_DIR / "deploy/prometheus/alerts.yml").read_text())
    exposed = set()
    for family in REGISTRY.collect():
        suffixes = {"counter": ["_total"], "histogram": ["_bucket", "_count", "_sum"]}.get(family.type, [""])
        exposed |= {family.name + suffix for suffix in suffixes}

    alerts = [rule for group in rules["groups"] for rule in group["rules"]]
    assert {rule["alert"] for rule in alerts} >= {
        "BooklyFallbackRateHigh",
        "BooklyValidatorRejectionsSpike",
        "BooklyModelErrors",
        "BooklyTurnLatencyP99High",
    }
    for rule in alerts:
        assert rule["labels"]["severity"] in {"warning", "critical"} and rule["annotations"]["summary"]
        referenced = set(re.findall(r"\bbookly_[a-z_]+", rule["expr"]))
        assert referenced and referenced <= exposed, rule["alert"]


def test_a_scrape_over_plain_http_is_not_redirected_to_https(client, settings):
    # Prometheus scrapes gunicorn directly, without TLS: a redirect would be a failed scrape.
    settings.SECURE_SSL_REDIRECT = True
    assert _scrape(client, REMOTE_ADDR="127.0.0.1").status_code == 200


def test_a_known_proxy_on_this_machine_is_not_this_machine(client, settings):
    settings.BOOKLY_TRUSTED_PROXIES = ["127.0.0.1"]
    assert _scrape(client, REMOTE_ADDR="127.0.0.1").status_code == 403
