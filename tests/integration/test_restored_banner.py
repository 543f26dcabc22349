"""What mux writes on a restored pane wraps at word boundaries in a narrow pane (issue #31):
left to the terminal, `snapshot` became `snaps` / `hot`."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.harness import Service

COLS = 20


def _captured(svc: Service, pane: int) -> list[str]:
    result = svc.muxctl("capture", str(pane), check=True)
    return result.stdout.splitlines()


def _assert_whole_words(rows: list[str], *phrases: str) -> None:
    """Each phrase reads with its words whole once the rows are joined by spaces: a word
    cut across two rows would read as two words."""
    assert all(len(row) <= COLS for row in rows), rows
    joined = " ".join(" ".join(rows).split())
    for phrase in phrases:
        assert phrase in joined, f"{phrase!r} not whole in {rows}"


def test_notices_on_a_narrow_restored_pane_break_between_words(tmp_root: Path) -> None:
    svc = Service(tmp_root, bus_address=None, config="kill_grace_seconds = 0.5\n").start()
    program = tmp_root / "vanishing"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", program)
    try:
        svc.spawn(["sleep", "600"], rows=24, cols=COLS)
        svc.spawn([str(program), "601"], rows=24, cols=COLS)
        assert svc.stop() == 0, svc.log()[-3000:]
        program.unlink()
        svc.start()
        panes = svc.panes()
        (again,) = [p["id"] for p in panes.values() if p["argv"] == ["sleep", "600"]]
        assert (panes[again]["rows"], panes[again]["cols"]) == (24, COLS)
        svc.wait_screen(again, "restored")
        _assert_whole_words(
            _captured(svc, again),
            "mux: restored from the snapshot of",
            "a new process, not the old one",
        )
        (kept,) = [p["id"] for p in panes.values() if p["id"] != again]
        svc.wait_screen(kept, "mux:")
        _assert_whole_words(
            _captured(svc, kept),
            "was not started again",
            "mux: this pane keeps its place and the saved pane is tried again at the next "
            "start; killing this pane gives it up (muxctl kill).",
        )
    finally:
        svc.stop()
