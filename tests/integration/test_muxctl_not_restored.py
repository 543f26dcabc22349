"""`muxctl status` and `muxctl doctor` name a pane of the last session that could not be
restored — id, program, reason — instead of counting it as exited and ok (issue #31,
point 4), against a real muxd that restores a session whose program is gone."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import Service


@pytest.fixture
def not_restored(tmp_root: Path) -> Iterator[tuple[Service, int]]:
    """A muxd whose last session held a pane whose program no longer exists."""
    service = Service(tmp_root, bus_address=None).start()
    program = tmp_root / "vanishing\x1b[31m"  # (a name a terminal would obey)
    shutil.copy(shutil.which("sleep") or "/bin/sleep", program)
    try:
        service.spawn(["sleep", "611"])
        service.spawn([str(program), "600"])
        assert service.stop() == 0
        program.unlink()
        service.start()
        (problems,) = service.call("ListRestoreProblems")
        (problem,) = problems
        yield service, problem["id"].value
    finally:
        service.stop()


def test_status_names_the_pane_that_was_not_restored(not_restored: tuple[Service, int]) -> None:
    service, pane = not_restored
    out = service.muxctl("status", check=True).stdout
    assert "panes: 2 (1 running, 0 exited, 1 not restored)" in out
    (line,) = [line for line in out.splitlines() if line.startswith("not restored:")]
    assert line.startswith(f"not restored: pane {pane} (")
    assert "vanishing\\x1b[31m' 600): " in line, "the program, escaped"
    assert "\x1b" not in out

    answer = json.loads(service.muxctl("status", "--json", check=True).stdout)
    assert answer["not_restored"] == 1 and answer["exited"] == 0
    (entry,) = answer["not_restored_panes"]
    assert entry["id"] == pane and entry["argv"][0].endswith("vanishing\x1b[31m")
    assert entry["reason"]


def test_doctor_counts_it_as_a_problem(not_restored: tuple[Service, int]) -> None:
    service, pane = not_restored
    findings = json.loads(service.muxctl("doctor", "--json").stdout)
    (finding,) = [f for f in findings if f["check"] == f"pane {pane}"]
    assert finding["status"] == "warn"
    assert "was not restored" in finding["detail"]
    assert f"muxctl kill {pane}" in finding["fix"]
    text = service.muxctl("doctor").stdout
    assert f"warn  pane {pane}: " in text and "\x1b" not in text
