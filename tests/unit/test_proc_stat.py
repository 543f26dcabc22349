"""/proc/<pid>/stat, parsed once for everyone: the command name may hold spaces and ")"."""

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from mux.system.proctree import (
    ProcessInfo,
    ProcessTree,
    ProcStat,
    parse_stat,
    process_info,
    read_stat,
    start_ticks,
    working_directory,
)
from mux.system.sessions import sessions_members

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="Linux: /proc")

# Names the kernel keeps whole (at most 15 bytes), each ending its comm field in a way
# that a parser looking for the first ")" or splitting on spaces gets wrong.
TRICKY_NAMES = ["a) b", ") ) 1 2 3", "x (y) z) S 1"]


def _stat_line(comm: bytes, after: list[int]) -> bytes:
    return b"4242 (" + comm + b") S " + b" ".join(b"%d" % n for n in after) + b"\n"


def test_fields_after_a_comm_that_holds_a_parenthesis_and_spaces() -> None:
    # ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
    # cutime cstime priority nice num_threads itrealvalue starttime ...
    rest = [7, 8, 9, *range(10, 25), 777, 1, 2, 3]
    stat = parse_stat(_stat_line(b"a) b (c", rest))
    assert stat == ProcStat(comm=b"a) b (c", state="S", ppid=7, pgrp=8, session=9, start_ticks=777)


@pytest.mark.parametrize(
    "raw", [b"", b"4242 no comm S 1 2 3", b"4242 (sh) S 1 2 3", b"4242 (sh) S x 2 3" + b" 0" * 17]
)
def test_what_is_not_a_stat_line_is_refused(raw: bytes) -> None:
    with pytest.raises(ValueError):
        parse_stat(raw)


@dataclass(frozen=True)
class Renamed:
    pid: int
    name: str


@pytest.fixture(params=TRICKY_NAMES)
def renamed_process(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Renamed]:
    """A shell whose command name is one of TRICKY_NAMES, in a session of its own,
    running until the test ends. It says "ready" once it runs as that name."""
    name: str = request.param
    program = tmp_path / name
    shell = shutil.which("sh") or "/bin/sh"
    shutil.copy(shell, program)
    process = subprocess.Popen(
        # `read` returns when the test closes the shell's input.
        [str(program), "-c", "echo ready; read line"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=tmp_path,
        start_new_session=True,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        assert process.stdout.readline() == b"ready\n"
        yield Renamed(process.pid, name)
    finally:
        process.stdin.close()
        process.wait(timeout=30)
        process.stdout.close()


def test_a_real_process_with_a_tricky_name(renamed_process: Renamed) -> None:
    pid = renamed_process.pid
    stat = read_stat(pid)
    assert stat.comm == renamed_process.name.encode()
    assert stat.state in ("S", "R")
    assert stat.ppid == os.getpid()
    assert stat.pgrp == stat.session == pid  # it leads its own session
    assert start_ticks(pid) == stat.start_ticks >= read_stat(os.getpid()).start_ticks
    assert process_info(pid) == ProcessInfo(ppid=os.getpid(), pgrp=pid)
    tree = ProcessTree.read()
    assert tree is not None and tree.processes[pid] == ProcessInfo(ppid=os.getpid(), pgrp=pid)


def test_the_session_of_a_process_with_a_tricky_name_is_found(renamed_process: Renamed) -> None:
    pid = renamed_process.pid
    assert sessions_members([pid]) == {pid: [pid]}


def test_a_process_that_is_gone() -> None:
    process = subprocess.Popen(["true"])
    process.wait()
    with pytest.raises(OSError):
        read_stat(process.pid)
    assert start_ticks(process.pid) is None
    assert process_info(process.pid) is None


def test_a_working_directory_whose_name_is_not_utf8_is_unknown(tmp_path: Path) -> None:
    """A D-Bus string cannot carry it: reported, ListPanes would fail for every caller."""
    odd = os.path.join(os.fsencode(tmp_path), b"bad\xff")
    os.mkdir(odd)
    child = subprocess.Popen(["sleep", "30"], cwd=odd)
    try:
        assert working_directory(child.pid) is None
    finally:
        child.kill()
        child.wait()


def test_a_working_directory_in_utf8_is_read(tmp_path: Path) -> None:
    child = subprocess.Popen(["sleep", "30"], cwd=tmp_path)
    try:
        assert working_directory(child.pid) == str(tmp_path)
    finally:
        child.kill()
        child.wait()
