import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from support.assistant.prompts import system_prompt_forget

SUPPORT_STAFF_GROUP = "Support staff"


@pytest.fixture(autouse=True)
def _system_prompt_rendered_afresh():
    """Each test has its own data: the prompt a process keeps must not carry over from another test."""
    system_prompt_forget()


@pytest.fixture(autouse=True)
def _a_cache_of_its_own():
    """Nothing a test left in the cache (a provider's circuit opened by its outages, rate-limit
    counts) decides another test's model or limits."""
    yield
    cache.clear()


@pytest.fixture
def manage_py(tmp_path):
    """`manage.py` in a fresh process, for what a process reads once at start (an order-number shape,
    a secret): manage_py(*arguments, env={...}) on a SQLite database of the test's own, the built-in
    model answering, nothing of the developer's DJANGO_ or BOOKLY_ settings."""

    def run(*arguments: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        environment = {
            key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "BOOKLY_"))
        }
        environment.update(
            DJANGO_DEBUG="true",
            DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
            BOOKLY_LLM="offline",
            REDIS_URL="",
            **(env or {}),
        )
        return subprocess.run(
            [sys.executable, "manage.py", *arguments],
            cwd=settings.BASE_DIR,
            env=environment,
            capture_output=True,
            text=True,
            timeout=180,
        )

    return run


@pytest.fixture
def offline(settings):
    """The built-in offline model answers, whatever the developer's .env says."""
    settings.BOOKLY_LLM = "offline"


@pytest.fixture
def demo_data(db):
    """The demo fixture, loaded the way an operator loads it."""
    call_command("loaddata", "demo", verbosity=0)


@pytest.fixture
def staff_user(db, django_user_model):
    user = django_user_model.objects.create_user(
        username="agent", email="agent@bookly.example", password="agent-pass-1234", is_staff=True
    )
    user.groups.add(Group.objects.get(name=SUPPORT_STAFF_GROUP))
    return user


@pytest.fixture
def staff_client(client, staff_user):
    """A browser session logged in through the real admin login form as support staff."""
    response = client.post("/admin/login/?next=/admin/", {"username": "agent", "password": "agent-pass-1234"})
    assert response.status_code == 302, "support staff login failed"
    return client


@pytest.fixture
def superuser_client(client, django_user_model):
    django_user_model.objects.create_superuser(
        username="owner", email="owner@bookly.example", password="owner-pass-1234"
    )
    response = client.post("/admin/login/?next=/admin/", {"username": "owner", "password": "owner-pass-1234"})
    assert response.status_code == 302, "superuser login failed"
    return client


@pytest.fixture
def migrate():
    """Move the test database to the given migrations ([(app, name)]) and return the apps as they stood
    there; back to the latest after the test. For a test marked
    django_db(transaction=True, serialized_rollback=True), so the content types survive the flush."""

    def to(targets):
        MigrationExecutor(connection).migrate(targets)
        return MigrationExecutor(connection).loader.project_state(targets).apps

    yield to
    to(MigrationExecutor(connection).loader.graph.leaf_nodes())
