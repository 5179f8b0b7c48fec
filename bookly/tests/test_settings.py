import os
import re
import subprocess
import sys
from datetime import date

import pytest
from django.conf import settings
from django.core.management import call_command

from store.clock import store_today


def run_manage(*args, **env_overrides):
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "BOOKLY_", "DATABASE_URL", "REDIS_URL"))
    }
    env.update(env_overrides)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.multiprocess
def test_missing_secret_key_outside_debug_is_one_clear_line(tmp_path):
    # An empty .env-free environment: point the settings at a key-less world.
    result = run_manage("check", DJANGO_DEBUG="false", DJANGO_SECRET_KEY="")
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "bookly: DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off (see .env.example)."
    )


@pytest.mark.multiprocess
def test_debug_runs_without_a_secret_key():
    result = run_manage("check", DJANGO_DEBUG="true", DJANGO_SECRET_KEY="")
    assert result.returncode == 0, result.stderr


@pytest.mark.multiprocess
def test_invalid_store_date_is_one_clear_line():
    result = run_manage("check", DJANGO_SECRET_KEY="x" * 50, BOOKLY_TODAY="14/04/2026")
    assert result.returncode == 1
    assert (
        result.stderr.strip() == "bookly: BOOKLY_TODAY must be an ISO date like 2026-04-14, not '14/04/2026'."
    )


@pytest.mark.parametrize("name", ["BOOKLY_TRUSTED_PROXIES", "BOOKLY_METRICS_ALLOWED_IPS"])
@pytest.mark.multiprocess
def test_an_address_list_that_is_not_addresses_is_one_clear_line(name):
    result = run_manage("check", DJANGO_SECRET_KEY="x" * 50, **{name: "10.0.0.1,proxy.internal"})
    assert result.returncode == 1
    assert (
        result.stderr.strip() == f"bookly: {name} must list IP addresses or networks, not 'proxy.internal'."
    )


def test_store_today_is_frozen_when_set(settings):
    settings.BOOKLY_TODAY = date(2026, 4, 14)
    assert store_today() == date(2026, 4, 14)


def test_store_today_is_the_real_date_otherwise(settings):
    from django.utils import timezone

    settings.BOOKLY_TODAY = None
    assert store_today() == timezone.localdate()


@pytest.mark.django_db
def test_models_and_migrations_agree():
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_env_example_documents_every_variable_the_settings_read():
    source = "".join(
        (settings.BASE_DIR / "bookly" / name).read_text() for name in ("settings.py", "settings_assistant.py")
    )
    read = set(re.findall(r'env(?:\.\w+)?\(\s*"([A-Z_]+)"', source))
    documented = set(re.findall(r"^#?\s*([A-Z_]+)=", (settings.BASE_DIR / ".env.example").read_text(), re.M))
    assert read, "no variables found: the pattern no longer matches the settings"
    assert read - documented == set()


@pytest.mark.parametrize(
    "origin", ["shop.example.com", "https://shop.example.com/", "https://shop.example.com/x"]
)
@pytest.mark.multiprocess
def test_a_widget_origin_that_is_not_one_is_one_clear_line(origin):
    result = run_manage(
        "check", DJANGO_DEBUG="true", BOOKLY_WIDGET_ORIGINS=f"https://ok.example.com,{origin}"
    )
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"bookly: BOOKLY_WIDGET_ORIGINS: {origin!r} is not an origin (scheme://host[:port] alone)."
    )


@pytest.mark.multiprocess
def test_a_content_format_that_is_not_one_is_one_clear_line():
    result = run_manage("check", DJANGO_DEBUG="true", OPENAI_CONTENT_FORMAT="array")
    assert result.returncode == 1
    assert result.stderr.strip() == "bookly: OPENAI_CONTENT_FORMAT must be parts or string, not 'array'."
