"""Counts the SQL queries of each turn of one conversation, in-process, against the benchmark's site setup.

    .venv/bin/python -m bench.query_probe --orders 5000

Run by bench/run.py with the site's environment, while the stub model is still up.
It plays the benchmark's conversation twice in one conversation (turns 1-6, then
turns 7-12 with the same kinds of message, returning a second order) through
Django's test client, with a query counter on the database connection, and prints
JSON: `{"queries": [...], "cpu_ms": [...], "sdk_cpu_ms": [...], "statuses": [...]}`.
Turn k and turn k+6 take the same path, so a difference between them is the cost
of a longer history. This works whatever the site emits as Server-Timing.

It also measures the CPU time of each turn on one uncontended thread (cpu_ms), and
the part of it spent inside the model client (sdk_cpu_ms: the Anthropic SDK
building the request, HTTP, parsing the response), which shows what a turn costs
the server before any contention.
"""

import argparse
import json
import os
import time


class QueryCounter:
    """A Django execute wrapper that counts statements run on a connection."""

    def __init__(self):
        self.count = 0

    def __call__(self, execute, sql, params, many, context):
        self.count += 1
        return execute(sql, params, many, context)


class ThreadTimer:
    """Wraps a function to add up the thread CPU time spent inside it."""

    def __init__(self, function):
        self.function = function
        self.seconds = 0.0

    def __call__(self, *args, **kwargs):
        started = time.thread_time()
        try:
            return self.function(*args, **kwargs)
        finally:
            self.seconds += time.thread_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--orders", type=int, default=0, help="orders seeded for the load; the probe uses the next two"
    )
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bookly.settings")
    os.environ["DJANGO_ALLOWED_HOSTS"] = os.environ.get("DJANGO_ALLOWED_HOSTS", "") + ",testserver"
    import django

    django.setup()
    from django.db import connection
    from django.test import Client

    from bench.conversation import conversation
    from support.llm import claude

    sdk = ThreadTimer(claude.AnthropicModel.create)
    claude.AnthropicModel.create = lambda self, **kwargs: sdk(self, **kwargs)

    # Seeded orders number `orders` and `orders + 1` are the probe's own (see bench/run.py).
    seeded = args.orders + 2 if args.orders else 0
    messages = conversation(args.orders, orders=seeded) + conversation(args.orders + 1, orders=seeded)
    client = Client(headers={"X-Forwarded-Proto": "https"})
    client.get("/api/chat", secure=True)
    queries, cpu_ms, sdk_cpu_ms, statuses = [], [], [], []
    for message in messages:
        counter, sdk.seconds, started = QueryCounter(), 0.0, time.thread_time()
        with connection.execute_wrapper(counter):
            response = client.post(
                "/api/chat", data={"message": message}, content_type="application/json", secure=True
            )
        cpu_ms.append(round((time.thread_time() - started) * 1000, 2))
        sdk_cpu_ms.append(round(sdk.seconds * 1000, 2))
        queries.append(counter.count)
        statuses.append(response.status_code)
    print(json.dumps({"queries": queries, "cpu_ms": cpu_ms, "sdk_cpu_ms": sdk_cpu_ms, "statuses": statuses}))


if __name__ == "__main__":
    main()
