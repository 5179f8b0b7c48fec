"""The bounds of every request to a shop platform (connection.platform_http): each attempt ends within
its deadline however the platform answers (a byte at a time, in its headers or its body), reads no
more than MAX_BODY_BYTES, and follows no redirect with the key. Real HTTP servers on 127.0.0.1 answer;
nothing leaves loopback."""

import contextlib
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

import httpx2 as httpx
import pytest

from connection import platform_http
from connection.platform_http import PlatformError, platform_budget, platform_client, platform_get

TOKEN = "shpat_0123456789abcdef"
# A trickle: one byte this often, well within any per-read timeout, for longer than a test's deadline.
TRICKLE_EVERY = 0.3
TRICKLE_BYTES = 20


@pytest.fixture(autouse=True)
def quick(monkeypatch):
    """A one-second deadline a try, two tries: a test's trickle is cut in about two seconds."""
    monkeypatch.setattr(platform_http, "ATTEMPT_SECONDS", 1.0)
    monkeypatch.setattr(platform_http, "ATTEMPTS", 2)


@dataclass
class Server:
    """What a stand-in was sent (path, headers), and how it answers each request in turn (then "ok"):
    "ok", "trickle headers", "trickle body", "big", or ("redirect", url)."""

    url: str = ""
    requests: list[tuple[str, dict]] = field(default_factory=list)
    answers: list = field(default_factory=list)


def _trickle(wfile, data: bytes) -> None:
    for byte in data:
        wfile.write(bytes([byte]))
        time.sleep(TRICKLE_EVERY)


@pytest.fixture
def serve(loopback):
    def start() -> Server:
        state = Server()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                state.requests.append((self.path, dict(self.headers.items())))
                # An OSError: the client hung up, having cut the attempt off.
                with contextlib.suppress(OSError):
                    self.answer(state.answers.pop(0) if state.answers else "ok")

            def answer(self, answer):
                if answer == "trickle headers":
                    self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                    _trickle(self.wfile, b"a" * TRICKLE_BYTES)
                    self.wfile.write(b"\r\nContent-Length: 2\r\n\r\n{}")
                elif answer == "trickle body":
                    self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % TRICKLE_BYTES)
                    _trickle(self.wfile, b" " * TRICKLE_BYTES)
                elif answer == "big":
                    self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n" + b" " * 5000)
                elif isinstance(answer, tuple) and answer[0] == "redirect":
                    self.wfile.write(f"HTTP/1.1 302 Found\r\nLocation: {answer[1]}\r\n".encode())
                    self.wfile.write(b"Content-Length: 0\r\n\r\n")
                else:
                    self.wfile.write(b'HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n{"ok": true}')

            def log_message(self, *args):
                pass

        state.url = loopback(Handler)
        return state

    return start


def _get(server: Server, client: httpx.Client | None = None, sleep=lambda seconds: None):
    with client or platform_client(headers={"X-Shopify-Access-Token": TOKEN}) as client:
        return platform_get(client, f"{server.url}/orders.json", sleep=sleep)


def test_a_body_trickled_a_byte_at_a_time_is_cut_at_the_deadline_and_tried_again(serve):
    """Cut between the body's chunks, with any client (here httpx's own: its read timeout never comes,
    each byte arriving within it)."""
    server = serve()
    server.answers = ["trickle body"]
    waited: list[float] = []
    started = time.monotonic()

    response = _get(server, httpx.Client(timeout=10.0), sleep=waited.append)

    assert response.json() == {"ok": True}
    assert time.monotonic() - started < 2.5  # a second for the trickle, then the answer
    assert waited == [1.0] and len(server.requests) == 2  # tried again like a dropped connection


def test_headers_trickled_a_byte_at_a_time_are_cut_at_the_deadline(serve):
    """Before any body: a platform client's every socket wait ends with the attempt."""
    server = serve()
    server.answers = ["trickle headers", "trickle headers"]
    started = time.monotonic()

    with pytest.raises(PlatformError, match=r"orders.json: no whole answer within 1 seconds, at each of 2"):
        _get(server)
    assert time.monotonic() - started < 3.5


def test_a_body_past_the_most_read_stops_the_request(serve, monkeypatch):
    monkeypatch.setattr(platform_http, "MAX_BODY_BYTES", 1000)
    server = serve()
    server.answers = ["big"]

    with pytest.raises(PlatformError, match=r"answered more than .* MB, which no page of orders is"):
        _get(server)
    assert len(server.requests) == 1  # not tried again: it would answer the same


def test_a_redirect_is_not_followed_so_the_token_stays_with_the_shop(serve):
    shop, elsewhere = serve(), serve()
    shop.answers = [("redirect", f"{elsewhere.url}/orders.json")]

    with pytest.raises(PlatformError, match="answered 302"):
        _get(shop)
    assert elsewhere.requests == []


def test_a_budget_ends_every_try_and_wait_within_it(serve):
    """A task's write (connection.write_back): the budget cuts the tries' deadline and refuses a wait
    past it."""
    server = serve()
    server.answers = ["trickle body", "trickle body"]
    started = time.monotonic()

    with platform_budget(0.5), pytest.raises(PlatformError, match=r"^no answer within 0.5 seconds$"):
        _get(server, sleep=time.sleep)
    assert time.monotonic() - started < 1.0  # half a second, not the one-second deadline
