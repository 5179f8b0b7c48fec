"""Staff logins: brute-force protection with django-axes, through the real admin login form."""

import logging
from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.test import Client
from django.utils import timezone

LOGIN = "/admin/login/?next=/admin/"
RIGHT = "agent-pass-1234"


def login(client: Client, password: str, **request) -> int:
    return client.post(LOGIN, {"username": "agent", "password": password}, **request).status_code


@pytest.fixture
def browser(staff_user):
    return Client()


def test_five_wrong_passwords_lock_the_login_even_against_the_right_one(browser, caplog):
    with caplog.at_level(logging.INFO):
        # The fifth failure is answered with the lockout page already.
        assert [login(browser, f"guess-{n}") for n in range(5)] == [200] * 4 + [429]
        response = browser.post(LOGIN, {"username": "agent", "password": RIGHT})
    assert response.status_code == 429
    page = response.content.decode()
    assert "Too many failed logins" in page and "15 minutes" in page
    assert "_auth_user_id" not in browser.session
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "Locking out" in logged and "agent" in logged and "127.0.0.1" in logged
    assert "guess-" not in logged and RIGHT not in logged
    stored = AccessAttempt.objects.get(username="agent")
    assert "guess-" not in stored.post_data and RIGHT not in stored.post_data


def test_fewer_failures_do_not_lock_and_a_success_starts_the_count_again(browser):
    assert [login(browser, f"guess-{n}") for n in range(4)] == [200] * 4
    assert login(browser, RIGHT) == 302
    browser.logout()
    assert [login(browser, f"guess-{n}") for n in range(4)] == [200] * 4
    assert login(browser, RIGHT) == 302


def test_the_lockout_is_per_username_and_address(browser):
    for n in range(5):
        login(browser, f"guess-{n}", REMOTE_ADDR="203.0.113.7")
    assert login(browser, RIGHT, REMOTE_ADDR="203.0.113.7") == 429
    assert login(Client(), RIGHT, REMOTE_ADDR="198.51.100.9") == 302


def test_behind_a_trusted_proxy_the_forwarded_client_is_locked_out(browser, settings):
    settings.BOOKLY_TRUSTED_PROXIES = ["10.0.0.5"]
    behind_proxy = {"REMOTE_ADDR": "10.0.0.5"}
    for n in range(5):
        login(browser, f"guess-{n}", HTTP_X_FORWARDED_FOR="203.0.113.7", **behind_proxy)
    assert login(browser, RIGHT, HTTP_X_FORWARDED_FOR="203.0.113.7", **behind_proxy) == 429
    # Another customer of the same proxy is not locked out with them.
    assert login(Client(), RIGHT, HTTP_X_FORWARDED_FOR="198.51.100.9", **behind_proxy) == 302


def test_a_superuser_sees_the_lockout_in_admin_and_clears_it(browser, superuser_client):
    for n in range(5):
        login(browser, f"guess-{n}")
    assert login(browser, RIGHT) == 429

    listing = superuser_client.get("/admin/axes/accessattempt/")
    assert listing.status_code == 200 and "agent" in listing.content.decode()
    attempt = AccessAttempt.objects.get(username="agent")
    cleared = superuser_client.post(
        "/admin/axes/accessattempt/",
        {"action": "delete_selected", "_selected_action": [attempt.pk], "post": "yes"},
    )
    assert cleared.status_code == 302
    assert login(browser, RIGHT) == 302


def test_support_staff_cannot_clear_lockouts(staff_client):
    assert staff_client.get("/admin/axes/accessattempt/").status_code == 403


def test_trying_again_during_a_lockout_does_not_make_it_longer(browser):
    for n in range(5):
        login(browser, f"guess-{n}")
    fourteen_minutes_ago = timezone.now() - timedelta(minutes=14)
    AccessAttempt.objects.filter(username="agent").update(attempt_time=fourteen_minutes_ago)
    assert login(browser, RIGHT) == 429
    assert AccessAttempt.objects.get(username="agent").attempt_time == fourteen_minutes_ago
    # Two minutes later the lockout the page announced is over.
    AccessAttempt.objects.filter(username="agent").update(attempt_time=timezone.now() - timedelta(minutes=16))
    assert login(browser, RIGHT) == 302
