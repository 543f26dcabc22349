"""Panes restored held tell the desktop once (docs/desktop.md#panes-waiting-to-start):
a real muxd restarted with `restore = "ask"` sends one notification, "N panes are
waiting", to python-dbusmock's notification daemon; its "Restore all" starts every
held pane, its "Review" opens a terminal on the first; it is withdrawn when the last
pane starts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dbus_fast import Variant

from tests.desktop.conftest import NotificationBus, notifying_service, recorder_script
from tests.desktop.test_dunst import Dunst
from tests.harness import Service, wait_for

KEPT = "kill_grace_seconds = 0.5\n"
ASK = KEPT + 'restore = "ask"\n'
PROGRAMS = (["sleep", "700"], ["cat"], ["tail", "-f", "/dev/null"])


@pytest.fixture
def session(tmp_path: Path, notification_bus: NotificationBus) -> Iterator[tuple[Service, Path]]:
    """A muxd on the notification bus with three panes, the terminal a recorder."""
    terminal, record = recorder_script(tmp_path)
    root = tmp_path / "mux"
    root.mkdir()
    service = notifying_service(root, notification_bus, KEPT, terminal=terminal).start()
    try:
        for argv in PROGRAMS:
            service.spawn(argv)
        yield service, record
    finally:
        service.stop()


def _restart(service: Service, config: str) -> None:
    assert service.stop() == 0, service.log()[-3000:]
    # (the terminal recorder's line is kept: only the restore settings change)
    path = service.config_home / "mux" / "config.toml"
    terminal = [line for line in path.read_text().splitlines() if "terminal_command" in line]
    path.write_text(config + "".join(f"{line}\n" for line in terminal))
    service.start()


def _only_notification(bus: NotificationBus) -> dict[str, Any]:
    (told,) = wait_for(bus.notifications, what="the notification")
    return told


def _invoke(bus: NotificationBus, notification_id: int, key: str) -> None:
    """The server says the user took an action (as a real server would, from its name)."""
    bus.server.call(
        "EmitSignal",
        "sssav",
        "org.freedesktop.Notifications",
        "ActionInvoked",
        "us",
        [Variant("u", notification_id), Variant("s", key)],
    )


def _states(service: Service) -> dict[int, str]:
    return {pane: info["state"] for pane, info in service.panes().items()}


def _start(service: Service, pane: int) -> None:
    service.busctl(
        "call", "org.mux.Mux1", "/org/mux/Mux1", "org.mux.Mux1.Manager", "Start", "t", str(pane)
    )


@pytest.mark.parametrize("mode", ["ask", "lazy"])
def test_one_notification_and_restore_all_starts_every_pane(
    session: tuple[Service, Path], notification_bus: NotificationBus, mode: str
) -> None:
    service, _ = session
    panes = sorted(service.panes())
    _restart(service, KEPT + f'restore = "{mode}"\n')
    assert set(_states(service).values()) == {"held"}
    told = _only_notification(notification_bus)
    assert told["app"] == "mux" and told["summary"] == "3 panes are waiting"
    assert told["body"].split("\n") == [
        f"sleep (pane {panes[0]})",
        f"cat (pane {panes[1]})",
        f"tail (pane {panes[2]})",
    ]
    labels = dict(zip(told["actions"][::2], told["actions"][1::2], strict=True))
    assert labels == {"default": "Review", "restore-all": "Restore all", "review": "Review"}
    assert told["hints"] == {"desktop-entry": "org.mux.Mux"}
    _invoke(notification_bus, 1, "restore-all")  # the mock's first notification id
    wait_for(lambda: set(_states(service).values()) == {"running"}, what="every pane to start")
    assert [info["argv"] for _, info in sorted(service.panes().items())] == list(PROGRAMS)
    service.call("Snapshot")  # a round trip: anything more would have been sent by now
    assert len(notification_bus.notifications()) == 1, "told once, not per pane"
    # The server removed it when its action was taken: nothing to withdraw.
    assert notification_bus.server.calls("CloseNotification") == []


def test_withdrawn_when_the_last_waiting_pane_starts(
    session: tuple[Service, Path], notification_bus: NotificationBus
) -> None:
    service, _ = session
    first, second, third = sorted(service.panes())
    _restart(service, ASK)
    _only_notification(notification_bus)
    _start(service, first)
    service.call("Kill", "t", [second])  # dismissed: it no longer waits either
    service.call("Snapshot")
    assert notification_bus.server.calls("CloseNotification") == [], "one pane still waits"
    _start(service, third)
    withdrawn = wait_for(
        lambda: notification_bus.server.calls("CloseNotification"), what="the withdrawal"
    )
    assert withdrawn == [[1]]
    assert _states(service) == {first: "running", third: "running"}
    assert len(notification_bus.notifications()) == 1, "not sent again for each change"


def test_review_opens_a_terminal_on_the_first_waiting_pane(
    session: tuple[Service, Path], notification_bus: NotificationBus
) -> None:
    service, record = session
    first = min(service.panes())
    _restart(service, ASK)
    _only_notification(notification_bus)
    _invoke(notification_bus, 1, "review")
    argv = wait_for(
        lambda: record.read_text().split("\n") if record.exists() else None, what="a terminal"
    )
    assert argv is not None and argv[-3:] == ["attach", str(first), ""]
    assert set(_states(service).values()) == {"held"}, "reviewing starts nothing itself"


@pytest.mark.parametrize(
    "config",
    [KEPT + 'restore = "always"\n', ASK + "notifications = false\n"],
    ids=["always", "notifications-off"],
)
def test_nothing_is_told_when_nothing_waits_or_notifications_are_off(
    session: tuple[Service, Path], notification_bus: NotificationBus, config: str
) -> None:
    service, _ = session
    _restart(service, config)
    if "notifications = false" in config:
        assert set(_states(service).values()) == {"held"}
        service.call("Snapshot")  # a round trip after the start
        assert notification_bus.notifications() == []
        return
    assert set(_states(service).values()) == {"running"}
    # A notification sent after the start arrives after any the start sent.
    service.spawn(["sh", "-c", r"printf '\033]9;after the start\007'; exec sleep 600"])
    (only,) = wait_for(notification_bus.notifications, what="the later one")
    assert only["body"].startswith("after the start")


def test_a_real_server_shows_it_then_takes_it_back(tmp_path: Path) -> None:
    """dunst under Xvfb: one notification shown; gone once the last pane started."""
    # Notifications that never expire: only the withdrawal can take it away.
    dunstrc = tmp_path / "dunst" / "config" / "dunst" / "dunstrc"
    dunstrc.parent.mkdir(parents=True)
    dunstrc.write_text("[urgency_normal]\n    timeout = 0\n")
    dunst = Dunst(tmp_path / "dunst")
    try:
        root = tmp_path / "mux"
        root.mkdir()
        service = Service(root, bus_address=dunst.bus.address, config=KEPT).start()
        try:
            panes = [service.spawn(argv) for argv in PROGRAMS]
            _restart(service, ASK)
            wait_for(lambda: dunst.shown() == 1, what="dunst to show the notification")
            for pane in panes:
                _start(service, pane)
            wait_for(lambda: dunst.shown() == 0, what="the notification to be withdrawn")
            assert set(_states(service).values()) == {"running"}
        finally:
            service.stop()
    finally:
        dunst.close()
