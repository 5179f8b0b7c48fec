"""The benchmark's child processes: each in its own process group, always stopped, never outliving us."""

import atexit
import contextlib
import ctypes
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PR_SET_PDEATHSIG = 1


class Children:
    """Child processes, each in its own process group; stop_all() ends them (also at exit).

    A child is started in a new session, so a Ctrl-C in the terminal reaches
    only the benchmark, which then stops the children in order; each child also
    gets its stop signal from the kernel if the benchmark dies without cleaning up.
    """

    def __init__(self, log_dir: Path):
        self.log_dir = log_dir
        self.running: dict[str, tuple[subprocess.Popen, int]] = {}
        atexit.register(self.stop_all)

    def start(self, name: str, command: list[str], env: dict, stop_signal=signal.SIGTERM) -> subprocess.Popen:
        def in_own_group_dying_with_us():
            os.setsid()
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, stop_signal)

        with open(self.log_dir / f"{name}.log", "ab") as log:
            process = subprocess.Popen(  # noqa: S603 - our own commands
                command,
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=in_own_group_dying_with_us,  # no threads here, so preexec_fn is safe
            )
        self.running[name] = (process, stop_signal)
        return process

    def log_tail(self, name: str, lines: int = 15) -> str:
        path = self.log_dir / f"{name}.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    def stop(self, *names: str, grace: float = 10) -> None:
        """Stop the named children (default: all, the last started first), one after the other:
        its stop signal to the group, up to `grace` seconds to end, then SIGKILL for what is left."""
        for name in names or tuple(reversed(self.running)):
            if name not in self.running:
                continue
            process, stop_signal = self.running.pop(name)
            _signal_group(process, stop_signal)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=grace)
            _signal_group(process, signal.SIGKILL)
            process.wait()

    def stop_all(self) -> None:
        self.stop()

    def wait_until(self, name: str, check, *, what: str, timeout: float) -> None:
        """Poll check() until it is true; exit saying why if the child ends or the time runs out."""
        process = self.running[name][0]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise SystemExit(f"bench: {name} exited while waiting for {what}:\n{self.log_tail(name)}")
            if check():
                return
            time.sleep(0.2)
        raise SystemExit(f"bench: {what} not ready after {timeout:.0f} s:\n{self.log_tail(name)}")


def _signal_group(process: subprocess.Popen, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def http_json(url: str, headers: dict | None = None, timeout: float = 5) -> dict | None:
    """GET a loopback URL; its JSON if it answered 200, else None."""
    request = urllib.request.Request(url, headers=headers or {})  # noqa: S310 - loopback URLs we built
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            return json.loads(response.read()) if response.status == 200 else None
    except (OSError, ValueError):
        return None
