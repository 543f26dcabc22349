"""The process table, read from /proc (Linux): parents, process groups, working directories.

Used for process captures of a pane's working directory: the deepest
descendant of the pane's program in the terminal's foreground process group.
Elsewhere (macOS) there is no /proc: `ProcessTree.read` answers None and
panes keep their shell's reports.
"""

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class ProcessInfo:
    ppid: int
    pgrp: int


def _stat(pid: int | str) -> list[bytes]:
    """The fields of /proc/<pid>/stat after the command name (which may hold spaces and
    parentheses): state, ppid, pgrp, ... OSError when it cannot be read."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        stat = f.read()
    return stat[stat.rfind(b")") + 2 :].split()


def start_ticks(pid: int) -> int | None:
    """When `pid` started (clock ticks since boot; Linux): with the pid, it names one
    process for good, pids being reused. None when it cannot be found out."""
    try:
        fields = _stat(pid)
    except OSError:
        return None
    if not fields or fields[0] in (b"Z", b"X"):
        return None  # a zombie is no longer running (nobody may reap orphans here)
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def process_info(pid: int) -> ProcessInfo | None:
    """One process's parent and group (Linux: /proc; elsewhere: /bin/ps); None when it
    cannot be found out."""
    try:
        fields = _stat(pid)
    except FileNotFoundError:
        if os.path.isdir("/proc/self"):
            return None  # /proc works: the process is gone
        return _process_info_from_ps(pid)
    except OSError:
        return None
    if len(fields) < 3:
        return None
    return ProcessInfo(ppid=int(fields[1]), pgrp=int(fields[2]))


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
        try:
            names = os.listdir("/proc")
        except OSError:
            return None
        processes: dict[int, ProcessInfo] = {}
        for name in names:
            if not name.isdigit():
                continue
            try:
                fields = _stat(name)
            except OSError:
                continue  # gone meanwhile
            if len(fields) < 3:
                continue
            processes[int(name)] = ProcessInfo(ppid=int(fields[1]), pgrp=int(fields[2]))
        return cls(processes)

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
    return path
