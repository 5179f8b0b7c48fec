"""A local Messages-API-compatible HTTP server for tests: the real SDK talks to it over a socket.

Each POST /v1/messages is recorded and answered by the next scripted reply: a
message dict, an `ErrorReply`, or a callable that receives the request body
and returns either.
"""

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count

_ids = count(1)


@dataclass
class ErrorReply:
    status: int
    error_type: str = "api_error"
    message: str = "stub error"
    error_code: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def body(self) -> dict:
        error: dict[str, str | dict[str, str]] = {"type": self.error_type, "message": self.message}
        if self.error_code:
            error["details"] = {"error_code": self.error_code}
        return {"type": "error", "error": error}


def message(*blocks: dict, stop_reason: str | None = None, usage: dict | None = None) -> dict:
    """A Messages API response with these content blocks."""
    if stop_reason is None:
        stop_reason = "tool_use" if any(block["type"] == "tool_use" for block in blocks) else "end_turn"
    return {
        "id": f"msg_stub_{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "model": "claude-stub",
        "content": list(blocks),
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 100, "output_tokens": 20},
    }


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def tool_use(name: str, arguments, tool_id: str | None = None) -> dict:
    return {"type": "tool_use", "id": tool_id or f"toolu_stub_{next(_ids)}", "name": name, "input": arguments}


class MessagesStub:
    def __init__(self):
        self.requests: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self.script: deque = deque()
        # What answers once the script is used up (a callable of the request body), if anything.
        self.otherwise = None
        # When set, replies carry the usage this simulated prompt cache computes.
        self.prompt_cache = None
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with stub._lock:
                    # As things stand when the request arrives: a slow responder that answers after the
                    # next test's reset must not count this request in that test's prompt cache.
                    prompt_cache = stub.prompt_cache
                    stub.requests.append(body)
                    stub.headers.append({key.lower(): value for key, value in self.headers.items()})
                    if problem := stub.problem(body):
                        # Refused as the API refuses it, before any scripted reply is used.
                        reply = ErrorReply(400, "invalid_request_error", message=problem)
                    else:
                        reply = (
                            stub.script.popleft()
                            if stub.script
                            else stub.otherwise or ErrorReply(500, message="script exhausted")
                        )
                if callable(reply):
                    reply = reply(stub.asked(body))
                if isinstance(reply, ErrorReply):
                    self._send(
                        reply.status,
                        stub.error_body(reply),
                        {"request-id": "req_stub_error", **reply.headers},
                    )
                    return
                if prompt_cache is not None:
                    reply = {**reply, "usage": {**prompt_cache.account(body), "output_tokens": 20}}
                self._send(200, stub.rendered(reply), {"request-id": f"req_stub_{len(stub.requests)}"})

            def _send(self, status, payload, headers):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def rendered(self, reply: dict) -> dict:
        """A scripted reply (Messages API shape) as this API answers it."""
        return reply

    def asked(self, body: dict) -> dict:
        """A request as the Messages API has it (system, tools, messages): what a scripted responder
        is given, whichever API the stub speaks."""
        return body

    def problem(self, body: dict) -> str | None:
        """What this API would refuse in a request (None: nothing the stub checks)."""
        return None

    @property
    def sent(self) -> list[dict]:
        """Every request so far, in the Messages API's shape."""
        return [self.asked(body) for body in self.requests]

    def error_body(self, reply: ErrorReply) -> dict:
        return reply.body()

    def start(self) -> "MessagesStub":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def reset(self, *replies) -> None:
        with self._lock:
            self.prompt_cache = None
            self.otherwise = None
            self.requests.clear()
            self.headers.clear()
            self.script = deque(replies)

    def then(self, *replies) -> None:
        with self._lock:
            self.script.extend(replies)


def answered_by(model) -> Callable[[dict], dict]:
    """A responder for `otherwise`: another model behind Bookly's boundary (the offline model, say)
    answers each request as it reads after the round trip through the SDK and the stub's API.

    A model that keeps its own state (the built-in one) is sent it back beside its words, as the turn
    does; a provider's API has no such field, so the stub, standing in for a provider that remembers,
    keeps each reply's state by its words and puts it back (test plumbing: the model reads only the
    state)."""
    states: dict[str, dict] = {}

    def answer(request: dict) -> dict:
        messages = request["messages"]
        if getattr(model, "keeps_state", False):
            messages = [_with_state(message, states) for message in messages]
        reply = model.create(
            system=request["system"],
            tools=request["tools"],
            messages=messages,
            deadline=time.monotonic() + 60,
        )
        if reply.state is not None:
            states[_words(reply.content)] = reply.state
        return message(*reply.content, stop_reason=reply.stop_reason)

    return answer


def _words(content) -> str:
    if isinstance(content, str):
        return content.strip()
    return " ".join(block.get("text", "") for block in content if block.get("type") == "text").strip()


def _with_state(sent: dict, states: dict[str, dict]) -> dict:
    state = states.get(_words(sent.get("content") or [])) if sent.get("role") == "assistant" else None
    return {**sent, "state": state} if state else sent
