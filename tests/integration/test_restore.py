"""Resurrection at start: the last session's panes relaunched, honestly (issue #4)."""

from __future__ import annotations

import shutil
from pathlib import Path

from mux.state.session_file import parse_session
from tests.harness import Service, pid_alive, wait_for


def _restart(svc: Service) -> None:
    assert svc.stop() == 0, svc.log()[-3000:]
    svc.start()


def test_windows_panes_cwd_env_titles_and_sizes_come_back(tmp_root: Path) -> None:
    """8 windows of 64 panes: stop, start, the same argv, cwd, title and grouping."""
    svc = Service(tmp_root, bus_address=None, config="kill_grace_seconds = 0.5\n").start()
    work = tmp_root / "work"
    work.mkdir()
    try:
        layout: dict[int, list[tuple[str, ...]]] = {}
        for w in range(8):
            window = 0
            for p in range(64):
                argv = ("sleep", f"{1000 + w * 64 + p}")
                pane = svc.spawn(
                    list(argv),
                    window=window,
                    cwd=str(work),
                    title=f"w{w}p{p}",
                    env={"MUX_TEST": f"{w}-{p}"},
                    rows=30,
                    cols=100,
                )
                window = int(svc.panes()[pane]["window"]) if window == 0 else window
                layout.setdefault(window, []).append(argv)
        _restart(svc)
        panes = svc.panes()
        assert len(panes) == 512
        restored: dict[int, list[tuple[str, ...]]] = {}
        for pane_id in sorted(panes):
            info = panes[pane_id]
            restored.setdefault(int(info["window"]), []).append(tuple(info["argv"]))
            assert info["cwd"] == str(work) and info["state"] == "running"
            assert (info["rows"], info["cols"]) == (30, 100)
        assert sorted(restored.values()) == sorted(layout.values()), "same panes, same groups"
        first = min(panes)
        assert panes[first]["title"] == "w0p0"
        assert "restored from the snapshot" in svc.screen_text(first), "it says so"
        environ = Path(f"/proc/{panes[first]['pid']}/environ").read_bytes().split(b"\0")
        assert b"MUX_TEST=0-0" in environ
    finally:
        svc.stop()


def test_a_pane_whose_program_is_gone_is_reported_and_kept(tmp_root: Path) -> None:
    svc = Service(tmp_root, bus_address=None).start()
    program = tmp_root / "vanishing"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", program)
    gone_dir = tmp_root / "gone"
    gone_dir.mkdir()
    try:
        svc.spawn([str(program), "600"], title="vanishing")
        survivor = svc.spawn(["sleep", "601"], cwd=str(gone_dir))
        assert svc.stop() == 0
        program.unlink()
        gone_dir.rmdir()
        svc.start()
        panes = svc.panes()
        assert [p["argv"] for p in panes.values()] == [["sleep", "601"]]
        (info,) = panes.values()
        assert info["cwd"] == str(svc.home), "a cwd that is gone falls back to $HOME"
        assert "no longer exists" in svc.screen_text(int(info["id"]))
        (problems,) = svc.call("ListRestoreProblems")
        assert len(problems) == 1
        problem = {k: v.value for k, v in problems[0].items()}
        assert problem["argv"] == [str(program), "600"] and "does not exist" in problem["reason"]
        status = svc.busctl(
            "get-property", "org.mux.Mux1", "/org/mux/Mux1", "org.mux.Mux1.Manager", "Version"
        ).stdout
        assert status.startswith("s ")
        # Kept for repair: still in the snapshot, not dropped.
        path, _ = svc.call("Snapshot")
        saved = parse_session(Path(path).read_bytes())
        assert [str(program), "600"] in [p.argv for p in saved.panes]
        assert survivor  # (its id changed with the new id space)
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
        assert svc.panes() == {}, "started a second copy"
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
