"""Bookly's load benchmark: the production profile under simulated customers, against a stub model.

    .venv/bin/python bench/run.py --customers 500 --latency-ms 1000 --duration 60

Prepares a fresh database, starts the stub model (bench/stub_model.py) and the
site under gunicorn with gunicorn.conf.py, waits until every worker answers,
counts one conversation's SQL queries (bench/query_probe.py), runs the load
generator (bench/loadgen.py) in a process of its own, then reads what the
processes used and what the database stored, and prints the results. Children
are always stopped on the way out (errors, Ctrl-C, SIGTERM). See bench/README.md.
"""

import argparse
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import database, procinfo, report  # noqa: E402 - needs ROOT on sys.path when run as a script
from bench.children import Children, free_port, http_json  # noqa: E402

GUNICORN = Path(sys.executable).parent / "gunicorn"
DEMO_TODAY = "2026-04-14"
# The simulated TLS-terminating proxy's header (the site trusts it: DJANGO_SECURE_PROXY_SSL_HEADER).
VIA_PROXY = {"X-Forwarded-Proto": "https"}
# Variables of the developer's shell that would change the site under test.
SITE_VARIABLE_PREFIXES = ("DJANGO_", "BOOKLY_", "ANTHROPIC_", "GUNICORN_", "DATABASE_URL", "REDIS_URL")


@dataclass
class Bench:
    """One run's settings and the things it started."""

    args: argparse.Namespace
    children: Children
    site_port: int = field(default_factory=free_port)
    stub_port: int = field(default_factory=free_port)
    notes: list[str] = field(default_factory=list)

    @property
    def site_url(self) -> str:
        return f"http://127.0.0.1:{self.site_port}"

    @property
    def stub_url(self) -> str:
        return f"http://127.0.0.1:{self.stub_port}"

    @property
    def database_url(self) -> str:
        if self.args.database == "sqlite":
            return f"sqlite:///{self.children.log_dir / 'bench.sqlite3'}"
        return self.args.database_url

    def site_environment(self) -> dict[str, str]:
        """The production profile, pointed at the stub, the bench database and loopback."""
        args = self.args
        env = {key: value for key, value in os.environ.items() if not key.startswith(SITE_VARIABLE_PREFIXES)}
        env |= {
            "DATABASE_URL": self.database_url,
            "ANTHROPIC_API_KEY": "bench-not-a-key",
            "ANTHROPIC_BASE_URL": self.stub_url,
            "BOOKLY_LLM": "anthropic",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
            "DJANGO_DEBUG": "false",
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
            # As behind a TLS-terminating proxy: the load generator sends X-Forwarded-Proto: https.
            "DJANGO_SECURE_PROXY_SSL_HEADER": "true",
            "BOOKLY_TODAY": DEMO_TODAY,
            # Every simulated customer comes from 127.0.0.1.
            "BOOKLY_RATELIMIT_IP": "1000000/m",
            "BOOKLY_RATELIMIT_SESSION": "1000000/m",
            "BOOKLY_RATELIMIT_ACTIONS": "1000000/m",
            "BOOKLY_SERVER_TIMING": "1",
            "GUNICORN_BIND": f"127.0.0.1:{self.site_port}",
            "WEB_CONCURRENCY": str(args.workers),
        }
        if args.redis_url:
            env["REDIS_URL"] = args.redis_url
        if args.threads:
            env["GUNICORN_THREADS"] = str(args.threads)
        for assignment in args.site_env:
            key, _, value = assignment.partition("=")
            env[key] = value
        return env


# --- steps -------------------------------------------------------------------------------------------


def run_python(env: dict, *arguments: str, timeout: float = 300) -> str:
    """Run the venv's Python to completion; its output, or exit saying why it failed."""
    result = subprocess.run(  # noqa: S603
        [sys.executable, *arguments], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )
    if result.returncode:
        raise SystemExit(f"bench: {' '.join(arguments)} failed:\n{result.stdout}{result.stderr}")
    return result.stdout


def prepare_database(bench: Bench, env: dict) -> None:
    say(f"preparing a fresh {bench.args.database} database")
    database.recreate(bench.database_url)
    run_python(env, "manage.py", "migrate", "--noinput")
    run_python(env, "manage.py", "loaddata", "demo")
    # As a deployment does: without the manifest, every error page fails to render.
    run_python(env, "manage.py", "collectstatic", "--noinput", "--verbosity", "0")
    if bench.args.orders:
        # Two more than the load uses: the query probe's own.
        run_python(env, "-m", "bench.seed_orders", str(bench.args.orders + 2))
    if bench.args.redis_url and (problem := flush_redis(bench.args.redis_url)):
        bench.notes.append(problem)


def flush_redis(url: str) -> str | None:
    """FLUSHDB on the URL's database (raw RESP, no client needed). Returns a problem, or None."""
    parts = urlsplit(url)
    db = parts.path.lstrip("/") or "0"
    command = f"*2\r\n$6\r\nSELECT\r\n${len(db)}\r\n{db}\r\n*1\r\n$7\r\nFLUSHDB\r\n".encode()
    reply = b""
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 6379), timeout=5) as conn:
            conn.sendall(command)
            while reply.count(b"\r\n") < 2 and (chunk := conn.recv(1024)):
                reply += chunk
    except OSError as error:
        return f"Redis at {url} not reachable ({error}); the site may still run without it"
    return None if reply == b"+OK\r\n+OK\r\n" else f"Redis FLUSHDB answered {reply!r}"


def start_stub(bench: Bench) -> None:
    say(f"starting the stub model on :{bench.stub_port} ({bench.args.latency_ms:g} ms per call)")
    command = [sys.executable, "-m", "bench.stub_model", f"--port={bench.stub_port}"]
    bench.children.start("stub", [*command, f"--latency-ms={bench.args.latency_ms}"], dict(os.environ))
    bench.children.wait_until(
        "stub", lambda: http_json(bench.stub_url + "/stats") is not None, what="the stub model", timeout=60
    )


def gunicorn_threads(bench: Bench, env: dict) -> int:
    """Threads per worker as gunicorn.conf.py will see them."""
    if bench.args.threads:
        return bench.args.threads
    namespace: dict = {}
    saved = dict(os.environ)
    try:
        os.environ.update(env)
        exec((ROOT / "gunicorn.conf.py").read_text(), namespace)  # noqa: S102 - the project's own config
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return namespace.get("threads", 1)


def start_site(bench: Bench, env: dict, threads: int) -> None:
    if not GUNICORN.exists():
        raise SystemExit("bench: gunicorn is not installed in this venv: run bench/run.sh (it installs it)")
    command = [str(GUNICORN), "-c", "gunicorn.conf.py", "bookly.wsgi:application"]
    say(f"starting the site on :{bench.site_port} ({bench.args.workers} workers x {threads} threads)")
    # Graceful stop: nothing is in flight by then. (Its quick stop, SIGINT, hangs until
    # graceful_timeout once workers have called the model.)
    bench.children.start("gunicorn", command, env, stop_signal=signal.SIGTERM)
    answer: dict = {}

    def chat_answers() -> bool:
        answer["chat"] = http_json(bench.site_url + "/api/chat", VIA_PROXY)
        return answer["chat"] is not None

    bench.children.wait_until("gunicorn", chat_answers, what="GET /api/chat", timeout=90)
    if answer["chat"].get("offline", True):
        raise SystemExit("bench: the site answers with its offline model, not the stub: check BOOKLY_LLM")
    warm_up(bench.site_url, bench.args.workers)


def warm_up(site_url: str, workers: int, timeout: float = 120) -> None:
    """Send bursts of concurrent GET /api/chat (one connection each) until every worker answers fast.

    Each worker loads the URLconf, and with it the Anthropic SDK (seconds of CPU),
    on its first request; the load should not measure that. Warm: two bursts in a
    row with every answer under half a second.
    """
    burst = 4 * workers
    started, fast_bursts = time.monotonic(), 0

    def seconds_to_answer(_) -> float:
        began = time.monotonic()
        answered = http_json(site_url + "/api/chat", VIA_PROXY, timeout=30) is not None
        return time.monotonic() - began if answered else float("inf")

    with ThreadPoolExecutor(max_workers=burst) as pool:
        while fast_bursts < 2:
            if time.monotonic() - started > timeout:
                raise SystemExit(f"bench: the site's workers are not warm after {timeout:.0f} s")
            slowest = max(pool.map(seconds_to_answer, range(burst)))
            fast_bursts = fast_bursts + 1 if slowest < 0.5 else 0
    say(f"workers warm after {time.monotonic() - started:.1f} s")


def query_probe(bench: Bench, env: dict) -> dict:
    """SQL queries per turn of one in-process conversation (bench/query_probe.py)."""
    say("counting SQL queries per turn (one conversation, in-process)")
    output = run_python(env, "-m", "bench.query_probe", f"--orders={bench.args.orders}", timeout=120)
    (bench.children.log_dir / "probe.log").write_text(output)
    return json.loads(output.strip().splitlines()[-1])


@dataclass
class LoadRun:
    load: dict  # loadgen.py's output
    wall_seconds: float
    cpu_seconds: dict[str, float]


def run_load(bench: Bench) -> LoadRun:
    args = bench.args
    say(f"load: {args.customers} customers for {args.duration:g} s")
    out = bench.children.log_dir / "load.json"
    command = [
        sys.executable,
        "-m",
        "bench.loadgen",
        f"--url={bench.site_url}",
        f"--customers={args.customers}",
        f"--duration={args.duration}",
        f"--ramp={args.ramp}",
        f"--request-timeout={args.request_timeout}",
        f"--max-conversations={args.max_conversations}",
        f"--max-errors={args.max_errors}",
        f"--think-ms={args.think_ms}",
        f"--orders={args.orders}",
        *(["--stream"] if args.stream else []),
        f"--out={out}",
    ]
    before, started = cpu_snapshot(bench), time.monotonic()
    loadgen = bench.children.start("loadgen", command, dict(os.environ))
    try:
        loadgen.wait(timeout=args.ramp + args.duration + args.request_timeout + 60)
    except subprocess.TimeoutExpired:
        raise SystemExit("bench: the load generator overran its deadline") from None
    wall = time.monotonic() - started
    after = cpu_snapshot(bench)
    if loadgen.returncode or not out.exists():
        raise SystemExit(f"bench: the load generator failed:\n{bench.children.log_tail('loadgen')}")
    load = json.loads(out.read_text())
    if load["stopped_for_errors"]:
        bench.notes.append(f"the load stopped early after {args.max_errors} failed requests")
    if load["hit_hard_deadline"]:
        bench.notes.append("the load generator hit its hard deadline; some requests never finished")
    return LoadRun(load, wall, cpu_used(before, after, load["cpu_seconds"]))


def cpu_snapshot(bench: Bench) -> dict[str, float]:
    """CPU seconds used so far, per group of processes (trees include reaped children)."""
    table = procinfo.processes()
    busy, interrupts = procinfo.machine_busy_seconds()

    def trees(pids) -> float:
        return sum(procinfo.tree_cpu_seconds(pid, table) for pid in pids)

    return {
        "gunicorn": trees([bench.children.running["gunicorn"][0].pid]),
        "stub": trees([bench.children.running["stub"][0].pid]),
        "postgres": trees(procinfo.roots_named("postgres", table)),
        "redis": trees(procinfo.roots_named("redis-server", table)),
        "interrupts": interrupts,
        "machine": busy,
    }


def cpu_used(before: dict, after: dict, loadgen_seconds: float) -> dict[str, float]:
    """CPU seconds over the load per group, with the load generator's own and the unexplained rest."""
    used = {name: after[name] - before[name] for name in before}
    machine = used.pop("machine")
    used["loadgen"] = loadgen_seconds
    used["other"] = max(0.0, machine - sum(used.values()))
    used["machine"] = machine
    return used


def worker_peak_memory(bench: Bench) -> dict[int, int]:
    master = bench.children.running["gunicorn"][0].pid
    workers = [pid for pid, stat in procinfo.processes().items() if stat.ppid == master]
    return {pid: procinfo.peak_memory_kib(pid) for pid in sorted(workers)}


def stub_counters(bench: Bench) -> dict:
    stats = http_json(bench.stub_url + "/stats") or {}
    return {key: stats[key] for key in ("requests", "errors", "work_seconds") if key in stats}


def measure(bench: Bench) -> report.Measurements:
    env = bench.site_environment()
    prepare_database(bench, env)
    start_stub(bench)
    threads = gunicorn_threads(bench, env)
    start_site(bench, env, threads)
    probe = query_probe(bench, env)
    stub_before, db_before = stub_counters(bench), database.activity(bench.database_url)
    if (busy := procinfo.busy_cores()) > 0.1:
        bench.notes.append(
            f"the machine was already busy before the load ({busy:.2f} cores): other work on it "
            "takes CPU from this run ('other' below)"
        )

    loaded = run_load(bench)

    memory = worker_peak_memory(bench)
    stub = {key: value - stub_before.get(key, 0) for key, value in stub_counters(bench).items()}
    # Stopping the site first makes PostgreSQL's backends report their statistics.
    bench.children.stop("loadgen", "gunicorn")
    db_after = database.activity(bench.database_url)
    bench.notes.append(f"logs: {bench.children.log_dir}")
    args = bench.args
    return report.Measurements(
        machine=procinfo.machine(),
        config={
            "customers": args.customers,
            "latency_ms": args.latency_ms,
            "duration_s": args.duration,
            "warmup_s": args.warmup,
            "ramp_s": args.ramp,
            "think_ms": args.think_ms,
            "orders": args.orders,
            "workers": args.workers,
            "threads": threads,
            "database": args.database,
            "redis": bool(args.redis_url),
            "site_env": args.site_env,
        },
        load=loaded.load,
        wall_seconds=loaded.wall_seconds,
        cpu_seconds=loaded.cpu_seconds,
        worker_peak_memory_kib=memory,
        stub=stub,
        stored=database.stored_results(bench.database_url),
        database_activity=database.difference(db_before, db_after),
        probe=probe,
        notes=bench.notes,
    )


# --- command line ------------------------------------------------------------------------------------


def say(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add = parser.add_argument
    add("--customers", type=int, default=20, help="simulated customers at once")
    add("--latency-ms", type=float, default=1000.0, help="time each model call takes")
    add("--duration", type=float, default=30.0, help="seconds during which turns start")
    add(
        "--warmup", type=float, help="seconds left out of rates and latencies (default: a quarter, at most 5)"
    )
    add("--ramp", type=float, help="seconds over which customers arrive (default: a fifth, at most 2)")
    add("--max-conversations", type=int, default=1_000_000, help="cap on conversations started")
    add("--request-timeout", type=float, default=30.0, help="hard timeout of every request")
    add("--max-errors", type=int, default=2000, help="stop the load after this many failed requests")
    add("--think-ms", type=float, default=0.0, help="a customer's pause between a reply and the next turn")
    add("--stream", action="store_true", help="turns as server-sent events, as the page with JavaScript asks")
    add("--orders", type=int, default=5000, help="returnable orders to seed, one per conversation (0: none)")
    add("--workers", type=int, default=2 * (os.cpu_count() or 1), help="gunicorn worker processes")
    add("--threads", type=int, help="threads per worker (GUNICORN_THREADS; default: gunicorn.conf.py's)")
    add("--database", choices=("postgres", "sqlite"), default="postgres")
    add(
        "--database-url",
        default="postgres://postgres@127.0.0.1:5432/bookly_bench",
        help="with --database postgres: the database to drop and create",
    )
    add("--redis-url", default="redis://127.0.0.1:6379/15", help="flushed first; '' for none")
    add("--site-env", action="append", default=[], metavar="KEY=VALUE", help="another site setting")
    add("--json", metavar="PATH", help="also write the results as JSON ('-': print only JSON)")
    args = parser.parse_args(argv)
    args.warmup = min(5.0, args.duration / 4) if args.warmup is None else args.warmup
    args.ramp = min(2.0, args.duration / 5) if args.ramp is None else args.ramp
    if not 0 <= args.warmup < args.duration:
        parser.error("--warmup must be shorter than --duration")
    for url in (args.database_url, args.redis_url):
        if url and urlsplit(url).hostname not in ("127.0.0.1", "localhost"):
            parser.error(f"{url}: the benchmark runs on loopback only")
    return args


def _raise_on_sigterm(signum, frame):
    raise SystemExit(f"bench: stopped by signal {signum}")


def main(argv=None) -> None:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _raise_on_sigterm)
    # Even when started with SIGINT ignored (a background job of a script), Ctrl-C must stop the run.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    bench = Bench(args, Children(Path(tempfile.mkdtemp(prefix="bookly-bench-"))))
    try:
        measurements = measure(bench)
    except KeyboardInterrupt:
        raise SystemExit("bench: interrupted; everything it started is stopped") from None
    finally:
        bench.children.stop_all()
    results = report.compute(measurements)
    if args.json == "-":
        print(report.as_json(results))
        return
    print(report.table(results))
    if args.json:
        Path(args.json).write_text(report.as_json(results))


if __name__ == "__main__":
    main()
