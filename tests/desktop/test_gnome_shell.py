"""A real GNOME Shell 43 finds a mux pane through mux's search provider
(docs/desktop.md#pane-search). Optional: runs only with MUX_TEST_GNOME_SHELL=1, and
then installs Debian's gnome-shell (about 410 MB) through scripts/ensure-system-packages
when it is missing.

The shell runs headless (Wayland, no X11, software rendering) on a private session bus
that muxd serves on, with python-dbusmock's logind on a private system bus (without
logind gnome-shell does not start). GNOME Shell reads search providers only from the
system data dirs, so a temp dir with mux's provider file and desktop entry goes first
in its XDG_DATA_DIRS. A test extension (tests/desktop/gnome_shell/extension) opens the
overview, types the query and writes what the search results view shows to a file;
dbus-monitor records the shell's calls of the provider."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.desktop.conftest import MockProcess
from tests.harness import Service, outside_environment, temp_root, wait_for

REPO = Path(__file__).resolve().parents[2]
EXTENSION = Path(__file__).resolve().parent / "gnome_shell" / "extension"
LOGIND = "org.freedesktop.login1"
UUID = "mux-search-check@mux.test"
DESKTOP_ID = "org.mux.Mux.desktop"
PROVIDER_INTERFACE = "org.gnome.Shell.SearchProvider2"
TITLE = "zebra-pane-4711"
QUERY = "zebra"
INSTALL_TIMEOUT = 900.0
SHELL_TIMEOUT = 90.0


def _require_gnome_shell() -> None:
    if os.environ.get("MUX_TEST_GNOME_SHELL") != "1":
        reason = "set MUX_TEST_GNOME_SHELL=1"
        print(f"SKIPPED gnome-shell check: {reason}")
        pytest.skip(reason)
    if shutil.which("gnome-shell") is not None:
        return
    command = [str(REPO / "scripts" / "ensure-system-packages"), "--packages", "gnome-shell"]
    print(f"installing gnome-shell: {' '.join(command)}")

    def installed() -> bool:
        # Another apt-get may hold the dpkg lock for a while: try again until it is free.
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode == 0:
            print(result.stderr, end="")  # the script names what it installs
            return True
        if "Could not get lock" in result.stderr:
            return False
        raise AssertionError(f"installing gnome-shell failed:\n{result.stderr}")

    wait_for(installed, INSTALL_TIMEOUT, what="apt-get to install gnome-shell")
    assert shutil.which("gnome-shell") is not None, "gnome-shell is still not on PATH"


def _data_dirs(root: Path) -> Path:
    """`share/` with mux's search provider and its desktop entry, as a system data dir."""
    share = root / "share"
    providers = share / "gnome-shell" / "search-providers"
    applications = share / "applications"
    providers.mkdir(parents=True)
    applications.mkdir(parents=True)
    desktop = REPO / "desktop"
    shutil.copy(desktop / "org.mux.Mux.search-provider.ini", providers)
    shutil.copy(desktop / "org.mux.Mux.desktop", applications)
    return share


def _shell_home(root: Path) -> dict[str, Path]:
    """HOME and XDG dirs for the shell, the extension installed, its GSettings in a keyfile."""
    dirs = {
        name: root / "shell" / name for name in ("home", "config", "data", "cache", "state", "run")
    }
    for path in dirs.values():
        path.mkdir(mode=0o700, parents=True)
    shutil.copytree(EXTENSION, dirs["data"] / "gnome-shell" / "extensions" / UUID)
    settings = dirs["config"] / "glib-2.0" / "settings"
    settings.mkdir(parents=True)
    # GSETTINGS_BACKEND=keyfile reads $XDG_CONFIG_HOME/glib-2.0/settings/keyfile.
    (settings / "keyfile").write_text(
        "[org/gnome/shell]\n"
        f"enabled-extensions=['{UUID}']\n"
        "disable-user-extensions=false\n"
        "welcome-dialog-last-shown-version='999'\n"
    )
    return dirs


class Process:
    """A program of the test's, in a session of its own, output to a file."""

    def __init__(self, argv: list[str], log: Path, env: dict[str, str] | None = None) -> None:
        self.log_path = log
        with open(log, "ab") as out:
            self.process = subprocess.Popen(
                argv,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>{address}</listen>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


class HermeticBus:
    """A dbus-daemon with no service directories: nothing is started by D-Bus activation.
    (The shell asks for a few services of the desktop, the accessibility bus among them;
    a standard session bus would start them with the test runner's HOME, and they would
    outlive it.)"""

    def __init__(self, directory: Path) -> None:
        directory.mkdir()
        self.address = f"unix:path={directory / 'bus'}"
        config = directory / "bus.conf"
        config.write_text(BUS_CONFIG.format(address=self.address))
        self.process = subprocess.Popen(
            [
                "dbus-daemon",
                "--nofork",
                "--nopidfile",
                f"--config-file={config}",
                "--print-address=1",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline(), "dbus-daemon did not start"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


@contextmanager
def _bus(directory: Path) -> Iterator[HermeticBus]:
    bus = HermeticBus(directory)
    try:
        yield bus
    finally:
        bus.stop()


@contextmanager
def _running(process: Process) -> Iterator[Process]:
    try:
        yield process
    finally:
        process.stop()


def _provider_call_lines(monitor: Process, muxd: str) -> list[str]:
    """dbus-monitor's lines for the calls of mux's SearchProvider2, in order. `muxd`: its
    unique name, which the shell's GDBusProxy sends to rather than org.mux.Mux1."""
    destination = f"(?:org\\.mux\\.Mux1|{re.escape(muxd)})"
    return re.findall(
        rf"^method call .* destination={destination} serial=\d+ "
        rf"path=/org/mux/Mux1/SearchProvider; interface={re.escape(PROVIDER_INTERFACE)}; "
        r"member=\w+$",
        monitor.log(),
        re.MULTILINE,
    )


def _provider_calls(monitor: Process, muxd: str) -> list[str]:
    """The members of mux's SearchProvider2 called on the bus, in order."""
    return [line.rsplit("member=", 1)[1] for line in _provider_call_lines(monitor, muxd)]


def test_gnome_shell_shows_a_pane_from_the_search_provider() -> None:
    _require_gnome_shell()
    started = time.monotonic()
    with temp_root() as root, ExitStack() as stack:
        system = stack.enter_context(_bus(root / "system-bus"))
        logind = MockProcess(
            system.address, "logind", LOGIND, "/org/freedesktop/login1", system=True
        )
        stack.callback(logind.stop)
        session = stack.enter_context(_bus(root / "session-bus"))

        monitor = stack.enter_context(
            _running(
                Process(
                    [
                        "dbus-monitor",
                        "--address",
                        session.address,
                        f"interface='{PROVIDER_INTERFACE}'",
                    ],
                    root / "dbus-monitor.log",
                )
            )
        )
        # dbus-monitor prints the NameLost of its own connection once it is a monitor.
        wait_for(lambda: "member=NameLost" in monitor.log(), what="dbus-monitor to listen")

        (root / "mux").mkdir()
        service = Service(
            root / "mux",
            bus_address=session.address,
            extra_env={"DBUS_SYSTEM_BUS_ADDRESS": system.address},
        )
        stack.callback(service.stop)
        service.start()
        pane = service.spawn(["sleep", "600"], title=TITLE)
        owner = service.busctl(
            "call",
            "org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus",
            "GetNameOwner",
            "s",
            "org.mux.Mux1",
        ).stdout
        muxd = json.loads(owner.split(maxsplit=1)[1])  # busctl prints: s ":1.3"
        expected = f"Pane {pane}: {TITLE}"

        share = _data_dirs(root)
        dirs = _shell_home(root)
        report = root / "shell-report.json"
        env = {
            k: v
            for k, v in outside_environment().items()
            if k not in ("DISPLAY", "WAYLAND_DISPLAY")
        }
        env.update(
            HOME=str(dirs["home"]),
            XDG_CONFIG_HOME=str(dirs["config"]),
            XDG_DATA_HOME=str(dirs["data"]),
            XDG_CACHE_HOME=str(dirs["cache"]),
            XDG_STATE_HOME=str(dirs["state"]),
            XDG_RUNTIME_DIR=str(dirs["run"]),
            XDG_DATA_DIRS=f"{share}:/usr/local/share:/usr/share",
            DBUS_SESSION_BUS_ADDRESS=session.address,
            DBUS_SYSTEM_BUS_ADDRESS=system.address,
            GSETTINGS_BACKEND="keyfile",
            LIBGL_ALWAYS_SOFTWARE="1",
            MUX_CHECK_REPORT=str(report),
            MUX_CHECK_QUERY=QUERY,
            MUX_CHECK_DESKTOP_ID=DESKTOP_ID,
        )
        shell = stack.enter_context(
            _running(
                Process(
                    [
                        "gnome-shell",
                        "--headless",
                        "--wayland",
                        "--no-x11",
                        "--virtual-monitor",
                        "1280x800",
                    ],
                    root / "gnome-shell.log",
                    env,
                )
            )
        )

        def shown() -> dict[str, Any]:
            if shell.process.poll() is not None:
                raise AssertionError(
                    f"gnome-shell exited with {shell.process.returncode}:\n{shell.log()[-4000:]}"
                )
            try:
                seen: dict[str, Any] = json.loads(report.read_text())
            except (FileNotFoundError, json.JSONDecodeError):
                return {}
            if "error" in seen:
                raise AssertionError(f"the extension failed: {seen['error']}")
            return seen if seen.get("found") else {}

        try:
            seen = wait_for(shown, SHELL_TIMEOUT, what="the shell to show mux's result")
        except AssertionError as e:
            last = report.read_text() if report.exists() else "(no report)"
            raise AssertionError(
                f"{e}\nlast report: {last}\nprovider calls: {_provider_calls(monitor, muxd)}\n"
                f"gnome-shell's log ends:\n{shell.log()[-4000:]}"
            ) from None

        def recorded() -> list[str]:
            # dbus-monitor saw the calls when muxd did; it may not have written them out yet.
            calls = _provider_calls(monitor, muxd)
            return calls if {"GetInitialResultSet", "GetResultMetas"} <= set(calls) else []

        calls = wait_for(recorded, what="dbus-monitor to record the provider's calls")
        for line in _provider_call_lines(monitor, muxd):
            print(f"dbus-monitor: {line}")
        (mux,) = [p for p in seen["providers"] if p["id"] == DESKTOP_ID]
        print(f"shell showed: {json.dumps(mux)}")
        for line in shell.log().splitlines():
            if "mux-search-check" in line:
                print(f"gnome-shell: {line}")
        assert calls[0] == "GetInitialResultSet", calls
        assert mux["remote"] and mux["visible"]
        assert [r["name"] for r in mux["results"]] == [expected], mux
        assert mux["results"][0]["id"] == str(pane)
        print(f"gnome-shell check took {time.monotonic() - started:.1f}s")
