"""What the service manager hears from muxd: readiness, status, stopping, watchdog.

Under systemd (NOTIFY_SOCKET set) these go out as sd_notify messages; without
a service manager every call does nothing. The watchdog is fed from a timer
on the event loop, so a loop that is stuck stops feeding it and systemd
restarts the service.

The sender is a few lines of our own rather than the sdnotify package, which
reads only os.environ, encodes as Latin-1 and hides every failure; here a
failure to notify is logged (once), never silent.
"""

import asyncio
import logging
import os
import socket
from collections.abc import Mapping

log = logging.getLogger(__name__)


class _NotifySocket:
    def __init__(self, address: str) -> None:
        # "@name" is an abstract socket (systemd.exec(5)).
        self._address = "\0" + address[1:] if address.startswith("@") else address
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        self._failed = False

    def notify(self, state: str) -> None:
        try:
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
        self._watchdog: asyncio.TimerHandle | None = None
        self._last_status = ""

    @property
    def active(self) -> bool:
        return self._notifier is not None

    def _send(self, state: str) -> None:
        if self._notifier is not None:
            self._notifier.notify(state)

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
