"""mux's own dbus-daemon at `<runtime>/bus`, for machines with no session bus."""

import contextlib
import logging
import os
import select
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from mux.panes.exits import Reapable
from mux.panes.process import ForeignProcess
from mux.protocol.environment import without_service_variables
from mux.system import proctree
from mux.system.busaddr import unix_address
from mux.system.peercred import PeerUnknown, peer_credentials

log = logging.getLogger(__name__)

START_TIMEOUT_SECONDS = 10.0


class PrivateBusError(Exception):
    pass


def start_private_bus(socket_path: Path) -> "subprocess.Popen[bytes]":
    """Start a real dbus-daemon listening on `socket_path`; returns once it accepts."""
    daemon = shutil.which("dbus-daemon")
    if daemon is None:
        raise PrivateBusError(
            "there is no session bus and dbus-daemon is not installed; "
            "install it (Debian: apt-get install dbus-daemon) or set DBUS_SESSION_BUS_ADDRESS"
        )
    # A stale socket from a muxd that died.
    socket_path.unlink(missing_ok=True)
    env = without_service_variables(os.environ)
    read_fd, write_fd = os.pipe()
    process = subprocess.Popen(
        [
            daemon,
            "--session",
            "--nofork",
            "--nopidfile",
            f"--address={unix_address(socket_path)}",
            f"--print-address={write_fd}",
        ],
        stdin=subprocess.DEVNULL,
        env=env,
        pass_fds=(write_fd,),
        close_fds=True,
    )
    os.close(write_fd)
    try:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        address = b""
        while not address.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            ready, _, _ = select.select([read_fd], [], [], max(remaining, 0))
            if not ready:
                process.kill()
                process.wait()
                raise PrivateBusError("dbus-daemon did not start within 10 seconds")
            chunk = os.read(read_fd, 4096)
            if not chunk:
                status = process.wait()
                raise PrivateBusError(f"dbus-daemon exited at start with status {status}")
            address += chunk
    finally:
        os.close(read_fd)
    os.chmod(socket_path, 0o600)
    log.info("started a private bus at %s (dbus-daemon pid %d)", socket_path, process.pid)
    return process


STOP_SECONDS = 5.0


def stop_private_bus(process: Reapable, socket_path: Path) -> None:
    """SIGTERM, a few seconds, SIGKILL; then its socket file goes (muxd is stopping:
    nothing else is left to serve, so this may block)."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_SECONDS
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(process.pid, 0)
    with contextlib.suppress(FileNotFoundError):
        socket_path.unlink()


def left_private_bus(socket_path: Path) -> ForeignProcess | None:
    """The dbus-daemon that a muxd which died left serving at `socket_path`: this muxd
    serves on it, and stops it at its own stop as if it had started it. None when
    the process behind the socket is not one (another uid, another program)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(1.0)
            sock.connect(str(socket_path))
            peer = peer_credentials(sock)
        with open(f"/proc/{peer.pid}/cmdline", "rb") as f:
            cmdline = f.read()
    except (OSError, PeerUnknown):
        return None
    if peer.pid is None or peer.uid != os.getuid():
        return None
    if b"dbus-daemon" not in cmdline or os.fsencode(socket_path) not in cmdline:
        return None
    return ForeignProcess.adopt(peer.pid, proctree.start_ticks(peer.pid))
