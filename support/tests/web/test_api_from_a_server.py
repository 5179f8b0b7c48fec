"""The chat's JSON API called as a server or an app calls it: Python's plain http.client over real HTTP,
cookies and the CSRF token handled by hand (docs/contributors.md, "From a server or an app"), with the
widget on, whose cookies carry attributes (SameSite=None; Secure; Partitioned) that Python's own cookie
classes refuse to read."""

import http.client
import json
from urllib.parse import urlsplit

import pytest

pytestmark = [
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.usefixtures("demo_data"),
]


class PlainClient:
    """What the docs tell a server to do: keep each Set-Cookie's name=value (the part before the first
    ";"), send them back in one Cookie header, and the csrftoken in X-CSRFToken with the chat's own
    Origin."""

    def __init__(self, base_url: str):
        self.base = urlsplit(base_url)
        self.cookies: dict[str, str] = {}

    def call(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        assert self.base.hostname is not None, "the server's URL names its host"
        connection = http.client.HTTPConnection(self.base.hostname, self.base.port, timeout=30)
        headers = {"Accept": "application/json"}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        if method != "GET":
            headers |= {
                "Content-Type": "application/json",
                "X-CSRFToken": self.cookies.get("csrftoken", ""),
                "Origin": f"{self.base.scheme}://{self.base.netloc}",
            }
        connection.request(method, path, json.dumps(body) if body is not None else None, headers)
        response = connection.getresponse()
        for header in response.headers.get_all("Set-Cookie") or []:
            name, _, value = header.split(";", 1)[0].partition("=")
            self.cookies[name.strip()] = value.strip()
        payload = json.loads(response.read() or b"{}")
        connection.close()
        return response.status, payload


def test_a_server_talks_to_the_chat_with_cookies_and_the_csrf_token_by_hand(live_server, settings):
    settings.BOOKLY_LLM = "offline"
    settings.BOOKLY_WIDGET_ORIGINS = ["https://shop.example.com"]
    client = PlainClient(live_server.url)

    status, _ = client.call("GET", "/api/chat")
    assert status == 200 and "csrftoken" in client.cookies
    status, answer = client.call("POST", "/api/chat", {"message": "Where is order BK-10042?"})
    assert status == 200 and answer["reply"]
    status, transcript = client.call("GET", "/api/chat")
    assert [message["role"] for message in transcript["messages"]] == ["customer", "assistant"]

    # Without the token the same call is refused, in the API's shape.
    client.cookies.pop("csrftoken")
    status, refused = client.call("POST", "/api/chat", {"message": "hello"})
    assert (status, refused["error"]) == (403, "csrf_failed")
