"""Slow clients against the site as scripts/run serves it: how long /health takes while N connections
each send one header line and then nothing (the outside probe's attack), on loopback only.

    .venv/bin/python bench/slow_clients.py                 # the project's worker (bounded reads)
    .venv/bin/python bench/slow_clients.py --worker gthread  # gunicorn's own gthread, for comparison

gunicorn runs with the project's gunicorn.conf.py (one worker, GUNICORN_THREADS threads, 128 by
default) on a throwaway SQLite file; `--worker gthread` only overrides the worker class on gunicorn's
command line. Every sample is bounded by --timeout; the run stops by itself.
"""

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def health_seconds(url: str, timeout: float) -> float:
    started = time.monotonic()
    try:
        urllib.request.urlopen(f"{url}/health", timeout=timeout).read()  # noqa: S310 - loopback
    except OSError:
        return float("inf")
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=130)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds a /health sample may take")
    parser.add_argument("--worker", choices=["bounded", "gthread"], default="bounded")
    args = parser.parse_args()

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as directory:
        environment = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "bookly.settings",
            "DJANGO_SECRET_KEY": "bench-slow-clients",
            "DJANGO_SECURE_SSL_REDIRECT": "false",
            "DATABASE_URL": f"sqlite:///{directory}/bench.sqlite3",
            "BOOKLY_LLM": "offline",
            "GUNICORN_BIND": f"127.0.0.1:{port}",
            "WEB_CONCURRENCY": "1",
        }
        environment.pop("REDIS_URL", None)
        command = [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "bookly.wsgi:application"]
        if args.worker == "gthread":
            command[3:3] = ["-k", "gthread"]
        server = subprocess.Popen(command, cwd=ROOT, env=environment, stderr=subprocess.DEVNULL)  # noqa: S603
        slow = []
        try:
            deadline = time.monotonic() + 60
            while health_seconds(url, 2) == float("inf"):
                if time.monotonic() > deadline:
                    raise SystemExit("gunicorn did not start")
                time.sleep(0.2)
            quiet = statistics.median(health_seconds(url, args.timeout) for _ in range(args.samples))
            for _ in range(args.clients):
                connection = socket.create_connection(("127.0.0.1", port), timeout=5)
                connection.sendall(b"GET /health HTTP/1.1\r\n")
                slow.append(connection)
            time.sleep(1)
            samples = []
            for _ in range(args.samples):
                samples.append(health_seconds(url, args.timeout))
                time.sleep(1)
        finally:
            for connection in slow:
                connection.close()
            server.terminate()
            server.wait(timeout=30)
    shown = ", ".join("timed out" if s == float("inf") else f"{s:.2f}" for s in samples)
    print(f"worker={args.worker} threads={os.environ.get('GUNICORN_THREADS', '128')} clients={args.clients}")
    print(f"/health without slow clients: median {quiet * 1000:.1f} ms")
    print(f"/health with {args.clients} slow clients (s): {shown}; median {statistics.median(samples):.2f}")


if __name__ == "__main__":
    main()
