"""The process table, read from /proc (Linux): parents, process groups, working directories.

Used for process captures of a pane's working directory: the deepest
descendant of the pane's program in the terminal's foreground process group.
Elsewhere (macOS) there is no /proc: `ProcessTree.read` answers None and
panes keep their shell's reports.

`read_stat` is the one reader of /proc/<pid>/stat, for this module and for
sessions.py (a pane's session members) and the start times that tell a pid
reused from the process a snapshot saw.
"""

import os
from collections.abc import Generator
from dataclasses import dataclass
from typing import NamedTuple

from mux.system.steps import all_at_once


@dataclass(frozen=True)
class ProcessInfo:
    ppid: int
    pgrp: int


class ProcStat(NamedTuple):
    """The fields of /proc/<pid>/stat that mux reads (proc(5) numbers them 2 to 6 and 22).
    A tuple, not a dataclass: every process is read at each capture, and a tuple is
    made three times faster."""

    comm: bytes  # the command name, as the kernel keeps it: at most 15 bytes, any of them
    state: str  # R, S, D, ... Z (zombie), X (dead)
    ppid: int
    pgrp: int
    session: int
    start_ticks: int  # clock ticks after boot


# More than a stat line holds (52 numbers and a 64-byte comm at most): one read gets it.
STAT_READ_BYTES = 4096


def parse_stat(raw: bytes) -> ProcStat:
    """The content of /proc/<pid>/stat; ValueError when it does not have that shape.

    "pid (comm) state ppid pgrp session ...": comm may hold spaces and parentheses,
    ")" too, so it ends at the last ")" (nothing after it can hold one).
    """
    opening, closing = raw.find(b"("), raw.rfind(b")")
    if opening < 0 or closing < opening:
        raise ValueError("no (comm) in a /proc stat line")
    fields = raw[closing + 2 :].split()
    if len(fields) < 20:
        raise ValueError("too few fields in a /proc stat line")
    return ProcStat(
        comm=raw[opening + 1 : closing],
        state=fields[0].decode(),
        ppid=int(fields[1]),
        pgrp=int(fields[2]),
        session=int(fields[3]),
        start_ticks=int(fields[19]),
    )


def read_stat(pid: int | str) -> ProcStat:
    """/proc/<pid>/stat, parsed; OSError when it cannot be read (the process is gone,
    or there is no /proc), ValueError when it cannot be parsed."""
    # os.open and one os.read, not open(): no buffered file object for a ~300-byte
    # read, 7 µs a process instead of 12 (a snapshot reads every process's).
    fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY | os.O_CLOEXEC)
    try:
        return parse_stat(os.read(fd, STAT_READ_BYTES))
    finally:
        os.close(fd)


def read_all_stats() -> dict[int, ProcStat]:
    """Every process's stat now, by pid; OSError without /proc. A process that ends
    while the table is read is left out."""
    return all_at_once(read_all_stats_in_steps(step=0))


def read_all_stats_in_steps(step: int) -> Generator[None, None, dict[int, ProcStat]]:
    """`read_all_stats`, yielding after every `step` entries of /proc (0: never)."""
    stats: dict[int, ProcStat] = {}
    for n, name in enumerate(os.listdir("/proc")):
        if not name.isdigit():
            continue
        if step and n and n % step == 0:
            yield
        try:
            stats[int(name)] = read_stat(name)
        except (OSError, ValueError):
            continue  # gone meanwhile
    return stats


def is_gone(stat: ProcStat) -> bool:
    """A zombie or dead process is no longer running (nobody may reap orphans here)."""
    return stat.state in ("Z", "X")


def start_ticks(pid: int) -> int | None:
    """When `pid` started (clock ticks since boot; Linux): with the pid, it names one
    process for good, pids being reused. None when it cannot be found out."""
    try:
        stat = read_stat(pid)
    except (OSError, ValueError):
        return None
    return None if is_gone(stat) else stat.start_ticks


def process_info(pid: int) -> ProcessInfo | None:
    """One process's parent and group (Linux: /proc; elsewhere: /bin/ps); None when it
    cannot be found out."""
    try:
        stat = read_stat(pid)
    except FileNotFoundError:
        if os.path.isdir("/proc/self"):
            return None  # /proc works: the process is gone
        return _process_info_from_ps(pid)
    except (OSError, ValueError):
        return None
    return ProcessInfo(ppid=stat.ppid, pgrp=stat.pgrp)


def _process_info_from_ps(pid: int) -> ProcessInfo | None:
    """macOS: no /proc."""
    import subprocess

    try:
        result = subprocess.run(
            ["/bin/ps", "-o", "ppid=,pgid=", "-p", str(pid)],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    fields = result.stdout.split()
    if result.returncode != 0 or len(fields) != 2:
        return None
    try:
        return ProcessInfo(ppid=int(fields[0]), pgrp=int(fields[1]))
    except ValueError:
        return None


class ProcessTree:
    def __init__(self, processes: dict[int, ProcessInfo]) -> None:
        self.processes = processes
        self._children: dict[int, list[int]] = {}
        for pid, info in processes.items():
            self._children.setdefault(info.ppid, []).append(pid)

    @classmethod
    def read(cls) -> "ProcessTree | None":
        """This machine's processes now; None without /proc."""
        return all_at_once(cls.read_in_steps(step=0))

    @classmethod
    def read_in_steps(cls, step: int) -> Generator[None, None, "ProcessTree | None"]:
        """`read`, yielding after every `step` entries of /proc: the caller's event loop runs
        between steps."""
        try:
            stats = yield from read_all_stats_in_steps(step)
        except OSError:
            return None
        return cls({pid: ProcessInfo(ppid=s.ppid, pgrp=s.pgrp) for pid, s in stats.items()})

    def deepest_in_group(self, root: int, pgrp: int) -> int | None:
        """The deepest descendant of `root` (root included) in process group `pgrp`."""
        info = self.processes.get(root)
        best = root if info is not None and info.pgrp == pgrp else None
        best_depth = 0
        stack = [(root, 0)]
        while stack:
            pid, depth = stack.pop()
            for child in self._children.get(pid, ()):
                if self.processes[child].pgrp == pgrp and depth + 1 > best_depth:
                    best, best_depth = child, depth + 1
                stack.append((child, depth + 1))
        return best


def working_directory(pid: int) -> str | None:
    try:
        path = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None
    if path.endswith(" (deleted)") or not path.startswith("/"):
        return None
    try:
        # A name that is not UTF-8 comes back with surrogates, which no D-Bus string can
        # carry: ListPanes would fail for every caller. Unknown, as the OSC scanner says.
        path.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return path


def unified_cgroup(pid: int) -> str | None:
    """The process's cgroup in the unified hierarchy ("0::/path"), None if unknown."""
    try:
        with open(f"/proc/{pid}/cgroup") as f:
            for line in f:
                if line.startswith("0::"):
                    return line[3:].rstrip("\n")
    except OSError:
        return None
    return None
