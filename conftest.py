import os
import subprocess
import sys
import time
import types

import django_ratelimit.core
import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection, connections
from django.db.migrations.executor import MigrationExecutor
from django.test import override_settings
from pytest_django.fixtures import validate_django_db
from pytest_django.plugin import blocking_manager_key

import orders.numbers
from orders.numbers import order_numbering_forget
from support.assistant.prompts import system_prompt_forget

SUPPORT_STAFF_GROUP = "Support staff"


@pytest.fixture(autouse=True)
def _system_prompt_rendered_afresh():
    """Each test has its own data: the prompt a process keeps must not carry over from another test."""
    system_prompt_forget()


@pytest.fixture(autouse=True)
def _order_numbers_read_afresh(request, monkeypatch):
    """Each test has its own shops, whose number shapes a process keeps a few seconds: read again. A
    test without the database has the settings' shapes alone."""
    order_numbering_forget()
    if not given_the_database(request.node):
        monkeypatch.setattr(orders.numbers, "_shop_shapes", orders.numbers._no_shops)
    yield
    order_numbering_forget()


# What gives a test the database (pytest-django refuses it to any other test).
DATABASE_FIXTURES = frozenset(
    {"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback", "live_server"}
)


def given_the_database(item: pytest.Item) -> bool:
    return item.get_closest_marker("django_db") is not None or not DATABASE_FIXTURES.isdisjoint(
        getattr(item, "fixturenames", ())
    )


def pytest_collection_modifyitems(config, items):
    """The suite's two legs (scripts/test; docs/contributors.md, "Two legs"): on PostgreSQL + Redis, a
    test runs only where it can behave differently from the SQLite leg. One without the database (and
    so, by `_a_cache_of_its_own`, without the cache) is `one_leg`, as is one marked so by hand (the
    browser's pages); those run in the SQLite leg only."""
    for item in items:
        if not given_the_database(item):
            item.add_marker(pytest.mark.one_leg)
    if settings.DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
        return
    left_out = [item for item in items if item.get_closest_marker("one_leg")]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if item.get_closest_marker("one_leg") is None]
    config.stash[_LEFT_OUT] = len(left_out)


_LEFT_OUT = pytest.StashKey[int]()


def pytest_sessionfinish(session):
    if hasattr(session.config, "workeroutput"):  # a pytest-xdist worker: tell the controller
        session.config.workeroutput["one_leg_left_out"] = session.config.stash.get(_LEFT_OUT, 0)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    node.config.stash[_LEFT_OUT] = getattr(node, "workeroutput", {}).get("one_leg_left_out", 0)


def pytest_terminal_summary(terminalreporter, config):
    if config.stash.get(_LEFT_OUT, 0):
        terminalreporter.write_line(
            f"one_leg: {config.stash[_LEFT_OUT]} tests left out here, where they cannot behave differently; "
            'they run in the SQLite leg (docs/contributors.md, "Two legs")'
        )


def _transactional(item: pytest.Item) -> bool:
    marker = item.get_closest_marker("django_db")
    if marker is not None and validate_django_db(marker)[0]:
        return True
    return not {
        "transactional_db",
        "live_server",
        "django_db_reset_sequences",
        "django_db_serialized_rollback",
    }.isdisjoint(getattr(item, "fixturenames", ()))


_FLUSHED = pytest.StashKey[bool]()


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_setup(item):
    """A transactional test ends by emptying the database, the migrations' rows too (the support staff
    group, the return policy); pytest-django runs those tests last for that reason. Under several
    workers (a worker that steals work) or a shuffled order they can come first: the next test in a
    transaction gets the migrations' rows back before it starts, from the copy taken at set-up."""
    if _transactional(item):
        item.config.stash[_FLUSHED] = True
    elif item.config.stash.get(_FLUSHED, False) and given_the_database(item):
        with item.config.stash[blocking_manager_key].unblock():
            for alias in connections:
                contents = getattr(connections[alias], "_test_serialized_contents", None)
                if contents:
                    connections[alias].creation.deserialize_db_from_string(contents)
        item.config.stash[_FLUSHED] = False
    yield


@pytest.fixture(autouse=True)
def _a_cache_of_its_own(request):
    """Nothing a test left in the cache (a provider's circuit opened by its outages, rate-limit
    counts) decides another test's model or limits. A test without the database gets a cache that
    refuses every use: it runs in the SQLite leg only, so it must not depend on which cache it is."""
    if given_the_database(request.node):
        yield
        cache.clear()
        return
    with override_settings(CACHES={"default": {"BACKEND": "bookly.refused_cache.RefusedCache"}}):
        yield


@pytest.fixture(autouse=True)
def _rate_windows_held_still(monkeypatch):
    """django-ratelimit counts in fixed windows of the wall clock (`time.time()`); a test's requests that
    straddle a window's end would be counted in two, and a limit of 3 a minute let a fourth through (a
    real flake of leg 2). In this process the window stays where the test began; a test that needs a
    window to pass clears the cache, as a new window would."""
    began = time.time()
    monkeypatch.setattr(django_ratelimit.core, "time", types.SimpleNamespace(time=lambda: began))


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


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """pytest-django's test database, whose end waits for no process a test started: a gunicorn or
    qcluster killed in a worker's last test can leave its PostgreSQL session a moment after, and the
    database would then stay behind ("being accessed by other users")."""
    yield
    with django_db_blocker.unblock():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
