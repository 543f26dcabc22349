"""The checks of mux.system.socket_trust on real directories and sockets (no muxd)."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from mux.system.socket_trust import (
    UntrustedSocket,
    before_connect,
    check_directory,
    check_peer,
    check_socket_file,
    connect_trusted,
    connect_trusted_async,
)

OTHER_UID = 65534
AS_NOBODY = ["setpriv", f"--reuid={OTHER_UID}", f"--regid={OTHER_UID}", "--clear-groups"]


@pytest.fixture
def private(tmp_path: Path) -> Path:
    directory = tmp_path / "run"
    directory.mkdir(mode=0o700)
    directory.chmod(0o700)
    return directory


@pytest.fixture
def listening(private: Path) -> Iterator[Path]:
    path = private / "mux.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        server.listen(1)
        yield path


def needs_root() -> None:
    if os.getuid() != 0:
        pytest.skip("needs root to make files owned by another uid")


def refusal(path: Path) -> str:
    with pytest.raises(UntrustedSocket) as caught:
        before_connect(path)
    assert caught.value.path == str(path)
    assert str(path) in str(caught.value)
    return caught.value.problem


def test_a_private_directory_of_ours_is_trusted(listening: Path) -> None:
    before_connect(listening)
    with connect_trusted(listening) as sock:
        check_peer(sock, listening)


def test_a_directory_others_may_read_but_not_write_is_trusted(listening: Path) -> None:
    listening.parent.chmod(0o755)
    before_connect(listening)


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o730, 0o703, 0o1777])
def test_a_directory_others_may_write_is_refused(private: Path, mode: int) -> None:
    private.chmod(mode)
    problem = refusal(private / "mux.sock")
    assert f"its directory {private} is writable by other users (mode {mode:04o})" == problem


def test_a_directory_of_another_uid_is_refused(private: Path) -> None:
    needs_root()
    os.chown(private, OTHER_UID, OTHER_UID)
    problem = refusal(private / "mux.sock")
    assert problem == f"its directory {private} is owned by uid {OTHER_UID}, not by you (uid 0)"


def test_a_symlinked_directory_is_refused(private: Path, tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(private)
    assert refusal(link / "mux.sock") == f"its directory {link} is a symlink"


def test_a_missing_directory_is_not_running(tmp_path: Path) -> None:
    """Nothing there to trust or not: the connect's own error (mux is not running)."""
    missing = tmp_path / "nowhere"
    with pytest.raises(FileNotFoundError, match=f"its directory {missing} does not exist"):
        before_connect(missing / "mux.sock")
    with pytest.raises(FileNotFoundError):
        connect_trusted(missing / "mux.sock")


def test_a_file_in_place_of_the_directory_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("")
    assert refusal(plain / "mux.sock") == f"{plain} is not a directory"


def test_a_missing_socket_is_left_to_the_connect(private: Path) -> None:
    check_socket_file(private / "mux.sock")  # mux is not running: no refusal
    with pytest.raises(FileNotFoundError):
        connect_trusted(private / "mux.sock")


def test_a_socket_of_another_uid_is_refused(listening: Path) -> None:
    needs_root()
    os.chown(listening, OTHER_UID, OTHER_UID)
    problem = refusal(listening)
    assert problem == f"it is owned by uid {OTHER_UID}, not by you (uid 0)"


def test_a_symlink_in_place_of_the_socket_is_refused(listening: Path) -> None:
    link = listening.parent / "link.sock"
    link.symlink_to(listening)
    assert refusal(link) == "it is a symlink"


def test_a_file_in_place_of_the_socket_is_refused(private: Path) -> None:
    (private / "mux.sock").write_text("")
    assert refusal(private / "mux.sock") == "it is not a socket"


def test_check_directory_alone_takes_any_socket_name(private: Path) -> None:
    check_directory(private / "anything")


def test_a_peer_of_another_uid_is_refused() -> None:
    """The peer's uid as the kernel says it: a server run as nobody."""
    needs_root()
    with tempfile.TemporaryDirectory(dir="/tmp") as shared:  # (nobody reaches it)
        os.chmod(shared, 0o777)
        check_nobodys_server(Path(shared) / "s.sock")


def check_nobodys_server(path: Path) -> None:
    server = subprocess.Popen(
        [*AS_NOBODY, sys.executable, "-c", SERVE_ONCE, str(path)],
        stdout=subprocess.PIPE,
    )
    try:
        assert server.stdout is not None
        assert server.stdout.readline() == b"listening\n"
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(str(path))
            with pytest.raises(UntrustedSocket) as caught:
                check_peer(sock, path)
        assert caught.value.problem.startswith(f"it is served by uid {OTHER_UID} (pid ")
        # Through connect_trusted as well (the directory is refused before that here).
        with pytest.raises(UntrustedSocket, match="writable by other users"):
            connect_trusted(path)
    finally:
        server.kill()
        server.wait()


SERVE_ONCE = r"""
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(4)
print("listening", flush=True)
while True:
    s.accept()
"""


def test_a_socket_with_no_peer_is_a_refusal(private: Path) -> None:
    """No peer to ask (never connected): refused, as peercred never counts "unknown" as
    the user (the kernel answers uid -1 here)."""
    with (
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock,
        pytest.raises(UntrustedSocket, match=r"cannot be read|not by you"),
    ):
        check_peer(sock, private / "mux.sock")


# -- the hub's clients of the forwarded sockets (mux.federation) -------------------------


@pytest.fixture
def open_directory_server(tmp_path: Path) -> Iterator[tuple[Path, socket.socket]]:
    """A listening socket in a directory anyone may write to (as /tmp/mux-$UID made by
    another user would be), and its server end, to see that nothing reached it."""
    directory = tmp_path / "open"
    directory.mkdir()
    directory.chmod(0o777)
    path = directory / "attach"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        server.listen(4)
        server.setblocking(False)
        yield path, server


def nothing_connected(server: socket.socket) -> bool:
    try:
        server.accept()[0].close()
    except BlockingIOError:
        return True
    return False


def test_remote_attach_refuses_an_untrusted_forward(
    open_directory_server: tuple[Path, socket.socket], caplog: pytest.LogCaptureFixture
) -> None:
    from mux.federation.remote_attach import open_remote_attach
    from mux.protocol.errors import Unavailable

    path, server = open_directory_server
    with pytest.raises(Unavailable) as caught:
        asyncio.run(open_remote_attach(path, 3, "far"))
    assert "cannot attach to pane 3 on far" in str(caught.value)
    assert str(path) not in str(caught.value)  # (the caller is told no private path)
    assert f"refusing the socket {path}" in caplog.text  # (muxd's log is)
    assert nothing_connected(server)


def test_dial_refuses_an_untrusted_bus_forward(
    open_directory_server: tuple[Path, socket.socket],
) -> None:
    from mux.federation.dial import _check_forward
    from mux.federation.host_book import Host
    from mux.federation.ssh import LinkFailure

    path, server = open_directory_server
    with pytest.raises(LinkFailure) as caught:
        asyncio.run(_check_forward(Host("far", "far.example", "muxctl", False), path))
    assert "not this user's" in caught.value.failure.message
    assert nothing_connected(server)


def test_the_async_connect_checks_the_peer_too() -> None:
    """A directory and socket file of the user's, served by nobody: only the peer's
    uid tells (the socket was bound while the directory was open, then both made ours)."""
    needs_root()
    with tempfile.TemporaryDirectory(dir="/tmp") as shared:
        os.chmod(shared, 0o777)
        path = Path(shared) / "s.sock"
        server = subprocess.Popen(
            [*AS_NOBODY, sys.executable, "-c", SERVE_ONCE, str(path)], stdout=subprocess.PIPE
        )
        try:
            assert server.stdout is not None
            assert server.stdout.readline() == b"listening\n"
            os.chmod(shared, 0o700)
            os.chown(path, 0, 0)
            with pytest.raises(UntrustedSocket, match=f"served by uid {OTHER_UID}"):
                asyncio.run(connect_trusted_async(path))
        finally:
            server.kill()
            server.wait()
