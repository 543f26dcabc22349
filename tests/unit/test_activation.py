"""The attach socket: from systemd's LISTEN_FDS, from launchd, or bound by muxd."""

import ctypes
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from mux.system import activation


def _systemd_sockets_seen(sock: socket.socket, *, listen_pid: str | None) -> str:
    """What systemd_sockets() finds in a child that has `sock` as fd 3, as systemd passes it.

    listen_pid None: LISTEN_PID names the child itself.
    """
    code = (
        "import os\n"
        f"os.dup2({sock.fileno()}, 3)\n"
        f"os.environ['LISTEN_PID'] = {listen_pid!r} or str(os.getpid())\n"
        "from mux.system.activation import systemd_sockets\n"
        "from mux.system.listen_fds import listen_fds\n"
        "inherited = listen_fds()\n"
        "assert not inherited.stored\n"
        "found = systemd_sockets(inherited.activation)\n"
        "print(len(found), [s.getsockname() for s in found], os.get_inheritable(3))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "LISTEN_FDS": "1", "LISTEN_FDNAMES": "mux.socket"},
        pass_fds=(sock.fileno(),),
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip() + result.stderr


def test_systemd_socket_is_taken_for_this_pid_only(tmp_path: Path) -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(tmp_path / "s"))
    listener.listen()
    seen = _systemd_sockets_seen(listener, listen_pid=None)
    assert seen.startswith("1 ")
    assert str(tmp_path / "s") in seen
    assert seen.endswith("False"), "taken-over fds are close-on-exec"
    assert _systemd_sockets_seen(listener, listen_pid="1").startswith("0 "), (
        "fds meant for another pid are left alone"
    )
    listener.close()


def test_a_datagram_socket_is_refused() -> None:
    dgram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    seen = _systemd_sockets_seen(dgram, listen_pid=None)
    assert seen.startswith("0 ")
    assert "not a Unix stream socket" in seen
    dgram.close()


class FakeFunction:
    """A C function as ctypes shows it: argtypes, restype, and a call."""

    def __init__(self, body: object) -> None:
        self.argtypes: object = None
        self.restype: object = None
        self._body = body

    def __call__(self, *args: object) -> object:
        return self._body(*args)  # type: ignore[operator]


class FakeLibSystem:
    """Only launch_activate_socket and free, as libSystem has them (macOS cannot run here)."""

    def __init__(self, fds: list[int], error: int = 0) -> None:
        self._fds = (ctypes.c_int * max(len(fds), 1))(*fds)
        self._count = len(fds)
        self._error = error
        self.asked: list[bytes] = []
        self.freed = 0
        self.launch_activate_socket = FakeFunction(self._activate)
        self.free = FakeFunction(self._free)

    def _activate(
        self,
        name: bytes,
        fds: "ctypes._Pointer[ctypes._Pointer[ctypes.c_int]]",
        count: "ctypes._Pointer[ctypes.c_size_t]",
    ) -> int:
        self.asked.append(name)
        if self._error:
            return self._error
        fds[0] = ctypes.cast(self._fds, ctypes.POINTER(ctypes.c_int))
        count[0] = ctypes.c_size_t(self._count)
        return 0

    def _free(self, pointer: object) -> None:
        self.freed += 1


def test_launchd_sockets(tmp_path: Path) -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(tmp_path / "l"))
    listener.listen()
    fake = FakeLibSystem([os.dup(listener.fileno())])
    found = activation.launchd_sockets(fake)  # type: ignore[arg-type]
    assert fake.asked == [b"attach"]
    assert fake.freed == 1
    assert len(found) == 1
    assert found[0].getsockname() == str(tmp_path / "l")
    found[0].close()
    listener.close()
    not_launchd = FakeLibSystem([], error=3)  # ESRCH: not started by launchd
    assert activation.launchd_sockets(not_launchd) == []  # type: ignore[arg-type]


def test_bound_by_muxd_is_0600_and_never_steals(tmp_path: Path) -> None:
    path = tmp_path / "mux.sock"
    sock = activation.bind_attach_socket(path)
    assert (path.stat().st_mode & 0o777) == 0o600
    with pytest.raises(activation.ActivationError, match="served by another process"):
        activation.bind_attach_socket(path)
    sock.close()
    again = activation.bind_attach_socket(path)  # a stale socket file is replaced
    again.close()
    (tmp_path / "file").write_text("x")
    with pytest.raises(activation.ActivationError, match="not a socket"):
        activation.bind_attach_socket(tmp_path / "file")
