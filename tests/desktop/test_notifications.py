"""Desktop notifications from panes nobody is looking at (docs/desktop.md#notifications),
received by python-dbusmock's notification daemon on a bus of the test's own."""

from __future__ import annotations

from pathlib import Path

from tests.attach_client import ProtocolClient
from tests.desktop.conftest import CONFIG, NotificationBus, notifying_service
from tests.harness import Service, wait_for


def printing(text: str) -> list[str]:
    """A program that prints `text` (escapes as printf knows them), then waits."""
    return ["sh", "-c", f"printf '{text}'; exec sleep 600"]


def wait_notifications(bus: NotificationBus, count: int) -> list[dict[str, object]]:
    return wait_for(
        lambda: (found := bus.notifications()) and len(found) >= count and found,
        what=f"{count} notification(s)",
    )


def test_osc_notifications_from_a_detached_pane(
    notified: tuple[Service, Path], notification_bus: NotificationBus
) -> None:
    service, _ = notified
    nine = service.spawn(printing(r"\033]9;build done\007"), title="nine")
    (first,) = wait_notifications(notification_bus, 1)
    assert first["app"] == "mux" and first["summary"] == "nine"
    assert first["body"] == f"build done\npane {nine}: nine"
    assert first["actions"] == ["default", "Open"]
    assert first["hints"] == {"desktop-entry": "org.mux.Mux"}
    service.spawn(printing(r"\033]777;notify;Tests;all <b>green</b>\033\\"))
    service.spawn(printing(r"\033]99;;kitty says hi\007"))
    found = wait_notifications(notification_bus, 3)
    assert found[1]["summary"] == "Tests"
    assert found[1]["body"].startswith("all &lt;b&gt;green&lt;/b&gt;\n"), "markup escaped"
    assert found[2]["summary"] == "kitty says hi"


def test_a_finished_command_is_notified_and_its_action_opens_a_terminal(
    notified: tuple[Service, Path], notification_bus: NotificationBus
) -> None:
    service, record = notified
    pane = service.spawn(shell="bash", title="builder", env={"PS1": "mux$ "})
    wait_for(lambda: service.panes()[pane]["shell_state"] == "prompt", what="the first prompt")
    service.call("SendInput", "tay", [pane, b"sleep 0.1; true\r"])  # too short: nothing
    service.call("SendInput", "tay", [pane, b"sleep 1.5; (exit 3)\r"])
    (finished,) = wait_notifications(notification_bus, 1)
    assert finished["summary"] == "sleep 1.5; (exit 3): failed (status 3)"
    assert finished["body"].startswith("after 1 s, in pane")
    # The server says its default action was taken: mux opens a terminal on the pane.
    notification_bus.server.call(
        "EmitSignal",
        "sssav",
        "org.freedesktop.Notifications",
        "ActionInvoked",
        "us",
        [_variant_u(1), _variant_s("default")],
    )
    argv = wait_for(lambda: record.exists() and record.read_text().split("\n"), what="a terminal")
    assert argv[-3:] == ["attach", str(pane), ""]
    assert argv[-6:-3] == ["-P", "-m", "muxctl"]


def test_a_pane_that_notifies_in_a_loop_is_rate_limited(
    notified: tuple[Service, Path], notification_bus: NotificationBus
) -> None:
    service, _ = notified
    loop = (
        "i=0; while [ $i -lt 40 ]; do printf '\\033]9;again\\007'; i=$((i+1)); sleep 0.05; "
        "done; echo LOOPED; exec sleep 600"
    )
    pane = service.spawn(["sh", "-c", loop])
    service.wait_screen(pane, "LOOPED")
    marker = service.spawn(printing(r"\033]9;after the loop\007"))
    found = wait_notifications(notification_bus, 2)
    assert [n["body"].split("\n")[0] for n in found] == ["again", "after the loop"], found
    assert marker


def test_an_attached_pane_does_not_notify(
    notified: tuple[Service, Path], notification_bus: NotificationBus
) -> None:
    service, _ = notified
    script = "read go; printf '\\033]9;seen already\\007shown'; exec sleep 600"
    pane = service.spawn(["sh", "-c", script])
    client = ProtocolClient.connect(service.runtime / "mux.sock")
    try:
        client.attach(pane)
        service.call("SendInput", "tay", [pane, b"go\n"])
        client.wait_until(lambda: "shown" in client.output_text(), what="the output")
        service.spawn(printing(r"\033]9;detached one\007"))  # proves the server is heard
        (only,) = wait_notifications(notification_bus, 1)
        assert only["body"].startswith("detached one")
    finally:
        client.close()


def test_notifications_can_be_turned_off(tmp_path: Path, notification_bus: NotificationBus) -> None:
    service = notifying_service(tmp_path, notification_bus, CONFIG + "notifications = false\n")
    service.start()
    try:
        pane = service.spawn(printing(r"\033]9;unheard\007"))
        service.wait_screen(pane, "")
        service.call("Snapshot")  # a round trip after the output was read
        assert notification_bus.notifications() == []
    finally:
        service.stop()


def test_panes_that_could_not_be_restored_are_told_once(
    tmp_path: Path, notification_bus: NotificationBus
) -> None:
    program = tmp_path / "gone-soon"
    program.write_text("#!/bin/sh\nexec sleep 600\n")
    program.chmod(0o755)
    (tmp_path / "mux").mkdir()
    service = notifying_service(tmp_path / "mux", notification_bus)
    service.start()
    try:
        service.spawn([str(program)], title="vanishing")
        service.spawn(["sleep", "600"], title="staying")
        service.stop()
        program.unlink()
        service.start()
        (told,) = wait_notifications(notification_bus, 1)
        assert told["summary"] == "mux could not restore 1 pane"
        assert told["body"].startswith("vanishing (pane ")
        assert told["actions"] == []
    finally:
        service.stop()


def test_no_notification_server_is_one_log_line(tmp_path: Path) -> None:
    service = Service(tmp_path, bus_address=None, config=CONFIG)  # its private bus
    service.start()
    try:
        for _ in range(2):
            service.spawn(printing(r"\033]9;nobody hears\007"))
        wait_for(lambda: "no notification server" in service.log(), what="the log line")
        service.call("Snapshot")
        assert service.log().count("no notification server") == 1
    finally:
        service.stop()


def _variant_u(value: int) -> object:
    from dbus_fast import Variant

    return Variant("u", value)


def _variant_s(value: str) -> object:
    from dbus_fast import Variant

    return Variant("s", value)
