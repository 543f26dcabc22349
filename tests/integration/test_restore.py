"""Resurrection at start: the last session's panes relaunched, honestly (issue #4)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from dbus_fast import Variant

from mux.state.session_file import parse_session
from tests.harness import Service, pid_alive, wait_for


def _restart(svc: Service) -> None:
    assert svc.stop() == 0, svc.log()[-3000:]
    svc.start()


def test_windows_panes_cwd_env_titles_sizes_and_layouts_come_back(tmp_root: Path) -> None:
    """8 windows of 64 panes, split every which way: stop, start, the same argv, cwd,
    title, grouping, and each window's layout leaf by leaf, with its title, geometry
    and focus (docs/windows.md#persistence)."""
    svc = Service(tmp_root, bus_address=None, config="kill_grace_seconds = 0.5\n").start()
    work = tmp_root / "work"
    work.mkdir()
    try:
        for w in range(8):
            window, panes = 0, []
            for p in range(64):
                options = {
                    "argv": Variant("as", ["sleep", f"{1000 + w * 64 + p}"]),
                    "cwd": Variant("s", str(work)),
                    "title": Variant("s", f"w{w}p{p}"),
                    "env": Variant("a{ss}", {"MUX_TEST": f"{w}-{p}"}),
                    "rows": Variant("q", 30),
                    "cols": Variant("q", 100),
                }
                if not panes or w % 2:  # a new window, or into it beside its focus
                    options["window"] = Variant("t", window)
                    pane, _, _ = svc.call("Spawn", "a{sv}", [options])
                else:  # beside one of its panes, either way, a third of the space
                    beside = panes[(p * 7) % len(panes)]
                    way = ("horizontal", "vertical")[p % 2]
                    pane, _, _ = svc.call(
                        "SplitPane", "tsda{sv}", [beside, way, 0.3 + p % 3 / 10, options]
                    )
                panes.append(int(pane))
                window = window or int(svc.panes()[int(pane)]["window"])
            props = {
                "title": Variant("s", f"window {w}"),
                "geometry": Variant("a{sv}", {"x": Variant("i", w), "monitor": Variant("s", "M")}),
                "focused_pane": Variant("t", panes[w * 5]),
            }
            svc.call("SetWindow", "ta{sv}", [window, props])
        before = _by_argv(svc)
        _restart(svc)
        panes = svc.panes()
        assert len(panes) == 512
        for info in panes.values():
            assert info["cwd"] == str(work) and info["state"] == "running"
            assert (info["rows"], info["cols"]) == (30, 100)
        assert _by_argv(svc) == before, "each window's tree, leaf by leaf, title, geometry, focus"
        first = min(panes)
        assert panes[first]["title"] == "w0p0"
        assert "restored from the snapshot" in svc.screen_text(first), "it says so"
        environ = Path(f"/proc/{panes[first]['pid']}/environ").read_bytes().split(b"\0")
        assert b"MUX_TEST=0-0" in environ
    finally:
        svc.stop()


def _by_argv(svc: Service) -> list[tuple[str, str, str, str]]:
    """Every window, its panes named by their (unique) argv instead of their ids:
    (layout, focused pane, title, geometry), sorted."""
    argv = {pane_id: " ".join(info["argv"]) for pane_id, info in svc.panes().items()}
    (entries,) = svc.call("ListWindows")
    out = []
    for entry in entries:
        window = {key: variant.value for key, variant in entry.items()}
        layout = re.sub(r'"pane":(\d+)', lambda m: f'"pane":"{argv[int(m[1])]}"', window["layout"])
        geometry = json.dumps({k: v.value for k, v in window["geometry"].items()}, sort_keys=True)
        out.append((layout, argv[window["focused_pane"]], window["title"], geometry))
    return sorted(out)


def test_a_pane_whose_program_is_gone_keeps_its_place_and_comes_back_there(
    tmp_root: Path,
) -> None:
    svc = Service(tmp_root, bus_address=None).start()
    program = tmp_root / "vanishing"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", program)
    gone_dir = tmp_root / "gone"
    gone_dir.mkdir()
    try:
        first = svc.spawn(["sleep", "602"])
        window = svc.panes()[first]["window"]
        svc.call(
            "SplitPane",
            "tsda{sv}",
            [
                first,
                "horizontal",
                0.5,
                {"argv": Variant("as", [str(program), "600"]), "title": Variant("s", "vanishing")},
            ],
        )
        survivor = svc.spawn(["sleep", "601"], cwd=str(gone_dir), window=window)
        before = _by_argv(svc)
        assert svc.stop() == 0
        saved_copy = program.read_bytes()
        program.unlink()
        gone_dir.rmdir()
        svc.start()
        panes = svc.panes()
        running = {p["id"]: p for p in panes.values() if p["state"] == "running"}
        assert sorted(p["argv"] for p in running.values()) == [["sleep", "601"], ["sleep", "602"]]
        (moved,) = [p for p in running.values() if p["argv"] == ["sleep", "601"]]
        assert moved["cwd"] == str(svc.home), "a cwd that is gone falls back to $HOME"
        assert "no longer exists" in svc.screen_text(int(moved["id"]))
        # The pane that could not start keeps its leaf: a pane with no process that says why.
        (holder,) = [p for p in panes.values() if p["state"] == "exited"]
        assert (holder["pid"], holder["exit_status"]) == (0, 257)
        assert holder["argv"] == [str(program), "600"] and holder["title"] == "vanishing"
        screen = svc.screen_text(int(holder["id"]))
        assert "was not started again" in screen and "does not exist" in screen
        listing = svc.muxctl("ls", check=True).stdout.splitlines()
        (row,) = [line.split() for line in listing if line.split()[0] == str(holder["id"])]
        assert row[2:4] == ["-", "not-restored"], listing
        assert _by_argv(svc) == before, "its window, leaf by leaf, as it was saved"
        (problems,) = svc.call("ListRestoreProblems")
        (problem,) = [{k: v.value for k, v in p.items()} for p in problems]
        assert problem["id"] == holder["id"], "listed under the place holder's id"
        assert problem["argv"] == [str(program), "600"] and "does not exist" in problem["reason"]
        # An independent client sees the same pane object.
        pid = svc.busctl(
            "get-property",
            "org.mux.Mux1",
            f"/org/mux/Mux1/pane/{holder['id']}",
            "org.mux.Mux1.Pane",
            "Pid",
        ).stdout
        assert pid.split() == ["u", "0"]
        # Kept for repair, in its place: the next start, with the program back, puts it there.
        path, _ = svc.call("Snapshot")
        saved = parse_session(Path(path).read_bytes())
        assert [str(program), "600"] in [p.argv for p in saved.panes]
        program.write_bytes(saved_copy)
        program.chmod(0o755)
        _restart(svc)
        panes = svc.panes()
        assert [p["state"] for p in panes.values()] == ["running"] * 3
        assert _by_argv(svc) == before, "back in its own leaf"
        (problems,) = svc.call("ListRestoreProblems")
        assert problems == []
        assert survivor  # (its id changed with the new id space)
    finally:
        svc.stop()


def test_killing_a_place_holder_gives_up_the_pane_it_held(tmp_root: Path) -> None:
    svc = Service(tmp_root, bus_address=None).start()
    program = tmp_root / "vanishing"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", program)
    try:
        kept = svc.spawn(["sleep", "603"])
        svc.spawn([str(program), "600"], window=svc.panes()[kept]["window"])
        assert svc.stop() == 0
        program.unlink()
        svc.start()
        (holder,) = [p["id"] for p in svc.panes().values() if p["state"] == "exited"]
        svc.call("Kill", "t", [holder])
        (problems,) = svc.call("ListRestoreProblems")
        assert problems == []
        (windows,) = svc.call("ListWindows")
        (running,) = svc.panes()
        assert [json.loads(w["layout"].value) for w in windows] == [{"pane": running}]
        path, _ = svc.call("Snapshot")
        saved = parse_session(Path(path).read_bytes())
        assert [p.argv for p in saved.panes] == [["sleep", "603"]], "given up for good"
    finally:
        svc.stop()


def test_restore_can_be_turned_off(tmp_root: Path) -> None:
    svc = Service(tmp_root, bus_address=None, config="restore = false\n").start()
    try:
        pane = svc.spawn(["sleep", "600"])
        pid = int(svc.panes()[pane]["pid"])
        _restart(svc)
        assert svc.panes() == {}
        wait_for(lambda: not pid_alive(pid), what="the old pane to be gone")
    finally:
        svc.stop()


def test_exited_panes_are_never_resurrected(tmp_root: Path) -> None:
    svc = Service(tmp_root, bus_address=None).start()
    try:
        ended = svc.spawn(["sh", "-c", "exit 3"])
        svc.wait_exited(ended)
        _restart(svc)
        assert svc.panes() == {}
    finally:
        svc.stop()


def test_a_refused_session_is_visible_and_generations_go_on(tmp_root: Path) -> None:
    svc = Service(tmp_root, bus_address=None)
    state = svc.state / "mux"
    state.mkdir(parents=True)
    # Valid JSON, generation 41, but a pane that no window shows: refused.
    (state / "session.json").write_text(
        '{"version": 1, "generation": 41, "saved_at": 0, "windows": [], "panes": ['
        '{"id": 1, "kind": "explicit", "argv": ["sleep", "1"], "program": "/bin/sleep",'
        ' "cwd": {"path": "/", "source": "launch", "captured_at": 0}, "title": "t",'
        ' "rows": 24, "cols": 80, "invocation": "x"}]}'
    )
    svc.start()
    try:
        (problems,) = svc.call("ListRestoreProblems")
        whole = {k: v.value for k, v in problems[0].items()}
        assert whole["id"] == 0 and "quarantine" in whole["reason"]
        assert "no window's layout" in whole["reason"]
        assert len(list((state / "quarantine").iterdir())) == 1
        _, generation = svc.call("Snapshot")
        assert generation == 42, "generations only grow, even past a refused file"
    finally:
        svc.stop()


def test_a_program_that_outlived_a_killed_muxd_is_not_started_twice(tmp_root: Path) -> None:
    import os
    import signal

    svc = Service(tmp_root, bus_address=None).start()
    orphan = 0
    try:
        # A program that ignores the hangup survives muxd's death (kill -9).
        pane = svc.spawn(["sh", "-c", "trap '' HUP; echo immune; exec sleep 600"])
        svc.wait_screen(pane, "immune")
        orphan = svc.panes()[pane]["pid"]
        svc.call("Snapshot")
        assert svc.process is not None
        svc.process.kill()
        svc.process.wait(timeout=30)
        wait_for(lambda: pid_alive(orphan), what="the program outliving muxd")
        svc.start()
        (holder,) = svc.panes().values()
        assert holder["state"] == "exited" and holder["pid"] == 0, "started a second copy"
        (problems,) = svc.call("ListRestoreProblems")
        (problem,) = [{k: v.value for k, v in p.items()} for p in problems]
        assert f"still runs (pid {orphan})" in problem["reason"]
        # Once it has ended, the next start brings it back (it was kept for that).
        os.kill(orphan, signal.SIGKILL)
        wait_for(lambda: not pid_alive(orphan), what="the old program gone")
        _restart(svc)
        assert [p["argv"] for p in svc.panes().values()] == [
            ["sh", "-c", "trap '' HUP; echo immune; exec sleep 600"]
        ]
    finally:
        if orphan and pid_alive(orphan):
            os.kill(orphan, signal.SIGKILL)
        svc.stop()
