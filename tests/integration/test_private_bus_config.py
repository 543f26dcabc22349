"""mux's private bus runs with mux's own configuration (docs/paths.md#the-private-bus):
no service directories, so a call on it activates nothing; the user's uid only."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import Service, process_cmdline, wait_for

ACTIVATABLE = "org.mux.TestActivatable"
AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.fixture
def data_dir(tmp_root: Path) -> Path:
    """An XDG data directory with a D-Bus session service in it, which leaves a mark
    when something starts it."""
    data = tmp_root / "data"
    services = data / "dbus-1" / "services"
    services.mkdir(parents=True)
    (services / f"{ACTIVATABLE}.service").write_text(
        f"[D-BUS Service]\nName={ACTIVATABLE}\nExec=/usr/bin/touch {tmp_root / 'activated'}\n"
    )
    return data


@pytest.fixture
def service_with_data_dirs(tmp_root: Path, data_dir: Path) -> Iterator[Service]:
    """A muxd with no session bus (it starts its private one), whose environment names
    `data_dir` as the place of the user's data, as a desktop session would."""
    svc = Service(
        tmp_root,
        bus_address=None,
        extra_env={"XDG_DATA_DIRS": str(data_dir), "XDG_DATA_HOME": str(data_dir)},
    )
    yield svc.start()
    svc.stop()


def gdbus_error(service: Service, destination: str) -> str:
    ping = ["--object-path", "/", "--method", "org.freedesktop.DBus.Peer.Ping"]
    result = subprocess.run(
        ["gdbus", "call", "--address", service.bus_address, "--dest", destination, *ping],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode != 0, f"{destination} answered: {result.stdout}"
    return result.stderr


def test_a_session_service_is_not_activated(service_with_data_dirs: Service) -> None:
    service = service_with_data_dirs
    error = gdbus_error(service, ACTIVATABLE)
    assert "org.freedesktop.DBus.Error.ServiceUnknown" in error, error
    assert not (service.root / "activated").exists()
    if Path("/usr/share/dbus-1/services/ca.desrt.dconf.service").exists():
        error = gdbus_error(service, "ca.desrt.dconf")
        assert "org.freedesktop.DBus.Error.ServiceUnknown" in error, error
    # Nor through the bus's own StartServiceByName.
    start = service.busctl(
        *("call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus"),
        *("StartServiceByName", "su", ACTIVATABLE, "0"),
        check=False,
    )
    assert start.returncode != 0
    assert not (service.root / "activated").exists()


def test_nothing_is_activatable(private_service: Service) -> None:
    listed = private_service.busctl(
        "call",
        "org.freedesktop.DBus",
        "/org/freedesktop/DBus",
        "org.freedesktop.DBus",
        "ListActivatableNames",
    ).stdout.split()
    # `as 1 "org.freedesktop.DBus"`: the bus itself, nothing else.
    assert listed == ["as", "1", '"org.freedesktop.DBus"'], listed


def test_the_configuration_is_muxs_own_in_the_runtime_dir(private_service: Service) -> None:
    configuration = private_service.runtime / "bus.conf"
    mode = configuration.stat().st_mode
    assert stat.S_IMODE(mode) == 0o600
    text = configuration.read_text()
    assert "<auth>EXTERNAL</auth>" in text
    assert f'<allow user="{os.getuid()}"/>' in text
    for absent in ("allow_anonymous", "servicedir", "standard_session_servicedirs", "include"):
        assert absent not in text
    daemons = [process_cmdline(pid) for pid in bus_daemons(private_service)]
    assert daemons, "no private dbus-daemon runs"
    assert all(f"--config-file={configuration}" in argv for argv in daemons), daemons
    assert all("--session" not in argv for argv in daemons), daemons


def test_another_uid_cannot_connect(private_service: Service) -> None:
    """Even where the socket is reachable (a hard link in a directory open to all), the
    bus refuses a connection from another uid."""
    if os.getuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run a client as another user")
    bus = private_service.runtime / "bus"
    with tempfile.TemporaryDirectory(dir="/tmp") as shared:
        os.chmod(shared, 0o777)
        reachable = Path(shared) / "bus"
        os.link(bus, reachable)
        reachable.chmod(0o666)  # (the same inode as the bus's socket: put back below)
        try:
            ask = ["busctl", f"--address=unix:path={reachable}", "call", "org.freedesktop.DBus"]
            ask += ["/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId"]
            other = subprocess.run(
                [*AS_NOBODY, *ask], capture_output=True, text=True, timeout=30, check=False
            )
            owner = subprocess.run(ask, capture_output=True, text=True, timeout=30, check=False)
        finally:
            bus.chmod(0o600)
    assert other.returncode != 0, other.stdout
    assert owner.returncode == 0, owner.stderr  # the same socket, for the user


def bus_daemons(service: Service) -> list[int]:
    return [
        pid for pid in service.own_processes() if "dbus-daemon" in " ".join(process_cmdline(pid))
    ]


def test_a_bus_left_by_a_muxd_that_died_is_adopted(private_service: Service) -> None:
    """Its command line names mux's configuration, not the socket: still found as the
    bus a muxd of this runtime directory started, served on, and stopped at the end."""
    (daemon,) = bus_daemons(private_service)
    assert private_service.process is not None
    private_service.process.kill()
    private_service.process.wait()
    private_service.start()
    assert bus_daemons(private_service) == [daemon]
    private_service.muxctl("ls", check=True)
    private_service.stop()
    wait_for(lambda: not bus_daemons(private_service), what="the adopted bus to be stopped")
