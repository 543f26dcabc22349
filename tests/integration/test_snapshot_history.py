"""The history of snapshots on a real muxd (issue #31, SPEC §13): every snapshot that
would restore something else is kept in `<state>/history/`; `ListSnapshots` lists them;
`RestoreSnapshot` starts a snapshot's panes beside what runs (new ids), never a second
copy of a launch still running, archiving the session of now first; a dry run changes
nothing. A start with `restore = "never"` can no longer lose a session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dbus_fast import Variant

from tests.harness import Service, wait_for

CONFIG = "kill_grace_seconds = 0.5\n"
# RestoreSnapshot through busctl, an independent client.
RESTORE = (
    "call",
    "org.mux.Mux1",
    "/org/mux/Mux1",
    "org.mux.Mux1.Manager",
    "RestoreSnapshot",
    "ta{sv}",
)


def _restart(svc: Service, config: str = CONFIG) -> None:
    assert svc.stop() == 0, svc.log()[-3000:]
    (svc.config_home / "mux" / "config.toml").write_text(config)
    svc.start()


def _snapshots(svc: Service) -> list[dict[str, Any]]:
    (entries,) = svc.call("ListSnapshots")
    return [{key: value.value for key, value in entry.items()} for entry in entries]


def _restore(svc: Service, generation: int, **options: Any) -> list[dict[str, Any]]:
    wrapped = {}
    if "panes" in options:
        wrapped["panes"] = Variant("at", options["panes"])
    for flag in ("dry_run", "contents"):
        if flag in options:
            wrapped[flag] = Variant("b", options[flag])
    (entries,) = svc.call("RestoreSnapshot", "ta{sv}", [generation, wrapped])
    return [{key: value.value for key, value in entry.items()} for entry in entries]


def _saved(svc: Service) -> int:
    _path, generation = svc.call("Snapshot")
    return int(generation)


def test_snapshots_that_differ_are_kept_and_listed(tmp_root: Path) -> None:
    svc = Service(tmp_root, bus_address=None, config=CONFIG).start()
    try:
        first = svc.spawn(["sleep", "801"], title="one")
        one = _saved(svc)
        assert _saved(svc) == one + 1  # nothing changed: saved, not archived again
        second = svc.spawn(["sleep", "802"])
        two = _saved(svc)
        listed = _snapshots(svc)
        generations = [entry["generation"] for entry in listed]
        assert one in generations and two in generations and one + 1 not in generations
        assert generations == sorted(generations, reverse=True), "newest first"
        newest = listed[0]
        assert newest["generation"] == two and newest["panes"] == 2 and newest["windows"] == 2
        assert newest["bytes"] > 0 and newest["hosts"] == []
        assert "sleep" in newest["summary"] and "\n" not in newest["summary"]
        assert (svc.state / "mux" / "history" / str(two) / "session.json").is_file()
        # An independent client sees the same.
        out = svc.gdbus_call("org.mux.Mux1.Manager.ListSnapshots").stdout
        assert f"'generation': <uint64 {two}>" in out, out
        del first, second
    finally:
        svc.stop()


def test_restore_from_the_history_starts_panes_beside_what_runs(tmp_root: Path) -> None:
    svc = Service(tmp_root, bus_address=None, config=CONFIG).start()
    try:
        kept = svc.spawn(["sleep", "811"])
        gone = svc.spawn(["sleep", "812"])
        old = _saved(svc)
        svc.call("Kill", "t", [gone])
        wait_for(lambda: gone not in svc.panes(), what="the kill")
        now = _saved(svc)
        # A dry run answers what would start and starts nothing: pane 811 still runs
        # from the same launch, so only 812 would come back.
        would = _restore(svc, old, dry_run=True)
        assert [(e["pane"], e["argv"], e["window"]) for e in would] == [(0, ["sleep", "812"], 0)]
        assert sorted(svc.panes()) == [kept]
        started = _restore(svc, old)
        assert [e["argv"] for e in started] == [["sleep", "812"]]
        (entry,) = started
        assert entry["pane"] > max(kept, gone), "a new id"
        panes = svc.panes()
        assert sorted(panes) == [kept, entry["pane"]]
        assert panes[entry["pane"]]["state"] == "running"
        assert panes[entry["pane"]]["window"] == entry["window"] != panes[kept]["window"]
        # The session of before the restore was archived first: the undo is in the list.
        assert now in [snapshot["generation"] for snapshot in _snapshots(svc)]
        # Restoring again starts nothing twice.
        assert _restore(svc, old) == []
    finally:
        svc.stop()


def test_restore_of_a_subset_and_bad_requests(tmp_root: Path) -> None:
    svc = Service(tmp_root, bus_address=None, config=CONFIG).start()
    try:
        panes = [svc.spawn(["sleep", str(820 + n)]) for n in range(3)]
        old = _saved(svc)
        for pane in panes:
            svc.call("Kill", "t", [pane])
        wait_for(lambda: not svc.panes(), what="every pane closed")
        started = _restore(svc, old, panes=[panes[1]])
        assert [e["argv"] for e in started] == [["sleep", "821"]]
        refused = svc.busctl(*RESTORE, str(old), "1", "panes", "at", "1", "999", check=False)
        assert refused.returncode != 0 and f"snapshot {old} has no pane 999" in refused.stderr
        unknown = svc.busctl(*RESTORE, "424242", "0", check=False)
        assert unknown.returncode != 0 and "no snapshot 424242" in unknown.stderr
        bad = svc.busctl(*RESTORE, str(old), "1", "everything", "b", "true", check=False)
        assert bad.returncode != 0 and "unknown RestoreSnapshot option 'everything'" in bad.stderr
        assert "Traceback" not in svc.log()
    finally:
        svc.stop()


def test_a_dry_run_says_where_each_pane_was_and_shows_its_saved_contents(
    tmp_root: Path,
) -> None:
    """What a person looks at before a restore (the web view's snapshots page): each
    pane's id and window in the snapshot, its title and size, and on request the end of
    its saved contents, colours included."""
    svc = Service(tmp_root, bus_address=None, config=CONFIG).start()
    try:
        printer = "printf '\\033[31m%s\\033[0m\\n' saved-red-$((6*7)); exec sleep 840"
        pane = svc.spawn(["sh", "-c", printer], title="painter")
        svc.wait_screen(pane, "saved-red-42")
        window = svc.panes()[pane]["window"]
        old = _saved(svc)
        svc.call("Kill", "t", [pane])
        wait_for(lambda: pane not in svc.panes(), what="the kill")
        (entry,) = _restore(svc, old, dry_run=True, contents=True)
        assert (entry["snapshot_pane"], entry["snapshot_window"]) == (pane, window)
        assert entry["title"] == "painter" and entry["pane"] == 0
        assert entry["rows"] > 0 and entry["cols"] > 0
        assert b"31msaved-red-42" in entry["contents"], entry["contents"]
        (plain,) = _restore(svc, old, dry_run=True)
        assert "contents" not in plain and plain["snapshot_pane"] == pane
        assert svc.panes() == {}, "a dry run starts nothing"
        refused = svc.busctl(*RESTORE, str(old), "1", "contents", "b", "true", check=False)
        assert refused.returncode != 0 and "'contents' is for a dry run" in refused.stderr
    finally:
        svc.stop()


def test_a_start_with_restore_never_loses_nothing(tmp_root: Path) -> None:
    """One start with `restore = "never"`, a stop (whose snapshot has no panes), then a
    start with "always": nothing comes back by itself, but the session of before is in
    the history, and RestoreSnapshot brings it back."""
    svc = Service(tmp_root, bus_address=None, config=CONFIG).start()
    try:
        svc.spawn(["sleep", "831"])
        svc.spawn(["sleep", "832"])
        _restart(svc, 'restore = "never"\n')
        assert svc.panes() == {}
        _restart(svc, 'restore = "always"\n')
        assert svc.panes() == {}
        with_panes = [entry for entry in _snapshots(svc) if entry["panes"] == 2]
        assert with_panes, _snapshots(svc)
        started = _restore(svc, with_panes[0]["generation"])
        assert sorted(e["argv"][1] for e in started) == ["831", "832"]
    finally:
        svc.stop()
