"""A customer's browser session on the JSON API, for tests."""

import json

from django.test import Client


class ChatClient:
    """A customer's browser session on the JSON API, with CSRF checks enforced."""

    def __init__(self):
        self.http = Client(enforce_csrf_checks=True)
        self.token: str | None = None

    def transcript(self):
        response = self.http.get("/api/chat")
        self.token = response.cookies["csrftoken"].value if "csrftoken" in response.cookies else self.token
        return response

    def csrf_token(self) -> str:
        """The session's CSRF token, read with the transcript first when there is none yet."""
        if self.token is None:
            self.transcript()
        assert self.token is not None, "GET /api/chat sets the csrftoken cookie (ensure_csrf_cookie)"
        return self.token

    def send(self, message):
        return self.send_raw(json.dumps({"message": message}))

    def send_raw(self, body, content_type="application/json"):
        return self.http.post(
            "/api/chat", body, content_type=content_type, headers={"X-CSRFToken": self.csrf_token()}
        )

    def handoff(self, body: dict | None = None):
        """Press "Talk to a person" (optionally with {"reason", "email"})."""
        return self.http.post(
            "/api/chat/handoff",
            json.dumps(body) if body is not None else "",
            content_type="application/json",
            headers={"X-CSRFToken": self.csrf_token()},
        )

    def feedback(self, payload):
        """A vote ({"turn", "helpful"}) or a rating ({"rating", "comment"}); a str is sent as it is."""
        return self.http.post(
            "/api/chat/feedback",
            payload if isinstance(payload, str) else json.dumps(payload),
            content_type="application/json",
            headers={"X-CSRFToken": self.csrf_token()},
        )

    def sign_in(self, payload):
        """The store's signature for its signed-in customer ({"email", "time", "signature"}); a str is
        sent as it is."""
        return self.http.post(
            "/api/chat/sign-in",
            payload if isinstance(payload, str) else json.dumps(payload),
            content_type="application/json",
            headers={"X-CSRFToken": self.csrf_token()},
        )

    def reset(self):
        return self.http.post("/api/chat/reset", headers={"X-CSRFToken": self.csrf_token()})
