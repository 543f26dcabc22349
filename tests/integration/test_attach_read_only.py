"""`muxctl attach --read-only` in a real terminal (a tmux window plays the user's), and
`ListClients` read with busctl (issue #32, SPEC §14): a watcher sees everything, its
keys change nothing, its terminal never sizes the pane, and it starts no held pane."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

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
    assert (service.panes()[pane]["rows"], service.panes()[pane]["cols"]) == (30, 100)

    outer.type_line(watcher, "echo from-the-watcher-$((6*7))")
    outer.type_line(writer, "echo from-the-writer-$((6*7))")
    shown = outer.wait_shown(watcher, "from-the-writer-42")  # the watcher sees it
    assert "from-the-watcher" not in shown and "from-the-watcher" not in service.screen_text(pane)
    outer.resize(watcher, 15, 50)
    wait_for(lambda: list_clients(service, pane)[1]["rows"] == 15, what="the new size listed")
    assert (service.panes()[pane]["rows"], service.panes()[pane]["cols"]) == (30, 100)

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
