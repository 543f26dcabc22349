"""Snapshots (docs/dbus-api.md#snapshots-and-upgrades): on demand, continuous, final at stop,
and never a file that does not parse, whatever happens to muxd."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

from dbus_fast import Variant

from mux.state.session_file import parse_session, session_bytes
from tests.harness import BusMonitor, Service, pid_alive, wait_for


def _session_file(svc: Service) -> Path:
    return svc.state / "mux" / "session.json"


def _saved_argvs(svc: Service) -> list[list[str]]:
    try:
        session = parse_session(_session_file(svc).read_bytes())
    except FileNotFoundError:
        return []
    return [pane.argv for pane in session.panes]


def test_snapshot_on_demand_with_signal(private_service: Service) -> None:
    svc = private_service
    first = svc.spawn(["sleep", "600"], cwd="/tmp", title="one")
    svc.spawn(["sleep", "601"], window=1)  # same window as the first
    ended = svc.spawn(["true"])
    svc.wait_exited(ended)
    with BusMonitor(svc.bus_address) as monitor:
        path, generation = svc.call("Snapshot")
        saved = monitor.wait_signal("SnapshotSaved", lambda m: m.body[0] == generation)
    assert path == str(_session_file(svc))
    written = Path(path).read_bytes()
    session = parse_session(written)
    # The capture builds its models unvalidated: what it writes must be exactly what
    # the validated session writes.
    assert session_bytes(session) == written
    assert session.generation == generation == saved.body[0]
    assert [p.argv for p in session.panes] == [["sleep", "600"], ["sleep", "601"]], (
        "an exited pane is not part of the session"
    )
    pane = session.panes[0]
    assert (pane.id, pane.cwd.path, pane.cwd.source, pane.title) == (first, "/tmp", "launch", "one")
    assert pane.program is not None and pane.program.endswith("/sleep")
    assert len(session.windows) == 1 and session.windows[0].focused_pane == first + 1
    _, later = svc.call("Snapshot")
    assert later > generation, "generations only grow"
    # An independent client, and muxctl.
    out = svc.busctl(
        "call", "org.mux.Mux1", "/org/mux/Mux1", "org.mux.Mux1.Manager", "Snapshot"
    ).stdout
    assert out.startswith(f'st "{path}" ')
    result = json.loads(svc.muxctl("snapshot", "--json", check=True).stdout)
    assert result["path"] == path and result["generation"] > later
    assert "saved generation" in svc.muxctl("snapshot", check=True).stdout


def test_changes_are_saved_without_asking(private_service: Service) -> None:
    svc = private_service
    for n in range(5):
        svc.spawn(["sleep", f"60{n}"])
    wait_for(lambda: len(_saved_argvs(svc)) == 5, what="the autosave of five panes")
    svc.call("Kill", "t", [1])
    wait_for(lambda: len(_saved_argvs(svc)) == 4, what="the autosave after a kill")


def test_the_final_snapshot_holds_the_panes_the_stop_closes(private_service: Service) -> None:
    svc = private_service
    svc.spawn(["sleep", "600"])
    svc.spawn(["sleep", "601"])
    assert svc.stop() == 0
    assert _saved_argvs(svc) == [["sleep", "600"], ["sleep", "601"]]


def test_kill_9_storms_never_leave_a_bad_file(tmp_root: Path) -> None:
    """muxd killed at any moment, autosave in flight or not: the snapshot always parses,
    nothing is ever quarantined, and unfinished writes are cleaned up at the next start."""
    svc = Service(tmp_root, bus_address=None, config="kill_grace_seconds = 0.2\n")
    orphans: list[int] = []
    try:
        for round_ in range(8):
            svc.start()
            for n in range(4):
                svc.call("Spawn", "a{sv}", [{"argv": Variant("as", ["sleep", f"{900 + n}"])}])
            orphans += [int(p["pid"]) for p in svc.panes().values()]
            if round_ % 2:
                # Let an autosave start (the debounce is 0.5 s), then kill it mid-way.
                wait_for(lambda: _session_file(svc).exists(), what="a first save")
            assert svc.process is not None
            os.kill(svc.process.pid, signal.SIGKILL)
            svc.process.wait()
            if _session_file(svc).exists():
                parse_session(_session_file(svc).read_bytes())  # raises if it does not parse
        svc.start()  # a last start cleans up what the last kill left
        assert not list(_session_file(svc).parent.glob(".session.json.*.tmp"))
        assert not (svc.state / "mux" / "quarantine").exists()
    finally:
        svc.stop()
        for pid in orphans:
            if pid_alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_unfinished_checkpoint_writes_are_removed_at_a_cold_start(tmp_root: Path) -> None:
    """A checkpoint write cut by a killed muxd leaves its temporary file; the next cold
    start removes it (bench/kill_storm.py found 343 after 664 kills, never removed), and
    leaves the checkpoints themselves and their locks alone."""
    svc = Service(tmp_root, bus_address=None)
    checkpoints = svc.state / "mux" / "checkpoints"
    checkpoints.mkdir(parents=True, mode=0o700)
    invocation = "0123456789abcdef0123456789abcdef"
    cut = checkpoints / f".{invocation}.json.4242.0.tmp"
    kept = [checkpoints / f"{invocation}.json", checkpoints / f".{invocation}.json.lock"]
    for path in (cut, *kept):
        path.write_text("{}")
    try:
        svc.start()
        assert not cut.exists()
        assert all(path.exists() for path in kept)
    finally:
        svc.stop()
