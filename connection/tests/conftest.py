import contextlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from connection.deliveries import webhook_endpoint_create
from connection.fields import SecretField
from connection.models import ShopConnection


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """A real HTTP server on 127.0.0.1 standing in for the store's webhook receiver. `answers` are
    taken one a request (then 200): a status code, ("slow", seconds), or ("redirect", url)."""

    url: str
    received: list[Received] = field(default_factory=list)
    answers: list = field(default_factory=list)


@pytest.fixture
def loopback():
    """Serves a request handler class on 127.0.0.1 (a real HTTP server, in a thread) for the test's
    length: loopback(Handler) gives its address."""
    servers = []

    def serve(handler) -> str:
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def json_api(loopback):
    """Serves a platform's JSON API on 127.0.0.1: json_api(answer) gives its address, where
    answer(method, path, headers, body) is (status, JSON body, headers) for each request."""

    def serve(answer: Callable[[str, str, dict, object], tuple[int, object, dict]]) -> str:
        class Handler(BaseHTTPRequestHandler):
            def _answer(self):
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length)) if length else None
                status, said, headers = answer(self.command, self.path, dict(self.headers.items()), body)
                data = json.dumps(said).encode()
                self.send_response(status)
                for name, value in {**headers, "Content-Type": "application/json"}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(OSError):  # Bookly hung up on a stalled answer
                    self.wfile.write(data)

            do_GET = do_POST = do_PUT = _answer

            def log_message(self, *args):
                pass

        return loopback(Handler)

    return serve


@pytest.fixture
def receiver(loopback):
    state = Receiver(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            state.received.append(Received(headers=dict(self.headers.items()), body=body))
            answer = state.answers.pop(0) if state.answers else 200
            if isinstance(answer, tuple) and answer[0] == "slow":
                time.sleep(answer[1])
                answer = 200
            if isinstance(answer, tuple) and answer[0] == "redirect":
                self.send_response(302)
                self.send_header("Location", answer[1])
                self.end_headers()
                return
            self.send_response(answer)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"ok" if answer < 300 else b"receiver says no")

        def log_message(self, *args):
            pass

    state.url = f"{loopback(Handler)}/hooks"
    return state


@pytest.fixture
def endpoint(db, receiver):
    """The receiver, subscribed to every event."""
    return webhook_endpoint_create(url=receiver.url, event_types=[])


class SecretKeyChanged:
    """DJANGO_SECRET_KEY changed after the shops' credentials were saved: `old` is the key they were
    saved with; read_again() after the settings change again (the fields derive their keys once)."""

    def __init__(self, old: str):
        self.old = old

    @staticmethod
    def read_again():
        for each in ShopConnection._meta.get_fields():
            if isinstance(each, SecretField):
                each.__dict__.pop("keys", None)
                each.__dict__.pop("f", None)


@pytest.fixture
def secret_key_changed(settings):
    changed = SecretKeyChanged(settings.SECRET_KEY)
    settings.SECRET_KEY = "another-secret-key-entirely"
    changed.read_again()
    yield changed
    changed.read_again()  # the settings are put back after this: derived anew at the next read
