"""Graceful upgrade (docs/dbus-api.md#snapshots-and-upgrades): muxd re-executes in place;
panes never notice."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from dbus_fast import Variant

from muxctl.errors import RemoteError
from tests.harness import BusMonitor, Service, pid_alive, wait_for


def _fds(pid: int) -> list[str]:
    links = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            links.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except FileNotFoundError:
            continue  # closed between the listing and the look (a snapshot write, say)
    return links


def test_upgrade_keeps_panes_ids_token_and_pid(private_service: Service) -> None:
    svc = private_service
    assert svc.process is not None
    muxd = svc.process.pid
    bus_pid = int(Path(f"/proc/{muxd}/task/{muxd}/children").read_text().split()[0])
    reader = svc.spawn(["sh", "-c", "echo ready; read line; echo got:$line; exec sleep 600"])
    svc.wait_screen(reader, "ready")
    exited = svc.spawn(["sh", "-c", "printf 'colour: \\033[31mred\\033[0m'; exit 4"])
    svc.wait_exited(exited)
    (_, token, _) = svc.call(
        "Spawn",
        "a{sv}",
        [{"argv": Variant("as", ["sleep", "600"]), "bind_instance": Variant("b", True)}],
    )
    sleeper = {"argv": Variant("as", ["sleep", "600"])}
    beside = svc.call("SplitPane", "tsda{sv}", [reader, "horizontal", 0.3, sleeper])[0]
    svc.call("SetWindow", "ta{sv}", [svc.panes()[reader]["window"], {"title": Variant("s", "w")}])
    svc.call(
        "SetWindow",
        "ta{sv}",
        [svc.panes()[beside]["window"], {"focused_pane": Variant("t", reader)}],
    )
    before = svc.panes()
    (windows_before,) = svc.call("ListWindows")
    screen_before = svc.screen(exited)

    out = svc.muxctl("upgrade", check=True).stdout
    assert f"(pid {muxd})" in out
    assert svc.process.poll() is None, "the same process goes on"

    after = svc.panes()
    assert after == before, (
        "every pane, with pid, state and exit status, is still there",
        svc.log()[-2000:],
    )
    assert svc.screen(exited) == screen_before
    assert svc.call("ListWindows")[0] == windows_before, "windows: layout, focus, title"
    svc.call("SendInput", "tay", [reader, b"after-upgrade\r"])
    svc.wait_screen(reader, "got:after-upgrade")
    assert pid_alive(int(after[reader]["pid"]))
    (new_id, new_token, _) = svc.call(
        "Spawn", "a{sv}", [{"argv": Variant("as", ["true"]), "bind_instance": Variant("b", True)}]
    )
    assert new_id == max(before) + 1, "ids continue upward"
    assert bytes(new_token) == bytes(token), "the instance token survives"
    assert pid_alive(bus_pid), "the private bus is the same dbus-daemon"
    assert not [fd for fd in _fds(muxd) if "mux-handover" in fd], "the handover memfd is closed"
    assert "resumed after an upgrade" in svc.log()


def test_upgrade_twice_and_exits_during_it(private_service: Service) -> None:
    svc = private_service
    pane = svc.spawn(["sh", "-c", "read line; exit 9"])
    svc.muxctl("upgrade", check=True)
    svc.call("SendInput", "tay", [pane, b"x\r"])
    assert svc.wait_exited(pane)["exit_status"] == 9, "an exit after the upgrade is seen"
    svc.muxctl("upgrade", check=True)
    assert svc.panes()[pane]["exit_status"] == 9


def test_a_refused_upgrade_leaves_mux_serving(private_service: Service) -> None:
    """The new program is checked before anything is torn down: a configuration that
    no longer loads refuses the upgrade, with the reason, and nothing changes."""
    svc = private_service
    pane = svc.spawn(["sleep", "600"])
    config = svc.config_home / "mux" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text("scrollback_bytes = 'lots'\n")
    with pytest.raises(RemoteError) as refused:
        svc.call("Upgrade")
    assert refused.value.name == "Unavailable"
    assert "configuration no longer loads" in refused.value.message
    assert str(config) not in refused.value.message, "no private path in a message"
    assert svc.panes()[pane]["state"] == "running"
    result = svc.muxctl("upgrade")
    assert result.returncode == 1 and "upgrade refused" in result.stderr
    config.unlink()
    svc.muxctl("upgrade", check=True)  # and it works once the cause is gone
    assert svc.panes()[pane]["state"] == "running"


def test_a_cold_restart_replaces_the_id_space(tmp_root: Path) -> None:
    # Without restore: a restored pane would take id 1 of the new space itself.
    svc = Service(tmp_root, bus_address=None, config="restore = false\n").start()
    try:
        first, token, _ = svc.call(
            "Spawn",
            "a{sv}",
            [{"argv": Variant("as", ["true"]), "bind_instance": Variant("b", True)}],
        )
        assert svc.stop() == 0
        svc.start()
        again, new_token, _ = svc.call(
            "Spawn",
            "a{sv}",
            [{"argv": Variant("as", ["true"]), "bind_instance": Variant("b", True)}],
        )
        assert first == again == 1, "a new id space starts at 1"
        assert bytes(new_token) != bytes(token)
    finally:
        svc.stop()


def test_upgrade_of_nothing(tmp_root: Path) -> None:
    svc = Service(tmp_root, bus_address=None)
    result = svc.muxctl("upgrade")
    assert result.returncode == 1 and "nothing to upgrade" in result.stderr
    wait_for(lambda: not (svc.runtime / "bus").exists(), what="nothing to be started")


def test_upgrade_from_an_independent_client(private_service: Service) -> None:
    svc = private_service
    pane = svc.spawn(["sleep", "600"])
    assert svc.gdbus_call("org.mux.Mux1.Manager.Upgrade").stdout.strip() == "()"
    wait_for(lambda: svc.log().count("resumed after an upgrade") == 1, what="the new muxd")
    wait_for(lambda: _answers(svc), what="mux to answer again")
    assert svc.panes()[pane]["state"] == "running"


def _answers(svc: Service) -> bool:
    try:
        svc.panes()
    except Exception:
        return False
    return True


def test_exits_around_an_upgrade_are_all_reported(private_service: Service) -> None:
    """Programs that end before, during (the exec gap) and after an upgrade: each exit
    reaches clients as PaneExited, whichever muxd saw it."""
    svc = private_service
    delays = [0.1 * n for n in range(1, 16)]  # spread over the ~1.5 s an upgrade takes
    with BusMonitor(svc.bus_address) as monitor:
        panes = {
            svc.spawn(["sh", "-c", f"sleep {delay:.1f}; exit {n + 1}"]): n + 1
            for n, delay in enumerate(delays)
        }
        svc.muxctl("upgrade", check=True)
        for pane in panes:
            monitor.wait_signal("PaneExited", lambda m, pane=pane: m.body[0] == pane, timeout=20)
        reported = {m.body[0]: m.body[1] for m in monitor.signals("PaneExited")}
    assert {pane: reported[pane] for pane in panes} == panes
    assert all(svc.panes()[pane]["exit_status"] == status for pane, status in panes.items())
