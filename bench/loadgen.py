"""The load generator: simulated customers chatting with a running Bookly, in a process of its own.

    .venv/bin/python -m bench.loadgen --url http://127.0.0.1:8800 --customers 20 --duration 10 --out load.json

Each customer is one browser: its own aiohttp session and cookie jar, so its own
Django session and CSRF token. It opens the chat (`GET /api/chat`, which sets the
CSRF cookie), then runs whole six-turn conversations back to back (`POST /api/chat`
with `X-CSRFToken`, then `POST /api/chat/reset`) until the duration ends, the cap
on conversations is reached, or too many requests failed. Every request has a
hard timeout, and the whole run a hard deadline.

Requests go through a simulated TLS-terminating proxy: `X-Forwarded-Proto: https`
(the site runs with DJANGO_SECURE_PROXY_SSL_HEADER=true, as in production), so
HTTPS-only cookies, the HTTPS redirect and CSRF's Origin check all run as they do
in production.

Writes one JSON file: a row per request (see FIELDS) and the generator's own CPU.
"""

import argparse
import asyncio
import json
import re
import resource
import time
from collections import Counter
from dataclasses import dataclass, field

import aiohttp

from bench.conversation import conversation

# One row per request. status 0: no HTTP answer (see error). Times in seconds
# from the start of the load; Server-Timing values in ms, None when absent.
FIELDS = ("kind", "turn", "status", "error", "start", "end", "app_ms", "model_ms", "db_ms", "queries")
# After a failed request a customer pauses before going on, so that a broken
# server is not hammered in a tight loop.
ERROR_PAUSE_SECONDS = 0.5


@dataclass(frozen=True)
class LoadConfig:
    url: str
    customers: int
    duration: float
    ramp: float
    request_timeout: float
    max_conversations: int
    max_errors: int
    orders: int  # seeded returnable orders (bench/seed_orders.py)
    think: float
    stream: bool = False  # turns as server-sent events, as the page with JavaScript asks for them


def _streamed_reply(data: bytes) -> tuple[int, dict]:
    """The status and body of a streamed turn's last event (its reply)."""
    last = [line for line in data.decode().splitlines() if line.startswith("data: ")][-1]
    reply = json.loads(last.removeprefix("data: "))
    return reply["status"], reply["body"]


@dataclass
class Timing:
    app_ms: float | None = None
    model_ms: float | None = None
    db_ms: float | None = None
    queries: int | None = None


def parse_server_timing(header: str | None) -> Timing:
    """`app;dur=12.3, model;dur=8.1, db;dur=2.0;desc="7 queries"` -> Timing; absent parts stay None."""
    timing = Timing()
    for part in (header or "").split(","):
        name, *params = (piece.strip() for piece in part.split(";"))
        values = dict(param.partition("=")[::2] for param in params)
        try:
            duration = float(values["dur"]) if "dur" in values else None
        except ValueError:
            duration = None
        if name in ("app", "model", "db"):
            setattr(timing, f"{name}_ms", duration)
        if name == "db" and (count := re.match(r'"?(\d+)', values.get("desc", ""))):
            timing.queries = int(count.group(1))
    return timing


def reply_shape(reply: str) -> str:
    """A reply's opening with its numbers and codes blanked, so that replies can be tallied."""
    return re.sub(r"\d+", "#", re.sub(r"RMA-[A-Z0-9]+", "RMA-#", reply))[:70]


@dataclass
class Load:
    config: LoadConfig
    rows: list[tuple] = field(default_factory=list)
    conversations_started: int = 0
    conversations_completed: int = 0
    errors: int = 0
    replies: Counter = field(default_factory=Counter)
    started_at: float = 0.0

    def elapsed(self) -> float:
        return time.monotonic() - self.started_at

    def running(self) -> bool:
        return self.elapsed() < self.config.duration and self.errors < self.config.max_errors

    def claim_conversation(self) -> int | None:
        """The number of the next conversation to run, or None when the run is over."""
        if not self.running() or self.conversations_started >= self.config.max_conversations:
            return None
        self.conversations_started += 1
        return self.conversations_started - 1

    def headers(self, session: aiohttp.ClientSession, *, post: bool, turn: bool = False) -> dict[str, str]:
        headers = {"X-Forwarded-Proto": "https"}
        if turn and self.config.stream:
            headers["Accept"] = "text/event-stream"
        if post:
            origin = "https://" + self.config.url.split("://", 1)[1]
            cookie = session.cookie_jar.filter_cookies(self.config.url).get("csrftoken")
            headers |= {
                "Origin": origin,
                "Referer": origin + "/",
                "X-CSRFToken": cookie.value if cookie else "",
            }
        return headers

    async def request(
        self,
        session: aiohttp.ClientSession,
        kind: str,
        path: str,
        *,
        turn: int = 0,
        message: str | None = None,
    ) -> tuple[int, dict]:
        """One request, recorded; returns (status, JSON body or {}). Status 0: no answer."""
        post = kind != "open"
        start = self.elapsed()
        status, error, body, timing = 0, "", {}, Timing()
        try:
            async with session.request(
                "POST" if post else "GET",
                self.config.url + path,
                json={"message": message} if message is not None else None,
                headers=self.headers(session, post=post, turn=kind == "turn"),
                allow_redirects=False,
            ) as response:
                status = response.status
                data = await response.read()
                timing = parse_server_timing(response.headers.get("Server-Timing"))
            if status == 200 and response.content_type == "text/event-stream":
                status, body = _streamed_reply(data)
            elif status == 200:
                body = json.loads(data)
        except (aiohttp.ClientError, TimeoutError, ValueError, IndexError, KeyError) as failure:
            error = type(failure).__name__
        self.rows.append((kind, turn, status, error, start, self.elapsed(), *vars(timing).values()))
        if status != 200 or error:
            self.errors += 1
            await asyncio.sleep(ERROR_PAUSE_SECONDS)
            return 0, {}
        return status, body

    async def conversation(self, session: aiohttp.ClientSession, number: int) -> bool:
        """The six turns, stopping at the first failure or when time is up; True if all answered."""
        for turn, message in enumerate(conversation(number, orders=self.config.orders), start=1):
            if not self.running():
                return False
            status, body = await self.request(session, "turn", "/api/chat", turn=turn, message=message)
            if status != 200:
                return False
            self.replies[(turn, reply_shape(str(body.get("reply", ""))))] += 1
            if self.config.think:
                await asyncio.sleep(self.config.think)
        return True

    async def customer(self, index: int, connector: aiohttp.BaseConnector) -> None:
        await asyncio.sleep(self.config.ramp * index / self.config.customers)
        jar = aiohttp.CookieJar(unsafe=True, treat_as_secure_origin=[self.config.url])
        timeout = aiohttp.ClientTimeout(total=self.config.request_timeout)
        async with aiohttp.ClientSession(
            connector=connector, connector_owner=False, cookie_jar=jar, timeout=timeout
        ) as session:
            opened = False
            while not opened and self.running():
                opened = (await self.request(session, "open", "/api/chat"))[0] == 200
            while (number := self.claim_conversation()) is not None:
                if await self.conversation(session, number):
                    self.conversations_completed += 1
                await self.request(session, "reset", "/api/chat/reset")

    async def run(self) -> None:
        self.started_at = time.monotonic()
        # No client-side cap on connections; keep-alive shorter than gunicorn's 5 s,
        # so the client never reuses a connection the server is closing.
        connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=4)
        try:
            customers = [self.customer(index, connector) for index in range(self.config.customers)]
            hard_deadline = self.config.ramp + self.config.duration + self.config.request_timeout + 10
            await asyncio.wait_for(asyncio.gather(*customers), timeout=hard_deadline)
        finally:
            await connector.close()


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="the site, e.g. http://127.0.0.1:8800 (loopback only)")
    parser.add_argument("--customers", type=int, default=20)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds during which turns start")
    parser.add_argument("--ramp", type=float, default=2.0, help="seconds over which customers arrive")
    parser.add_argument("--request-timeout", type=float, default=30.0)
    parser.add_argument("--max-conversations", type=int, default=1_000_000)
    parser.add_argument("--max-errors", type=int, default=2000, help="stop the run after this many")
    parser.add_argument(
        "--orders", type=int, default=0, help="seeded returnable orders to spread returns over"
    )
    parser.add_argument("--think-ms", type=float, default=0.0, help="pause between a reply and the next turn")
    parser.add_argument("--stream", action="store_true", help="ask for turns as server-sent events")
    parser.add_argument("--out", required=True, help="JSON file to write")
    args = parser.parse_args()
    if not re.match(r"^http://(127\.\d+\.\d+\.\d+|localhost)(:\d+)?$", args.url):
        parser.error("--url must be a loopback http address")

    load = Load(
        LoadConfig(
            url=args.url,
            customers=args.customers,
            duration=args.duration,
            ramp=args.ramp,
            request_timeout=args.request_timeout,
            max_conversations=args.max_conversations,
            max_errors=args.max_errors,
            orders=args.orders,
            think=args.think_ms / 1000,
            stream=args.stream,
        )
    )
    cpu_before, timed_out = cpu_seconds(), False
    try:
        asyncio.run(load.run())
    except TimeoutError:
        timed_out = True
    result = {
        "fields": FIELDS,
        "rows": load.rows,
        "wall_seconds": load.elapsed(),
        "cpu_seconds": cpu_seconds() - cpu_before,
        "max_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "conversations_started": load.conversations_started,
        "conversations_completed": load.conversations_completed,
        "stopped_for_errors": load.errors >= load.config.max_errors,
        "hit_hard_deadline": timed_out,
        "replies": [[turn, text, count] for (turn, text), count in sorted(load.replies.items())],
    }
    with open(args.out, "w") as out:
        json.dump(result, out)


if __name__ == "__main__":
    main()
