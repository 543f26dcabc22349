"""Fixtures shared by every test: a real dbus-daemon per session, a real muxd per test."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.harness import DBusDaemon, Service, temp_root
from tests.outer_tmux import OuterTmux
from tests.secret_service import PrivateSessionBus

# No timing asserted in tests: hypothesis's per-example deadline is one (a busy CI machine
# made a 2 ms example take 270 ms and fail as "flaky").
settings.register_profile("mux", deadline=None)
settings.load_profile("mux")


def pytest_report_header() -> list[str]:
    tools = ["dbus-daemon", "busctl", "gdbus", "tmux", "bash", "zsh", "fish", "nu", "setpriv"]
    return [f"{tool}: {shutil.which(tool) or 'MISSING'}" for tool in tools]


@pytest.fixture(scope="session")
def dbus_daemon() -> Iterator[DBusDaemon]:
    if shutil.which("dbus-daemon") is None:
        pytest.fail("dbus-daemon is not installed; the test command installs it (apt-get)")
    with temp_root() as root:
        daemon = DBusDaemon(root)
        yield daemon
        daemon.stop()


@pytest.fixture
def tmp_root() -> Iterator[Path]:
    with temp_root() as root:
        yield root


@pytest.fixture
def service(dbus_daemon: DBusDaemon, tmp_root: Path) -> Iterator[Service]:
    """A running muxd on the shared test bus (one at a time owns org.mux.Mux1)."""
    svc = Service(tmp_root, bus_address=dbus_daemon.address).start()
    yield svc
    svc.stop()


@pytest.fixture
def private_service(tmp_root: Path) -> Iterator[Service]:
    """A running muxd with no session bus: it starts its own at <runtime>/bus."""
    svc = Service(tmp_root, bus_address=None).start()
    yield svc
    svc.stop()


@pytest.fixture
def sampling_service(dbus_daemon: DBusDaemon, tmp_root: Path) -> Iterator[Service]:
    """A muxd reading panes' working directories from /proc every 0.2 s."""
    svc = Service(tmp_root, bus_address=dbus_daemon.address, config="cwd_sample_seconds = 0.2\n")
    svc.start()
    yield svc
    svc.stop()


@pytest.fixture
def make_service(dbus_daemon: DBusDaemon, tmp_root: Path) -> Iterator[Callable[..., Service]]:
    """A muxd with a configuration file and extra environment, on the shared test bus."""
    started: list[Service] = []

    def make(config: str | None = None, extra_env: dict[str, str] | None = None) -> Service:
        svc = Service(
            tmp_root, bus_address=dbus_daemon.address, config=config, extra_env=extra_env
        ).start()
        started.append(svc)
        return svc

    yield make
    for svc in started:
        svc.stop()


@pytest.fixture
def keyring_bus(tmp_path: Path) -> Iterator[PrivateSessionBus]:
    """A session bus that activates nothing, for a Secret Service (tests.secret_service)."""
    bus = PrivateSessionBus(tmp_path / "bus")
    try:
        yield bus
    finally:
        bus.stop()


@pytest.fixture
def outer(service: Service, tmp_root: Path) -> Iterator[OuterTmux]:
    """A real tmux playing the user's terminal, for `muxctl attach` (tests/outer_tmux.py)."""
    terminal = OuterTmux(tmp_root, service)
    yield terminal
    terminal.kill()
