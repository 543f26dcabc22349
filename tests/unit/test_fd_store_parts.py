"""The parts of crash survival that need no systemd: the fd store messages (on a real
datagram socket), the record's two slots, LISTEN_FDS names, a re-adopted process."""

import os
import socket
import subprocess
import sys
from pathlib import Path

from mux.panes.process import ForeignProcess
from mux.protocol.names import EXIT_STATUS_UNKNOWN
from mux.system import proctree
from mux.system.listen_fds import pane_endpoint, pane_terminal, record_slot, terminal_of
from mux.system.notify import Supervisor
from mux.system.record_slots import RecordSlots, read_latest


def test_fds_are_stored_and_removed_by_name(tmp_path: Path) -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(str(tmp_path / "notify"))
    listener.settimeout(5)
    supervisor = Supervisor({"NOTIFY_SOCKET": str(tmp_path / "notify"), "MUX_FD_STORE_MAX": "64"})
    assert supervisor.fd_store_max == 64
    read_end, write_end = os.pipe()
    supervisor.store_fds("kept-pane-1", [read_end])
    message, fds, _flags, _address = socket.recv_fds(listener, 100, 4)
    assert message == b"FDSTORE=1\nFDNAME=kept-pane-1\nFDPOLL=0"
    assert len(fds) == 1
    os.write(write_end, b"x")
    assert os.read(fds[0], 1) == b"x", "the very pipe, passed"
    supervisor.remove_fds("kept-pane-1")
    assert listener.recv(100) == b"FDSTOREREMOVE=1\nFDNAME=kept-pane-1"
    for fd in (read_end, write_end, *fds):
        os.close(fd)


def test_no_store_without_a_size_or_a_supervisor() -> None:
    assert Supervisor({"NOTIFY_SOCKET": "/nonexistent"}).fd_store_max == 0
    assert Supervisor({"MUX_FD_STORE_MAX": "64"}).fd_store_max == 0
    assert Supervisor({"NOTIFY_SOCKET": "/x", "FDSTORE": "8"}).fd_store_max == 8
    assert Supervisor({"NOTIFY_SOCKET": "/x", "FDSTORE": "many"}).fd_store_max == 0


def test_the_newest_intact_slot_is_read() -> None:
    slots = RecordSlots.create()
    try:
        assert read_latest(slots.fds) is None, "nothing written yet"
        slots.write(b"first")
        slots.write(b"second, longer")
        assert read_latest(slots.fds) == (b"second, longer", 2)
        slots.write(b"third")
        assert read_latest(slots.fds) == (b"third", 3), "a shorter record leaves no tail"
        # A write cut short by a crash spoils only its own slot.
        newest = slots.fds[3 % 2]
        os.pwrite(newest, b"garbage", 60)
        assert read_latest(slots.fds) == (b"second, longer", 2)
    finally:
        slots.close()


def test_listen_fds_are_sorted_by_name() -> None:
    """Run as systemd starts a service: fds from 3, LISTEN_PID this process."""
    code = (
        "import os\n"
        "r, w = os.pipe(); os.dup2(r, 3); os.dup2(w, 4); os.dup2(r, 5)\n"
        "os.environ['LISTEN_PID'] = str(os.getpid())\n"
        "from mux.system.listen_fds import listen_fds\n"
        "got = listen_fds()\n"
        "print(got.activation, sorted(got.stored.items()), os.get_inheritable(4))\n"
        "print(got.take('kept-pane-1'), got.take('kept-pane-1'), got.leftovers())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "LISTEN_FDS": "3", "LISTEN_FDNAMES": "mux.socket:kept-pane-1:kept-x"},
        capture_output=True,
        text=True,
        check=True,
    )
    first, second = result.stdout.splitlines()
    assert first == "[(3, 'mux.socket')] [('kept-pane-1', [4]), ('kept-x', [5])] False"
    assert second == "4 None {'kept-x': [5]}"


def test_a_stored_terminal_names_its_pane() -> None:
    assert terminal_of(pane_terminal(17)) == 17
    for other in (pane_endpoint(17), record_slot("a"), "kept-pane-", "kept-pane-x", "mux.socket"):
        assert terminal_of(other) is None


def test_a_foreign_process_is_the_same_one_or_none() -> None:
    child = subprocess.Popen(["sleep", "60"])
    try:
        ticks = proctree.start_ticks(child.pid)
        assert ForeignProcess.adopt(child.pid, None) is None
        assert ticks is not None
        assert ForeignProcess.adopt(child.pid, ticks + 1) is None, "another start: another process"
        adopted = ForeignProcess.adopt(child.pid, ticks)
        assert adopted is not None and adopted.poll() is None
        child.kill()
        child.wait()
        assert adopted.poll() == EXIT_STATUS_UNKNOWN
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
