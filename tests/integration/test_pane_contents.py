"""Pane contents across cold restarts (issue #31, SPEC §13), on a real muxd: a pane's
old output comes back above a marker line, with its colours; nothing of it is ever on
disk in plain text; a corrupted or foreign-key file costs that pane its contents and is
listed, nothing more; `restore_scrollback_lines = 0` saves nothing; ForgetContents wipes
the files and the key."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.harness import Service, wait_for

CONFIG = "kill_grace_seconds = 0.5\n"
SECRET = "MUX-CONTENTS-MARKER-7f3a"
# Printed in colour, split so that the pane's argv (saved in session.json) never holds it.
PRINT = f"printf '\\033[31m%s%s\\033[0m\\n' {SECRET[:10]} {SECRET[10:]}; exec sleep 900"


def _restart(svc: Service, config: str = CONFIG) -> None:
    assert svc.stop() == 0, svc.log()[-3000:]
    (svc.config_home / "mux" / "config.toml").write_text(config)
    svc.start()


def _on_disk(root: Path, needle: str) -> list[str]:
    """Every file under `root` that holds `needle` (grep -r, an independent reader)."""
    found = subprocess.run(
        ["grep", "-rl", "--binary-files=text", needle, str(root)],
        capture_output=True,
        text=True,
        check=False,
    )
    return found.stdout.split()


def _printer(svc: Service) -> int:
    pane = svc.spawn(["sh", "-c", PRINT])
    svc.wait_screen(pane, SECRET)
    return pane


def test_old_contents_come_back_above_the_marker_and_are_never_plain_on_disk(
    tmp_root: Path,
) -> None:
    svc = Service(tmp_root, bus_address=None, config=CONFIG).start()
    try:
        pane = _printer(svc)
        svc.call("Snapshot")
        contents = svc.state / "mux" / "contents"
        assert [p.name for p in contents.iterdir() if not p.name.startswith(".")], "saved"
        assert _on_disk(svc.state, SECRET) == [], "while it runs: nothing plain on disk"
        _restart(svc)
        assert _on_disk(svc.state, SECRET) == [], "after the stop's final save either"
        screen = svc.wait_screen(pane, "started again")
        lines = screen.splitlines()
        old = next(i for i, line in enumerate(lines) if SECRET in line)
        marker = next(i for i, line in enumerate(lines) if "── restored" in line)
        assert old < marker, screen
        assert "sh started again ──" in " ".join(lines[marker : marker + 2])
        assert (svc.state / "mux" / "contents.key").stat().st_mode & 0o777 == 0o600
        # The contents saved after a restore hold the old ones too: a second restart
        # shows both runs' output.
        _restart(svc)
        again = svc.wait_screen(pane, "started again")
        assert again.count(SECRET) >= 2, again
    finally:
        svc.stop()


def test_a_damaged_or_foreign_contents_file_costs_only_that_pane(tmp_root: Path) -> None:
    svc = Service(tmp_root, bus_address=None, config=CONFIG).start()
    try:
        damaged = _printer(svc)
        foreign = _printer(svc)
        svc.call("Snapshot")
        files = {p.name: p for p in (svc.state / "mux" / "contents").iterdir()}
        assert svc.stop() == 0
        names = sorted(name for name in files if not name.startswith("."))
        assert len(names) == 2
        # One file flipped in the middle, the other renamed over: sealed for another pane.
        first, second = (files[name] for name in names)
        data = bytearray(first.read_bytes())
        data[len(data) // 2] ^= 0xFF
        first.write_bytes(bytes(data))
        os.replace(first, second.with_name(second.name + ".tmp"))
        os.replace(second, first)
        os.replace(second.with_name(second.name + ".tmp"), second)
        svc.start()
        wait_for(lambda: len(svc.panes()) == 2, what="both panes back")
        assert all(info["state"] == "running" for info in svc.panes().values())
        (problems,) = svc.call("ListRestoreProblems")
        reasons = [entry["reason"].value for entry in problems]
        assert len(reasons) == 2 and all("saved contents" in r for r in reasons), reasons
        assert all(str(svc.state) not in reason for reason in reasons), "no private path"
        for pane in (damaged, foreign):  # started again, without old contents
            screen = svc.wait_screen(pane, SECRET)
            assert "── restored" not in screen and screen.count(SECRET) == 1
        assert "Traceback" not in svc.log()
    finally:
        svc.stop()


def test_no_contents_are_saved_with_zero_lines(tmp_root: Path) -> None:
    config = CONFIG + "restore_scrollback_lines = 0\n"
    svc = Service(tmp_root, bus_address=None, config=config).start()
    try:
        pane = _printer(svc)
        svc.call("Snapshot")
        _restart(svc, config)
        assert not (svc.state / "mux" / "contents").exists()
        assert not (svc.state / "mux" / "contents.key").exists()
        screen = svc.wait_screen(pane, "restored from the snapshot")
        assert "── restored" not in screen, "no old contents: the usual note instead"
    finally:
        svc.stop()


def test_forget_contents_wipes_the_files_and_the_key(tmp_root: Path) -> None:
    svc = Service(tmp_root, bus_address=None, config=CONFIG).start()
    try:
        _printer(svc)
        svc.call("Snapshot")
        key = svc.state / "mux" / "contents.key"
        old_key = key.read_bytes()
        history = svc.state / "mux" / "history"
        assert list(history.glob("*/contents/*")), "the history keeps them too"
        svc.call("ForgetContents")
        assert not key.exists()
        names = [
            p for p in (svc.state / "mux" / "contents").iterdir() if not p.name.startswith(".")
        ]
        assert names == []
        assert list(history.glob("*/contents/*")) == []
        # The next save makes a new key: the old one opens nothing of what follows.
        svc.call("SendInput", "tay", [min(svc.panes()), b""])
        _restart(svc)
        assert key.read_bytes() != old_key
    finally:
        svc.stop()


def test_capture_history_shows_old_contents_scrolled_off_the_screen(tmp_root: Path) -> None:
    svc = Service(tmp_root, bus_address=None, config=CONFIG).start()
    try:
        pane = svc.spawn(
            ["sh", "-c", PRINT.replace("exec sleep 900", "read x; seq 1 60; sleep 900")]
        )
        svc.wait_screen(pane, SECRET)
        _restart(svc)
        svc.wait_screen(pane, "started again")
        svc.call("SendInput", "tay", [pane, b"\r"])
        svc.wait_screen(pane, "60")
        assert "── restored" not in svc.screen_text(pane), "scrolled off the screen"
        history = svc.muxctl("capture", "--history", str(pane), check=True).stdout.splitlines()
        old = history.index(next(line for line in history if SECRET in line))
        marker = history.index(next(line for line in history if "── restored" in line))
        assert old < marker < history.index("60")
        last = svc.muxctl("capture", "--history", "--lines", "3", str(pane), check=True).stdout
        assert "── restored" not in last and "60" in last
        refused = svc.muxctl("capture", "--history", "--lines", "-1", str(pane))
        assert refused.returncode == 2 and "--lines" in refused.stderr
    finally:
        svc.stop()
