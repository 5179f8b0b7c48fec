"""The zero-setup default as scripts/run serves it (SQLite file, one gunicorn worker with threads,
offline model) under 50 customers at once."""

import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from http.cookiejar import CookieJar

import pytest
from django.conf import settings

# A real gunicorn, and manage.py in processes of its own.
pytestmark = pytest.mark.multiprocess

CUSTOMERS = 50
# Reads followed by writes in one transaction (the return) are what trips SQLite's default mode.
MESSAGES = (
    "How much does shipping cost?",
    "Where is BK-10089? james.murphy@example.com",
    "I want to return BK-10042, my email is sarah.chen@example.com",
    "Yes, please start the return",
    "Thanks!",
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _chat(base_url: str) -> list[int]:
    jar = CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    opener.open(f"{base_url}/api/chat", timeout=30).read()
    token = next(cookie.value for cookie in jar if cookie.name == "csrftoken")
    assert token is not None  # Django's csrftoken cookie always has a value
    statuses = []
    for text in MESSAGES:
        request = urllib.request.Request(  # noqa: S310 - our own http URL
            f"{base_url}/api/chat",
            data=json.dumps({"message": text}).encode(),
            headers={"Content-Type": "application/json", "X-CSRFToken": token},
        )
        try:
            with opener.open(request, timeout=60) as response:
                statuses.append(response.status)
        except urllib.error.HTTPError as error:
            statuses.append(error.code)
    return statuses


@pytest.mark.slow
def test_fifty_concurrent_customers_on_the_default_sqlite_setup(tmp_path):
    database = tmp_path / "bookly.sqlite3"
    port = _free_port()
    env = {
        **{
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("DATABASE_URL", "REDIS_URL"))
        },
        "DJANGO_SETTINGS_MODULE": "bookly.settings",
        "DJANGO_SECRET_KEY": "sqlite-concurrency-test",
        "DJANGO_DEBUG": "false",
        # Plain HTTP on loopback: no HTTPS redirect, cookies not HTTPS-only.
        "DJANGO_SECURE_SSL_REDIRECT": "false",
        "DJANGO_SECURE_COOKIES": "false",
        "DATABASE_URL": f"sqlite:///{database}",
        "BOOKLY_LLM": "offline",
        "BOOKLY_TODAY": "2026-04-14",
        "BOOKLY_RATELIMIT_IP": "100000/m",
        "BOOKLY_RATELIMIT_SESSION": "100000/m",
    }
    manage = [sys.executable, "manage.py"]
    for command in (["migrate", "-v0"], ["loaddata", "demo", "-v0"]):
        subprocess.run([*manage, *command], cwd=settings.BASE_DIR, env=env, check=True, timeout=120)
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "bookly.wsgi:application"],
        cwd=settings.BASE_DIR,
        env={**env, "GUNICORN_BIND": f"127.0.0.1:{port}", "WEB_CONCURRENCY": "1"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{base_url}/api/chat", timeout=2)  # noqa: S310 - our own http URL
                break
            except OSError:
                assert time.monotonic() < deadline, "gunicorn did not start"
                time.sleep(0.2)
        with ThreadPoolExecutor(max_workers=CUSTOMERS) as pool:
            statuses = [
                status
                for result in pool.map(lambda _: _chat(base_url), range(CUSTOMERS))
                for status in result
            ]
    finally:
        server.terminate()
        _, errors = server.communicate(timeout=15)

    assert statuses == [200] * CUSTOMERS * len(MESSAGES)
    assert "database is locked" not in errors
    with sqlite3.connect(database) as connection:
        stored = connection.execute("select role, count(*) from support_conversationmessage group by role")
        counts = dict(stored.fetchall())
    assert counts["user"] >= CUSTOMERS * len(MESSAGES)  # tool results are user messages too
    # The file stays readable after the load.
    assert connection.execute("pragma integrity_check").fetchone() == ("ok",)
