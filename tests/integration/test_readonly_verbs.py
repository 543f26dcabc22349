"""Read-only verbs never start mux (SPEC §7, issue #31 point 4): after `muxctl stop`,
`ls`, `status`, `windows`, `capture` and `snapshots` say that mux is not running and how
to start it, exit 4, and start nothing — neither muxd, nor through D-Bus activation (a
real dbus-daemon with an activation file for org.mux.Mux1), nor the private bus when
there is no session bus. `where` still starts it (a hub relies on that)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from muxctl.errors import EXIT_NOT_RUNNING
from tests.harness import Service, name_owned, start_activating_bus, wait_for

READ_ONLY = [("ls",), ("status",), ("windows",), ("capture", "1"), ("snapshots",), ("ls", "--json")]


@dataclass
class ActivatingBus:
    """A session dbus-daemon that starts muxd when something asks for org.mux.Mux1."""

    service: Service
    daemon: subprocess.Popen[bytes]


@pytest.fixture
def activating_bus(tmp_root: Path) -> Iterator[ActivatingBus]:
    address = f"unix:path={tmp_root / 'session-bus'}"
    service = Service(tmp_root, bus_address=address)
    daemon = start_activating_bus(tmp_root / "data", address, service.env)
    try:
        yield ActivatingBus(service, daemon)
    finally:
        service.stop()
        _stop_muxds(service, keep=daemon.pid)
        daemon.terminate()
        daemon.wait(timeout=10)


def _stop_muxds(service: Service, keep: int | None = None) -> None:
    """SIGTERM every muxd of this environment, then wait until all it started is gone
    (but `keep`: the bus daemon, started with the same environment)."""
    for pid in service.background_muxd():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    wait_for(
        lambda: not [pid for pid in service.own_processes() if pid != keep],
        what="the muxd of this test and its panes to exit",
    )


def _assert_not_running(service: Service, verb: tuple[str, ...]) -> None:
    result = service.muxctl(*verb)
    where = f"muxctl {' '.join(verb)} -> {result.returncode}: {result.stderr!r}"
    assert result.returncode == EXIT_NOT_RUNNING, where
    assert "Traceback" not in result.stderr, where
    assert "mux is not running" in result.stderr, where
    assert "start it with 'systemctl --user start mux'" in result.stderr, where
    assert result.stdout == ("" if verb != ("status", "--json") else '{"active":false}\n'), where


def _stop(service: Service) -> None:
    """`muxctl stop`, as a user stops it; the saved session holds a pane to re-run."""
    assert service.process is not None
    service.muxctl("stop", check=True)
    assert service.process.wait(timeout=30) == 0


def test_read_only_verbs_do_not_activate_mux_on_a_session_bus(
    activating_bus: ActivatingBus,
) -> None:
    service = activating_bus.service
    service.start()
    pane = service.spawn(["sleep", "607"], title="build")
    _stop(service)
    assert not name_owned(service.bus_address)

    for verb in [*READ_ONLY, ("status", "--json")]:
        _assert_not_running(service, verb)
        assert not name_owned(service.bus_address), (
            f"muxctl {' '.join(verb)} had the bus activate mux"
        )
        assert service.background_muxd() == [], f"muxctl {' '.join(verb)} started muxd"
    # (--no-start with a verb that acts is "not running" too, with the same status)
    assert service.muxctl("--no-start", "spawn", "--", "true").returncode == EXIT_NOT_RUNNING
    assert service.background_muxd() == []

    # `where` starts it, here through D-Bus activation (the bus runs muxd), and the
    # session comes back: the verbs above had only kept it from starting.
    where = service.muxctl("where", check=True)
    assert f"bus: {service.bus_address}" in where.stdout
    assert name_owned(service.bus_address)
    (muxd,) = service.background_muxd()
    assert _activated(muxd), "the bus activated it (muxctl did not start it itself)"
    wait_for(lambda: service.muxctl("capture", str(pane)).returncode == 0, what="the pane")
    assert "sleep 607" in service.muxctl("ls", check=True).stdout


def test_read_only_verbs_do_not_start_the_private_bus(tmp_root: Path) -> None:
    service = Service(tmp_root, bus_address=None).start()
    try:
        service.spawn(["sleep", "608"])
        _stop(service)
        assert not (service.runtime / "bus").exists()

        for verb in [*READ_ONLY, ("status", "--json")]:
            _assert_not_running(service, verb)
            assert service.own_processes() == [], f"muxctl {' '.join(verb)} started something"
            assert not (service.runtime / "bus").exists(), "no private bus started"

        service.muxctl("where", check=True)  # starts muxd, which starts its private bus
        assert (service.runtime / "bus").is_socket()
        assert len(service.background_muxd()) == 1
        assert "sleep 608" in service.muxctl("ls", check=True).stdout
    finally:
        service.stop()
        _stop_muxds(service)


def test_a_read_only_verb_still_answers_while_mux_runs(tmp_root: Path) -> None:
    """The check costs nothing when mux runs: the verbs answer as before."""
    service = Service(tmp_root, bus_address=None).start()
    try:
        pane = service.spawn(["sleep", "609"])
        assert str(pane) in service.muxctl("ls", check=True).stdout
        assert "is running" in service.muxctl("status", check=True).stdout
        service.muxctl("windows", check=True)
        service.muxctl("capture", str(pane), check=True)
    finally:
        service.stop()


def _activated(pid: int) -> bool:
    """Whether the bus started `pid` (D-Bus activation gives it DBUS_STARTER_ADDRESS)."""
    with open(f"/proc/{pid}/environ", "rb") as f:
        return any(v.startswith(b"DBUS_STARTER_ADDRESS=") for v in f.read().split(b"\0"))
