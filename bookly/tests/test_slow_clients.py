"""Slow clients cannot take the site down: real gunicorn, with the project's gunicorn.conf.py, on loopback.

An outside probe opened 130 connections that each sent one header line and then nothing: every one of
the worker's 128 threads waited on them, and `/health` went unanswered for 150 s. The same, scaled
down to a few threads so that it is cheap.
"""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings

# Real gunicorn and nginx processes.
pytestmark = pytest.mark.multiprocess

THREADS = 4
SLOW_CLIENTS = 3 * THREADS
READ_TIMEOUT = 2


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _gunicorn(port: int, directory: str, *, read_timeout: int) -> subprocess.Popen:
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "bookly.settings",
        "DJANGO_SECRET_KEY": "slow-clients-test-key",
        "DJANGO_SECURE_SSL_REDIRECT": "false",
        "DATABASE_URL": f"sqlite:///{Path(directory) / 'health.sqlite3'}",
        "BOOKLY_LLM": "offline",
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": "1",
        "GUNICORN_THREADS": str(THREADS),
        "GUNICORN_READ_TIMEOUT": str(read_timeout),
    }
    environment.pop("REDIS_URL", None)
    return subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "bookly.wsgi:application"],
        cwd=settings.BASE_DIR,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _wait_for(url: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2)  # noqa: S310 - our own http URL
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer")


@pytest.fixture
def directory():
    with tempfile.TemporaryDirectory() as path:
        yield Path(path)


@pytest.fixture
def site(directory):
    """gunicorn alone, as scripts/run serves: the worker's read timeout is the only bound."""
    port = _free_port()
    process = _gunicorn(port, directory, read_timeout=READ_TIMEOUT)
    try:
        _wait_for(f"http://127.0.0.1:{port}/health")
        yield f"http://127.0.0.1:{port}", port
    finally:
        process.terminate()
        process.wait(timeout=30)


NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
PROXY_CONF = settings.BASE_DIR / "deploy" / "nginx" / "bookly-proxy.conf"
NGINX_MAIN = """
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log;
events {{ worker_connections 512; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    upstream bookly {{ server 127.0.0.1:{upstream}; keepalive 8; }}
    server {{
        listen 127.0.0.1:{port};
        include {proxy_conf};
    }}
}}
"""


@pytest.fixture
def behind_nginx(directory):
    """The shipped proxy rules (deploy/nginx/bookly-proxy.conf) in a real nginx in front of gunicorn,
    whose own read timeout is set too long to matter: nginx must hold the slow clients."""
    if not Path(NGINX).exists():
        pytest.skip("needs nginx: apt-get install -y nginx (.ci/run installs it)")
    upstream, port = _free_port(), _free_port()
    conf = directory / "nginx.conf"
    conf.write_text(
        NGINX_MAIN.format(
            prefix=directory,
            upstream=upstream,
            port=port,
            proxy_conf=PROXY_CONF,
        )
    )
    gunicorn = _gunicorn(upstream, directory, read_timeout=600)
    nginx = subprocess.Popen(
        [NGINX, "-p", str(directory), "-c", str(conf), "-g", "daemon off;"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(f"http://127.0.0.1:{upstream}/health")
        _wait_for(f"http://127.0.0.1:{port}/health")
        yield f"http://127.0.0.1:{port}", port
    finally:
        for process in (nginx, gunicorn):
            process.terminate()
            process.wait(timeout=30)


def _health_with_slow_clients(url: str, port: int, *, timeout: float) -> int:
    """Open more stalled requests than gunicorn has threads, then ask for /health."""
    slow = []
    try:
        for _ in range(SLOW_CLIENTS):
            connection = socket.create_connection(("127.0.0.1", port), timeout=5)
            connection.sendall(b"GET /health HTTP/1.1\r\n")  # one header line, then nothing
            slow.append(connection)
        time.sleep(0.5)  # each has been handed on by now
        with urllib.request.urlopen(f"{url}/health", timeout=timeout) as response:  # noqa: S310
            return response.status
    finally:
        for connection in slow:
            connection.close()


def test_health_answers_while_slow_clients_hold_every_thread(site):
    # Threads free up as their stalled reads time out; without the bound none ever does, and this
    # times out.
    assert _health_with_slow_clients(*site, timeout=10 * READ_TIMEOUT) == 200


def test_behind_the_shipped_nginx_rules_slow_clients_never_reach_gunicorn(behind_nginx):
    # gunicorn would wait 600 s on each: only nginx holding them answers this in time.
    assert _health_with_slow_clients(*behind_nginx, timeout=10 * READ_TIMEOUT) == 200


def test_the_shipped_nginx_rules_keep_the_metrics_from_the_public(behind_nginx):
    url, _ = behind_nginx
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{url}/metrics", timeout=10)  # noqa: S310 - our own http URL
    assert refused.value.code == 404


def test_the_shipped_site_file_is_valid_nginx(directory):
    """bookly-site.conf as shipped, with a throwaway certificate where the real one goes."""
    if not Path(NGINX).exists() or not shutil.which("openssl"):
        pytest.skip("needs nginx and openssl: apt-get install -y nginx openssl")
    certificate, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-keyout",
            str(key),
            "-out",
            str(certificate),
        ],
        check=True,
        capture_output=True,
    )
    site_file = (settings.BASE_DIR / "deploy" / "nginx" / "bookly-site.conf").read_text()
    site_file = site_file.replace("/etc/letsencrypt/live/support.example.com/fullchain.pem", str(certificate))
    site_file = site_file.replace("/etc/letsencrypt/live/support.example.com/privkey.pem", str(key))
    site_file = site_file.replace(
        "/etc/nginx/snippets/bookly-proxy.conf",
        str(settings.BASE_DIR / "deploy" / "nginx" / "bookly-proxy.conf"),
    )
    (directory / "site.conf").write_text(site_file)
    conf = directory / "nginx.conf"
    conf.write_text(
        f"pid {directory}/nginx.pid;\nerror_log {directory}/error.log;\nevents {{}}\n"
        f"http {{ access_log off; include {directory}/site.conf; }}\n"
    )
    checked = subprocess.run(
        [NGINX, "-t", "-p", str(directory), "-c", str(conf)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stderr
