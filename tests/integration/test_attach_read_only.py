"""`muxctl attach --read-only` in a real terminal (a tmux window plays the user's), and
`ListClients` read with busctl (issue #32, SPEC §14): a watcher sees everything, its
keys change nothing, its terminal never sizes the pane, and it starts no held pane."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from dbus_fast import Variant

from tests.harness import DEFAULT_TIMEOUT, Service, wait_for
from tests.outer_tmux import OuterTmux

BASH = ["bash", "--norc", "--noprofile", "-i"]


def list_clients(service: Service, pane: int) -> list[dict[str, object]]:
    """ListClients through busctl (an independent client), as plain values."""
    argv = ["busctl", f"--address={service.bus_address}", "--json=short", "call"]
    argv += ["org.mux.Mux1", "/org/mux/Mux1", "org.mux.Mux1.Manager", "ListClients"]
    out = subprocess.run(
        [*argv, "t", str(pane)], capture_output=True, text=True, check=True, timeout=DEFAULT_TIMEOUT
    ).stdout
    (entries,) = json.loads(out)["data"]
    return [{key: value["data"] for key, value in entry.items()} for entry in entries]


def test_a_watcher_sees_all_and_changes_nothing(service: Service, outer: OuterTmux) -> None:
    pane = service.spawn(BASH, env={"PS1": "mux$ "})
    service.wait_screen(pane, "mux$")
    writer = outer.open(outer.muxctl_line("attach", str(pane)), rows=30, cols=100)
    outer.wait_shown(writer, "mux$")
    watcher = outer.open(outer.muxctl_line("attach", "--read-only", str(pane)), rows=20, cols=60)
    outer.wait_shown(watcher, "mux$")
    wait_for(lambda: len(list_clients(service, pane)) == 2, what="two clients listed")
    first, second = list_clients(service, pane)
    assert (first["read_only"], first["rows"], first["cols"]) == (False, 30, 100)
    assert (second["read_only"], second["rows"], second["cols"]) == (True, 20, 60)
    assert first["pid"] != second["pid"] and first["uid"] == second["uid"]
    # (the writer's terminal, but its last row: the status line's)
    assert (service.panes()[pane]["rows"], service.panes()[pane]["cols"]) == (29, 100)

    outer.type_line(watcher, "echo from-the-watcher-$((6*7))")
    outer.type_line(writer, "echo from-the-writer-$((6*7))")
    shown = outer.wait_shown(watcher, "from-the-writer-42")  # the watcher sees it
    assert "from-the-watcher" not in shown and "from-the-watcher" not in service.screen_text(pane)
    outer.resize(watcher, 15, 50)
    wait_for(lambda: list_clients(service, pane)[1]["rows"] == 15, what="the new size listed")
    assert (service.panes()[pane]["rows"], service.panes()[pane]["cols"]) == (29, 100)

    outer.send_keys(watcher, "C-\\")  # the detach key works
    outer.wait_shown(watcher, "STATUS=0")
    wait_for(lambda: len(list_clients(service, pane)) == 1, what="the watcher gone")


def test_a_watcher_does_not_start_a_lazily_held_pane(tmp_root: Path) -> None:
    svc = Service(tmp_root, bus_address=None, config="kill_grace_seconds = 0.5\n").start()
    terminal = OuterTmux(tmp_root, svc)
    try:
        pane = svc.spawn(["sh", "-c", "echo before-the-restart; exec sleep 600"])
        svc.wait_screen(pane, "before-the-restart")
        assert svc.stop() == 0
        (svc.config_home / "mux" / "config.toml").write_text('restore = "lazy"\n')
        svc.start()
        watcher = terminal.open(terminal.muxctl_line("attach", "--read-only", str(pane)))
        terminal.wait_shown(watcher, "starts when you attach to it")
        assert svc.panes()[pane]["state"] == "held"
        writer = terminal.open(terminal.muxctl_line("attach", str(pane)))
        wait_for(lambda: svc.panes()[pane]["state"] == "running", what="the writer to start it")
        terminal.send_keys(writer, "C-\\")
    finally:
        terminal.kill()
        svc.stop()


def test_a_watcher_of_a_split_window_sees_every_pane_and_changes_nothing(
    service: Service, outer: OuterTmux
) -> None:
    """The window view read-only: both panes drawn at the sizes their writer gave them
    (clipped to the watcher's smaller terminal), keys and window commands go nowhere;
    zoom and the window shown are the watcher's own."""
    left = service.spawn(BASH, env={"PS1": "left$ "})
    window = int(service.panes()[left]["window"])
    options = {"argv": Variant("as", BASH), "env": Variant("a{ss}", {"PS1": "right$ "})}
    right, _, _ = service.call("SplitPane", "tsda{sv}", [left, "horizontal", 0.5, options])
    right = int(right)
    service.wait_screen(right, "right$")
    writer = outer.open(outer.muxctl_line("attach", str(left)), rows=30, cols=101)
    outer.wait_shown(writer, "right$")
    wait_for(lambda: service.panes()[left]["cols"] == 50, what="the writer's sizes")
    sizes = {p: (service.panes()[p]["rows"], service.panes()[p]["cols"]) for p in (left, right)}

    watcher = outer.open(outer.muxctl_line("attach", "--read-only", str(left)), rows=20, cols=61)
    shown = outer.wait_shown(watcher, "right$")
    assert "left$" in shown and "read-only" in shown.split("\n")[19]
    wait_for(lambda: len(list_clients(service, right)) == 2, what="the watcher on both panes")
    assert [c["read_only"] for c in list_clients(service, right)] == [False, True]

    outer.type_line(watcher, "echo from-the-watcher")
    outer.send_keys(watcher, "C-b", "%")  # a split: refused (the bell), nothing made
    outer.send_keys(watcher, "C-b", "Right")  # the focus is the writer's
    outer.type_line(writer, "echo from-the-writer-$((6*7))")
    outer.wait_shown(watcher, "from-the-writer-42")
    assert "from-the-watcher" not in service.screen_text(left)
    assert sorted(service.panes()) == [left, right]
    assert {p: (service.panes()[p]["rows"], service.panes()[p]["cols"]) for p in sizes} == sizes
    assert layout_focus(service, window) == left

    outer.send_keys(watcher, "C-b", "z")  # zoom: the watcher's own
    outer.wait_shown(watcher, "*Z")
    assert "right$" not in outer.capture(watcher)
    assert {p: (service.panes()[p]["rows"], service.panes()[p]["cols"]) for p in sizes} == sizes
    outer.send_keys(watcher, "C-b", "d")
    outer.wait_shown(watcher, "STATUS=0")
    wait_for(lambda: len(list_clients(service, right)) == 1, what="the watcher gone")


def layout_focus(service: Service, window: int) -> int:
    (entries,) = service.call("ListWindows")
    return next(int(e["focused_pane"].value) for e in entries if e["id"].value == window)
