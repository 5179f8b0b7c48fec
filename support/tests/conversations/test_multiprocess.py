"""Real gunicorn with several worker processes on PostgreSQL + Redis: promises that must hold
across processes. Runs in the suite's PostgreSQL leg (DATABASE_URL and REDIS_URL set)."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from concurrent.futures import ThreadPoolExecutor
from http.cookiejar import CookieJar

import pytest
from django.conf import settings
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.core.cache import cache

from policies.models import PolicyEntry
from support.models import Conversation, ConversationMessage
from support.testing.messages_stub import ErrorReply, MessagesStub, message, text
from support.testing.protocol import messages_problems

ON_SERVICES = os.environ.get("DATABASE_URL", "").startswith("postgres") and bool(os.environ.get("REDIS_URL"))
pytestmark = [
    pytest.mark.multiprocess,
    pytest.mark.skipif(
        not ON_SERVICES,
        reason="needs PostgreSQL and Redis: set DATABASE_URL=postgres://… and REDIS_URL=redis://…",
    ),
    # Committed data, so that the gunicorn workers see it; serialized_rollback restores what the
    # migrations created (the staff group, the policy row) for the tests that follow.
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

WORKERS = 2
# Long enough for the gunicorn master to replace killed workers before it expires.
LEASE_SECONDS = 10


def _csrf_token(jar: CookieJar) -> str:
    """The CSRF token Django set in this browser's cookies (always with a value)."""
    token = next(cookie.value for cookie in jar if cookie.name == "csrftoken")
    assert token is not None
    return token


def _worker(headers: dict) -> str:
    """The worker that answered, as its Server-Timing header names it (BOOKLY_SERVER_TIMING on)."""
    found = re.search(r'worker;desc="(\d+)"', headers["Server-Timing"])
    assert found, headers["Server-Timing"]
    return found.group(1)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Site:
    """gunicorn serving this test database, with the model answered by a local stub."""

    def __init__(self, stub: MessagesStub, **env):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        database = settings.DATABASES["default"]
        environment = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "bookly.settings",
            "DJANGO_SECRET_KEY": "multiprocess-test-key",
            "DJANGO_DEBUG": "false",
            # Plain HTTP on loopback: no HTTPS redirect, cookies not HTTPS-only.
            "DJANGO_SECURE_SSL_REDIRECT": "false",
            "DJANGO_SECURE_COOKIES": "false",
            "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}",
            "BOOKLY_LLM": "anthropic",
            "ANTHROPIC_API_KEY": "sk-ant-test-not-a-key",
            "ANTHROPIC_BASE_URL": stub.url,
            "ANTHROPIC_MAX_RETRIES": "0",
            "BOOKLY_TODAY": "2026-04-14",
            "BOOKLY_TURN_LEASE_SECONDS": str(LEASE_SECONDS),
            "BOOKLY_TURN_DEADLINE_SECONDS": str(LEASE_SECONDS - 1),
            "GUNICORN_BIND": f"127.0.0.1:{self.port}",
            "WEB_CONCURRENCY": str(WORKERS),
            "GUNICORN_THREADS": "8",
            **env,
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "bookly.wsgi:application"],
            cwd=settings.BASE_DIR,
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{self.url}/api/chat", timeout=2)  # noqa: S310 - our own http URL
                if len(self.workers()) == WORKERS:
                    return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("gunicorn did not start")

    def workers(self) -> list[int]:
        children = subprocess.run(
            ["ps", "-o", "pid=", "--ppid", str(self.process.pid)], capture_output=True, text=True, check=False
        )
        return [int(pid) for pid in children.stdout.split()]

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=5)


class Customer:
    """One browser: its own cookies and CSRF token."""

    def __init__(self, site: Site):
        self.site = site
        self.jar = CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.opener.open(f"{site.url}/api/chat", timeout=10).read()
        self.token = _csrf_token(self.jar)

    def start_chatting(self, stub: MessagesStub) -> None:
        """A first message and its answer: the visitor's session begins with their first message."""
        stub.reset(message(text("Hello! How can I help?")))
        assert self.send("Hi")[0] == 200

    def send(self, text_: str, timeout: float = 15) -> tuple[int, dict]:
        return self.send_with_headers(text_, timeout)[:2]

    def send_with_headers(self, text_: str, timeout: float = 15) -> tuple[int, dict, dict]:
        request = urllib.request.Request(  # noqa: S310 - our own http URL
            f"{self.site.url}/api/chat",
            data=json.dumps({"message": text_}).encode(),
            headers={"Content-Type": "application/json", "X-CSRFToken": self.token},
        )
        try:
            with self.opener.open(request, timeout=timeout) as response:
                return response.status, json.loads(response.read()), dict(response.headers)
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}"), dict(error.headers)


@pytest.fixture
def stub():
    server = MessagesStub().start()
    yield server
    server.stop()


@pytest.fixture
def site(stub, demo_data):
    cache.clear()
    running = Site(stub)
    yield running
    running.stop()


def slow(seconds: float, reply: dict):
    def answer(request):
        time.sleep(seconds)
        return reply

    return answer


def _every_worker_answering(site: Site) -> None:
    """With BOOKLY_SERVER_TIMING on: wait until each worker has answered a request, so that a burst
    meets them all ready (a worker that exists may not be accepting yet)."""
    seen: set[str] = set()
    deadline = time.monotonic() + 20
    while len(seen) < WORKERS and time.monotonic() < deadline:
        with ThreadPoolExecutor(max_workers=4) as pool:
            for headers in pool.map(lambda _: _timing_of(site), range(4)):
                seen.add(_worker(headers))


def _timing_of(site: Site) -> dict:
    with urllib.request.urlopen(f"{site.url}/api/chat", timeout=5) as response:  # noqa: S310
        return dict(response.headers)


def _new_customers_ask_at_once(site: Site, count: int, text_: str) -> list[tuple[int, dict, dict]]:
    customers = [Customer(site) for _ in range(count)]
    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(lambda customer: customer.send_with_headers(text_), customers))


def _with_room_in_the_rate_window(value: str, *, period: int = 60, room: float = 20.0) -> None:
    """django-ratelimit counts in fixed windows, which end at a second of each period set by the key
    (crc32 of its value); a burst that straddles an end is counted in two. Wait until the current window
    has `room` seconds left."""
    left = (zlib.crc32(value.encode()) % period - time.time()) % period
    if left < room:
        time.sleep(left + 0.5)


def test_per_ip_limit_holds_across_workers(stub, demo_data):
    cache.clear()
    running = Site(
        stub, BOOKLY_RATELIMIT_IP="5/m", BOOKLY_RATELIMIT_SESSION="100/m", BOOKLY_SERVER_TIMING="1"
    )
    try:
        stub.reset(*[message(text("What is the order number of your order?")) for _ in range(20)])
        _every_worker_answering(running)
        _with_room_in_the_rate_window("127.0.0.1")
        answers = _new_customers_ask_at_once(running, 12, "Where is my order?")
    finally:
        running.stop()
    assert sorted(status for status, _, _ in answers) == [200] * 5 + [429] * 7
    # Both workers answered, so a per-process count would have let up to 10 through.
    workers = {_worker(headers) for _, _, headers in answers}
    assert len(workers) == WORKERS


def test_a_scrape_of_any_worker_counts_the_turns_of_every_worker(stub, demo_data):
    cache.clear()
    running = Site(stub, BOOKLY_SERVER_TIMING="1")
    try:
        stub.reset(*[message(text("What is the order number of your order?")) for _ in range(8)])
        _every_worker_answering(running)
        answers = _new_customers_ask_at_once(running, 8, "Where is my order?")
        metrics = f"{running.url}/metrics"
        scrapes = [urllib.request.urlopen(metrics, timeout=10).read().decode() for _ in range(4)]  # noqa: S310
    finally:
        running.stop()
    workers = {_worker(headers) for _, _, headers in answers}
    assert len(workers) == WORKERS
    for scrape in scrapes:
        answered = re.search(r'^bookly_turns_total\{outcome="answered"\} (\S+)$', scrape, re.MULTILINE)
        assert answered, scrape
        assert float(answered.group(1)) == 8


def test_two_messages_of_one_conversation_at_once_are_serialized(site, stub):
    # Whichever message takes the conversation first, its model call is answered only once the
    # other message has been answered, so the two truly overlap (a cold worker may take seconds).
    other_answered = threading.Event()

    def answer_once_the_other_is_answered(request):
        other_answered.wait(timeout=20)
        return message(text("What is the order number of your order?"))

    customer = Customer(site)
    customer.start_chatting(stub)
    stub.reset(answer_once_the_other_is_answered)

    def send(words):
        status, _ = customer.send(words, timeout=30)
        if status != 200:
            other_answered.set()
        return status, words

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(send, ["Where is my order?", "Hello? Are you there?"]))
    assert sorted(status for status, _ in results) == [200, 409]
    answered = next(words for status, words in results if status == 200)
    conversation = Conversation.objects.get()
    texts = ConversationMessage.objects.filter(conversation=conversation).values_list(
        "visible_text", flat=True
    )
    assert list(texts)[2:] == [answered, "What is the order number of your order?"]


def test_a_worker_killed_mid_turn_leaves_the_conversation_usable(site, stub):
    customer = Customer(site)
    customer.start_chatting(stub)
    stub.reset(slow(3.0, message(text("What is the order number of your order?"))))
    outcome = {}

    def first_message():
        outcome["result"] = _send_or_error(customer, "Where is my order?")

    thread = threading.Thread(target=first_message)
    thread.start()
    deadline = time.monotonic() + 10
    while not stub.requests:  # the turn holds its lease and now waits on the model
        assert time.monotonic() < deadline, "the turn never reached the model"
        time.sleep(0.05)
    killed_at = time.monotonic()
    for pid in site.workers():
        os.kill(pid, signal.SIGKILL)
    thread.join(timeout=10)
    assert outcome["result"] == "connection lost"

    deadline = time.monotonic() + 20  # the master starts new workers
    while len(site.workers()) < WORKERS and time.monotonic() < deadline:
        time.sleep(0.2)
    stub.reset(*[message(text("What is the order number of your order?")) for _ in range(3)])
    assert customer.send("Hello?")[0] == 409  # the dead turn's lease is still live
    time.sleep(max(0.0, killed_at + LEASE_SECONDS + 0.5 - time.monotonic()))
    assert customer.send("Where is my order, please?")[0] == 200

    conversation = Conversation.objects.get()
    stored = list(ConversationMessage.objects.filter(conversation=conversation).order_by("position"))
    assert [m.visible_text for m in stored][2:] == [
        "Where is my order?",
        "Where is my order, please?",
        "What is the order number of your order?",
    ]
    assert messages_problems(stub.requests[-1]["messages"]) == []


def _send_or_error(customer, text_):
    try:
        return customer.send(text_, timeout=10)[0]
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return "connection lost"


def test_no_message_is_lost_under_concurrent_customers(site, stub):
    turns = 3
    customers = [Customer(site) for _ in range(10)]
    ask = message(text("What is the order number of your order?"))
    stub.reset(*[ask] * (len(customers) * turns))

    def chat(customer):
        return [customer.send(f"Message {n} about my order")[0] for n in range(turns)]

    with ThreadPoolExecutor(max_workers=len(customers)) as pool:
        statuses = [status for result in pool.map(chat, customers) for status in result]
    assert statuses == [200] * len(customers) * turns
    assert ConversationMessage.objects.filter(role="user").count() == len(customers) * turns
    assert ConversationMessage.objects.filter(role="assistant").count() == len(customers) * turns
    assert Conversation.objects.count() == len(customers)


class Staff:
    """A member of support staff's browser, logged in through the real admin login form."""

    def __init__(self, site: Site, username: str, password: str):
        self.site = site
        self.jar = CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.opener.open(f"{site.url}/admin/login/", timeout=10).read()
        status, _, _ = self.post("/admin/login/?next=/admin/", {"username": username, "password": password})
        assert status == 200 and any(cookie.name == "sessionid" for cookie in self.jar), "login failed"

    def post(self, path: str, fields: dict) -> tuple[int, dict, str]:
        token = _csrf_token(self.jar)
        request = urllib.request.Request(  # noqa: S310 - our own http URL
            f"{self.site.url}{path}",
            data=urllib.parse.urlencode({**fields, "csrfmiddlewaretoken": token}).encode(),
            headers={"Referer": f"{self.site.url}{path}"},
        )
        with self.opener.open(request, timeout=15) as response:  # follows the redirect after a POST
            return response.status, dict(response.headers), response.read().decode()


@pytest.fixture(scope="module")
def collected_static():
    """Admin pages need the static files collected, as an operator deploys them (README)."""
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
        cwd=settings.BASE_DIR,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "bookly.settings",
            "DJANGO_DEBUG": "false",
            "DJANGO_SECRET_KEY": "multiprocess-test-key",
        },
        check=True,
    )


def test_staff_replies_and_customer_messages_at_once_are_all_kept_in_order(
    stub, demo_data, staff_user, collected_static
):
    cache.clear()
    # The site runs the real settings, whose password hashers do not include the tests' fast one.
    hasher = PBKDF2PasswordHasher()
    staff_user.password = hasher.encode("agent-pass-1234", hasher.salt())
    staff_user.save()
    running = Site(stub, BOOKLY_SERVER_TIMING="1")
    rounds = 8
    try:
        customer = Customer(running)
        customer.start_chatting(stub)
        request = urllib.request.Request(  # noqa: S310 - our own http URL
            f"{running.url}/api/chat/handoff", data=b"", headers={"X-CSRFToken": customer.token}
        )
        customer.opener.open(request, timeout=10).read()
        conversation = Conversation.objects.get()
        staff = Staff(running, "agent", "agent-pass-1234")
        page = f"/admin/support/conversation/{conversation.pk}/change/"

        def both_at_once(n):
            with ThreadPoolExecutor(max_workers=2) as pool:
                said = pool.submit(customer.send_with_headers, f"Customer {n}")
                replied = pool.submit(staff.post, page, {"action": "reply", "text": f"Staff {n}"})
                return said.result(), replied.result()

        outcomes = [both_at_once(n) for n in range(rounds)]
    finally:
        running.stop()

    for (status, body, _), (staff_status, _, page) in outcomes:
        assert (status, body["reply"], staff_status) == (200, None, 200)
        assert "Your reply was sent." in page  # not a refusal shown on the same page
    workers = {
        _worker(headers)
        for (_, _, customer_headers), (_, staff_headers, _) in outcomes
        for headers in (customer_headers, staff_headers)
    }
    assert len(workers) == WORKERS  # the two sides met on different processes
    stored = list(ConversationMessage.objects.filter(conversation=conversation).order_by("position"))
    assert [message.position for message in stored] == list(range(len(stored)))
    said = [m.visible_text for m in stored if m.role == "user"][1:]
    replied = [m.visible_text for m in stored if m.role == "staff"]
    assert said == [f"Customer {n}" for n in range(rounds)]
    assert replied == [f"Staff {n}" for n in range(rounds)]
    assert len(stub.requests) == 1  # the first "Hi" only: nothing while a person answers


def test_the_providers_circuit_is_shared_by_the_workers(stub, demo_data):
    """Shared on purpose, through Redis: one outage opens it once for the whole site, and every
    worker's customers then read the built-in model at once, instead of each worker paying its own
    failures (and its customers their 503s) before it learns what the others already know."""
    cache.clear()
    running = Site(
        stub, BOOKLY_SERVER_TIMING="1", BOOKLY_MODEL_CIRCUIT_FAILURES="3", BOOKLY_MODEL_CIRCUIT_SECONDS="300"
    )
    try:
        stub.reset(*[message(text("What is the order number of your order?")) for _ in range(4)])
        _every_worker_answering(running)
        stub.reset()
        stub.otherwise = ErrorReply(529, "overloaded_error")
        outage = [Customer(running).send_with_headers("Where is my order?") for _ in range(3)]
        answers = _new_customers_ask_at_once(running, 8, "Where is my order?")
    finally:
        running.stop()
    assert [status for status, _, _ in outage] == [503] * 3
    assert [(status, body["offline"]) for status, body, _ in answers] == [(200, True)] * 8
    # Each worker answered with the built-in model without asking the provider once more: with a
    # circuit per process, a worker that had not seen three failures itself would have asked it.
    assert len(stub.requests) == 3
    workers = {_worker(headers) for _, _, headers in answers}
    assert len(workers) == WORKERS


PAYMENTS_ANSWER = "We accept Visa, Mastercard, American Express, PayPal and Bookly gift cards."


def test_a_faq_topic_staff_save_is_answered_by_every_worker_at_the_next_message(stub, demo_data):
    """Issue 37: a topic staff save is answered from the customers' next message by whichever worker
    takes it, not after a restart or the prompt's 30 seconds: the save counts up the prompt's version in
    Redis, which every worker reads before a turn, and the built-in model reads the topics with it."""
    cache.clear()
    running = Site(stub, BOOKLY_LLM="offline", BOOKLY_SERVER_TIMING="1", BOOKLY_RATELIMIT_IP="100/m")
    question = "do you guys take paypal?"
    try:
        _every_worker_answering(running)
        before = _new_customers_ask_at_once(running, 6, question)
        PolicyEntry.objects.create(
            topic="payment_methods",
            title="Payment methods",
            text=PAYMENTS_ANSWER,
            example_questions="\n".join(
                ["What payment methods do you accept?", "Which cards can I use?", "Do you take PayPal?"]
            ),
            is_published=True,
        )
        after = _new_customers_ask_at_once(running, 6, question)
    finally:
        running.stop()
    assert [status for status, _, _ in before + after] == [200] * 12
    assert not any(PAYMENTS_ANSWER in body["reply"] for _, body, _ in before)
    assert all(PAYMENTS_ANSWER in body["reply"] for _, body, _ in after)
    workers = {_worker(headers) for _, _, headers in after}
    assert len(workers) == WORKERS
