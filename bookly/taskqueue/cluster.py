"""django-q2's cluster, stopped by its own process only, with a deadline.

Why django-q2 1.11's `qcluster` does not stop when its whole process group gets SIGTERM (what
systemd, `docker stop`, Kubernetes and `timeout` send): every process of the cluster gets the
signal. Its sentinel and the sentinel's children (workers, pusher, monitor) die at once by the
default action, a task in flight with them; the sentinel usually dies while waiting on the stop
event, registered as a sleeper of that event's condition. The cluster's own process, in its signal
handler, then sets the event: `notify_all()` waits for the dead sleeper to acknowledge, forever, and
a second signal runs the same handler, which finds the sentinel gone and returns to the wait. Even a
signal to that process alone can hang it, as `Event.set()` in a signal handler needs a lock the
interrupted code may hold (django-q2/django-q2#346).

Here only the cluster's process coordinates the stop: the sentinel and everything it starts ignore
SIGTERM and SIGINT, the signal handler only records the request, and the main loop sets the stop
event from a thread of its own. The sentinel then stops as django-q2 means it to: the pusher stops
taking tasks, the workers finish the ones they hold, the monitor saves the results (which
acknowledges them). Whatever still runs when the grace time is over is killed; a task it held stays
on the queue and is handed out again after `retry` seconds.
"""

import contextlib
import logging
import os
import signal
import threading
import time
import uuid
from pathlib import Path

from django_q.cluster import Cluster, Sentinel, get_mp_context

logger = logging.getLogger("django-q")

STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}
EXIT_STOPPED = 0
EXIT_KILLED_AT_DEADLINE = 1
EXIT_SENTINEL_DIED = 2


class _ObedientSentinel(Sentinel):
    """django-q2's sentinel, deaf to the stop signals: it and the processes it starts afterwards
    (which inherit its dispositions) stop when the cluster's process sets the stop event, and not
    before, so none dies holding a task or a lock of the cluster's."""

    def __init__(self, *args):
        super().__init__(*args, start=False)  # sets SIGTERM back to its default action
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)
        # Blocked by the cluster's process before it forked this one: a signal sent in between is now
        # pending, and ignored.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        self.start()


class _StoppableCluster(Cluster):
    def __init__(self):
        super().__init__()  # installs sig_handler for SIGTERM and SIGINT
        self.stop_requested_at: float | None = None

    def sig_handler(self, signum, frame):
        # Only a note: anything that takes a lock here can wait forever on the code it interrupted.
        if self.stop_requested_at is None:
            self.stop_requested_at = time.monotonic()

    def start(self) -> int:
        self.stop_event = get_mp_context().Event()
        self.start_event = get_mp_context().Event()
        self.sentinel = get_mp_context().Process(
            target=_ObedientSentinel,
            name=f"Process-{uuid.uuid4().hex}",
            args=(self.stop_event, self.start_event, self.cluster_id, self.broker, self.timeout),
        )
        # The sentinel is born with the stop signals blocked, so that it cannot die of one before it
        # ignores them; this process takes its own pending ones (into the note) once it has forked.
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            self.sentinel.start()
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        logger.info("Q Cluster %s starting.", self.name)
        return self.pid


def _descendants(pid: int) -> list[int]:
    """Every process below `pid`, read from /proc (Linux; elsewhere none are found)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        below = children.get(todo.pop(), [])
        found += below
        todo += below
    return found


def _kill_tree(pid: int) -> None:
    """SIGKILL a process and everything below it. Frozen first, so that it starts no new process
    between the listing and the kill."""
    try:
        os.kill(pid, signal.SIGSTOP)
    except ProcessLookupError:
        return
    for each in [pid, *_descendants(pid)]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(each, signal.SIGKILL)


def cluster_run(*, grace_seconds: float, run_once: bool = False) -> int:
    """Run the cluster until it is told to stop (SIGTERM, SIGINT, or at once with `run_once`), then
    stop it within `grace_seconds`. Returns the process's exit code: 0 when everything finished,
    1 when something was killed at the deadline, 2 when the sentinel died by itself."""
    cluster = _StoppableCluster()
    cluster.start()
    if run_once:
        cluster.sig_handler(signal.SIGTERM, None)
    stopping_since: float | None = None
    while cluster.sentinel.is_alive():
        requested = cluster.stop_requested_at
        if requested is not None and stopping_since is None:
            stopping_since = requested
            logger.info("Q Cluster %s stopping (at most %s seconds).", cluster.name, grace_seconds)
            # From a thread: setting the event waits for the sentinel to wake, which a sentinel
            # killed meanwhile (SIGKILL, out of memory) never does; the deadline below still holds.
            threading.Thread(target=cluster.stop_event.set, daemon=True).start()
        if stopping_since is not None and time.monotonic() - stopping_since > grace_seconds:
            logger.error(
                "Q Cluster %s did not stop within %s seconds: killing its processes; the tasks they "
                "held go back to the queue.",
                cluster.name,
                grace_seconds,
            )
            _kill_tree(cluster.sentinel.pid)
            cluster.sentinel.join()
            return EXIT_KILLED_AT_DEADLINE
        cluster.sentinel.join(0.1)
    if stopping_since is None:
        logger.error(
            "Q Cluster %s: its sentinel ended (exit code %s).", cluster.name, cluster.sentinel.exitcode
        )
        return EXIT_SENTINEL_DIED
    logger.info("Q Cluster %s has stopped.", cluster.name)
    return EXIT_STOPPED
