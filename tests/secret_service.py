"""A real Secret Service for tests: gnome-keyring-daemon on a private session bus.

The bus has no activatable services at all (its own configuration, no standard service
directories): a test that wants no Secret Service gets none, and nothing can start the
machine's own gnome-keyring with the machine's HOME. The keyring daemon gets a HOME,
XDG_DATA_HOME and XDG_RUNTIME_DIR of its own under the test's directory, so no keyring
of the machine is read or written. Every process is stopped and waited for.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import secretstorage
from jeepney.io.blocking import DBusConnection, open_dbus_connection

from tests.harness import outside_environment, wait_for

PASSWORD = b"test-login-password"
_BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <servicedir>{services}</servicedir>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


class PrivateSessionBus:
    """A dbus-daemon of session type that can activate nothing."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        services = directory / "no-services"
        services.mkdir(exist_ok=True)
        socket = directory / "bus"
        config = directory / "bus.conf"
        config.write_text(_BUS_CONFIG.format(socket=socket, services=services))
        self.address = f"unix:path={socket}"
        self.process = subprocess.Popen(
            ["dbus-daemon", f"--config-file={config}", "--nofork", "--nopidfile"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(socket.exists, what="the private bus's socket")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


class GnomeKeyring:
    """gnome-keyring-daemon (secrets only) on `bus`, its login keyring unlocked at start
    with PASSWORD (as PAM does at a graphical login), kept in `directory`."""

    def __init__(self, bus: PrivateSessionBus, directory: Path) -> None:
        self.bus = bus
        home, data, runtime = directory / "home", directory / "data", directory / "run"
        for d in (home, data, runtime):
            d.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.env = outside_environment()
        self.env.update(
            HOME=str(home),
            XDG_DATA_HOME=str(data),
            XDG_CONFIG_HOME=str(home / ".config"),
            XDG_RUNTIME_DIR=str(runtime),
            DBUS_SESSION_BUS_ADDRESS=bus.address,
        )
        self.process = subprocess.Popen(
            ["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=self.env,
        )
        assert self.process.stdin is not None
        self.process.stdin.write(PASSWORD)
        self.process.stdin.close()
        wait_for(self._login_unlocked, what="gnome-keyring's unlocked login keyring")

    def _login_unlocked(self) -> bool:
        assert self.process.poll() is None, "gnome-keyring-daemon exited"
        with self.connection() as connection:
            try:
                return not secretstorage.get_default_collection(connection).is_locked()
            except secretstorage.SecretStorageException:
                return False

    @contextlib.contextmanager
    def connection(self) -> Iterator[DBusConnection]:
        connection = open_dbus_connection(bus=self.bus.address)
        try:
            yield connection
        finally:
            connection.close()

    def lock(self) -> None:
        with self.connection() as connection:
            collection = secretstorage.Collection(connection)
            collection.lock()
            assert collection.is_locked()

    def is_locked(self) -> bool:
        with self.connection() as connection:
            return secretstorage.Collection(connection).is_locked()

    def secret_tool(
        self, *args: str, input: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        """libsecret's own client, as a second reader of what mux stored."""
        return subprocess.run(
            ["secret-tool", *args],
            check=False,  # the caller asserts on the exit code
            env=self.env,
            input=input,
            capture_output=True,
            timeout=30,
        )

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
