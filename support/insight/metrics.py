"""Prometheus metrics for operators: what the assistant does, counted in every process.

The names and labels below are a contract with operators' dashboards and
alert rules (deploy/prometheus/alerts.yml): change them only with those.
Under gunicorn every worker writes its counts to PROMETHEUS_MULTIPROC_DIR
(gunicorn.conf.py sets it up) and a scrape of any worker reads them all;
without it (runserver, tests) the process's own registry is served.
Labels take only values from fixed sets (outcomes, codes, tool names), never
anything a customer or a model wrote.
"""

import os
from collections.abc import Iterable

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.registry import Collector

from support.insight.traces import ModelCallResult, TurnRecord

# Seconds a turn takes with the model (two calls for a lookup), and without it.
_TURN_BUCKETS = (0.5, 1, 2, 3, 5, 8, 13, 20, 30, 45, 75)
_SERVER_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5)

TURNS = Counter("bookly_turns", "Customer turns the assistant answered, by outcome.", ["outcome"])
TURN_SECONDS = Histogram(
    "bookly_turn_seconds", "Time to answer a turn, the model included.", buckets=_TURN_BUCKETS
)
TURN_SERVER_SECONDS = Histogram(
    "bookly_turn_server_seconds",
    "Time to answer a turn, without waiting for the model.",
    buckets=_SERVER_BUCKETS,
)
MODEL_CALLS = Counter("bookly_model_calls", "Calls to the model, by result.", ["result"])
MODEL_TOKENS = Counter(
    "bookly_model_tokens", "Tokens of model calls: input, output, cache_read, cache_write.", ["kind"]
)
VALIDATOR_REJECTIONS = Counter(
    "bookly_validator_rejections", "Replies the validator rejected, once per violation code.", ["code"]
)
TOOL_CALLS = Counter(
    "bookly_tool_calls", "Tool calls, by tool and result (ok or the error code).", ["tool", "result"]
)
HANDOFFS = Counter(
    "bookly_handoffs", "Conversations that started waiting for a person, by reason.", ["reason"]
)
FEEDBACK = Counter(
    "bookly_feedback",
    "Customer feedback as given (a changed vote counts again): helpful or not_helpful on a reply, "
    "1 to 5 for a conversation.",
    ["rating"],
)
DEAD_ENDS = Counter(
    "bookly_dead_ends",
    "Replies that left the customer nowhere to go (refused or no policy without a person offered, a "
    "fallback, stuck), by the turn's outcome.",
    ["outcome"],
)
TURNS_ON_FALLBACK = Counter(
    "bookly_turns_on_fallback",
    "Turns the built-in model answered because the configured provider was down (its circuit open).",
)
IDENTITY_CHECK_LIMITS = Counter(
    "bookly_identity_check_limits",
    "Tool calls held back by the budget for identity checks, by limit: calls_per_response (not run, past "
    "the calls one model response may make), conversation, session, ip (a client's failed checks used up), "
    "delay (a client's next check before its growing delay passed), order (a check of an order number "
    "guessed at by anyone: a one-time code needed).",
    ["limit"],
)
RATE_LIMITED = Counter("bookly_rate_limited", "Messages refused by a rate limit, by scope.", ["scope"])

# The Messages API's usage fields, by the kind operators see.
_TOKEN_KINDS = {
    "input_tokens": "input",
    "output_tokens": "output",
    "cache_read_input_tokens": "cache_read",
    "cache_creation_input_tokens": "cache_write",
}


def model_call_observe(*, result: ModelCallResult, usage: dict[str, int] | None = None) -> None:
    MODEL_CALLS.labels(result=result).inc()
    for field, kind in _TOKEN_KINDS.items():
        if count := (usage or {}).get(field):
            MODEL_TOKENS.labels(kind=kind).inc(count)


def turn_observe(record: TurnRecord) -> None:
    TURNS.labels(outcome=record.outcome).inc()
    if record.dead_end:
        DEAD_ENDS.labels(outcome=record.outcome).inc()
    TURN_SECONDS.observe(record.total_ms / 1000)
    TURN_SERVER_SECONDS.observe(record.server_ms / 1000)
    for code in record.violations:
        VALIDATOR_REJECTIONS.labels(code=code).inc()
    for call in record.tool_calls:
        TOOL_CALLS.labels(tool=call.tool, result=call.result).inc()


def metrics_exposition(*, collectors: Iterable[Collector] = ()) -> tuple[bytes, str]:
    """The text a Prometheus scrape reads, and its content type: every worker's counts when they
    share PROMETHEUS_MULTIPROC_DIR, else this process's; then what `collectors` read now (figures
    kept elsewhere, like the database's)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        from prometheus_client import REGISTRY as registry
    body = generate_latest(registry)
    if collectors:
        extra = CollectorRegistry(auto_describe=True)
        for collector in collectors:
            extra.register(collector)
        body += generate_latest(extra)
    return body, CONTENT_TYPE_LATEST
