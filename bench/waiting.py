"""What customers waiting for a person cost the site while nothing happens: the chat page's polling,
and the open inboxes' polling of the staff watching for them.

    .venv/bin/python -m bench.waiting --customers 200 --duration 120
    .venv/bin/python -m bench.waiting --customers 200 --duration 120 --staff 10 --history 10000

Starts the production profile as bench/run.py does (fresh PostgreSQL database,
Redis, gunicorn, the stub model), puts each simulated customer in the queue
for a person (POST /api/chat/handoff), then has every one of them ask
GET /api/chat on the page's schedule (static/support/chat.js: first after 3 s,
then each wait 1.5 times longer, at most 15 s, while nothing changes) for the
duration. Prints, as JSON: the polls made per second, the site's CPU per poll
and in all (as a share of one core), and poll latencies. Nobody answers
meanwhile: this is the idle cost. With --staff, that many members of staff log in through
admin's login form and poll the inbox's state as an open, shown inbox does (static/support/inbox.js:
every 3 s); --history first adds that many finished conversations (bench/seed_conversations.py).
See bench/README.md, "Waiting for a person".
"""

import argparse
import json
import random
import secrets
import statistics
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.cookies import SimpleCookie
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import run  # noqa: E402 - needs ROOT on sys.path when run as a script
from bench.children import Children  # noqa: E402

# The page's schedule (static/support/chat.js: POLL_FIRST_MS, POLL_MAX_MS, the 1.5 factor).
FIRST_SECONDS, FACTOR, MAX_SECONDS = 3.0, 1.5, 15.0
# The open inbox's, while its tab is shown (static/support/inbox.js: SHOWN_MS).
INBOX_SECONDS = 3.0
INBOX_STATE = "/admin/support/conversation/inbox/state/"
# Staff of this run only (a fresh database each run).
STAFF_PASSWORD = secrets.token_urlsafe(16)


class WaitingCustomer:
    """One browser in the queue: its cookies, then GETs on the page's schedule."""

    def __init__(self, site_url: str):
        self.site_url = site_url
        # The site's cookies are Secure (it is behind a TLS proxy, simulated): kept by hand, as
        # urllib's jar would not send them over the loopback's plain HTTP.
        self.cookies: dict[str, str] = {}
        self.latencies: list[float] = []
        self.failures = 0

    def _request(self, path: str, *, post: bool = False) -> dict:
        headers = {**run.VIA_PROXY, "Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        if post:
            origin = "https://" + self.site_url.split("://", 1)[1]
            headers |= {"Origin": origin, "Referer": origin + "/", "X-CSRFToken": self.cookies["csrftoken"]}
        request = urllib.request.Request(  # noqa: S310 - the bench's own loopback site
            self.site_url + path, data=b"" if post else None, headers=headers
        )
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            for header in response.headers.get_all("Set-Cookie") or []:
                for name, morsel in SimpleCookie(header).items():
                    self.cookies[name] = morsel.value
            return json.loads(response.read())

    def join_the_queue(self) -> None:
        self._request("/api/chat")
        answer = self._request("/api/chat/handoff", post=True)
        if answer.get("status") != "waiting":
            raise SystemExit(f"bench: the handoff answered {answer}")

    def poll_until(self, stop_at: float, *, backoff: bool = True) -> None:
        wait = FIRST_SECONDS * random.random()  # noqa: S311 - customers arrive spread out
        while time.monotonic() + wait < stop_at:
            time.sleep(wait)
            started = time.monotonic()
            try:
                answer = self._request("/api/chat")
                assert answer["status"] == "waiting"
                self.latencies.append(time.monotonic() - started)
            except (OSError, AssertionError, ValueError):
                self.failures += 1
            grow = backoff and self.latencies[:-1]
            wait = min(wait * FACTOR, MAX_SECONDS) if grow else FIRST_SECONDS


class StaffMember:
    """One member of staff with the inbox open: logged in through admin's form, then the inbox's polls."""

    def __init__(self, site_url: str, username: str):
        self.customer = WaitingCustomer(site_url)  # the same cookie handling
        self.username = username
        self.latencies: list[float] = []
        self.failures = 0

    def log_in(self) -> None:
        customer = self.customer
        url = customer.site_url + "/admin/login/"
        with urllib.request.urlopen(urllib.request.Request(url, headers=run.VIA_PROXY)) as page:  # noqa: S310
            for header in page.headers.get_all("Set-Cookie") or []:
                for name, morsel in SimpleCookie(header).items():
                    customer.cookies[name] = morsel.value
        origin = "https://" + customer.site_url.split("://", 1)[1]
        form = urllib.parse.urlencode(
            {
                "csrfmiddlewaretoken": customer.cookies["csrftoken"],
                "username": self.username,
                "password": STAFF_PASSWORD,
                "next": "/admin/",
            }
        ).encode()
        headers = {
            **run.VIA_PROXY,
            "Cookie": "; ".join(f"{k}={v}" for k, v in customer.cookies.items()),
            "Origin": origin,
            "Referer": origin + "/admin/login/",
        }

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args, **kwargs):
                return None

        opener = urllib.request.build_opener(NoRedirect)
        try:
            opener.open(urllib.request.Request(url, data=form, headers=headers))  # noqa: S310
            raise SystemExit(f"bench: {self.username} could not log in to admin")
        except urllib.error.HTTPError as redirect:
            if redirect.code != 302:
                raise SystemExit(f"bench: admin's login answered {redirect.code}") from redirect
            for header in redirect.headers.get_all("Set-Cookie") or []:
                for name, morsel in SimpleCookie(header).items():
                    customer.cookies[name] = morsel.value

    def poll_until(self, stop_at: float, *, waiting: int) -> None:
        wait = INBOX_SECONDS * random.random()  # noqa: S311
        while time.monotonic() + wait < stop_at:
            time.sleep(wait)
            started = time.monotonic()
            try:
                state = self.customer._request(INBOX_STATE)
                assert len(state["waiting"]) == waiting
                self.latencies.append(time.monotonic() - started)
            except (OSError, AssertionError, ValueError, KeyError):
                self.failures += 1
            wait = INBOX_SECONDS


def _figures(latencies: list[float], failures: int, wall: float) -> dict:
    latencies = sorted(latencies)
    polls = len(latencies)
    return {
        "polls": polls,
        "failed_polls": failures,
        "polls_per_second": round(polls / wall, 1),
        "poll_latency_ms_median": round(1000 * statistics.median(latencies), 1) if polls else None,
        "poll_latency_ms_p99": round(1000 * latencies[int(0.99 * (polls - 1))], 1) if polls else None,
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--customers", type=int, default=200, help="customers waiting at once")
    parser.add_argument("--duration", type=float, default=120.0, help="seconds of waiting measured")
    parser.add_argument(
        "--no-backoff", action="store_true", help="poll every 3 s throughout (for comparison)"
    )
    parser.add_argument("--staff", type=int, default=0, help="members of staff with the inbox open")
    parser.add_argument("--history", type=int, default=0, help="finished conversations added first")
    own, rest = parser.parse_known_args(argv)
    args = run.parse_args(["--orders=0", "--latency-ms=0", *rest])
    bench = run.Bench(args, Children(Path(tempfile.mkdtemp(prefix="bookly-waiting-"))))
    try:
        env = bench.site_environment()
        run.prepare_database(bench, env)
        if own.history:
            run.say(f"adding {own.history} finished conversations")
            run.run_python(env, "-m", "bench.seed_conversations", str(own.history))
        staff = [StaffMember(bench.site_url, f"bench-staff-{i}") for i in range(own.staff)]
        for member in staff:
            run.run_python(
                {**env, "DJANGO_SUPERUSER_PASSWORD": STAFF_PASSWORD},
                "manage.py",
                "createsuperuser",
                "--noinput",
                "--username",
                member.username,
                "--email",
                f"{member.username}@bookly.example",
            )
        run.start_stub(bench)
        run.start_site(bench, env, run.gunicorn_threads(bench, env))
        for member in staff:
            member.log_in()
        customers = [WaitingCustomer(bench.site_url) for _ in range(own.customers)]
        run.say(f"{own.customers} customers ask for a person")
        for customer in customers:
            customer.join_the_queue()
        run.say(f"they wait and poll for {own.duration:g} s")
        before, started = run.cpu_snapshot(bench), time.monotonic()
        stop_at = started + own.duration
        threads = [
            threading.Thread(target=c.poll_until, args=(stop_at,), kwargs={"backoff": not own.no_backoff})
            for c in customers
        ] + [
            threading.Thread(target=m.poll_until, args=(stop_at,), kwargs={"waiting": own.customers})
            for m in staff
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.monotonic() - started
        used = run.cpu_used(before, run.cpu_snapshot(bench), loadgen_seconds=0.0)
    finally:
        bench.children.stop_all()
    latencies = sorted(latency for c in customers for latency in c.latencies)
    polls = len(latencies)
    staff_polls = sum(len(m.latencies) for m in staff)
    site = used["gunicorn"] + used["postgres"] + used["redis"]
    figures = {
        "customers": own.customers,
        "schedule": "every 3 s" if own.no_backoff else "3 s, x1.5 while nothing changes, at most 15 s",
        "history": own.history,
        "seconds": round(wall, 1),
        **_figures(latencies, sum(c.failures for c in customers), wall),
        # Over every poll, the staff's included: compare a run with --staff against one without.
        "site_cpu_seconds": round(site, 2),
        "site_cpu_ms_per_poll": round(1000 * site / (polls + staff_polls), 2)
        if polls + staff_polls
        else None,
        "gunicorn_cpu_ms_per_poll": round(1000 * used["gunicorn"] / (polls + staff_polls), 2)
        if polls + staff_polls
        else None,
        "site_cpu_share_of_one_core": round(site / wall, 3),
    }
    if staff:
        figures["staff"] = {
            "members": own.staff,
            "schedule": f"every {INBOX_SECONDS:g} s",
            **_figures([x for m in staff for x in m.latencies], sum(m.failures for m in staff), wall),
        }
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
