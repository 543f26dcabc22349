"""A snapshot before suspend and shutdown (docs/desktop.md#before-suspend-and-shutdown):
python-dbusmock's logind on a private system bus hands out the inhibitor fd and emits
PrepareForSleep and PrepareForShutdown."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from dbus_fast import Variant

from tests.desktop.conftest import MockProcess
from tests.harness import DBusDaemon, Service, wait_for

LOGIND = "org.freedesktop.login1"
LOGIND_PATH = "/org/freedesktop/login1"
MANAGER = "org.freedesktop.login1.Manager"


@pytest.fixture
def logind(tmp_path: Path) -> Iterator[MockProcess]:
    directory = tmp_path / "system-bus"
    directory.mkdir()
    bus = DBusDaemon(directory)
    try:
        mock = MockProcess(bus.address, "logind", LOGIND, LOGIND_PATH, system=True)
        try:
            yield mock
        finally:
            mock.stop()
    finally:
        bus.stop()


def inhibitors(logind: MockProcess) -> list[list[object]]:
    (listed,) = logind.call("ListInhibitors", interface=MANAGER)
    return [list(entry) for entry in listed]


def emit(logind: MockProcess, member: str, going: bool) -> None:
    logind.call("EmitSignal", "sssav", MANAGER, member, "b", [Variant("b", going)])


def generation(service: Service) -> int:
    return int(
        service.busctl(
            "call", "org.mux.Mux1", "/org/mux/Mux1", "org.mux.Mux1.Manager", "Snapshot"
        ).stdout.split()[-1]
    )


def test_a_snapshot_before_sleep_then_the_inhibitor_again(
    tmp_path: Path, logind: MockProcess
) -> None:
    root = tmp_path / "mux"
    root.mkdir()
    service = Service(root, bus_address=None, extra_env={"DBUS_SYSTEM_BUS_ADDRESS": logind.address})
    service.start()
    try:
        wait_for(lambda: inhibitors(logind), what="the delay inhibitor")
        (held,) = inhibitors(logind)
        assert held[:4] == ["shutdown:sleep", "mux", "saving the terminal session first", "delay"]
        service.spawn(["sleep", "600"], title="kept")
        before = generation(service)
        emit(logind, "PrepareForSleep", True)
        try:
            wait_for(lambda: not inhibitors(logind), what="the inhibitor to be released")
        except AssertionError:
            raise AssertionError(f"{inhibitors(logind)}\n{service.log()}") from None
        saved = service.state / "mux" / "session.json"
        assert '"kept"' in saved.read_text()
        assert "taken before suspend" in service.log()
        assert generation(service) > before + 1, "a snapshot of its own before the release"
        emit(logind, "PrepareForSleep", False)
        wait_for(lambda: inhibitors(logind), what="the inhibitor again after resume")
        emit(logind, "PrepareForShutdown", True)
        wait_for(lambda: not inhibitors(logind), what="the release before shutdown")
        assert "taken before shutdown" in service.log()
    finally:
        service.stop()


def test_without_logind_mux_starts_as_ever(tmp_path: Path) -> None:
    directory = tmp_path / "empty-system-bus"
    directory.mkdir()
    bus = DBusDaemon(directory)
    try:
        service = Service(
            tmp_path, bus_address=None, extra_env={"DBUS_SYSTEM_BUS_ADDRESS": bus.address}
        )
        service.start()
        try:
            wait_for(lambda: "logind gives no inhibitor" in service.log(), what="the log line")
            assert service.log().count("no snapshot before suspend") == 1
        finally:
            service.stop()
    finally:
        bus.stop()
