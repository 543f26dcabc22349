"""A real `systemd --user` per test, in a private mount namespace (DESIGN.md).

/run/systemd is replaced by a tmpfs inside the namespace so that systemd
believes it runs on a systemd machine; everything else (the runtime dir, the
user's config) is ordinary temp directories that tests reach from outside.
systemctl must run inside the namespace (it checks /run/systemd/system), so
it goes through nsenter. Where this cannot work (not root, no unshare) the
tests skip and say why.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import outside_environment, temp_root, wait_for

SYSTEMD = "/usr/lib/systemd/systemd"


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "a private mount namespace for systemd --user needs root"
    for tool in ("unshare", "nsenter", "systemctl", "busctl"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    if not os.path.exists(SYSTEMD):
        return f"{SYSTEMD} is not installed"
    return None


class UserSystemd:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.runtime = root / "run"
        for d in (self.home, self.runtime):
            d.mkdir(mode=0o700)
        env = outside_environment()
        env.update(
            HOME=str(self.home),
            XDG_RUNTIME_DIR=str(self.runtime),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_DATA_HOME=str(self.home / ".local" / "share"),
            XDG_STATE_HOME=str(self.home / ".local" / "state"),
            PYTHONUNBUFFERED="1",
        )
        self.env = env
        self.log = open(root / "systemd.log", "wb")  # noqa: SIM115
        script = (
            "mount -t tmpfs tmpfs /run/systemd && mkdir -p /run/systemd/system "
            f"&& exec {SYSTEMD} --user"
        )
        # unshare and sh exec in place: the pid is systemd's.
        self.process = subprocess.Popen(
            ["unshare", "-m", "--propagation", "private", "sh", "-c", script],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        private = self.runtime / "systemd" / "private"
        wait_for(
            lambda: private.is_socket() or self.process.poll() is not None,
            what="systemd --user to start",
        )
        if self.process.poll() is not None:
            raise AssertionError(f"systemd --user exited: {self.journal()}")
        self.bus_address = f"unix:path={self.runtime / 'bus'}"

    def journal(self) -> str:
        self.log.flush()
        return (self.root / "systemd.log").read_text(errors="replace")

    def systemctl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            ["nsenter", "-t", str(self.process.pid), "-m", "--", "systemctl", "--user", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"systemctl --user {' '.join(args)}: {result.stderr}\n{self.journal()[-3000:]}"
            )
        return result

    def show(self, unit: str, prop: str) -> str:
        return self.systemctl("show", "-p", prop, "--value", unit).stdout.strip()

    def muxctl(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "muxctl", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def busctl(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["busctl", f"--address={self.bus_address}", "--", *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def verify(self, *units: Path) -> None:
        """systemd-analyze --user verify, as a packager or a careful user would run it."""
        result = subprocess.run(
            ["systemd-analyze", "--user", "verify", *map(str, units)],
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stderr

    def main_pid(self) -> int:
        return int(self.show("mux.service", "MainPID") or 0)

    def wait_state(self, unit: str, state: str, timeout: float = 30) -> None:
        wait_for(
            lambda: self.show(unit, "ActiveState") == state, timeout, what=f"{unit} to be {state}"
        )

    def stop(self) -> None:
        if self.process.poll() is None:
            # SIGTERM, not SIGKILL: SIGKILL would orphan the units it started.
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.close()


@pytest.fixture
def user_systemd() -> Iterator[UserSystemd]:
    reason = _why_not()
    if reason is not None:
        print(f"SKIPPED systemd tests: {reason}")
        pytest.skip(reason)
    with temp_root() as root:
        manager = UserSystemd(root)
        try:
            yield manager
        finally:
            manager.stop()
