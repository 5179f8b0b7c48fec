import json

import pytest
from django.test import Client

from support.testing.messages_stub import MessagesStub


@pytest.fixture(scope="session")
def messages_stub():
    stub = MessagesStub().start()
    yield stub
    stub.stop()


@pytest.fixture
def claude(messages_stub, settings):
    """The real SDK path, pointed at the local Messages API stub (never the network)."""
    messages_stub.reset()
    settings.BOOKLY_LLM = "anthropic"
    settings.ANTHROPIC_API_KEY = "sk-ant-test-not-a-key"
    settings.ANTHROPIC_BASE_URL = messages_stub.url
    settings.ANTHROPIC_MAX_RETRIES = 1
    settings.ANTHROPIC_TIMEOUT_SECONDS = 5.0
    return messages_stub


@pytest.fixture
def offline(settings):
    settings.BOOKLY_LLM = "offline"


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

    def reset(self):
        if self.token is None:
            self.transcript()
        return self.http.post("/api/chat/reset", headers={"X-CSRFToken": self.token})


@pytest.fixture
def customer(db):
    return ChatClient()
