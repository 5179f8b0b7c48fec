"""Security guards: headers, CSP, CSRF, rate limits, client addresses, sessions, error pages, health."""

import json
import re
import time
from unittest import mock

import pytest
from django.contrib.sessions.models import Session
from django.core.cache import cache
from django.db import OperationalError, connection
from django.test import Client, RequestFactory

from bookly.middleware import SessionLifetimeMiddleware
from support.models import Conversation, ConversationMessage
from support.ratelimits import client_ip
from support.tests.conftest import ChatClient

pytestmark = pytest.mark.usefixtures("demo_data", "offline")

QUESTION = "How long does shipping take?"


def csp_directives(response) -> dict[str, str]:
    header = response["Content-Security-Policy"]
    return dict(part.strip().split(" ", 1) for part in header.split(";"))


# --- headers ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/api/chat", "/admin/login/", "/no-such-page"])
def test_security_headers_on_pages_api_admin_and_errors(client, path):
    response = client.get(path)
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["X-Frame-Options"] == "DENY"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["Permissions-Policy"] == "camera=(), microphone=(), geolocation=()"
    assert "Content-Security-Policy" in response


def test_content_security_policy_allows_only_our_own_origin_and_no_inline_code(client):
    response = client.get("/")
    assert csp_directives(response) == {
        "default-src": "'self'",
        "object-src": "'none'",
        "base-uri": "'none'",
        "frame-ancestors": "'none'",
        "form-action": "'self'",
    }
    assert "unsafe-inline" not in response["Content-Security-Policy"]
    assert "unsafe-eval" not in response["Content-Security-Policy"]


def test_session_cookie_is_http_only_and_same_site_lax(client):
    client.post("/chat/send", {"message": QUESTION})
    cookie = client.cookies["sessionid"]
    assert cookie["httponly"] is True
    assert cookie["samesite"] == "Lax"


def test_csrf_cookie_is_readable_by_the_page_script_and_same_site_lax(client):
    cookie = client.get("/").cookies["csrftoken"]
    assert not cookie["httponly"]
    assert cookie["samesite"] == "Lax"


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
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
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

    def set_limits(*, ip="100/m", session="100/m"):
        settings.BOOKLY_RATELIMIT_IP = ip
        settings.BOOKLY_RATELIMIT_SESSION = session

    yield set_limits
    cache.clear()


def assert_retry_after(response) -> int:
    seconds = int(response["Retry-After"])
    assert 1 <= seconds <= 60
    return seconds


def test_api_over_the_session_limit_gets_429_json_with_retry_after(limits, customer):
    limits(session="2/m")
    assert customer.send(QUESTION).status_code == 200
    assert customer.send(QUESTION).status_code == 200
    response = customer.send("One more?")
    assert response.status_code == 429
    seconds = assert_retry_after(response)
    assert response.json()["error"] == "rate_limited"
    assert f"Please wait {seconds} second" in response.json()["detail"]
    assert not ConversationMessage.objects.filter(visible_text="One more?").exists()


def test_page_over_the_session_limit_gets_a_429_page_with_the_text_kept(limits, client):
    limits(session="1/m")
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


# --- client address behind proxies --------------------------------------------------------------------


def request_from(remote_addr: str, forwarded: str | None = None):
    headers = {"REMOTE_ADDR": remote_addr}
    if forwarded is not None:
        headers["HTTP_X_FORWARDED_FOR"] = forwarded
    return RequestFactory().get("/", **headers)


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
        headers={"X-CSRFToken": chat.token, "X-Forwarded-For": forwarded},
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


# --- session lifetime ------------------------------------------------------------------------------


def test_a_visitor_without_a_session_is_not_given_one(client):
    response = client.get("/")
    assert "sessionid" not in response.cookies
    assert not Session.objects.exists()


def test_a_session_past_its_maximum_age_is_ended(client, settings):
    client.post("/chat/send", {"message": QUESTION})
    old_key = client.cookies["sessionid"].value
    session = client.session
    session[SessionLifetimeMiddleware.STARTED_KEY] = (
        int(time.time()) - settings.BOOKLY_SESSION_MAX_AGE_SECONDS - 1
    )
    session.save()

    response = client.get("/api/chat")
    assert response.json()["messages"] == []
    assert client.cookies["sessionid"].value != old_key
    assert not Session.objects.filter(session_key=old_key).exists()


def test_an_active_session_is_renewed_at_most_once_a_minute(client):
    client.post("/chat/send", {"message": QUESTION})
    key = client.cookies["sessionid"].value

    def expiry_after_a_request_at(moment):
        with mock.patch("bookly.middleware.time.time", return_value=moment):
            client.get("/api/chat")
        return Session.objects.get(session_key=key).expire_date

    now = time.time()
    renewed = expiry_after_a_request_at(now)
    assert expiry_after_a_request_at(now + 30) == renewed
    assert expiry_after_a_request_at(now + 90) > renewed


# --- error pages -----------------------------------------------------------------------------------


def test_404_page_has_the_site_look(client):
    response = client.get("/no-such-page")
    assert response.status_code == 404
    html = response.content.decode()
    assert "We couldn't find that page" in html
    assert "/static/support/bookly.css" in html and 'href="/"' in html


def test_500_page_has_the_site_look_and_no_details():
    browser = Client(raise_request_exception=False)
    with mock.patch(
        "support.page_views.conversation_transcript", side_effect=RuntimeError("secret internal detail")
    ):
        response = browser.get("/")
    assert response.status_code == 500
    html = response.content.decode()
    assert "Something went wrong on our side" in html and "/static/support/bookly.css" in html
    assert "secret internal detail" not in html and "Traceback" not in html


def test_400_page_has_the_site_look(client):
    response = client.get("/", headers={"host": "evil.example"})
    assert response.status_code == 400
    assert "We couldn't understand that request" in response.content.decode()


def test_403_page_has_the_site_look(staff_client):
    # Support staff may not manage logins.
    response = staff_client.get("/admin/auth/user/")
    assert response.status_code == 403
    html = response.content.decode()
    assert "You don't have access to this page" in html and "/static/support/bookly.css" in html


# --- health ----------------------------------------------------------------------------------------


def test_health_is_ok_when_the_database_answers(client):
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert "no-cache" in response["Cache-Control"]


def test_health_is_503_when_the_database_does_not_answer(client):
    with mock.patch.object(connection, "cursor", side_effect=OperationalError("connection refused")):
        response = client.get("/health")
    assert response.status_code == 503
    assert response.json() == {"status": "unavailable"}


def test_health_is_answered_over_plain_http_when_https_is_enforced(client, settings):
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/").status_code == 301
    assert client.get("/health").status_code == 200
