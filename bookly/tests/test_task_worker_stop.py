"""The task queue's worker (`manage.py qcluster`, a real process in a process group of its own, on this
test database) stops on SIGTERM or SIGINT, sent to it or to its whole group as systemd, `docker stop`,
Kubernetes and `timeout` do: the task it holds finishes, and one that outlasts the grace time is killed
and stays on the queue. Nothing of the cluster is left running. And `scripts/serve` (what `scripts/run`
ends with: the site and the worker side by side) stops both on a signal, or when either ends."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django_q.conf import Conf
from django_q.models import OrmQ, Success, Task
from django_q.tasks import async_task

# Committed data, so that the worker process sees it; the migrations' rows put back afterwards.
pytestmark = [pytest.mark.multiprocess, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

# Room for the cluster's own steps once its workers are done (the pusher's poll, the monitor, the
# sentinel's guard cycle) on a busy machine.
MARGIN_SECONDS = 10


def sleeps_then_marks(folder: str, seconds: float) -> None:
    """The task: says it started, works `seconds`, says it finished."""
    Path(folder, "started").touch()
    time.sleep(seconds)
    Path(folder, "finished").touch()


def _database_url() -> str:
    database = settings.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{database['NAME']}"
    return f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}"


def _environment(*, grace_seconds: float) -> dict[str, str]:
    return {
        **{key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "BOOKLY_"))},
        "DJANGO_SETTINGS_MODULE": "bookly.settings",
        "DJANGO_SECRET_KEY": settings.SECRET_KEY,  # the queue signs its tasks with it
        "DJANGO_DEBUG": "false",
        "DATABASE_URL": _database_url(),
        "BOOKLY_TASK_WORKERS": "2",
        "BOOKLY_TASK_STOP_GRACE_SECONDS": str(grace_seconds),
    }


def _living_in_group(group: int) -> list[int]:
    """The processes of a process group that still run (a zombie awaiting its reaper does not)."""
    living = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            living.append(int(stat.parent.name))
    return living


def _wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


@pytest.fixture
def cluster(monkeypatch):
    """Starts `manage.py qcluster` with the given grace time, in a new session (its own process group,
    as under a supervisor); whatever is left of it is killed afterwards."""
    monkeypatch.setattr(Conf, "SYNC", False)  # tasks go on the real queue (the database)
    started = []

    def start(*, grace_seconds: float) -> subprocess.Popen:
        started.append(
            subprocess.Popen(
                [sys.executable, "manage.py", "qcluster"],
                cwd=settings.BASE_DIR,
                env=_environment(grace_seconds=grace_seconds),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        )
        return started[-1]

    yield start
    for process in started:
        for pid in _living_in_group(process.pid):
            os.kill(pid, signal.SIGKILL)
        process.wait(timeout=10)


def _a_task_in_flight(folder: Path, *, seconds: float) -> int:
    async_task("bookly.tests.test_task_worker_stop.sleeps_then_marks", str(folder), seconds)
    assert _wait_for((folder / "started").exists, 60), "the worker did not take the task"
    return OrmQ.objects.get().pk


def _stopped_within(process: subprocess.Popen, seconds: float) -> int | None:
    """The exit code, if the process and its whole group ended within `seconds`."""
    try:
        code = process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return None
    return code if _wait_for(lambda: not _living_in_group(process.pid), 5) else None


@pytest.mark.parametrize(
    ("send", "signum"),
    [(os.killpg, signal.SIGTERM), (os.killpg, signal.SIGINT), (os.kill, signal.SIGTERM)],
    ids=["SIGTERM to the group", "SIGINT to the group", "SIGTERM to the cluster's process"],
)
def test_a_stop_signal_lets_the_task_in_flight_finish_then_everything_exits(cluster, tmp_path, send, signum):
    grace_seconds = 30
    process = cluster(grace_seconds=grace_seconds)
    _a_task_in_flight(tmp_path, seconds=3)

    send(process.pid, signum)

    assert _stopped_within(process, grace_seconds + MARGIN_SECONDS) == 0
    assert (tmp_path / "finished").exists()
    assert Success.objects.get().func == "bookly.tests.test_task_worker_stop.sleeps_then_marks"
    assert not OrmQ.objects.exists()  # done, so taken off the queue


def test_a_task_outlasting_the_grace_time_is_killed_at_the_deadline_and_stays_queued(cluster, tmp_path):
    grace_seconds = 2
    process = cluster(grace_seconds=grace_seconds)
    queued = _a_task_in_flight(tmp_path, seconds=120)

    started = time.monotonic()
    os.kill(process.pid, signal.SIGTERM)

    assert _stopped_within(process, grace_seconds + MARGIN_SECONDS) == 1  # something was killed
    assert time.monotonic() - started >= grace_seconds  # not before its time was up
    assert not (tmp_path / "finished").exists()
    assert not Task.objects.exists()  # neither a success nor a failure recorded
    assert OrmQ.objects.filter(pk=queued).exists()  # handed out again after Q_CLUSTER["retry"]


def _children(pid: int) -> dict[int, str]:
    """The processes directly below `pid`, with their command lines."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            command = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found[int(stat.parent.name)] = command
    return found


def _free_port() -> int:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        return listener.getsockname()[1]


def _answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


@pytest.fixture
def served(cluster):
    """`scripts/serve` in a process group of its own, once the site answers."""
    port = _free_port()
    environment = {
        **_environment(grace_seconds=30),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": "1",
    }
    process = subprocess.Popen(
        ["scripts/serve"],
        cwd=settings.BASE_DIR,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        assert _wait_for(lambda: _answers(port), 60), "the site did not answer"
        yield process
    finally:
        for pid in _living_in_group(process.pid):
            os.kill(pid, signal.SIGKILL)
        process.wait(timeout=10)


def test_serve_stops_the_site_and_the_worker_on_sigterm_to_its_group(served):
    os.killpg(served.pid, signal.SIGTERM)

    assert _stopped_within(served, 30 + MARGIN_SECONDS) == 0


def test_serve_stops_the_site_and_fails_when_the_worker_dies(served):
    (worker,) = [pid for pid, command in _children(served.pid).items() if "qcluster" in command]
    os.kill(worker, signal.SIGKILL)  # as out of memory would

    assert _stopped_within(served, MARGIN_SECONDS + 30) not in (None, 0)  # a supervisor restarts it
