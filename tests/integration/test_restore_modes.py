"""Restore a person can choose (issue #31, SPEC §13): panes keep their ids across a cold
restart; `restore = "ask"` holds every pane until it is started (Start, Enter) or
dismissed (Kill, Ctrl-D); `"lazy"` starts a pane when it is first attached to or sent
input; `restore_ask_programs` makes some programs wait even in "always"; whether a
shell's command is typed again is decided with the settings of the restart."""

from __future__ import annotations

from pathlib import Path

from mux.protocol import attach as proto
from tests.attach_client import ProtocolClient
from tests.harness import Service, pid_alive, wait_for


def _restart(svc: Service, config: str) -> None:
    assert svc.stop() == 0, svc.log()[-3000:]
    (svc.config_home / "mux" / "config.toml").write_text(config)
    svc.start()


def _sleepers(svc: Service, count: int) -> list[int]:
    return [svc.spawn(["sleep", str(700 + n)]) for n in range(count)]


def test_a_restored_pane_keeps_its_id_and_new_ids_start_above(tmp_root: Path) -> None:
    svc = Service(tmp_root, bus_address=None, config="kill_grace_seconds = 0.5\n").start()
    try:
        panes = _sleepers(svc, 4)
        svc.call("Kill", "t", [panes[0]])  # a gap: 2, 3, 4 stay
        (old_instance,) = svc.busctl(
            "get-property",
            "org.mux.Mux1",
            "/org/mux/Mux1",
            "org.mux.Mux1.Manager",
            "Instance",
            check=False,
        ).stdout.split()[-1:] or [""]
        before = {pane: info["argv"] for pane, info in svc.panes().items()}
        _restart(svc, "kill_grace_seconds = 0.5\n")
        after = svc.panes()
        assert {pane: info["argv"] for pane, info in after.items()} == before
        assert all(info["state"] == "running" for info in after.values())
        new = svc.spawn(["sleep", "799"])
        assert new > max(before), "new ids start above every restored one"
        windows = {info["window"] for info in after.values()}
        assert svc.panes()[new]["window"] not in windows, "and new windows too"
        del old_instance
    finally:
        svc.stop()


def test_ask_holds_every_pane_until_started_or_dismissed(tmp_root: Path) -> None:
    svc = Service(tmp_root, bus_address=None, config="kill_grace_seconds = 0.5\n").start()
    try:
        first, second, third = _sleepers(svc, 3)
        _restart(svc, 'kill_grace_seconds = 0.5\nrestore = "ask"\n')
        panes = svc.panes()
        assert {p: (i["state"], i["pid"]) for p, i in panes.items()} == {
            first: ("held", 0),
            second: ("held", 0),
            third: ("held", 0),
        }
        screen = svc.wait_screen(first, "press Enter to start it")
        assert "waiting to start: sleep 700" in screen
        # Start through an independent client.
        start = ("call", "org.mux.Mux1", "/org/mux/Mux1", "org.mux.Mux1.Manager", "Start", "t")
        svc.busctl(*start, str(first))
        started = svc.panes()[first]
        assert started["state"] == "running" and pid_alive(started["pid"])
        assert (started["argv"], started["id"]) == (["sleep", "700"], first)
        # Start of a pane that does not wait is refused, naming it.
        refused = svc.busctl(*start, str(first), check=False)
        assert refused.returncode != 0 and f"pane {first} is not waiting" in refused.stderr
        # Kill dismisses a held pane: nothing ran.
        svc.call("Kill", "t", [second])
        assert second not in svc.panes()
        # Enter typed in an attached held pane starts it.
        client = ProtocolClient.connect(svc.runtime / "mux.sock")
        try:
            client.attach(third)
            client.send(proto.Input(b"\r"))
            wait_for(lambda: svc.panes()[third]["state"] == "running", what="Enter to start it")
        finally:
            client.sock.close()
        # Held panes are saved as they were: a restart with "always" brings back the
        # started ones, not the dismissed one.
        _restart(svc, "kill_grace_seconds = 0.5\n")
        assert sorted(svc.panes()) == [first, third]
    finally:
        svc.stop()


def test_ctrl_d_in_an_attached_held_pane_dismisses_it(tmp_root: Path) -> None:
    svc = Service(tmp_root, bus_address=None, config="kill_grace_seconds = 0.5\n").start()
    try:
        (pane,) = _sleepers(svc, 1)
        _restart(svc, 'restore = "ask"\n')
        client = ProtocolClient.connect(svc.runtime / "mux.sock")
        try:
            client.attach(pane)
            client.send(proto.Input(b"x\x04"))
            wait_for(lambda: pane not in svc.panes(), what="Ctrl-D to dismiss the pane")
        finally:
            client.sock.close()
    finally:
        svc.stop()


def test_lazy_starts_a_pane_when_attached_or_sent_input(tmp_root: Path) -> None:
    svc = Service(tmp_root, bus_address=None, config="kill_grace_seconds = 0.5\n").start()
    try:
        shell_pane = svc.spawn(["sh", "-c", "read line; echo got:$line; sleep 600"])
        attached = svc.spawn(["sleep", "701"])
        untouched = svc.spawn(["sleep", "702"])
        _restart(svc, 'restore = "lazy"\n')
        assert {i["state"] for i in svc.panes().values()} == {"held"}
        assert "starts when you attach to it" in svc.screen_text(untouched)
        # Input starts it, and goes to the program.
        svc.call("SendInput", "tay", [shell_pane, b"hello\r"])
        svc.wait_screen(shell_pane, "got:hello")
        # Attaching starts it.
        client = ProtocolClient.connect(svc.runtime / "mux.sock")
        try:
            client.attach(attached)
            wait_for(lambda: svc.panes()[attached]["state"] == "running", what="attach to start")
        finally:
            client.sock.close()
        assert svc.panes()[untouched]["state"] == "held", "nobody used it"
    finally:
        svc.stop()


def test_restore_ask_programs_wait_even_when_the_rest_starts(tmp_root: Path) -> None:
    svc = Service(tmp_root, bus_address=None, config="kill_grace_seconds = 0.5\n").start()
    try:
        sleeper = svc.spawn(["sleep", "703"])
        waiting = svc.spawn(["tail", "-f", "/dev/null"])
        _restart(svc, 'restore_ask_programs = ["tail"]\n')
        states = {p: i["state"] for p, i in svc.panes().items()}
        assert states == {sleeper: "running", waiting: "held"}
        assert "press Enter to start it" in svc.screen_text(waiting)
    finally:
        svc.stop()


def test_a_held_pane_is_still_held_after_an_upgrade(tmp_root: Path) -> None:
    """An upgrade hands a held pane over through the snapshot: the same id, its old
    contents, still waiting (even though the configuration says "always" now: the
    person has not decided yet), and Start starts it afterwards."""
    svc = Service(tmp_root, bus_address=None, config="kill_grace_seconds = 0.5\n").start()
    try:
        held = svc.spawn(["sh", "-c", "echo before-the-upgrade; exec sleep 701"])
        svc.wait_screen(held, "before-the-upgrade")
        (running,) = _sleepers(svc, 1)
        _restart(svc, 'restore = "ask"\nkill_grace_seconds = 0.5\n')
        svc.call("Start", "t", [running])
        pid = svc.panes()[running]["pid"]
        (svc.config_home / "mux" / "config.toml").write_text('restore = "always"\n')
        svc.muxctl("upgrade", check=True)
        wait_for(lambda: "resumed after an upgrade" in svc.log(), what="the new muxd")
        panes = svc.panes()
        assert panes[held]["state"] == "held" and panes[held]["pid"] == 0
        assert (panes[running]["state"], panes[running]["pid"]) == ("running", pid)
        screen = svc.wait_screen(held, "press Enter to start it")
        assert "before-the-upgrade" in svc.muxctl("capture", "--history", str(held)).stdout
        assert "waiting to start" in screen
        svc.call("Start", "t", [held])
        assert svc.panes()[held]["state"] == "running"
        assert "before-the-upgrade" in svc.muxctl("capture", "--history", str(held)).stdout
    finally:
        svc.stop()


def test_what_a_held_pane_says_of_its_saved_program_is_escaped(tmp_root: Path) -> None:
    """The argv comes from a saved file (and first from a client): written into the pane
    as text, its controls are shown (SPEC §12), never obeyed by the terminal."""
    svc = Service(tmp_root, bus_address=None, config="kill_grace_seconds = 0.5\n").start()
    try:
        pane = svc.spawn(["sh", "-c", "exec sleep 900", "\x1b]2;pwned\x07"])
        _restart(svc, 'restore = "ask"\n')
        screen = svc.wait_screen(pane, "waiting to start")
        assert "\\x1b]2;pwned\\x07" in screen, screen
        assert svc.panes()[pane]["title"] != "pwned"
    finally:
        svc.stop()
