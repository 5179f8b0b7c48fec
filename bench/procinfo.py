"""What the machine is, and what its processes used: read from /proc (Linux only, read-only)."""

import os
import platform
import time
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class ProcStat:
    pid: int
    comm: str
    ppid: int
    # CPU seconds of the process itself plus its reaped children (a dead
    # worker's time moves into its parent's children counters when reaped).
    cpu_seconds: float


@dataclass(frozen=True)
class Machine:
    cores: int
    cpu_model: str
    memory_gib: float
    kernel: str


def machine() -> Machine:
    model = "unknown"
    for line in _read(PROC / "cpuinfo").splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    mem_kib = _status_kib(_read(PROC / "meminfo"), "MemTotal")
    return Machine(
        cores=os.cpu_count() or 1,
        cpu_model=model,
        memory_gib=round(mem_kib / 1024**2, 1),
        kernel=platform.release(),
    )


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:  # the process ended meanwhile
        return ""


def _stat(pid: int) -> ProcStat | None:
    text = _read(PROC / str(pid) / "stat")
    if not text:
        return None
    # The command name is in parentheses and may hold spaces: split after the last ")".
    comm = text[text.index("(") + 1 : text.rindex(")")]
    fields = text[text.rindex(")") + 2 :].split()
    # fields[0] is field 3 (state) of proc(5): ppid is 4, utime..cstime are 14..17.
    utime, stime, cutime, cstime = (int(value) for value in fields[11:15])
    return ProcStat(pid, comm, int(fields[1]), (utime + stime + cutime + cstime) / TICKS)


def processes() -> dict[int, ProcStat]:
    """Every process now running, by pid."""
    found = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None:
            found[stat.pid] = stat
    return found


def descendants(root: int, table: dict[int, ProcStat]) -> list[int]:
    """The pids of root's children, grandchildren, ... (not root itself)."""
    children: dict[int, list[int]] = {}
    for stat in table.values():
        children.setdefault(stat.ppid, []).append(stat.pid)
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def tree_cpu_seconds(root: int, table: dict[int, ProcStat]) -> float:
    """CPU seconds used so far by a process and everything below it, living or reaped."""
    pids = [root, *descendants(root, table)]
    return sum(table[pid].cpu_seconds for pid in pids if pid in table)


def roots_named(comm: str, table: dict[int, ProcStat]) -> list[int]:
    """Processes called comm whose parent is not: e.g. the PostgreSQL postmaster, not its backends."""
    return [
        stat.pid
        for stat in table.values()
        if stat.comm == comm and (parent := table.get(stat.ppid)) is not None and parent.comm != comm
    ]


def machine_busy_seconds() -> tuple[float, float]:
    """CPU seconds all cores spent not idle since boot, and the part of it spent on interrupts
    (from /proc/stat; loopback networking shows up there, outside any process)."""
    values = [int(value) for value in _read(PROC / "stat").splitlines()[0].split()[1:]]
    idle, iowait, irq, softirq = values[3], values[4], values[5], values[6]
    # guest time is already counted in user time.
    return (sum(values[:8]) - idle - iowait) / TICKS, (irq + softirq) / TICKS


def busy_cores(seconds: float = 2.0) -> float:
    """How many cores' worth of CPU the whole machine used over the next few seconds."""
    before, _ = machine_busy_seconds()
    time.sleep(seconds)
    return (machine_busy_seconds()[0] - before) / seconds


def _status_kib(text: str, key: str) -> int:
    for line in text.splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def peak_memory_kib(pid: int) -> int:
    """The process's peak resident memory (VmHWM), in KiB; 0 if it has ended."""
    return _status_kib(_read(PROC / str(pid) / "status"), "VmHWM")


def resident_memory_kib(pid: int) -> int:
    return _status_kib(_read(PROC / str(pid) / "status"), "VmRSS")
