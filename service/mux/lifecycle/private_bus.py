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
from xml.sax.saxutils import escape as xml_escape

from mux.panes.exits import Reapable
from mux.panes.process import ForeignProcess
from mux.protocol.environment import without_service_variables
from mux.system import proctree
from mux.system.busaddr import unix_address
from mux.system.durable import DurableWriteError, durable_write
from mux.system.peercred import PeerUnknown, peer_credentials

log = logging.getLogger(__name__)

START_TIMEOUT_SECONDS = 10.0


class PrivateBusError(Exception):
    pass


# The configuration of mux's private bus (docs/paths.md#the-private-bus). Not
# `--session`: the session configuration reads the standard service directories, so
# any call on mux's bus would start whatever session service is installed (dconf,
# kded...) with the user's rights, and nothing mux serves needs activation (muxd starts
# this bus itself). So: EXTERNAL authentication, no anonymous clients, connections from
# the user's uid only, no service directories; and the session bus's limits, which
# assume a bus of one user's own.
BUS_CONFIGURATION = """\
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<!-- Written by muxd at each start of its private bus: edits are lost. -->
<busconfig>
  <type>session</type>
  <listen>{address}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <deny user="*"/>
    <allow user="{uid}"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
  <limit name="max_incoming_bytes">1000000000</limit>
  <limit name="max_incoming_unix_fds">250000000</limit>
  <limit name="max_outgoing_bytes">1000000000</limit>
  <limit name="max_outgoing_unix_fds">250000000</limit>
  <limit name="max_message_size">1000000000</limit>
  <limit name="auth_timeout">240000</limit>
  <limit name="pending_fd_timeout">150000</limit>
  <limit name="max_completed_connections">100000</limit>
  <limit name="max_incomplete_connections">10000</limit>
  <limit name="max_connections_per_user">100000</limit>
  <limit name="max_names_per_connection">50000</limit>
  <limit name="max_match_rules_per_connection">50000</limit>
  <limit name="max_replies_per_connection">50000</limit>
</busconfig>
"""
CONFIGURATION_FILE = "bus.conf"


def write_bus_configuration(socket_path: Path) -> Path:
    """The private bus's configuration, for this user, beside its socket in <runtime>."""
    path = socket_path.with_name(CONFIGURATION_FILE)
    try:
        address = xml_escape(unix_address(socket_path))  # (escaped already: no <, &)
        text = BUS_CONFIGURATION.format(address=address, uid=os.getuid())
        durable_write(path, text.encode())
    except DurableWriteError as e:
        raise PrivateBusError(f"cannot write the private bus's configuration: {e}") from None
    return path


def start_private_bus(socket_path: Path) -> "subprocess.Popen[bytes]":
    """Start a real dbus-daemon listening on `socket_path`, with mux's own configuration
    (BUS_CONFIGURATION); returns once it accepts."""
    daemon = shutil.which("dbus-daemon")
    if daemon is None:
        raise PrivateBusError(
            "there is no session bus and dbus-daemon is not installed; "
            "install it (Debian: apt-get install dbus-daemon) or set DBUS_SESSION_BUS_ADDRESS"
        )
    # A stale socket from a muxd that died.
    socket_path.unlink(missing_ok=True)
    configuration = write_bus_configuration(socket_path)
    env = without_service_variables(os.environ)
    read_fd, write_fd = os.pipe()
    process = subprocess.Popen(
        [
            daemon,
            f"--config-file={configuration}",
            "--nofork",
            "--nopidfile",
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
    # Its command line names its configuration in <runtime> (a daemon of an older muxd,
    # started with --session, names the socket itself).
    ours = (socket_path.with_name(CONFIGURATION_FILE), socket_path)
    if b"dbus-daemon" not in cmdline or not any(os.fsencode(p) in cmdline for p in ours):
        return None
    return ForeignProcess.adopt(peer.pid, proctree.start_ticks(peer.pid))
