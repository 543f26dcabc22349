"""What the service manager hears from muxd: readiness, status, stopping, watchdog,
and the fds it keeps for muxd (the fd store: FDSTORE=1, FDSTOREREMOVE=1).

Under systemd (NOTIFY_SOCKET set) these go out as sd_notify messages; without
a service manager every call does nothing. The watchdog is fed from a timer
on the event loop, so a loop that is stuck stops feeding it and systemd
restarts the service.

The sender is a few lines of our own rather than the sdnotify package, which
reads only os.environ, encodes as Latin-1 and hides every failure; here a
failure to notify is logged (once), never silent.
"""

import array
import asyncio
import logging
import os
import socket
from collections.abc import Mapping, Sequence

log = logging.getLogger(__name__)


class _NotifySocket:
    def __init__(self, address: str) -> None:
        # "@name" is an abstract socket (systemd.exec(5)).
        self._address = "\0" + address[1:] if address.startswith("@") else address
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        self._failed = False

    def notify(self, state: str, fds: Sequence[int] = ()) -> None:
        try:
            if fds:
                # Not socket.send_fds: before Python 3.13 it ignores its address.
                rights = (socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))
                self._socket.sendmsg([state.encode()], [rights], 0, self._address)
            else:
                self._socket.sendto(state.encode(), self._address)
        except OSError as e:
            if not self._failed:
                self._failed = True
                log.error("cannot notify the service manager (%s): %s", state, e.strerror)


class Supervisor:
    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        address = env.get("NOTIFY_SOCKET", "")
        self._notifier = _NotifySocket(address) if address else None
        self.watchdog_interval = _watchdog_interval(env)
        # How many fds the service manager keeps for us: 0 when it keeps none.
        self.fd_store_max = _fd_store_max(env) if self._notifier is not None else 0
        self._watchdog: asyncio.TimerHandle | None = None
        self._last_status = ""

    @property
    def active(self) -> bool:
        return self._notifier is not None

    def _send(self, state: str, fds: Sequence[int] = ()) -> None:
        if self._notifier is not None:
            self._notifier.notify(state, fds)

    def ready(self, status: str | None = None) -> None:
        self._send("READY=1" + (f"\nSTATUS={status}" if status else ""))

    def reloading(self) -> None:
        self._send("RELOADING=1")

    def stopping(self) -> None:
        self._send("STOPPING=1")

    def status(self, text: str) -> None:
        if text != self._last_status:
            self._last_status = text
            self._send(f"STATUS={text}")

    def store_fds(self, name: str, fds: Sequence[int]) -> None:
        """Keep `fds` in the service manager's fd store under `name` (FDSTORE=1): a
        restarted muxd gets them back in LISTEN_FDS. Names: letters, digits, '-', '.'.
        FDPOLL=0: systemd would otherwise drop an fd that hangs up, and a terminal
        whose program ended while no muxd ran still has its pane to show."""
        self._send(f"FDSTORE=1\nFDNAME={name}\nFDPOLL=0", fds)

    def remove_fds(self, name: str) -> None:
        """Drop (and close) every fd the service manager keeps under `name`."""
        self._send(f"FDSTOREREMOVE=1\nFDNAME={name}")

    def extend_timeout(self, seconds: float) -> None:
        """Ask for more time for start-up or stop work that may take long."""
        self._send(f"EXTEND_TIMEOUT_USEC={int(seconds * 1_000_000)}")

    def start_watchdog(self, loop: asyncio.AbstractEventLoop) -> None:
        if self.watchdog_interval is None or self._notifier is None:
            return
        self.stop_watchdog()  # one chain of timers, however often it is started

        def feed() -> None:
            self._send("WATCHDOG=1")
            assert self.watchdog_interval is not None
            self._watchdog = loop.call_later(self.watchdog_interval, feed)

        feed()

    def stop_watchdog(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None


def _fd_store_max(env: Mapping[str, str]) -> int:
    """The fd store's size: systemd 254 and later say it in FDSTORE; mux.service says
    it again in MUX_FD_STORE_MAX, for the systemd versions before that (252 here)."""
    for variable in ("FDSTORE", "MUX_FD_STORE_MAX"):
        try:
            return max(0, int(env[variable]))
        except (KeyError, ValueError):
            continue
    return 0


def _watchdog_interval(env: Mapping[str, str]) -> float | None:
    """Half of WATCHDOG_USEC, if the watchdog is meant for this process."""
    try:
        usec = int(env.get("WATCHDOG_USEC", ""))
    except ValueError:
        return None
    pid = env.get("WATCHDOG_PID")
    if usec <= 0 or (pid and pid != str(os.getpid())):
        return None
    return usec / 2 / 1_000_000
