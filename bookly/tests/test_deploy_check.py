"""`manage.py check --deploy` under the production configuration, in a fresh process."""

import os
import runpy
import secrets
import subprocess
import sys

import pytest
from django.conf import settings

# Production as README's "Security" section describes it. Every security
# variable is set explicitly, so that a developer's .env cannot fill any in.
PRODUCTION_ENV = {
    "DJANGO_DEBUG": "false",
    "DJANGO_ALLOWED_HOSTS": "support.bookly.example",
    "DJANGO_SECURE_COOKIES": "true",
    "DJANGO_SECURE_SSL_REDIRECT": "true",
    "DJANGO_SECURE_HSTS_SECONDS": "31536000",
    "DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS": "true",
    "DJANGO_SECURE_HSTS_PRELOAD": "false",
    # Checks read the URL; nothing connects to it.
    "REDIS_URL": "redis://cache.internal:6379/0",
}
# What .env.example sets for scripts/run on plain HTTP.
LOCAL_HTTP_ENV = {
    **PRODUCTION_ENV,
    "DJANGO_SECURE_COOKIES": "false",
    "DJANGO_SECURE_SSL_REDIRECT": "false",
    "DJANGO_SECURE_HSTS_SECONDS": "0",
}


def check_deploy(overrides: dict[str, str]) -> subprocess.CompletedProcess:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "BOOKLY_", "DATABASE_URL", "REDIS_URL"))
    }
    env.update(overrides, DJANGO_SECRET_KEY=secrets.token_urlsafe(50))
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.multiprocess
def test_check_deploy_reports_nothing_in_production():
    result = check_deploy(PRODUCTION_ENV)
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout


@pytest.mark.multiprocess
def test_check_deploy_flags_the_local_http_settings():
    # The same check does see what production must not have.
    result = check_deploy(LOCAL_HTTP_ENV)
    assert result.returncode != 0
    # W010: SESSION_COOKIE_SECURE (W010 rather than W012: our session middleware is a subclass).
    for check_id in ("security.W004", "security.W008", "security.W010", "security.W016"):
        assert check_id in result.stderr


@pytest.mark.multiprocess
def test_check_deploy_fails_when_rate_limits_would_count_per_process():
    without_redis = {**PRODUCTION_ENV, "REDIS_URL": ""}  # empty, so a developer's .env cannot fill it in
    result = check_deploy(without_redis)
    assert result.returncode != 0
    assert "bookly.E001" in result.stderr and "REDIS_URL" in result.stderr


def test_gunicorn_runs_one_worker_unless_a_shared_cache_is_configured(monkeypatch):
    monkeypatch.delenv("WEB_CONCURRENCY", raising=False)
    monkeypatch.delenv("REDIS_URL", raising=False)
    config = settings.BASE_DIR / "gunicorn.conf.py"
    assert runpy.run_path(str(config))["workers"] == 1
    monkeypatch.setenv("REDIS_URL", "redis://cache.internal:6379/0")
    assert runpy.run_path(str(config))["workers"] == 2 * (os.cpu_count() or 1)


@pytest.mark.multiprocess
def test_check_deploy_refuses_a_customer_signing_secret_that_can_be_guessed():
    weak = check_deploy({**PRODUCTION_ENV, "BOOKLY_CUSTOMER_SIGNING_SECRET": "store-secret"})
    assert weak.returncode != 0 and "bookly.E002" in weak.stderr + weak.stdout
    strong = check_deploy({**PRODUCTION_ENV, "BOOKLY_CUSTOMER_SIGNING_SECRET": secrets.token_urlsafe(32)})
    assert strong.returncode == 0, strong.stderr


@pytest.mark.multiprocess
def test_check_deploy_warns_of_a_widget_origin_that_is_not_https():
    plain = check_deploy(
        {**PRODUCTION_ENV, "BOOKLY_WIDGET_ORIGINS": "https://shop.example.com,http://shop.example.com"}
    )
    assert plain.returncode != 0 and "bookly.W003" in plain.stderr + plain.stdout
    assert "https://shop.example.com," not in plain.stderr + plain.stdout  # only the plain one is named
    secure = check_deploy({**PRODUCTION_ENV, "BOOKLY_WIDGET_ORIGINS": "https://shop.example.com"})
    assert secure.returncode == 0, secure.stderr
