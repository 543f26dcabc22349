"""Bounded memory per pane, against a real muxd: one budget of emulator cells across all
panes (Resize over D-Bus and the attach socket, Spawn and SplitPane past it answer
Unavailable naming the budget and its setting; shrinking, and growing again within it,
are allowed), and the input backlog of a pane (max_input_backlog_bytes), whose refusals
name their setting (docs/configuration.md, docs/dbus-api.md#errors)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mux.protocol import attach as proto
from tests.attach_client import ProtocolClient
from tests.harness import (
    DBusDaemon,
    Service,
    assert_answers,
    gdbus_refused,
    refused,
    wait_for,
)

MANAGER = "org.mux.Mux1.Manager"
BUDGET = 5000  # cells: two default panes (24 x 80 = 1920 each) and a little more


BACKLOG = 65536  # bytes of input a pane may hold unread


@pytest.fixture
def budgeted(dbus_daemon: DBusDaemon, tmp_root: Path) -> Iterator[Service]:
    svc = Service(
        tmp_root,
        bus_address=dbus_daemon.address,
        extra_env={
            "MUX_EMULATOR_CELLS_BUDGET": str(BUDGET),
            "MUX_MAX_INPUT_BACKLOG_BYTES": str(BACKLOG),
        },
    ).start()
    yield svc
    svc.stop()


def assert_names_the_budget(message: str) -> None:
    assert "emulator_cells_budget" in message and "5,000" in message, message


def size(service: Service, pane: int) -> tuple[int, int]:
    entry = service.panes()[pane]
    return entry["rows"], entry["cols"]


def test_resize_and_spawn_past_the_budget_are_unavailable(budgeted: Service) -> None:
    service = budgeted
    first = service.spawn(["sleep", "600"])
    second = service.spawn(["sleep", "600"])
    # 50 x 80 + 1920 = 5920 cells: refused, through gdbus and busctl alike.
    message = gdbus_refused(service, "Unavailable", f"{MANAGER}.Resize", str(first), "50", "80")
    assert_names_the_budget(message)
    assert f"pane {first}" in message
    result = service.busctl(
        "call", "org.mux.Mux1", "/org/mux/Mux1", MANAGER, "Resize", "tqq", str(first), "1000",
        "2000", check=False,
    )  # fmt: skip
    assert result.returncode != 0 and "emulator_cells_budget" in result.stderr, result
    assert size(service, first) == (24, 80)  # nothing changed
    # Within the budget it grows; shrinking is always allowed.
    service.call("Resize", "tqq", [first, 30, 80])  # 2400 + 1920 = 4320
    assert size(service, first) == (30, 80)
    # A third default pane would make 6240 cells.
    message = gdbus_refused(service, "Unavailable", f"{MANAGER}.Spawn", "{'argv': <['true']>}")
    assert_names_the_budget(message)
    message = gdbus_refused(
        service,
        "Unavailable",
        f"{MANAGER}.SplitPane",
        str(first),
        "horizontal",
        "0.5",
        "{'argv': <['true']>}",
    )
    assert_names_the_budget(message)
    assert sorted(service.panes()) == sorted([first, second])  # a refused Spawn starts nothing
    # A small one still fits, and a pane closed gives its cells back.
    small = service.spawn(["sleep", "600"], rows=10, cols=20)  # 4320 + 200
    service.call("Kill", "t", [second])
    service.call("Resize", "tqq", [first, 50, 80])  # 4000 + 200
    assert size(service, first) == (50, 80)
    assert small in service.panes()
    assert_answers(service)


def test_an_attach_resize_past_the_budget_is_refused_and_the_connection_goes_on(
    budgeted: Service,
) -> None:
    service = budgeted
    pane = service.spawn(["sh", "-c", "echo ready; exec cat"])
    service.wait_screen(pane, "ready")
    client = ProtocolClient.connect(service.runtime / "mux.sock")
    client.attach(pane)
    client.send(proto.Resize(100, 100))
    error = client.wait_for(proto.Error)
    assert error.code == "Unavailable", error
    assert_names_the_budget(error.message)
    assert size(service, pane) == (24, 80)
    client.send(proto.Input(b"still-attached\r"))
    client.wait_until(lambda: "still-attached" in client.output_text(), "the echo")
    client.close()
    assert_answers(service)


def test_the_input_backlog_is_bounded_and_its_refusals_name_the_setting(
    budgeted: Service,
) -> None:
    from muxctl.errors import RemoteError

    service = budgeted
    # In raw mode the terminal stops taking input once its buffer is full: the rest
    # waits in muxd, up to the limit.
    pane = service.spawn(["sh", "-c", "stty raw -echo; echo raw; exec sleep 600"])
    service.wait_screen(pane, "raw")
    error = refused(service, "InvalidArgument", "SendInput", "tay", [pane, b"y" * (BACKLOG + 1)])
    assert "max_input_backlog_bytes" in error.message
    refusals: list[RemoteError] = []

    def send_until_refused() -> bool:
        try:
            service.call("SendInput", "tay", [pane, b"z" * 16384])
        except RemoteError as e:
            refusals.append(e)
            return True
        return False

    wait_for(send_until_refused, what="SendInput to be refused once the backlog is full")
    assert refusals[0].name == "Unavailable", refusals[0]
    assert "max_input_backlog_bytes" in refusals[0].message
    assert_answers(service)


def test_a_restore_past_a_lowered_budget_loses_no_pane(tmp_root: Path) -> None:
    """Panes that come back at start are never refused by the budget (they run again),
    but count: with the budget lowered below what they take, a new
    pane is refused."""
    svc = Service(tmp_root, bus_address=None).start()
    try:
        saved = {svc.spawn(["sleep", "601"]), svc.spawn(["sleep", "602"])}  # 2 x 1920 cells
        assert svc.stop() == 0, svc.log()[-3000:]
        svc.env["MUX_EMULATOR_CELLS_BUDGET"] = "2000"
        svc.start()
        panes = svc.panes()
        assert set(panes) == saved
        # Running again, not held in their places by panes with no process.
        assert {panes[pane]["state"] for pane in saved} == {"running"}, panes
        message = gdbus_refused(svc, "Unavailable", f"{MANAGER}.Spawn", "{'argv': <['true']>}")
        assert "emulator_cells_budget" in message
    finally:
        svc.stop()
