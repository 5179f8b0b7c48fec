"""The chat's own guards: CSRF on its forms and API, rate limits, client addresses."""

import hashlib
import json
import re

import pytest
from django.contrib.sessions.models import Session
from django.core.cache import cache
from django.test import Client, RequestFactory

from support.models import Conversation, ConversationMessage
from support.testing.chat_client import ChatClient
from support.testing.metric_counts import Counts
from support.web.ratelimits import client_ip

pytestmark = pytest.mark.usefixtures("demo_data", "offline")

QUESTION = "How long does shipping take?"


def csp_directives(response) -> dict[str, str]:
    header = response["Content-Security-Policy"]
    return dict(part.strip().split(" ", 1) for part in header.split(";"))


# --- CSRF ------------------------------------------------------------------------------------------


def test_page_post_without_csrf_token_is_refused_with_a_friendly_page():
    browser = Client(enforce_csrf_checks=True)
    browser.get("/")
    response = browser.post("/chat/send", {"message": QUESTION})
    assert response.status_code == 403
    html = response.content.decode()
    assert "This page has expired" in html and "/static/support/bookly.css" in html
    assert not Conversation.objects.exists()


def test_page_post_with_the_form_token_is_accepted():
    browser = Client(enforce_csrf_checks=True)
    html = browser.get("/").content.decode()
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
    assert found is not None
    token = found.group(1)
    response = browser.post("/chat/send", {"message": QUESTION, "csrfmiddlewaretoken": token})
    assert response.status_code == 302
    assert ConversationMessage.objects.filter(visible_text=QUESTION).exists()


def test_reset_post_without_csrf_token_is_refused(customer):
    customer.send(QUESTION)
    response = customer.http.post("/chat/reset")
    assert response.status_code == 403
    assert Conversation.objects.get().ended_at is None


def test_api_post_without_csrf_token_is_refused_in_json(customer):
    customer.transcript()
    response = customer.http.post(
        "/api/chat", json.dumps({"message": QUESTION}), content_type="application/json"
    )
    assert response.status_code == 403
    assert response.json()["error"] == "csrf_failed"
    assert "reload the page" in response.json()["detail"]
    assert not ConversationMessage.objects.exists()


# --- rate limits -----------------------------------------------------------------------------------


@pytest.fixture
def limits(settings):
    """Small limits and fresh counters; returns a function to set them."""
    cache.clear()

    def set_limits(*, ip="100/m", session="100/m", actions="100/m"):
        settings.BOOKLY_RATELIMIT_IP = ip
        settings.BOOKLY_RATELIMIT_SESSION = session
        settings.BOOKLY_RATELIMIT_ACTIONS = actions

    yield set_limits
    cache.clear()


def assert_retry_after(response) -> int:
    seconds = int(response["Retry-After"])
    assert 1 <= seconds <= 60
    return seconds


# A visitor's first message comes before their session exists, so it counts against the IP limit only:
# a session is made for a message that is served, never to count one.


def test_api_over_the_session_limit_gets_429_json_with_retry_after(limits, customer):
    limits(session="2/m")
    for _ in range(3):
        assert customer.send(QUESTION).status_code == 200
    response = customer.send("One more?")
    assert response.status_code == 429
    seconds = assert_retry_after(response)
    assert response.json()["error"] == "rate_limited"
    assert f"Please wait {seconds} second" in response.json()["detail"]
    assert not ConversationMessage.objects.filter(visible_text="One more?").exists()


def test_page_over_the_session_limit_gets_a_429_page_with_the_text_kept(limits, client):
    limits(session="1/m")
    for _ in range(2):
        assert client.post("/chat/send", {"message": QUESTION}).status_code == 302
    response = client.post("/chat/send", {"message": "Where is my order?"})
    assert response.status_code == 429
    assert_retry_after(response)
    html = response.content.decode()
    assert "sending messages faster than I can answer them" in html
    assert re.search(r'<textarea id="message"[^>]*>Where is my order\?</textarea>', html)
    assert not ConversationMessage.objects.filter(visible_text="Where is my order?").exists()


def test_the_page_and_the_api_share_one_budget(limits, customer):
    limits(session="2/m")
    assert customer.send(QUESTION).status_code == 200  # the first: no session to count yet
    assert customer.send(QUESTION).status_code == 200
    token = customer.token
    assert (
        customer.http.post("/chat/send", {"message": QUESTION, "csrfmiddlewaretoken": token}).status_code
        == 302
    )
    assert customer.send(QUESTION).status_code == 429


def test_each_new_session_has_its_own_budget(limits):
    # A first-time visitor's first POST comes with no session: counting by the
    # key of a session not yet saved would put them all into one bucket.
    limits(session="1/m")
    for _ in range(2):
        assert Client().post("/chat/send", {"message": QUESTION}).status_code == 302
        response = Client().post(
            "/api/chat", json.dumps({"message": QUESTION}), content_type="application/json"
        )
        assert response.status_code == 200


def test_the_ip_limit_holds_across_new_sessions(limits):
    limits(ip="2/m")
    assert ChatClient().send(QUESTION).status_code == 200
    assert ChatClient().send(QUESTION).status_code == 200
    response = ChatClient().send(QUESTION)
    assert response.status_code == 429
    assert_retry_after(response)


def test_refused_requests_make_no_session(limits):
    """An outside probe's 200 rate-limited cookieless messages made 200 session rows in 0.9 s."""
    limits(ip="1/m")
    assert ChatClient().send(QUESTION).status_code == 200  # served: its session is the only one
    refused = [
        ChatClient().send(QUESTION),
        ChatClient().handoff(),
        Client().post("/chat/send", {"message": QUESTION}),
        Client().post("/chat/handoff"),
    ]
    assert [response.status_code for response in refused] == [429] * 4
    limits(ip="100/m")
    invalid = [
        ChatClient().send(""),
        ChatClient().send_raw("{not json"),
        ChatClient().handoff({"email": "not an address"}),
        ChatClient().feedback({"turn": 1, "helpful": True}),
        Client().post("/chat/send", {"message": "x" * 4001}),
    ]
    assert [response.status_code for response in invalid] == [400] * 5
    assert Session.objects.count() == 1


@pytest.mark.parametrize("form", [False, True], ids=["api", "form"])
def test_votes_are_rate_limited(limits, customer, form):
    """An outside probe cast 200 votes on one reply in about a second."""
    limits(actions="3/m")
    customer.send(QUESTION)

    def vote():
        if form:
            fields = {"turn": "1", "helpful": "yes", "csrfmiddlewaretoken": customer.token}
            return customer.http.post("/chat/feedback", fields)
        return customer.feedback({"turn": 1, "helpful": True})

    counts = Counts()
    answers = [vote() for _ in range(5)]
    assert [answer.status_code for answer in answers][3:] == [429, 429]
    assert_retry_after(answers[-1])
    assert counts.moved("bookly_feedback_total", rating="helpful") == 3
    assert counts.moved("bookly_rate_limited_total", scope="session") == 2


def test_the_pages_new_conversation_button_is_rate_limited_in_words(limits, client):
    limits(actions="1/m")
    client.post("/chat/send", {"message": QUESTION})
    assert client.post("/chat/reset").status_code == 302
    over = client.post("/chat/reset")
    assert over.status_code == 429
    assert_retry_after(over)
    assert "Please wait" in over.content.decode()


def test_new_conversations_and_ratings_share_the_actions_budget_not_the_messages(limits, customer):
    limits(actions="2/m", session="100/m")
    customer.send(QUESTION)
    assert customer.reset().status_code == 200
    assert customer.feedback({"rating": 5}).status_code in (200, 400)  # counted, whatever it finds
    over = customer.reset()
    assert over.status_code == 429 and over.json()["error"] == "rate_limited"
    assert customer.send(QUESTION).status_code == 200


# --- client address behind proxies --------------------------------------------------------------------


def request_from(remote_addr: str, forwarded: str | None = None):
    headers = {"X-Forwarded-For": forwarded} if forwarded is not None else {}
    return RequestFactory().get("/", headers=headers, REMOTE_ADDR=remote_addr)


def test_without_trusted_proxies_x_forwarded_for_is_ignored(settings):
    settings.BOOKLY_TRUSTED_PROXIES = []
    assert client_ip(request_from("203.0.113.7", "198.51.100.1")) == "203.0.113.7"


@pytest.mark.parametrize(
    ("remote_addr", "forwarded", "client"),
    [
        # From our proxy: the address it appended, not what the client wrote before it.
        ("10.0.0.1", "6.6.6.6, 198.51.100.23", "198.51.100.23"),
        # Through two of our proxies (one given as a network).
        ("10.0.0.1", "6.6.6.6, 198.51.100.23, 172.16.4.2", "198.51.100.23"),
        # Not from a trusted proxy: the header is the client's own claim.
        ("203.0.113.7", "198.51.100.23", "203.0.113.7"),
        # From our proxy, but nothing usable in the header.
        ("10.0.0.1", None, "10.0.0.1"),
        ("10.0.0.1", "not-an-address", "10.0.0.1"),
        ("10.0.0.1", "172.16.4.2", "10.0.0.1"),
    ],
)
def test_behind_trusted_proxies_the_right_most_untrusted_address_is_the_client(
    settings, remote_addr, forwarded, client
):
    settings.BOOKLY_TRUSTED_PROXIES = ["10.0.0.1", "172.16.0.0/12"]
    assert client_ip(request_from(remote_addr, forwarded)) == client


def _api_post_from(remote_addr: str, forwarded: str):
    chat = ChatClient()
    chat.transcript()
    return chat.http.post(
        "/api/chat",
        json.dumps({"message": QUESTION}),
        content_type="application/json",
        headers={"X-CSRFToken": chat.csrf_token(), "X-Forwarded-For": forwarded},
        REMOTE_ADDR=remote_addr,
    )


def test_a_spoofed_x_forwarded_for_does_not_escape_the_ip_limit(limits, settings):
    settings.BOOKLY_TRUSTED_PROXIES = []
    limits(ip="1/m")
    assert _api_post_from("203.0.113.7", "198.51.100.1").status_code == 200
    assert _api_post_from("203.0.113.7", "198.51.100.2").status_code == 429


def test_clients_behind_a_trusted_proxy_are_limited_one_by_one(limits, settings):
    settings.BOOKLY_TRUSTED_PROXIES = ["10.0.0.1"]
    limits(ip="1/m")
    assert _api_post_from("10.0.0.1", "198.51.100.1").status_code == 200
    assert _api_post_from("10.0.0.1", "198.51.100.2").status_code == 200
    assert _api_post_from("10.0.0.1", "198.51.100.1").status_code == 429


# --- What staff can read ---------------------------------------------------------------------------


def test_a_conversation_keeps_no_session_key_only_a_keyed_hash_that_still_finds_it():
    customer = ChatClient()
    customer.send(QUESTION)
    key = customer.http.session.session_key
    assert key is not None  # the message gave the visitor their session
    row = Conversation.objects.values().get()
    assert not [name for name, value in row.items() if key in str(value)]
    # The hash is keyed: knowing the session key without the site's secret gives no handle.
    assert row["session_handle"] != hashlib.sha256(key.encode()).hexdigest()
    assert len(customer.transcript().json()["messages"]) == 2
