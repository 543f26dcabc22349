"""The attach socket: handed over by the service manager, or bound by muxd itself.

systemd passes it as LISTEN_FDS (read by mux.system.listen_fds); launchd
through launch_activate_socket(). Whatever is handed over is checked to be a
Unix stream socket before it is used. Without either, muxd binds
`<runtime>/mux.sock` itself, mode 0600.
"""

import contextlib
import ctypes
import logging
import os
import socket
import stat
import sys
from pathlib import Path

from mux.system.busaddr import socket_answers

log = logging.getLogger(__name__)

LAUNCHD_SOCKET_NAME = "attach"  # the key under Sockets in org.mux.muxd.plist
IS_MACOS = sys.platform == "darwin"
BOUND_BY_MUXD = "bound by muxd"


class ActivationError(Exception):
    pass


def _unix_stream(fd: int) -> socket.socket | None:
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    if not stat.S_ISSOCK(st.st_mode):
        return None
    sock = socket.socket(fileno=fd)  # takes family and type from the fd itself
    if sock.family != socket.AF_UNIX or sock.type != socket.SOCK_STREAM:
        sock.detach()
        return None
    return sock


def systemd_sockets(activation: list[tuple[int, str]]) -> list[socket.socket]:
    """The Unix stream sockets among the socket-activation fds systemd passed
    (mux.system.listen_fds); other fds are refused, loudly."""
    sockets = []
    for fd, name in activation:
        sock = _unix_stream(fd)
        if sock is None:
            log.error("fd %d (%s) passed by systemd is not a Unix stream socket; ignored", fd, name)
            continue
        sock.set_inheritable(False)
        sockets.append(sock)
    return sockets


def launchd_sockets(libsystem: ctypes.CDLL | None = None) -> list[socket.socket]:
    """Sockets launchd holds for us under LAUNCHD_SOCKET_NAME (macOS)."""
    if libsystem is None:
        if not IS_MACOS:
            return []
        libsystem = ctypes.CDLL("/usr/lib/libSystem.B.dylib")
    activate = libsystem.launch_activate_socket
    activate.argtypes = [
        ctypes.c_char_p,
        ctypes.POINTER(ctypes.POINTER(ctypes.c_int)),
        ctypes.POINTER(ctypes.c_size_t),
    ]
    activate.restype = ctypes.c_int
    fds = ctypes.POINTER(ctypes.c_int)()
    count = ctypes.c_size_t(0)
    error = activate(LAUNCHD_SOCKET_NAME.encode(), ctypes.pointer(fds), ctypes.pointer(count))
    if error:
        # ESRCH: not started by launchd; ENOENT: no such socket in the plist.
        return []
    try:
        sockets = []
        for i in range(count.value):
            sock = _unix_stream(fds[i])
            if sock is None:
                log.error("fd %d passed by launchd is not a Unix stream socket; ignored", fds[i])
                continue
            sock.set_inheritable(False)
            sockets.append(sock)
        return sockets
    finally:
        libsystem.free(fds)


def bind_attach_socket(path: Path) -> socket.socket:
    """Listen on `path` (mode 0600), replacing a stale socket but nothing else."""
    if _someone_listens(path):
        raise ActivationError(
            f"{path} is served by another process (mux.socket?); "
            "this muxd runs without an attach socket"
        )
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            raise ActivationError(f"{path} exists and is not a socket; remove it")
        os.unlink(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)  # created 0600, no window where it is wider
    try:
        sock.bind(str(path))
    finally:
        os.umask(old_umask)
    sock.listen(64)
    return sock


def _someone_listens(path: Path) -> bool:
    """Whether a socket is listening at `path`, found without connecting to it: a
    connection would start mux.service through mux.socket, just to learn it is there."""
    try:
        with open("/proc/net/unix") as table:
            next(table)  # the header
            for line in table:
                fields = line.split(None, 7)  # the path, last, may hold spaces
                # Flags 0x10000 (__SO_ACCEPTCON): a listening socket.
                listening = int(fields[3], 16) & 0x10000
                if len(fields) == 8 and listening and fields[7].rstrip("\n") == str(path):
                    return True
        return False
    except (OSError, ValueError, StopIteration):
        return socket_answers(path)  # no /proc (macOS): the only other way is to ask


def attach_listener(
    runtime_socket: Path, activation: list[tuple[int, str]]
) -> tuple[socket.socket, str]:
    """The listening attach socket and where it came from; `activation`: what systemd
    passed for socket activation."""
    for origin, found in (
        ("systemd", systemd_sockets(activation)),
        ("launchd", launchd_sockets()),
    ):
        if found:
            for extra in found[1:]:
                extra.close()
            return found[0], origin
    return bind_attach_socket(runtime_socket), BOUND_BY_MUXD
