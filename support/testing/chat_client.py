"""A customer's browser session on the JSON API, for tests."""

import json

from django.test import Client


class ChatClient:
    """A customer's browser session on the JSON API, with CSRF checks enforced."""

    def __init__(self):
        self.http = Client(enforce_csrf_checks=True)
        self.token = None

    def transcript(self):
        response = self.http.get("/api/chat")
        self.token = response.cookies["csrftoken"].value if "csrftoken" in response.cookies else self.token
        return response

    def send(self, message):
        return self.send_raw(json.dumps({"message": message}))

    def send_raw(self, body, content_type="application/json"):
        if self.token is None:
            self.transcript()
        return self.http.post(
            "/api/chat", body, content_type=content_type, headers={"X-CSRFToken": self.token}
        )

    def handoff(self, body: dict | None = None):
        """Press "Talk to a person" (optionally with {"reason", "email"})."""
        if self.token is None:
            self.transcript()
        return self.http.post(
            "/api/chat/handoff",
            json.dumps(body) if body is not None else "",
            content_type="application/json",
            headers={"X-CSRFToken": self.token},
        )

    def feedback(self, payload):
        """A vote ({"turn", "helpful"}) or a rating ({"rating", "comment"}); a str is sent as it is."""
        if self.token is None:
            self.transcript()
        return self.http.post(
            "/api/chat/feedback",
            payload if isinstance(payload, str) else json.dumps(payload),
            content_type="application/json",
            headers={"X-CSRFToken": self.token},
        )

    def sign_in(self, payload):
        """The store's signature for its signed-in customer ({"email", "time", "signature"}); a str is
        sent as it is."""
        if self.token is None:
            self.transcript()
        return self.http.post(
            "/api/chat/sign-in",
            payload if isinstance(payload, str) else json.dumps(payload),
            content_type="application/json",
            headers={"X-CSRFToken": self.token},
        )

    def reset(self):
        if self.token is None:
            self.transcript()
        return self.http.post("/api/chat/reset", headers={"X-CSRFToken": self.token})
