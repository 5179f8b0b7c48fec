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

# The offline model's numpy would start a BLAS thread per core in every worker, idle: its sums are small.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
# gthread, with a bound on how long a stalled client holds a thread (bookly/gunicorn_worker.py).
worker_class = "bookly.gunicorn_worker.BoundedThreadWorker"
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
_METRICS_DIR_PREFIX = "bookly-metrics-"


def on_starting(server):
    """Once, in the master, before the first worker (not again on a reload, whose workers' counts
    live on): give the workers an empty metrics directory. Without one set, a temporary directory
    of our own; one that is set is emptied, since an earlier run's counts would add to this one's."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not directory:
        directory = os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix=_METRICS_DIR_PREFIX)
    os.makedirs(directory, exist_ok=True)
    for stale in glob.glob(os.path.join(directory, "*.db")):
        os.remove(stale)


def on_exit(server):
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")
    if os.path.dirname(directory) == tempfile.gettempdir() and os.path.basename(directory).startswith(
        _METRICS_DIR_PREFIX
    ):
        shutil.rmtree(directory, ignore_errors=True)


def post_worker_init(worker):
    """Each worker makes its model before its first customer arrives: the offline model learns its
    phrasings then (about a second), rather than while someone waits for a reply."""
    from support.assistant.configured import get_model

    get_model()
