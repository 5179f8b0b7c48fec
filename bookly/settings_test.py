"""Settings for the test suite: the real settings, made deterministic and offline."""

import os

os.environ.setdefault("DJANGO_SECRET_KEY", "test-only-not-secret")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # One thread of arithmetic per test worker: the workers are already one per core, and numpy's
    # OpenBLAS, a thread per core in each, spun against the others (the built-in model's evaluations
    # ran 5 to 25 times slower on two cores). Read when numpy is first imported, which is after this.
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
        os.environ.setdefault(variable, "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # gunicorn's control socket is one path per user: the servers tests start at once would share it.
    os.environ.setdefault("GUNICORN_CMD_ARGS", "--no-control-socket")


from bookly.settings import *  # noqa: F403
from bookly.settings import Q_CLUSTER, REDIS_URL  # named as well: both are set again below, from these
from store.clock import DEMO_TODAY


def _redis_url_of_this_worker(url: str, worker: str) -> str:
    """pytest-xdist's worker `gwN` uses the Redis database N places after the one named (every test
    clears the cache, and Redis clears a whole database): workers never see each other's keys. Set in
    the environment, so that the processes a test starts (gunicorn, qcluster) share the worker's."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    number = int(parts.path.strip("/") or 0) + int(worker.removeprefix("gw"))
    if number > 15:
        raise SystemExit(f"bookly tests: worker {worker} needs Redis database {number}: run fewer workers")
    return urlunsplit(parts._replace(path=f"/{number}"))


if REDIS_URL and os.environ.get("PYTEST_XDIST_WORKER"):
    # From the run's own URL, kept aside: a process a test starts on these settings inherits both the
    # worker's name and its REDIS_URL, and must not add the worker's number twice.
    REDIS_URL = _redis_url_of_this_worker(
        os.environ.setdefault("REDIS_URL_BEFORE_WORKERS", REDIS_URL),
        os.environ["PYTEST_XDIST_WORKER"],
    )
    os.environ["REDIS_URL"] = CACHES["default"]["LOCATION"] = REDIS_URL  # noqa: F405
    if "redis" in Q_CLUSTER:
        Q_CLUSTER["redis"] = REDIS_URL

# Templates resolve {% static %} without a collectstatic manifest.
STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}  # noqa: F405
# Serve static files straight from the app and project folders: tests never collectstatic.
STATIC_ROOT = None
WHITENOISE_USE_FINDERS = True
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# The demo's order numbers, whatever the developer's .env says: the OpenAPI document kept in docs/ (and
# many a test's words) have them.
BOOKLY_ORDER_NUMBER_PATTERN, BOOKLY_ORDER_NUMBER_EXAMPLE = r"BK-[0-9]{4,6}", "BK-10042"
BOOKLY_ORDER_NUMBER_FORMER_PATTERNS = []
# The demo's date, whatever the developer's .env says; tests of the real
# clock override it.
BOOKLY_TODAY = DEMO_TODAY

# Tests speak plain HTTP, like scripts/run: no HTTPS redirect, no Secure-only cookies.
SECURE_SSL_REDIRECT = False
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = False
# Every test client comes from 127.0.0.1: limits that never bite, so that the
# rate-limit code still runs on every chat POST. Tests of the limits set small ones.
BOOKLY_RATELIMIT_IP = BOOKLY_RATELIMIT_SESSION = BOOKLY_RATELIMIT_ACTIONS = "100000/m"
BOOKLY_TRUSTED_PROXIES = []
# Tasks run at once in the process that queues them (the multi-process tests start a real worker), and
# the tests' webhook receivers listen on 127.0.0.1.
Q_CLUSTER = {**Q_CLUSTER, "sync": True}
BOOKLY_WEBHOOKS_ALLOW_PRIVATE_URLS = True
BOOKLY_WEBHOOK_TIMEOUT_SECONDS = 2.0

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    # A file, not Django's shared-cache in-memory database: the browser tests' live server answers the
    # customer's page and the staff's admin from several threads at once, and shared-cache table locks
    # fail at once ("database table is locked") where a file's WAL and busy timeout make them wait, as
    # in production. One file per test process, in the temporary folder, removed by the test runner.
    import tempfile
    from pathlib import Path

    DATABASES["default"]["TEST"] = {  # noqa: F405
        "NAME": str(Path(tempfile.gettempdir()) / f"bookly-test-{os.getpid()}.sqlite3")
    }
