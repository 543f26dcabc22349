"""The one rule for connecting to a socket of mux's (docs/paths.md#trusting-a-socket).

Before connecting, the directory holding the socket must be the user's own and
writable by nobody else, and the socket file (when there is one) the user's; after
connecting, the process that accepted must run as the user (SO_PEERCRED). A socket
that fails is refused with `UntrustedSocket`, which names the path and what is wrong,
and nothing has been sent on it: whoever can place a socket where mux's would be
(another user who made `/tmp/mux-$UID` first) would otherwise receive every key
typed into an attach.

"The user" is the user's uid or root's: root can read the user's keys anyway, and on
macOS the listening socket launchd makes for mux's agent is root's.

The directory check keeps others from planting a socket; the peer check covers what
a check of paths cannot (a directory swapped between the check and the connect, a
socket served through a hard link). Stdlib only and no pathlib: muxctl imports this
on every attach (mux.system.paths says why).
"""

from __future__ import annotations

import errno
import os
import socket
import stat

from mux.system.peercred import PeerUnknown, peer_credentials

# Write by group or others: whoever has it can put a socket of theirs there.
_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH
ROOT_UID = 0


def _trusted(uid: int) -> bool:
    return uid in (os.getuid(), ROOT_UID)


class UntrustedSocket(Exception):
    """A socket mux will not talk to; nothing was sent on it."""

    def __init__(self, path: str | os.PathLike[str], problem: str) -> None:
        super().__init__(f"refusing the socket {os.fspath(path)}: {problem}")
        self.path = os.fspath(path)
        self.problem = problem


def check_directory(socket_path: str | os.PathLike[str]) -> None:
    """The directory holding `socket_path` is a real directory of the user's that only
    the user can write to; UntrustedSocket otherwise (FileNotFoundError when there is
    no such directory)."""
    directory = os.path.dirname(os.path.abspath(socket_path))
    uid = os.getuid()
    try:
        st = os.lstat(directory)
    except FileNotFoundError:
        # Nothing there to trust or not: mux is not running, as the connect would say.
        raise FileNotFoundError(
            errno.ENOENT, f"its directory {directory} does not exist", os.fspath(socket_path)
        ) from None
    except OSError as e:
        raise UntrustedSocket(socket_path, f"its directory {directory}: {e.strerror}") from None
    if stat.S_ISLNK(st.st_mode):
        raise UntrustedSocket(socket_path, f"its directory {directory} is a symlink")
    if not stat.S_ISDIR(st.st_mode):
        raise UntrustedSocket(socket_path, f"{directory} is not a directory")
    if not _trusted(st.st_uid):
        raise UntrustedSocket(
            socket_path,
            f"its directory {directory} is owned by uid {st.st_uid}, not by you (uid {uid})",
        )
    if st.st_mode & _OTHERS_WRITE:
        raise UntrustedSocket(
            socket_path,
            f"its directory {directory} is writable by other users "
            f"(mode {stat.S_IMODE(st.st_mode):04o})",
        )


def check_socket_file(socket_path: str | os.PathLike[str]) -> None:
    """The socket file, when there is one, is a socket of the user's (a missing one is
    left for the connect to report: mux is then not running)."""
    try:
        st = os.lstat(socket_path)
    except FileNotFoundError:
        return
    except OSError as e:
        raise UntrustedSocket(socket_path, e.strerror or type(e).__name__) from None
    if stat.S_ISLNK(st.st_mode):
        raise UntrustedSocket(socket_path, "it is a symlink")
    if not stat.S_ISSOCK(st.st_mode):
        raise UntrustedSocket(socket_path, "it is not a socket")
    if not _trusted(st.st_uid):
        raise UntrustedSocket(
            socket_path, f"it is owned by uid {st.st_uid}, not by you (uid {os.getuid()})"
        )


def before_connect(socket_path: str | os.PathLike[str]) -> None:
    """Everything that can be checked before connecting to `socket_path`."""
    check_directory(socket_path)
    check_socket_file(socket_path)


def check_peer(sock: socket.socket, socket_path: str | os.PathLike[str]) -> None:
    """The process that accepted `sock` runs as the user; not knowing is a refusal."""
    try:
        peer = peer_credentials(sock)
    except PeerUnknown as e:
        raise UntrustedSocket(socket_path, str(e)) from None
    if not _trusted(peer.uid):
        pid = f" (pid {peer.pid})" if peer.pid is not None else ""
        raise UntrustedSocket(
            socket_path,
            f"it is served by uid {peer.uid}{pid}, not by you (uid {os.getuid()})",
        )


def connect_trusted(
    socket_path: str | os.PathLike[str], timeout: float | None = None
) -> socket.socket:
    """A blocking connection to `socket_path` once every check has passed: the socket
    is returned before anything is sent. UntrustedSocket for a refusal; the OSError
    of the connect (FileNotFoundError, ConnectionRefusedError...) when nothing listens."""
    before_connect(socket_path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(os.fspath(socket_path))
        check_peer(sock, socket_path)
    except BaseException:
        sock.close()
        raise
    sock.settimeout(None)
    return sock


async def connect_trusted_async(socket_path: str | os.PathLike[str]) -> socket.socket:
    """connect_trusted for an event loop: a non-blocking connection, nothing sent yet."""
    import asyncio  # (not at the top: muxctl, which imports this module, has no loop)

    before_connect(socket_path)
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.setblocking(False)
    try:
        await loop.sock_connect(sock, os.fspath(socket_path))
        check_peer(sock, socket_path)
    except BaseException:
        sock.close()
        raise
    return sock
