"""The site as a whole: security headers, CSP, cookies, session lifetime, error pages, health."""

import time
from importlib import import_module
from unittest import mock

import pytest
from django.contrib.sessions.middleware import SessionMiddleware
from django.contrib.sessions.models import Session
from django.db import OperationalError, connection
from django.http import HttpResponse
from django.test import Client, RequestFactory

from bookly.middleware import SessionLifetimeMiddleware
from support.models import Conversation

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


def test_with_the_widget_on_only_the_customer_s_cookies_are_same_site_none(client, staff_user, settings):
    """The chat's frame needs SameSite=None; a staff session must never go along with other sites'
    requests: not from the admin login, nor when logged-in staff use the chat."""
    settings.BOOKLY_WIDGET_ORIGINS = ["https://shop.example.com"]
    customer = Client()
    customer.post("/chat/send", {"message": QUESTION})
    assert customer.cookies["sessionid"]["samesite"] == "None"

    login = client.post("/admin/login/?next=/admin/", {"username": "agent", "password": "agent-pass-1234"})
    assert login.status_code == 302
    for name in ("sessionid", "csrftoken"):
        assert login.cookies[name]["samesite"] == "Lax"
        assert "Partitioned" not in login.cookies[name].OutputString()
    chatting = client.post("/chat/send", {"message": QUESTION})
    assert chatting.cookies["sessionid"]["samesite"] == "Lax"


# --- session lifetime ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/api/chat"])
def test_reading_the_page_or_the_transcript_makes_no_session(client, path):
    for _ in range(3):
        response = client.get(path)
    assert "sessionid" not in response.cookies
    assert "csrftoken" in response.cookies
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
    # Staff see the customer left, instead of answering a conversation nobody can read any more.
    assert Conversation.objects.get().ended_at is not None


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


def test_a_renewal_never_writes_back_what_a_request_meanwhile_changed(db, settings):
    """A slow request (a chat turn) whose renewal is due must not save its copy of the session over a
    change another request made meanwhile (a store's sign-out would be undone)."""
    SessionStore = import_module(settings.SESSION_ENGINE).SessionStore  # the cached one with Redis
    session = SessionStore()
    session.update({"signed_in": "sarah", SessionLifetimeMiddleware.STARTED_KEY: int(time.time())})
    session.create()
    before = Session.objects.get(session_key=session.session_key).expire_date

    def slow_view(request):
        meanwhile = SessionStore(session_key=session.session_key)
        meanwhile.pop("signed_in")
        meanwhile.save()
        return HttpResponse()

    request = RequestFactory().get("/api/chat")
    request.COOKIES[settings.SESSION_COOKIE_NAME] = session.session_key
    with mock.patch("bookly.middleware.time.time", return_value=time.time() + 120):
        SessionMiddleware(SessionLifetimeMiddleware(slow_view))(request)

    stored = Session.objects.get(session_key=session.session_key)
    assert "signed_in" not in SessionStore(session_key=session.session_key).load()
    assert stored.expire_date > before  # renewed all the same


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
        "support.web.page.conversation_transcript", side_effect=RuntimeError("secret internal detail")
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
