"""gunicorn configuration for production: `gunicorn -c gunicorn.conf.py bookly.wsgi`.

Threaded workers: a turn spends seconds waiting for the model, and a waiting
thread costs little memory and no database connection (the turn gives its
connection back to the pool before each model call). bench/README.md compares
this with async views under ASGI, measured: threads need less CPU per turn.
Every value can be overridden from the environment.
"""

import glob
import os
import shutil
import tempfile

bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
worker_class = "gthread"
# Two processes per core: one process's threads share one interpreter lock, and
# the benchmark measured 4 x 128 threads 22% faster than 2 x 256 on 2 cores.
# Without Redis the rate-limit counters live in each process, so one process
# keeps them right (`check --deploy` reports the missing REDIS_URL as an error).
default_workers = 2 * (os.cpu_count() or 1) if os.environ.get("REDIS_URL") else 1
workers = int(os.environ.get("WEB_CONCURRENCY", str(default_workers)))
# Turns in flight per worker. They mostly wait on the model, so many threads
# are cheap; the database pool, not this number, bounds connections.
threads = int(os.environ.get("GUNICORN_THREADS", "128"))
# Longer than BOOKLY_TURN_DEADLINE_SECONDS (75 s), so a turn always answers first.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "120"))
graceful_timeout = 30
keepalive = 5
# Restart workers now and then to bound memory growth from fragmentation.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "20000"))
max_requests_jitter = 2000
accesslog = os.environ.get("GUNICORN_ACCESS_LOG") or None
errorlog = "-"

# Prometheus metrics from every worker: each writes its counts to files in one
# directory, and a scrape of any worker reads them all (support/insight/metrics.py).
# The directory must be set before a worker imports prometheus_client, and start
# empty: counts of an earlier run would be added to this one's.
_own_metrics_dir = not os.environ.get("PROMETHEUS_MULTIPROC_DIR")
if _own_metrics_dir:
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="bookly-metrics-")
for _stale in glob.glob(os.path.join(os.environ["PROMETHEUS_MULTIPROC_DIR"], "*.db")):
    os.remove(_stale)


def child_exit(server, worker):
    """A worker stopped: its live gauges go; its counters stay in the totals."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server):
    if _own_metrics_dir:
        shutil.rmtree(os.environ["PROMETHEUS_MULTIPROC_DIR"], ignore_errors=True)
